"""``paqad serve`` and the doors' way to it: where a request runs, decided once, and the resident process.

A prompt hook, ``rag search``, ``paqad agent`` and ``paqad mcp`` each used to pay a fresh
interpreter, the search stack's imports and (with vectors) a model load before answering. The
service holds all of that warm (the work tree's :class:`~paqad.repository.Repository`: its
``Index``, the query model, the graph, the agent sessions, the background jobs) and answers over a
Unix socket in the user's runtime folder; a door answers in its own process, through the same
``Repository``, whenever it is absent, crashed, hung, outdated or started with another environment.

- :mod:`paqad.serve.route`: the one place that decides where a request runs (stdlib only at import);
- :mod:`paqad.serve.hookclient`: the entry point agent hosts and git hooks run (stdlib only until
  it answers in-process);
- :mod:`paqad.serve.server`: the resident process (lock, socket, idle exit, memory cap);
- :mod:`paqad.serve.handlers`: what each request does (through the hosted ``Repository``);
  :mod:`paqad.serve.jobs`: the coalesced background work (git updates, refreshes behind a prompt).

The way there (socket paths, the exchange, the client, the typed requests) is :mod:`paqad.channel`.
"""
