"""The service side of the doors that are not hooks: ``rag search``/``probe`` and the agent sessions.

Each door builds its work exactly as in-process (a ``SearchRequest`` from the settings; an agent
action's raw parameters) and asks the service first; ``None`` from here means "answer it
yourself", after starting a service for next time when none is running. The service's answers
are the in-process ones: ``pipeline.run(Index.shared(root), request)``, and the agent
operations through ``agent.ops.Session``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paqad import errors
from paqad.serve import client

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.search.pipeline import SearchResponse
    from paqad.search.request import SearchRequest

#: Why the service did not answer, for which a door starts one (a hung or busy one holds the lock anyway).
START_WHEN = ("absent", "stale", "refused:outdated", "refused:environment", "crashed")
START_EVERY_S = 10.0  # a long agent session re-tries starting at most this often
REMOTE_ACTIONS = ("search", "research", "neighbors")  # the ones that want the warm index, model and graph
_ERRORS: dict[str, type[errors.PaqadError]] = {
    cls.__name__: cls
    for cls in (errors.PaqadError, errors.ConfigError, errors.UsageError, errors.IndexMissingError, errors.IndexCorruptError, errors.LockedError, errors.RemoteError)
}


def _start(root: Path, why: str) -> None:
    if why in START_WHEN:
        from paqad.git import no_git_env

        client.start(root, no_git_env(), why)


def search(root: Path, cfg: Config, request: SearchRequest) -> SearchResponse | None:
    """``request`` answered by the service, or None (then: in-process). An error the search
    raised there (no index, a damaged one) is raised here, as the in-process search would."""
    if not cfg.rag_serve:
        return None
    outcome = client.request(root, "search", {"request": request.to_wire()})
    reply = outcome.reply or {}
    if reply.get("ok"):
        from paqad.search.pipeline import SearchResponse

        return SearchResponse.from_dict(reply["response"])
    error = reply.get("error") or {}
    if outcome.answered and error.get("paqad") and error.get("type") in _ERRORS:
        raise _ERRORS[error["type"]](str(error.get("message")))
    _start(root, outcome.why)
    return None


def agent_remote(root: Path, overrides: dict[str, str]) -> Callable[[str, dict[str, Any]], dict | None]:
    """An agent session's way to the service: ``(action, raw params)`` → its result, ``None``
    (answer it in this process), or the ``OpError`` the service's session raised."""
    last_start = [0.0]

    def call(action: str, raw: dict[str, Any]) -> dict | None:
        from paqad import config
        from paqad.agent.ops import OpError

        if action not in REMOTE_ACTIONS or not config.load(root, overrides).rag_serve:
            return None
        outcome = client.request(root, "agent", {"action": action, "params": raw, "overrides": overrides})
        reply = outcome.reply or {}
        if reply.get("ok"):
            return dict(reply["result"])
        error = reply.get("error") or {}
        if outcome.answered and "code" in error:
            raise OpError(str(error["code"]), str(error.get("message")))
        if time.monotonic() - last_start[0] > START_EVERY_S:
            last_start[0] = time.monotonic()
            _start(root, outcome.why)
        return None

    return call

