"""One work tree as a library: its settings, index and background jobs, and what a door asks of it.

The resident service (:mod:`paqad.serve`) hosts one :class:`Repository` per work tree, and a door
that answers in its own process builds one too (:mod:`paqad.serve.route` decides which, once per
request), so the two answer through the same calls. It is also paqad's public face::

    from paqad import Repository

    repo = Repository("/home/ann/src/shop")          # a work tree after `paqad rag init`
    response = repo.search("where is the session cookie signed")
    for hit in response.results[:3]:
        print(f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.qualified_name}")

``search`` takes a question (or a built ``SearchRequest``) and returns the same
``SearchResponse`` as ``paqad rag search --json``; ``hook``, ``agent`` and ``git_event`` take the
typed requests of :mod:`paqad.channel.calls`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paqad import config
from paqad.channel import calls
from paqad.errors import UsageError

if TYPE_CHECKING:
    from paqad.agent.ops import Session
    from paqad.hooks import hosts
    from paqad.hooks.hosts import base
    from paqad.index.reader import Index
    from paqad.search.pipeline import SearchResponse
    from paqad.search.request import SearchRequest

MAX_STDIN = calls.MAX_STDIN


class Jobs(Protocol):
    """Background work a host process runs for the work tree (:class:`paqad.serve.jobs.Jobs` in the service)."""

    def request(self, spec: Any, event: str) -> None: ...

    def refresh(self, root: Path) -> None: ...

    def files_changed(self, root: Path, files: list[str]) -> None: ...


class Repository:
    """The work tree at ``root``: settings (with ``overrides``, the ``-c`` flags), index and jobs.

    ``jobs`` is the service's coalesced background work (:class:`paqad.serve.jobs.Jobs`); without
    it (a door's own process) a refresh or a git event's update runs detached, as the runner does.
    The index is the process-wide ``Index.shared`` (the service, and one-shot doors)."""

    def __init__(self, root: str | os.PathLike[str], overrides: dict[str, str] | None = None, *, jobs: Jobs | None = None) -> None:
        self.root = Path(root)
        self.overrides = dict(overrides or {})
        self.jobs = jobs
        self._sessions: dict[tuple[tuple[str, str], ...], Session] = {}

    def __repr__(self) -> str:
        return f"Repository({str(self.root)!r})"

    def settings(self) -> config.Config:
        """The settings now: defaults, team and personal files, environment, then ``overrides``.
        A door loads them once per request and passes them on."""
        return config.load(self.root, self.overrides)

    @property
    def index(self) -> Index:
        """The work tree's index (one per process, reopened when a rebuild published a new one)."""
        from paqad.index.reader import Index  # lazy: the index reader, which a git event's door never opens

        return Index.shared(self.root)

    # ---- search ----------------------------------------------------------------------------

    def search(self, query: str | SearchRequest, cfg: config.Config | None = None, **options: Any) -> SearchResponse:
        """Search the index: ``query`` a question (``options`` as ``SearchRequest.from_settings``:
        ``top_n``, ``budget_chars``, ``gate``, ``rerank`` ...) or a request a door built."""
        from paqad.search import pipeline  # lazy: the search stack, only for a search
        from paqad.search.request import SearchRequest  # lazy: as above

        request = query if isinstance(query, SearchRequest) else SearchRequest.from_settings(cfg or self.settings(), self.root, query, **options)
        return pipeline.run(self.index, request)

    # ---- an agent host's hook ---------------------------------------------------------------

    def hook_event(self, call: calls.Hook) -> tuple[base.AgentHost, base.Event]:
        """The host and its parsed event; raises UsageError (unknown host, input over the cap) or
        the host's own error for unreadable input."""
        from paqad.hooks import hosts  # lazy: the hook stack, which `rag search` and the agent door never load

        host = hosts.HOSTS.get(call.host)
        if host is None:
            raise UsageError(f"unknown agent host {call.host[:40]!r}")
        if len(call.stdin) > MAX_STDIN:
            raise UsageError(f"the {call.host} hook input is over {MAX_STDIN:,} characters; no context for this prompt")
        return host, host.read_event(call.stdin, call.event)

    def hook(
        self, call: calls.Hook, *, cfg: config.Config | None = None, door: str = "foreground", note: str = "",
        on_budget: Callable[[float], None] | None = None, parsed: tuple[base.AgentHost, base.Event] | None = None,
    ) -> str:
        """The host's stdout for this hook event ("" for silence).

        Raises before answering when the input or the settings are broken (the door logs or
        refuses that); once answering it never raises (``hosts.handle`` logs its own failures).
        ``on_budget`` sees the budget before the work starts (the service acknowledges with it);
        ``parsed``: :meth:`hook_event`'s answer when the caller has it already."""
        from paqad.delivery import prompt  # lazy: the delivery stack, only for a hook
        from paqad.hooks import hosts  # lazy: the hook stack, as above

        host, event = parsed or self.hook_event(call)
        cfg = cfg or self.settings()
        environ = {prompt.BUDGET_ENV: call.budget_env} if call.budget_env is not None else ({} if door == "service" else None)
        budget = prompt.budget_of(cfg, environ) if environ is not None else prompt.budget_of(cfg)
        if on_budget is not None:
            on_budget(budget)
        return hosts.handle(host, event, self.root, cfg, self._door(call, budget, door, note))

    def _door(self, call: calls.Hook, budget: float, mode: str, note: str) -> hosts.Door:
        """Where this hook is answered, decided here once: the budget left, the clock its log line
        counts from, and the refresh and re-index this process may start."""
        from paqad import hookclock  # lazy: the hook's clock, which `rag search` in its own process never loads
        from paqad.hooks import hosts, runner  # lazy: the hook stack, as above

        if mode == "service":  # the service counts from the hook process's start (its age when it asked)
            age = min(max(call.client_age, 0.0), budget)
            left = max(0.0, budget - age - call.spent)
        elif hookclock.armed():  # the hook's own process: the settings' budget, from process start
            hookclock.set_budget(budget)
            age, left = hookclock.elapsed(), min(max(0.0, budget - call.spent), hookclock.left())
        else:  # a door's own process takes off what it already waited for the service
            age, left = 0.0, max(0.0, budget - call.spent)
        jobs = self.jobs
        refresh = jobs.refresh if jobs is not None else runner.start_refresh
        return hosts.Door(mode, left, refresh, jobs.files_changed if jobs is not None else None, note, age)

    # ---- the agent protocol -------------------------------------------------------------------

    def agent(self, call: calls.Agent) -> dict[str, Any]:
        """One agent-protocol action through this work tree's session for ``call.overrides``
        (reading the shared ``Index``); raises ``agent.ops.OpError``."""
        from paqad.agent.ops import Session  # lazy: the agent protocol's stack, only for its door

        key = tuple(sorted(call.overrides.items()))
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session(self.root, dict(call.overrides), shared_index=True)
        return session.call(call.action, call.params)

    # ---- git events -----------------------------------------------------------------------------

    def git_event(self, call: calls.GitEvent) -> list[str]:
        """The actions ``.paqad/hooks.yaml`` lists for the event: queued as coalesced jobs in the
        service, else run as the runner runs them (detached, single-flight). The actions' names."""
        from paqad.hooks import runner  # lazy: the git-event runner, only for a git event

        if call.event not in runner.GIT_EVENTS:
            raise UsageError(f"not a git event paqad handles: {call.event[:40]!r}")
        if self.jobs is None:
            return [r.action for r in runner.run_event(self.root, call.event)]
        specs = runner.load_config(self.root).get(call.event, ())
        for spec in specs:
            self.jobs.request(spec, call.event)
        return [s.action for s in specs]
