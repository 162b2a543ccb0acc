"""Agent hosts: one module per host (see ``base.AgentHost``), one literal registry, one dispatcher.

``handle`` is what ``paqad hook run <event> --host NAME`` does with the JSON a host sent: find the
repository, then for a prompt record it and answer within the budget (hosts that can inject on
prompt) or record it and refresh in the background (hosts that cannot); for a session start or a
tool use, hand over the last delivery (once per refresh for tool uses). It never raises; it returns
"" (print nothing) whenever paqad is not set up, retrieval is off, or anything is broken.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from paqad import git, workspace
from paqad.delivery import context
from paqad.hooks.hosts import base, claude, cline, codex, copilot, cursor, gemini

HOSTS: dict[str, base.AgentHost] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "cline": cline,
    "cursor": cursor,
    "copilot": copilot,
}
NAMES = tuple(HOSTS)
DELIVERED_FILE = "hosts-delivered.json"


def detected(root: Path) -> list[str]:
    return [name for name, host in HOSTS.items() if host.detect(root)]


def repo_root(event: base.Event) -> Path | None:
    start = Path(event.cwd) if event.cwd and Path(event.cwd).is_dir() else Path.cwd()
    return git.toplevel(start)


def handle(
    host: base.AgentHost,
    event: base.Event,
    root: Path | None = None,
    *,
    door: str = "foreground",
    budget: float | None = None,
    refresh: Callable[[Path], None] | None = None,
    note: str = "",
) -> str:
    """The host's stdout for this event; "" when paqad should stay silent. Never raises.

    The resident service (``paqad.serve``) calls this too: ``door`` is what the log line's mode
    says (``service``, or ``foreground`` in the hook's own process), ``budget`` the prompt's
    (default: ``prompt.budget_of``), ``refresh`` how to refresh behind a prompt (default: the
    runner's detached ``refresh-context``), ``note`` added to the log line's detail (why the
    service did not answer).
    """
    try:
        return _handle(host, event, root, _Door(door, budget, refresh, note))
    except Exception as exc:  # noqa: BLE001 - a prompt hook never fails the prompt; the log says why
        _log_failure(host, event, root, exc)
        return ""


class _Door:
    """How this call was reached: the log's mode, the budget, the background refresh, a note."""

    def __init__(self, mode: str, budget: float | None, refresh: Callable[[Path], None] | None, note: str) -> None:
        self.mode, self.budget, self.refresh, self.note = mode, budget, refresh, note


def _log_failure(host: base.AgentHost, event: base.Event, root: Path | None, exc: Exception) -> None:
    """One ``hooks.log`` line for a hook answer that failed; best effort, never raises."""
    try:
        from paqad.hooks import runner

        root = root or repo_root(event)
        if root is not None and workspace.paqad_dir(root).is_dir():
            error = f"{type(exc).__name__}: {exc}"[: runner.ERROR_MAX_CHARS]
            runner.log_result(root, runner.RunResult(f"{event.kind}", f"context:{host.NAME}", "foreground", "error", 1, error=error))
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


def _handle(host: base.AgentHost, event: base.Event, root: Path | None, door: _Door) -> str:
    from paqad import config
    from paqad.delivery import prompt
    from paqad.hooks import runner

    started = time.perf_counter()
    root = root or repo_root(event)
    if root is None or not workspace.paqad_dir(root).is_dir():
        return ""
    cfg = config.load(root)
    if not cfg.rag_enabled:
        return ""
    spawn = door.refresh or runner.start_refresh
    if event.kind == "prompt" and event.prompt:
        if not host.DELIVERS_ON_PROMPT:
            _record_and_refresh(root, host, event, spawn)
            return host.render(None, event)
        text, cleaned = clean_prompt(event.prompt)
        budget = prompt.budget_of(cfg) if door.budget is None else door.budget
        answer = prompt.answer_prompt(root, cfg, text, host.LIMIT, spawn, budget, host.NAME, event.session_id)
        seconds = round(time.perf_counter() - started, 3)
        detail = (f"{answer.detail}; {door.note}" if door.note else answer.detail) + cleaned
        runner.log_result(root, runner.RunResult("prompt-submit", f"context:{host.NAME}", door.mode, str(answer.status), 0, seconds, detail=detail))
        return host.render(answer.text, event)
    if event.kind in ("session-start", "tool"):
        return host.render(_handover(root, host, event), event)
    return host.render(None, event)


def _record_and_refresh(root: Path, host: base.AgentHost, event: base.Event, spawn: Callable[[Path], None]) -> None:
    from paqad.delivery import depth, refresh

    if event.prompt and not depth.is_trivial(event.prompt):
        refresh.record_prompt(root, clean_prompt(event.prompt)[0], host.NAME, event.session_id)
        spawn(root)


def _handover(root: Path, host: base.AgentHost, event: base.Event) -> str | None:
    """The last delivery, marked when it answered another prompt; tool uses get each refresh once."""
    from paqad.delivery import refresh

    last = context.last_delivery(root)
    if last is None or last.case == context.DeliveryCase.SKIPPED:
        return None
    key = f"{host.NAME}:{event.session_id}"
    seen = _delivered(root)
    if event.kind == "tool" and seen.get(key) == last.generated_at:
        return None
    seen[key] = last.generated_at
    workspace.atomic_write_text(workspace.state_dir(root) / DELIVERED_FILE, json.dumps(dict(list(seen.items())[-50:])))
    recorded = refresh.recorded_prompt(root)
    note = None if recorded is None or recorded == last.query else context.stale_note(last)
    return context.render_for_hook(last, host.LIMIT, note)


def _delivered(root: Path) -> dict:
    try:
        data = json.loads((workspace.state_dir(root) / DELIVERED_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
