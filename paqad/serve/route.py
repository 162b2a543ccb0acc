"""Where a request runs, decided in one place: the work tree's resident service, else this process.

Every door builds a typed request (:mod:`paqad.channel.calls`) and hands it here: the prompt and
session hooks (:mod:`paqad.serve.hookclient`, ``paqad hook run ... --host``), the git hooks,
``rag search``/``probe``, the agent and MCP sessions, and the prompt hook as an MCP tool. Each
function below asks the service first (the request converted to its wire dict only at the edge,
:func:`ask`), and when the service is absent, stale, hung, crashed, outdated or refuses, answers
in this process through :class:`paqad.repository.Repository`, the same object the service hosts;
then it starts a service for the next request when the settings ask for one (``rag_serve``).

Stdlib only at import (the prompt hook's thin client imports it): the in-process side is
imported when it is needed.
"""

from __future__ import annotations

import os
import time

from paqad.channel import calls, client, litejson, wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from paqad.agent.ops import Remote
    from paqad.channel.wire import Message
    from paqad.config import Config
    from paqad.jsontypes import JSON
    from paqad.repository import Repository
    from paqad.search.pipeline import SearchResponse
    from paqad.search.request import SearchRequest

    Root = str | os.PathLike[str]

#: Why the service did not answer, for which a door starts one (a hung or busy one holds the lock anyway).
START_WHEN = ("absent", "stale", "refused:outdated", "refused:environment", "crashed")
START_EVERY_S = 10.0  # a long agent session re-tries starting at most this often
REMOTE_ACTIONS = ("search", "research", "neighbors")  # the agent actions that want the warm index, model and graph
#: Agent-host events that only tell the service something (a file the agent wrote): without a
#: service they end at once, with nothing to answer (the next prompt's sync re-indexes).
NOTIFY_ONLY = ("file-changed",)


def ask(
    root: Root, call: calls.Call, *, reply_timeout: float | None = None, ack_timeout: float | None = None,
    until: Callable[[], float] | None = None, on_ack: Callable[[Message], None] | None = None,
) -> client.Outcome:
    """``call`` to ``root``'s service, as its wire dict (the edge); never raises."""
    acked = wire.ACK_TIMEOUT_S if ack_timeout is None else ack_timeout
    return client.request(root, call.op, call.to_wire(), reply_timeout=reply_timeout, ack_timeout=acked, until=until, on_ack=on_ack)


def _object(value: object) -> Message:
    """A JSON object inside a reply, or {} when the service sent something else there."""
    return value if isinstance(value, dict) else {}


def start(root: Root, why: str) -> None:
    """Start ``root``'s service for the next request unless one holds its lock (``why``: why the
    service did not answer this one; :func:`paqad.channel.client.start`)."""
    from paqad import git  # lazy: the prompt hook's thin client imports route; git only when it starts a service

    client.start(root, git.no_git_env(), why)


def repository(root: Root, overrides: dict[str, str] | None = None) -> Repository:
    """The in-process side: the work tree's facade, as the service hosts it."""
    from paqad.repository import Repository  # lazy: the in-process side, never loaded by the thin client

    return Repository(root, overrides)


# ---- rag search / probe ---------------------------------------------------------------------


def search(root: Path, cfg: Config, request: SearchRequest) -> SearchResponse:
    """``request`` answered by the service, else here. An error the search raised there (no
    index, a damaged one) is raised here, as the in-process search would."""
    if cfg.rag_serve:
        outcome = ask(root, calls.Search(request))
        reply = outcome.reply or {}
        if reply.get("ok"):
            from paqad.search.pipeline import SearchResponse  # lazy: the search stack, not for the thin client

            return SearchResponse.from_dict(_object(reply.get("response")))
        _raise_paqad_error(outcome)
        if outcome.why in START_WHEN:
            start(root, outcome.why)
    return repository(root).search(request)


def _raise_paqad_error(outcome: client.Outcome) -> None:
    from paqad import errors  # lazy: route stays stdlib-only at import (the thin client)

    known: dict[str, type[errors.PaqadError]] = {
        cls.__name__: cls
        for cls in (errors.PaqadError, errors.ConfigError, errors.UsageError, errors.IndexMissingError, errors.IndexCorruptError, errors.LockedError, errors.RemoteError)
    }
    error = _object((outcome.reply or {}).get("error"))
    kind = error.get("type")
    if outcome.answered and error.get("paqad") and isinstance(kind, str) and kind in known:
        raise known[kind](str(error.get("message")))


# ---- the agent protocol (paqad agent, paqad mcp) ---------------------------------------------


def agent_remote(root: Path, overrides: dict[str, str]) -> Remote:
    """An agent session's way to the service: ``(action, raw params)`` → its result, ``None``
    (answer it in this session), or the ``OpError`` the service's session raised."""
    last_start = [0.0]
    serve: list[bool] = []  # the settings' rag_serve, read once per session

    def call(action: str, raw: Mapping[str, JSON]) -> Message | None:
        from paqad.agent.ops import OpError  # lazy: the agent stack, not for the thin client

        if action not in REMOTE_ACTIONS:
            return None
        if not serve:
            serve.append(repository(root, overrides).settings().rag_serve)
        if not serve[0]:
            return None
        outcome = ask(root, calls.Agent(action, raw, overrides))
        reply = outcome.reply or {}
        if reply.get("ok"):
            return dict(_object(reply.get("result")))
        error = _object(reply.get("error"))
        if outcome.answered and "code" in error:
            raise OpError(str(error["code"]), str(error.get("message")))
        if outcome.why in START_WHEN and time.monotonic() - last_start[0] > START_EVERY_S:
            last_start[0] = time.monotonic()
            start(root, outcome.why)
        return None

    return call


# ---- an agent host's hook --------------------------------------------------------------------


def hook(
    root: str | None, call: calls.Hook, *, until: Callable[[], float] | None = None, on_ack: Callable[[Message], None] | None = None,
    clock: Callable[[], float] | None = None, why: str = "", emit: Callable[[str], None] | None = None,
) -> str:
    """The host's stdout for ``call`` ("" for silence); never raises.

    ``root`` is the work tree paqad is set up in (None: none here, silence). The service answers
    unless the call carries ``-c`` overrides or input over the cap; ``until`` caps the waits for
    it and ``on_ack`` sees its acknowledgement (the hook's clock, :mod:`paqad.hookclock`);
    ``clock`` says how long this process has run (taken off the budget when answering here);
    ``emit``, when given, gets the answer before a service is started for the next prompt (the
    host reads it at once) and "" is returned."""
    if root is None:
        return ""
    if not call.overrides and len(call.stdin) <= calls.MAX_STDIN:
        outcome = ask(root, call, until=until, on_ack=on_ack)
        reply = outcome.reply or {}
        if reply.get("ok"):
            return str(reply.get("stdout") or "")
        why = outcome.why if not outcome.answered else f"error: {_object(reply.get('error')).get('type')}"
    elif not why:
        why = "input over the cap" if len(call.stdin) > calls.MAX_STDIN else "overrides on the command line"
    if call.event in NOTIFY_ONLY:
        return ""
    call.spent = clock() if clock is not None else 0.0
    return _hook_here(root, call, why, emit)


def _hook_here(root: str, call: calls.Hook, why: str, emit: Callable[[str], None] | None) -> str:
    """The hook answered in this process, then a service started for the next prompt."""
    from pathlib import Path  # lazy: pathlib loads 26 modules the thin client avoids; this is the in-process side

    from paqad import git  # lazy: the in-process side of the thin client's module

    scrub_git_env(git.no_git_env())  # GIT_DIR, GIT_INDEX_FILE ... that git exported into the hook point git elsewhere
    repo = repository(root, call.overrides)
    try:
        cfg = repo.settings()  # once per request: the answer and the start below read the same
        out = repo.hook(call, cfg=cfg, note=f"service: {why}" if why else "")
    except Exception as exc:  # noqa: BLE001 - a prompt hook never fails the prompt; the log says why
        log_reason(Path(root), call.event, exc)
        return ""
    if emit is not None:
        emit(out)
        out = ""
    if cfg.rag_enabled and cfg.rag_serve and call.event not in NOTIFY_ONLY:
        start(root, why)
    return out


def scrub_git_env(clean: dict[str, str]) -> None:
    """This process's environment becomes ``clean`` (``git.no_git_env()``, computed before the clear)."""
    os.environ.clear()
    os.environ.update(clean)


def log_reason(root: Path, event: str, exc: BaseException) -> None:
    """Why a hook did nothing, as an ``error`` line in ``hooks.log`` (a hook exits 0 and prints
    nothing, so the log and ``paqad hooks status`` are where the reason shows); never raises."""
    try:
        from paqad import workspace  # lazy: the three imports here are the in-process side of the thin client's module
        from paqad.errors import PaqadError  # lazy: as above
        from paqad.hooks import runner  # lazy: as above

        if not workspace.is_set_up(root):
            return
        code = exc.exit_code if isinstance(exc, PaqadError) else 1
        text = " ".join(str(exc).split()) if isinstance(exc, PaqadError) else f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        runner.log_result(root, runner.RunResult(event, "-", "-", "error", code, error=text[: runner.ERROR_MAX_CHARS]))
    except Exception:  # noqa: BLE001 - logging the reason must not fail the hook either
        pass


# ---- git events -------------------------------------------------------------------------------

GIT_ACK_S = 0.3


def git_event(root: str, call: calls.GitEvent, *, here: bool = True) -> bool:
    """Tell the service about a git event; without one (and ``here``), run its actions in this
    process as the runner does (a detached, single-flight update). True when the service took it."""
    outcome = ask(root, call, ack_timeout=GIT_ACK_S, reply_timeout=2.0)
    if (outcome.reply or {}).get("ok"):
        return True
    if here:
        from pathlib import Path  # lazy: pathlib loads 26 modules the thin client avoids; this is the in-process side

        from paqad import git  # lazy: the in-process side of the thin client's module

        scrub_git_env(git.no_git_env())
        try:
            repository(root).git_event(call)
        except Exception as exc:  # noqa: BLE001 - a hook never fails git; the log says why
            log_reason(Path(root), call.event, exc)
    return False


# ---- the prompt hook as an MCP tool (paqad mcp --hook-tool) -------------------------------------


def prompt_context(root: Path, arguments: Mapping[str, JSON] | None) -> str:
    """Claude Code's hook stdout for this prompt, as ``paqad hook run prompt-submit --host
    claude`` prints it (:mod:`paqad.agent.mcp_hook`); never raises."""
    from paqad.agent import mcp_hook  # lazy: only the MCP door calls this; the thin client imports route

    args = arguments or {}
    payload = {"hook_event_name": "UserPromptSubmit", "cwd": str(root), **{k: args[k] for k in mcp_hook.FIELDS if isinstance(args.get(k), str)}}
    call = calls.Hook("prompt-submit", "claude", wire_json(payload), str(root), os.environ.get("PAQAD_HOOK_BUDGET"))
    outcome = ask(root, call)
    reply = outcome.reply or {}
    if reply.get("ok"):
        return str(reply.get("stdout") or "")
    try:
        repo = repository(root)
        cfg = repo.settings()
        out = repo.hook(call, cfg=cfg, note=f"mcp_tool; service: {outcome.why}")
        if cfg.rag_enabled and cfg.rag_serve:
            start(root, outcome.why)
        return out
    except Exception:  # noqa: BLE001 - a prompt hook never fails the prompt (hosts.handle logs its own)
        return ""


def wire_json(obj: Mapping[str, JSON]) -> str:
    return litejson.dumps(obj)

