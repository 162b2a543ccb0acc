"""Claude Code: ``.claude/settings.json`` hooks ``UserPromptSubmit`` and ``SessionStart``.

Protocol (https://code.claude.com/docs/en/hooks.md#userpromptsubmit, summarised at
https://developersdigest.tech/guides/user-prompt-submit-hook): the hook gets JSON on stdin with
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and (UserPromptSubmit) ``prompt``;
on exit 0 it may print ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
"additionalContext": "..."}}`` and that text reaches the model. Up to 10,000 characters arrive
whole (measured in https://dev.to/rulestack/6-of-6-prompts-a-claude-code-userpromptsubmit-hook-erased-were-still-in-the-transcript-and-15m2).
SessionStart takes the same output with ``hookEventName: "SessionStart"``.

Claude Code 2.1.x defers MCP tools behind tool search unless the server entry says
``"alwaysLoad": true`` (the option's description in its bundled cli), so paqad's ``.mcp.json``
entry sets it. GitHub Copilot CLI also runs the hooks in ``.claude/settings.json`` (github/app#1717),
without ``CLAUDE_PROJECT_DIR`` and with its own input (no ``hook_event_name``): when paqad's own
Copilot hooks are installed too, that second run is skipped (one delivery per turn).

Uncommitted edits (issue 12, part 4): ``PostToolUse`` on the file-writing tools (matcher
``Write|Edit|MultiEdit``; their ``tool_input.file_path``) and ``FileChanged`` (``file_path`` and
``event``: add, change or unlink; Claude Code 2.1.83 and later, checked in the 2.1.332 binary)
run ``paqad hook run file-changed --host claude``, marked ``async`` (Claude Code runs it in the
background, the edit never waits). The resident service then re-indexes the work tree behind the
edit (a coalesced ``rag-update``), so the agent's next search, through MCP or the next prompt,
finds it; without a service the hook exits at once (the next prompt's own sync re-indexes).
``FileChanged`` fires only for paths Claude Code watches (literal names in a matcher, or
``watchPaths`` a hook returned); paqad registers its entry without a matcher and asks for no
watch of its own: watching a whole work tree would cost the host a watcher per folder, and edits
from other editors are caught by the prompt's sync anyway.

Subagents (``SubagentStart``; its input, from the 2.1.332 binary's hook schema: the common fields
plus ``agent_id`` and ``agent_type``, no prompt; its ``hookSpecificOutput.additionalContext`` is
added to the subagent's own context, not the parent's). A subagent starts with an empty context
and works on the parent's current prompt, so it gets the context paqad delivered for the prompt
this session recorded, once per ``agent_id``, or the orientation when there is none for this
session (never another session's).

The Claude Code plugin (``integrations/claude-code``) carries the same hooks with the same way of
finding paqad (:mod:`launcher`); its commands say ``plugin-<hint>``. Claude Code runs a plugin's
hooks beside the project's, even identical commands (2.1.332: two blocks reached the model, seen
by tests/hosts_e2e_test.py), so a plugin hook in a repository whose ``.claude/settings.json`` has
paqad's hooks steps aside, with the reason in the hook log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base, copilot

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "claude"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("claude", ".mcp.json", "mcpServers", {"type": "stdio", **base.MCP_PLAIN, "alwaysLoad": True}),)
CONFIG = ".claude/settings.json"
FILE_CHANGED = "file-changed"
SUBAGENT = "subagent-start"
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start", "SubagentStart": SUBAGENT, "PostToolUse": FILE_CHANGED, "FileChanged": FILE_CHANGED}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start", "SubagentStart": SUBAGENT, "PostToolUse": FILE_CHANGED, "FileChanged": FILE_CHANGED}
#: The events a working install has; an install from before the file-change hooks lacks the others.
REQUIRED = ("UserPromptSubmit", "SessionStart")
EDIT_TOOLS = "Write|Edit|MultiEdit"  # the PostToolUse matcher: the tools that write a file_path
FILE_HOOK_TIMEOUT_S = 5  # the file-change hook only hands the path to the service
#: What the plugin's commands put before the event hint (``plugin-prompt-submit``); file-change
#: hooks keep the plain hint (a second re-index request for the same edit is coalesced, not repeated).
PLUGIN = "plugin-"


def _group(event: str, prefix: str = "") -> JSONObject:
    if EVENTS[event] != FILE_CHANGED:
        return {"hooks": [{"type": "command", "command": base.command(prefix + EVENTS[event], NAME), "timeout": base.HOOK_TIMEOUT_S}]}
    hook: JSONObject = {"type": "command", "command": base.command(FILE_CHANGED, NAME), "timeout": FILE_HOOK_TIMEOUT_S, "async": True}
    return {"matcher": EDIT_TOOLS, "hooks": [hook]} if event == "PostToolUse" else {"hooks": [hook]}


def plugin_hooks() -> JSONObject:
    """The ``hooks`` object of the plugin's ``hooks/hooks.json`` (tests/claude_plugin_test.py keeps
    the committed file equal to it)."""
    return {event: [_group(event, PLUGIN)] for event in EVENTS}


def detect(root: Path) -> bool:
    return (root / ".claude").is_dir() or (root / "CLAUDE.md").is_file()


def install(root: Path) -> base.HostState:
    action = base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS})
    return base.after(action, status, root)


def uninstall(root: Path) -> base.HostState:
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(REQUIRED))
    missing = [e for e in EVENTS if e not in REQUIRED and base.json_status(root, NAME, CONFIG, [e]).state != "installed"]
    if state.state == "installed" and missing:
        state.note = f"no {', '.join(missing)} hooks (an older paqad's install): {_WITHOUT[missing[0]]}; `paqad hooks install --agents {NAME}` adds them"
    return state


_WITHOUT = {
    "SubagentStart": "subagents start without paqad's context",
    "PostToolUse": "edits are indexed at the next prompt",
    "FileChanged": "edits are indexed at the next prompt",
}


def changed_files(data: dict) -> list[str]:
    """The paths a ``PostToolUse`` (``tool_input.file_path``) or ``FileChanged`` (``file_path``) names."""
    tool_input = data.get("tool_input")
    found = [data.get("file_path"), tool_input.get("file_path") if isinstance(tool_input, dict) else None]
    return [p for p in dict.fromkeys(found) if isinstance(p, str) and p]


def read_event(stdin: str, hint: str) -> base.Event:
    plugin = hint.startswith(PLUGIN)
    hint = hint.removeprefix(PLUGIN)
    event = base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")
    if hint == FILE_CHANGED or event.kind == FILE_CHANGED:  # whatever the JSON says, this command only reports files
        event.kind, event.prompt = FILE_CHANGED, None
        event.files = changed_files(base.parse_json(stdin))
        return event
    if event.kind == SUBAGENT:  # agent_id names the subagent starting, not a machine-made prompt
        data = base.parse_json(stdin)
        event.agent = str(data.get("agent_id") or "")
        event.machine, event.prompt = "", None
    if plugin and not event.machine and _project_hooks(event.cwd):
        event.machine = f"the Claude Code plugin's hook; paqad's hooks in {CONFIG} answer this event"
    if not event.machine and _copilot_running_claude_hooks(stdin):
        event.machine = "Copilot CLI running Claude Code's hooks; paqad answers through .github/hooks/paqad.json"
    return event


def _project_hooks(cwd: str | None) -> bool:
    """Whether the repository around ``cwd`` has paqad's hooks in ``.claude/settings.json``."""
    folder = Path(cwd or ".").resolve()
    for top in (folder, *folder.parents):
        if (top / ".git").exists():
            return status(top).state != "absent"
    return False


def _copilot_running_claude_hooks(stdin: str) -> bool:
    """Copilot's input (``timestamp``, no ``hook_event_name``) without Claude Code's environment,
    in a repository where paqad's Copilot hooks answer the same prompt."""
    if os.environ.get("CLAUDE_PROJECT_DIR"):
        return False
    try:
        data = json.loads(stdin or "{}")
    except ValueError:
        return False
    if not isinstance(data, dict) or "hook_event_name" in data or "timestamp" not in data:
        return False
    cwd = data.get("cwd")
    return isinstance(cwd, str) and copilot.status(Path(cwd)).state == "installed"


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
