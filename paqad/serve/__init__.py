"""``paqad serve``: one resident process per work tree behind every door, and its thin clients.

A prompt hook, ``rag search``, ``paqad agent`` and ``paqad mcp`` each used to pay a fresh
interpreter, the search stack's imports and (with vectors) a model load before answering. The
service holds all of that warm (the :class:`~paqad.index.reader.Index`, the query model, the
graph) and answers over a Unix socket in the user's runtime folder; the doors keep their
in-process path as the fallback whenever it is absent, crashed, hung, outdated or started with
another environment.

- :mod:`paqad.serve.paths`: where a work tree's socket, lock and info file live (stdlib only);
- :mod:`paqad.serve.wire`: the JSON-lines exchange and the compatibility rules (stdlib only);
- :mod:`paqad.serve.client`: asking the service, and starting one (stdlib only);
- :mod:`paqad.serve.hookclient`: the entry point agent hosts and git hooks run (stdlib only
  until it falls back);
- :mod:`paqad.serve.server`: the resident process (lock, socket, idle exit, memory cap);
- :mod:`paqad.serve.handlers`: what each request does, through the same library calls as the
  in-process doors; :mod:`paqad.serve.jobs`: the coalesced background work (git updates,
  refreshes behind a prompt).
"""
