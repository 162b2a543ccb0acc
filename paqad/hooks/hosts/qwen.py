"""Qwen Code: ``.qwen/settings.json`` hooks ``UserPromptSubmit`` and ``SessionStart``.

Protocol (QwenLM/qwen-code ``docs/users/features/hooks.md``, Qwen Code 0.14/0.15): hooks are on by
default (``disableAllHooks: true`` switches them off) and sit in ``settings.json`` under
``hooks.<Event>`` as ``[{"hooks": [{"type": "command", "command", "name", "timeout"}]}]`` with the
timeout in milliseconds. Input is JSON with ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``timestamp`` and, for ``UserPromptSubmit``, ``prompt`` plus the optional
``submitted_prompt``. Output ``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}``
reaches the model as its own part, wrapped in ``<qwen:user-prompt-submit-context>``.

``UserPromptSubmit`` fires for every supported model send, including tool-result continuations
and hook sends, so ``prompt`` is not always the user's text. ``submitted_prompt`` carries the
user's words when Qwen knows them (interactive TUI submissions) and is what paqad searches; a
continuation inside the turn repeats nothing (:mod:`paqad.hooks.hosts.turns` claims each prompt
once), and a prompt made of hook context only is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "qwen"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("qwen", ".qwen/settings.json", "mcpServers", dict(base.MCP_PLAIN)),)
CONFIG = ".qwen/settings.json"
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}
TIMEOUT_MS = base.HOOK_TIMEOUT_S * 1000


def _group(event: str) -> JSONObject:
    return {"hooks": [{"type": "command", "name": "paqad", "command": base.command(EVENTS[event], NAME), "timeout": TIMEOUT_MS}]}


def detect(root: Path) -> bool:
    return (root / ".qwen").is_dir() or (root / "QWEN.md").is_file()


def install(root: Path) -> base.HostState:
    return base.after(base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS}), status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(EVENTS))
    try:
        off = base.load_json(root / CONFIG).get("disableAllHooks") is True
    except Exception:  # noqa: BLE001 - status never fails
        off = False
    if state.state != "absent" and off:
        state.note = f"disableAllHooks is true in {CONFIG}: Qwen Code runs no hooks; remove it"
    return state


def read_event(stdin: str, hint: str) -> base.Event:
    event = base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")
    data = json.loads(stdin or "{}")
    submitted = base.text_or_none(data.get("submitted_prompt"))
    if submitted and submitted.strip():
        event.prompt = submitted
    return event


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
