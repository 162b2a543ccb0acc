"""Gemini CLI: ``.gemini/settings.json`` hooks ``BeforeAgent`` and ``SessionStart``, and ``tools.enableHooks``.

Protocol (https://geminicli.com/docs/hooks/reference.md, https://geminicli.com/docs/hooks):
hooks sit in ``settings.json`` under ``hooks.<Event>`` as ``[{"matcher"?, "hooks": [{"type":
"command", "command", "name", "timeout"}]}]`` with the timeout in milliseconds; stdin is JSON
(``session_id``, ``cwd``, ``hook_event_name``, ``timestamp``, and ``prompt`` for ``BeforeAgent``,
which fires after the prompt is submitted and before planning); on exit 0 stdout must be JSON
only ("Silence is Mandatory"): ``{"hookSpecificOutput": {"hookEventName": "BeforeAgent",
"additionalContext": "..."}}``. Hooks must be switched on (``tools.enableHooks``,
https://smithery.ai/skills/olafkfreund/gemini-hooks).
"""

from __future__ import annotations

from pathlib import Path

from paqad.hooks.hosts import base

NAME = "gemini"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = ()
CONFIG = ".gemini/settings.json"
EVENTS = {"BeforeAgent": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"BeforeAgent": "prompt", "SessionStart": "session-start"}
TIMEOUT_MS = base.HOOK_TIMEOUT_S * 1000


def _group(event: str) -> dict:
    return {"hooks": [{"name": "paqad", "type": "command", "command": base.command(EVENTS[event], NAME), "timeout": TIMEOUT_MS}]}


def detect(root: Path) -> bool:
    return (root / ".gemini").is_dir() or (root / "GEMINI.md").is_file()


def _enable(data: dict) -> None:
    found = data.get("tools")
    tools: dict = found if isinstance(found, dict) else {}
    tools["enableHooks"] = True
    data["tools"] = tools


def _disable(data: dict) -> None:
    tools = data.get("tools")
    if isinstance(tools, dict) and tools.get("enableHooks") is True and not data.get("hooks"):
        tools.pop("enableHooks")  # no hooks left (ours were the only ones): switch the feature back off
        if not tools:
            data.pop("tools")


def install(root: Path) -> base.HostState:
    return base.after(base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS}, extra=_enable), status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS), extra=_disable), status, root)


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(EVENTS))
    try:
        enabled = (base.load_json(root / CONFIG).get("tools") or {}).get("enableHooks") is True
    except Exception:  # noqa: BLE001 - status never fails
        enabled = False
    if state.state != "absent" and not enabled:
        state.note = "tools.enableHooks is not true: Gemini CLI will not run the hooks"
    return state


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "BeforeAgent")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "BeforeAgent", LIMIT)
