"""Cursor: ``.cursor/hooks.json``; records on ``beforeSubmitPrompt``, delivers on ``sessionStart`` and ``postToolUse``.

Protocol (https://cursor.com/docs/agent/hooks; shape in https://app.unpkg.com/cursor-hooks@1.1.6/files/README.md
and https://raw.githubusercontent.com/rohitg00/agentmemory/main/plugin/cursor/hooks.json):
``{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}``; stdin JSON carries
``hook_event_name``, ``conversation_id``, ``workspace_roots`` and (``beforeSubmitPrompt``) ``prompt``.
``beforeSubmitPrompt`` can only allow or block (``{"continue": true}``), so it cannot carry context:
paqad records the prompt there and starts a background refresh, and hands the result over as
``{"additional_context": "..."}`` on ``sessionStart`` and on the next ``postToolUse`` (once per refresh).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "cursor"
LIMIT = 10_000
DELIVERS_ON_PROMPT = False
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("cursor", ".cursor/mcp.json", "mcpServers", {"type": "stdio", **base.MCP_WORKSPACE}),)
CONFIG = ".cursor/hooks.json"
EVENTS = {"beforeSubmitPrompt": "prompt-submit", "sessionStart": "session-start", "postToolUse": "tool-use"}
KINDS = {"beforeSubmitPrompt": "prompt", "sessionStart": "session-start", "postToolUse": "tool"}
HINTS = {v: k for k, v in EVENTS.items()}


def _group(event: str) -> JSONObject:
    return {"command": base.command(EVENTS[event], NAME)}


def detect(root: Path) -> bool:
    return (root / ".cursor").is_dir() or (root / ".cursorrules").is_file()


def _version(data: dict) -> None:
    data.setdefault("version", 1)


def _unversion(data: dict) -> None:
    if set(data) == {"version"}:
        data.clear()


def install(root: Path) -> base.HostState:
    return base.after(base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS}, extra=_version), status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS), extra=_unversion), status, root)


def status(root: Path) -> base.HostState:
    return base.json_status(root, NAME, CONFIG, list(EVENTS))


def read_event(stdin: str, hint: str) -> base.Event:
    data = base.parse_json(stdin)
    name = str(data.get("hook_event_name") or HINTS.get(hint, "beforeSubmitPrompt"))
    roots = data.get("workspace_roots") or []
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    session = str(data.get("conversation_id") or data.get("session_id") or "")
    event = base.Event(NAME, KINDS.get(name, "other"), base.text_or_none(data.get("prompt")), session, cwd, name)
    event.turn = str(data.get("generation_id") or "")
    if event.kind == "tool":
        base.tool_fields(event, data.get("tool_name"), data.get("tool_input"), data.get("tool_output"))
    return event


def render(context: str | None, event: base.Event) -> str:
    if event.kind == "prompt":
        return json.dumps({"continue": True})
    return json.dumps({"additional_context": context[:LIMIT]}) if context else "{}"
