"""Factory Droid: ``.factory/hooks.json`` hooks ``UserPromptSubmit`` and ``SessionStart``.

Protocol (https://docs.factory.ai/reference/hooks-reference, https://docs.factory.ai/harness/hooks.md):
project hooks live in ``.factory/hooks.json`` (older releases read the ``hooks`` key of
``.factory/settings.json``, which Droid still falls back to), shaped like Claude Code's:
``{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command", "timeout"}]}]}}``
with the timeout in seconds. Input carries the session, ``cwd``, the event name and ``prompt``
(snake_case in Droid's SDK types, camelCase in some third-party references: both are read).
Output ``hookSpecificOutput.additionalContext`` on ``UserPromptSubmit`` and ``SessionStart`` is
added to the session. Commands run from Droid's working directory, which may be a subfolder:
paqad's command looks for the repository's top itself.
"""

from __future__ import annotations

from pathlib import Path

from paqad.hooks.hosts import base

NAME = "droid"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("droid", ".factory/mcp.json", "mcpServers", {"type": "stdio", **base.MCP_PLAIN}),)
CONFIG = ".factory/hooks.json"
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}


def _group(event: str) -> dict:
    return {"hooks": [{"type": "command", "command": base.command(EVENTS[event], NAME), "timeout": base.HOOK_TIMEOUT_S}]}


def detect(root: Path) -> bool:
    return (root / ".factory").is_dir()


def install(root: Path) -> base.HostState:
    return base.after(base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS}), status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def status(root: Path) -> base.HostState:
    return base.json_status(root, NAME, CONFIG, list(EVENTS))


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
