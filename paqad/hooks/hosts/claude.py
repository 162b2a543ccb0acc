"""Claude Code: ``.claude/settings.json`` hooks ``UserPromptSubmit`` and ``SessionStart``.

Protocol (https://code.claude.com/docs/en/hooks.md#userpromptsubmit, summarised at
https://developersdigest.tech/guides/user-prompt-submit-hook): the hook gets JSON on stdin with
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and (UserPromptSubmit) ``prompt``;
on exit 0 it may print ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
"additionalContext": "..."}}`` and that text reaches the model. Up to 10,000 characters arrive
whole (measured in https://dev.to/rulestack/6-of-6-prompts-a-claude-code-userpromptsubmit-hook-erased-were-still-in-the-transcript-and-15m2).
SessionStart takes the same output with ``hookEventName: "SessionStart"``.
"""

from __future__ import annotations

from pathlib import Path

from paqad.hooks.hosts import base

NAME = "claude"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("claude", ".mcp.json", "mcpServers", {"type": "stdio", **base.MCP_PLAIN}),)
CONFIG = ".claude/settings.json"
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}


def _group(event: str) -> dict:
    return {"hooks": [{"type": "command", "command": base.command(EVENTS[event], NAME), "timeout": base.HOOK_TIMEOUT_S}]}


def detect(root: Path) -> bool:
    return (root / ".claude").is_dir() or (root / "CLAUDE.md").is_file()


def install(root: Path) -> base.HostState:
    action = base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS})
    return base.after(action, status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def status(root: Path) -> base.HostState:
    return base.json_status(root, NAME, CONFIG, list(EVENTS))


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
