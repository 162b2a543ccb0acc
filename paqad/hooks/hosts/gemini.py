"""Gemini CLI: ``.gemini/settings.json`` hooks ``BeforeAgent`` and ``SessionStart``, and its MCP entry.

Protocol (https://geminicli.com/docs/hooks/reference.md, https://geminicli.com/docs/hooks):
hooks sit in ``settings.json`` under ``hooks.<Event>`` as ``[{"matcher"?, "hooks": [{"type":
"command", "command", "name", "timeout"}]}]`` with the timeout in milliseconds; stdin is JSON
(``session_id``, ``cwd``, ``hook_event_name``, ``timestamp``, and ``prompt`` for ``BeforeAgent``,
which fires after the prompt is submitted and before planning); on exit 0 stdout must be JSON
only ("Silence is Mandatory"): ``{"hookSpecificOutput": {"hookEventName": "BeforeAgent",
"additionalContext": "..."}}``.

Gemini CLI 0.61 switches hooks with ``hooksConfig.enabled`` (on unless set to false; its bundle
reads ``enableHooks: settings.hooksConfig.enabled``); ``tools.enableHooks``, which older paqad
wrote, is no setting of 0.61 and is removed on install. A ``false`` the user set is respected and
reported with its fix (status, ``paqad doctor``), never overwritten. In headless mode (``-p``)
Gemini prepends the SessionStart context to the prompt as ``<hook_context>`` (its bundle strips
``<hook_context>`` from history), which :mod:`paqad.hooks.hosts.turns` cuts before searching.
MCP servers go in the same file under ``mcpServers``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "gemini"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("gemini", ".gemini/settings.json", "mcpServers", dict(base.MCP_PLAIN)),)
CONFIG = ".gemini/settings.json"
EVENTS = {"BeforeAgent": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"BeforeAgent": "prompt", "SessionStart": "session-start"}
TIMEOUT_MS = base.HOOK_TIMEOUT_S * 1000


def _group(event: str) -> JSONObject:
    return {"hooks": [{"name": "paqad", "type": "command", "command": base.command(EVENTS[event], NAME), "timeout": TIMEOUT_MS}]}


def detect(root: Path) -> bool:
    return (root / ".gemini").is_dir() or (root / "GEMINI.md").is_file()


def _drop_old_flag(data: dict) -> None:
    """Remove ``tools.enableHooks`` (written by older paqad; not a Gemini CLI 0.61 setting)."""
    tools = data.get("tools")
    if isinstance(tools, dict) and "enableHooks" in tools:
        tools.pop("enableHooks")
        if not tools:
            data.pop("tools")


def install(root: Path) -> base.HostState:
    return base.after(base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS}, extra=_drop_old_flag), status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def disabled_in(root: Path, home: Path | None = None) -> str | None:
    """The settings file that sets ``hooksConfig.enabled: false`` (project first, then user), or None."""
    for path in (root / CONFIG, (home or Path.home()) / CONFIG):
        try:
            section = base.load_json(path).get("hooksConfig")
        except Exception:  # noqa: BLE001 - an unreadable file is reported by status, not here
            continue
        if isinstance(section, dict) and section.get("enabled") is False:
            return str(path)
    return None


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(EVENTS))
    off = disabled_in(root)
    if state.state != "absent" and off:
        state.note = f'hooksConfig.enabled is false in {off}: Gemini CLI runs no hooks; set "hooksConfig": {{"enabled": true}} there'
    return state


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "BeforeAgent")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "BeforeAgent", LIMIT)
