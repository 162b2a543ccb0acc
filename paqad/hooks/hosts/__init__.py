"""Agent hosts: one module per host (see ``base.AgentHost``), one literal registry, one dispatcher.

``handle`` is what ``paqad hook run <event> --host NAME`` does with the JSON a host sent, in the
work tree its caller found, with the settings and the :class:`Door` its caller built: for a prompt
record it and answer within the budget (hosts that can inject on
prompt) or record it and refresh in the background (hosts that cannot); for a session start or a
tool use, hand over the last delivery (once per refresh for tool uses). It never raises; it returns
"" (print nothing) whenever paqad is not set up, retrieval is off, or anything is broken.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import config, hooklog, workspace
from paqad.channel import paths
from paqad.delivery import context
from paqad.hooks import uptake
from paqad.hooks.hosts import base, claude, cline, codex, copilot, cursor, droid, gemini, kiro, opencode, orientation, qwen, turns

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

HOSTS: dict[str, base.AgentHost] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "cline": cline,
    "cursor": cursor,
    "copilot": copilot,
    "qwen": qwen,
    "droid": droid,
    "kiro": kiro,
    "opencode": opencode,
}
NAMES = tuple(HOSTS)
DELIVERED_FILE = "hosts-delivered.json"
RUNTIME_NOTED_FILE = "runtime-refused.txt"  # the refused-runtime-folder line last logged (logged once per reason)


def detected(root: Path) -> list[str]:
    return [name for name, host in HOSTS.items() if host.detect(root)]


@dataclass(frozen=True)
class Door:
    """Where a hook event is answered and what that place lets the answer do, built once per
    request by its caller (:meth:`paqad.repository.Repository.hook`), so :func:`handle` never asks
    whether it runs in the hook's own process or in the resident service.

    ``mode`` is what the ``hooks.log`` line's mode says (``foreground``: the hook's own process;
    ``service``); ``budget`` the seconds the answer may take; ``refresh`` how to refresh behind a
    prompt (the service's coalesced job, else the runner's detached ``refresh-context``);
    ``changed`` what to do with the files a ``file-changed`` event names (the service's coalesced
    re-index; None: nothing, the next prompt's sync re-indexes them); ``note`` what the log line's
    detail adds (why the service did not answer); ``age`` how long the host had waited already when
    the call began (the log line counts from the hook process's start, as the host does)."""

    mode: str
    budget: float
    refresh: Callable[[Path], None]
    changed: Callable[[Path, list[str]], None] | None = None
    note: str = ""
    age: float = 0.0


def handle(host: base.AgentHost, event: base.Event, root: Path, cfg: config.Config, door: Door) -> str:
    """The host's stdout for this event; "" when paqad should stay silent. Never raises.

    ``cfg``: the settings the caller loaded for this request (with its ``-c`` overrides; loaded
    once per request, never again here); ``door``: where it is answered (:class:`Door`)."""
    try:
        return _handle(host, event, root, cfg, door)
    except Exception as exc:  # noqa: BLE001 - a prompt hook never fails the prompt; the log says why
        _log_failure(host, event, root, exc, door.mode)
        return ""


def _log_failure(host: base.AgentHost, event: base.Event, root: Path, exc: Exception, mode: str) -> None:
    """One ``hooks.log`` line for a hook answer that failed; best effort, never raises."""
    try:
        if workspace.is_set_up(root):
            error = f"{type(exc).__name__}: {exc}"[: hooklog.ERROR_MAX_CHARS]
            hooklog.log_result(root, hooklog.RunResult(f"{event.kind}", f"context:{host.NAME}", mode, "error", 1, error=error))
    except Exception:  # noqa: BLE001
        pass


def clean_prompt(text: str) -> tuple[str, str]:
    """The prompt as valid Unicode (a lone surrogate, which JSON allows and UTF-8 cannot carry,
    becomes U+FFFD) and a note for the log when something was replaced."""
    try:
        text.encode("utf-8")
        return text, ""
    except UnicodeEncodeError:
        fixed = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return fixed, "; lone surrogates in the prompt replaced"


def _handle(host: base.AgentHost, event: base.Event, root: Path, cfg: config.Config, door: Door) -> str:
    started = time.perf_counter()
    if not workspace.is_set_up(root) or not cfg.rag_enabled:
        return ""
    if event.machine and event.kind in ("session-start", "subagent-start"):  # another paqad hook answers it
        _log(root, host, event, "skipped", started, event.machine, door)
        return host.render(None, event)
    if event.kind == "session-start" and not event.prompt:  # no question yet: an orientation, never an old answer
        ask = orientation.describe_request(root, host.NAME) if cfg.rag_describe_background else ""
        _log(root, host, event, "orientation", started, "session start without a prompt" + ("; descriptions asked for" if ask else ""), door)
        oriented = orientation.text(root, _has_mcp(root, host))
        return host.render(turns.end_marked(f"{oriented}\n\n{ask}" if ask else oriented), event)
    if event.kind == "subagent-start":
        return _subagent(root, host, event, started, door)
    if event.kind in ("prompt", "session-start") and event.prompt:
        return _answer(root, cfg, host, event, started, door)
    if event.kind == "tool":
        text = _handover(root, host, event)
        if event.tool and text is None:  # what the agent did after a delivery (not the call this one follows), for `paqad report`
            from paqad.hooks import tooluse  # lazy: only a tool event that names its tool

            tooluse.record(root, host.NAME, event)
        return host.render(text, event)
    if event.kind == "file-changed":  # the host wrote files: re-index behind it; nothing to say
        if door.changed is not None and event.files:
            door.changed(root, event.files)
        return ""
    return host.render(None, event)


def _answer(root: Path, cfg: config.Config, host: base.AgentHost, event: base.Event, started: float, door: Door) -> str:
    """This prompt's context: the user's own words only, once per turn (:mod:`turns`)."""
    from paqad.delivery import prompt  # lazy: the search stack (97 modules), only for the events that deliver

    text, note = clean_prompt(event.prompt or "")
    text, cut = turns.strip_own(text)
    skip = event.machine or ("nothing but hook context in the prompt" if not text else "") or turns.claim(root, text, host.NAME, kind=event.kind, session=event.session_id)
    if skip:
        _log(root, host, event, "skipped", started, skip + note + cut, door)
        return host.render(None, event)
    if event.kind == "prompt" and not (host.DELIVERS_ON_PROMPT and event.can_deliver):
        _record_and_refresh(root, host, event, text, door)
        _log(root, host, event, "recorded", started, "this host cannot take context on a prompt; delivered on its next event" + note + cut, door)
        return host.render(None, event)
    answer = prompt.answer_prompt(root, cfg, text, host.LIMIT, door.refresh, door.budget, host.NAME, event.session_id)
    _log(root, host, event, str(answer.status), started, answer.detail + note + cut, door)
    if cfg.rag_serve and "no-runtime-dir" in door.note:
        _note_refused_runtime(root)
    last = context.last_delivery(root) if answer.text else None
    shown = turns.end_marked(answer.text)
    if last is not None:
        _record_uptake(root, host, event, str(answer.status), last, shown, answer.ranked)
    if last is not None and answer.status == "live":
        _mark_delivered(root, host, event, last.generated_at)  # a later tool use must not repeat it
    return host.render(shown, event)


def _record_uptake(
    root: Path, host: base.AgentHost, event: base.Event, status: str, last: context.Delivery, text: str | None, ranked: list[dict] | None,
) -> None:
    """The uptake record's line for what this event delivered (:mod:`paqad.hooks.uptake`): paths,
    lines and counts, read by ``paqad report`` with the transcript it names; never the prompt."""
    uptake.record(root, {
        "host": host.NAME, "event": event.kind, "session": event.session_id[: uptake.ID_MAX], "turn": event.turn[: uptake.ID_MAX],
        "status": status, "case": str(last.case), "transcript": event.transcript, "offset": uptake.transcript_size(event.transcript),
        "tokens": uptake.tokens(text), "delivered": uptake.spans(last.passages), "ranked": ranked,
    })


def _log(root: Path, host: base.AgentHost, event: base.Event, status: str, started: float, detail: str, door: Door) -> None:
    hint = event.kind if event.kind in ("session-start", "subagent-start") else "prompt-submit"
    seconds = round(time.perf_counter() - started, 3)
    if door.age > 0:  # what the host waited so far, not just this call
        seconds = round(seconds + door.age, 3)
        detail += "; seconds from process start"
    detail = f"{detail}; {door.note}" if door.note else detail
    hooklog.log_result(root, hooklog.RunResult(hint, f"context:{host.NAME}", door.mode, status, 0, seconds, detail=detail))


def _note_refused_runtime(root: Path) -> None:
    """The service is on but has no runtime folder because one is refused (another user's, open
    to others, a symlink): one ``hooks.log`` error line saying so and how to fix it, then nothing
    until the reason changes. The hook's output says nothing (``paqad doctor`` and ``paqad serve
    status`` do). Best effort."""
    refused = paths.refused_problem(root)
    if refused is None:
        return
    text = f"{refused[0]} — fix: {refused[1]}"[: hooklog.ERROR_MAX_CHARS]
    marker = workspace.state_dir(root) / RUNTIME_NOTED_FILE
    try:
        if marker.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    try:
        hooklog.log_result(root, hooklog.RunResult("prompt-submit", "serve", "-", hooklog.RunStatus.ERROR, None, error=text))
        workspace.atomic_write_text(marker, text, durable=False)
    except OSError:
        pass


def _has_mcp(root: Path, host: base.AgentHost) -> bool:
    """Whether one of the host's project MCP configs names paqad's server."""
    return any(base.registers_paqad(mcp, root) for mcp in host.MCP)


def _record_and_refresh(root: Path, host: base.AgentHost, event: base.Event, text: str, door: Door) -> None:
    from paqad.delivery import depth, refresh  # lazy: the search stack (96 modules), only for the events that deliver

    if not depth.is_trivial(text):
        refresh.record_prompt(root, text, host.NAME, event.session_id)
        door.refresh(root)


def _subagent(root: Path, host: base.AgentHost, event: base.Event, started: float, door: Door) -> str:
    """A subagent starting: the context of the prompt its session is working on, once per subagent
    (it starts with an empty context); the orientation when this session has none yet."""
    last = _this_sessions_delivery(root, host, event)
    if last is not None and _mark_delivered(root, host, event, last.generated_at, f":{event.agent}"):
        _log(root, host, event, "subagent", started, f"this session's context handed to subagent {event.agent}", door)
        return host.render(turns.end_marked(context.render_for_hook(last, host.LIMIT)), event)
    why = "already handed to this subagent" if last is not None else "no context for this session's prompt yet"
    _log(root, host, event, "orientation", started, f"subagent {event.agent}: {why}", door)
    return host.render(turns.end_marked(orientation.text(root, _has_mcp(root, host))), event)


def _this_sessions_delivery(root: Path, host: base.AgentHost, event: base.Event) -> context.Delivery | None:
    """The last delivery when it answers the prompt this host's session recorded, else None
    (another session's context is never handed over as this one's)."""
    last = context.last_delivery(root)
    if last is None or last.case == context.DeliveryCase.SKIPPED:
        return None
    recorded = _recorded(root)
    if recorded.get("host") != host.NAME or str(recorded.get("session_id") or "") != event.session_id:
        return None
    if " ".join(str(recorded.get("prompt") or "").split())[:200] != " ".join(last.query.split())[:200]:
        return None  # the refresh for this prompt has not finished yet
    return last


def _handover(root: Path, host: base.AgentHost, event: base.Event) -> str | None:
    """On a tool use: the context of the prompt this session recorded, once it is ready, once.

    Only a delivery that answers the prompt this host's session recorded goes out (another
    session's context is never handed over as this one's); a session that already got it (on its
    prompt, or on an earlier tool use) gets nothing more until the next refresh."""
    last = _this_sessions_delivery(root, host, event)
    if last is None or not _mark_delivered(root, host, event, last.generated_at):
        return None
    text = turns.end_marked(context.render_for_hook(last, host.LIMIT))
    _record_uptake(root, host, event, "handover", last, text, None)
    return text


def _mark_delivered(root: Path, host: base.AgentHost, event: base.Event, generated_at: float, who: str = "") -> bool:
    """Note that this session (``who``: one of its subagents) has this delivery; False when it had it already."""
    key = f"{host.NAME}:{event.session_id}{who}"
    seen = _delivered(root)
    if seen.get(key) == generated_at:
        return False
    seen[key] = generated_at
    workspace.atomic_write_text(workspace.state_dir(root) / DELIVERED_FILE, json.dumps(dict(list(seen.items())[-50:])), durable=False)
    return True


def _recorded(root: Path) -> JSONObject:
    from paqad.delivery import refresh  # lazy: the search stack (96 modules), only for the events that deliver

    try:
        data = json.loads(refresh.prompt_path(root).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _delivered(root: Path) -> JSONObject:
    try:
        data = json.loads((workspace.state_dir(root) / DELIVERED_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
