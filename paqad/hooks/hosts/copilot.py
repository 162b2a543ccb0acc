"""GitHub Copilot (CLI and coding agent): paqad's own ``.github/hooks/paqad.json``.

Protocol (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference,
https://docs.github.com/en/copilot/reference/hooks-configuration): every ``.github/hooks/*.json``
is loaded, ``{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "...",
"timeoutSec": N}]}}``. ``userPromptSubmitted`` gets ``{timestamp, cwd, prompt}``; since Copilot
CLI 1.0.65 (its changelog) its ``additionalContext`` reaches the model, so paqad answers the
prompt there (``{"additionalContext": "..."}``). ``sessionStart`` carries ``initialPrompt`` when
the session starts with one (``copilot -p``), which paqad answers; without it the session gets the
orientation. ``postToolUse`` hands over the context of this session's recorded prompt once, when
the prompt event could not carry it. The input has no event name, so the command says which
event it serves.

Version-aware: ``hooks install`` asks ``copilot --version``; for a CLI older than 1.0.65 the
prompt hook is written as ``prompt-record`` (record the prompt, refresh in the background, deliver
on the next ``postToolUse``), the way paqad treated every Copilot before. Copilot CLI also runs
``.claude/settings.json``'s hooks (see :mod:`paqad.hooks.hosts.claude`); one delivery per turn.

paqad owns the whole file: install writes it, uninstall deletes it; the user's other hook files
are never touched.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from paqad.hooks.hosts import base

NAME = "copilot"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("vscode", ".vscode/mcp.json", "servers", {"type": "stdio", **base.MCP_WORKSPACE}),)  # Copilot in VS Code
CONFIG = ".github/hooks/paqad.json"
EVENTS = {"userPromptSubmitted": "prompt-submit", "sessionStart": "session-start", "postToolUse": "tool-use"}
KINDS = {"prompt-submit": "prompt", "prompt-record": "prompt", "session-start": "session-start", "tool-use": "tool"}
PROMPT_CONTEXT_SINCE = (1, 0, 65)  # the first Copilot CLI whose userPromptSubmitted output reaches the model


def cli_version(run: Callable[[], str] | None = None) -> tuple[int, ...] | None:
    """The installed Copilot CLI's version (``copilot --version``), None when it cannot be told."""
    try:
        out = run() if run else subprocess.run(["copilot", "--version"], capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", out or "")
    return tuple(int(x) for x in found.groups()) if found else None


def document(version: tuple[int, ...] | None = None) -> str:
    """The hooks file; a CLI known to be older than 1.0.65 records on its prompt event instead."""
    legacy = version is not None and version < PROMPT_CONTEXT_SINCE
    hints = {**EVENTS, "userPromptSubmitted": "prompt-record" if legacy else "prompt-submit"}
    hooks = {e: [{"type": "command", "bash": base.command(hint, NAME), "timeoutSec": base.HOOK_TIMEOUT_S}] for e, hint in hints.items()}
    return base.dump_json({"version": 1, "hooks": hooks})


def detect(root: Path) -> bool:
    return (root / ".github" / "copilot-instructions.md").is_file() or (root / ".github" / "hooks").is_dir()


def install(root: Path) -> base.HostState:
    version = cli_version()
    state = base.owned_write(root, NAME, CONFIG, document(version))
    if state.action != "refused" and version is not None and version < PROMPT_CONTEXT_SINCE:
        shown = ".".join(map(str, version))
        state.note = f"Copilot CLI {shown} ignores context on a prompt: it arrives with the next tool use; upgrade to 1.0.65 or later and run `paqad hooks install` again"
    return state


def uninstall(root: Path) -> base.HostState:
    return base.owned_remove(root, NAME, CONFIG)


def status(root: Path) -> base.HostState:
    return base.owned_status(root, NAME, CONFIG)


def read_event(stdin: str, hint: str) -> base.Event:
    data = base.parse_json(stdin)
    session = str(data.get("sessionId") or data.get("session_id") or "")
    prompt = base.text_or_none(data.get("prompt")) or base.text_or_none(data.get("initialPrompt"))
    event = base.Event(NAME, KINDS.get(hint, "other"), prompt, session, base.text_or_none(data.get("cwd")), hint, base.machine_reason(data, prompt))
    event.can_deliver = hint != "prompt-record"
    if event.kind == "tool":
        base.tool_fields(event, data.get("toolName"), data.get("toolArgs"), data.get("toolResult"))
    return event


def render(context: str | None, event: base.Event) -> str:
    if not context:
        return ""
    return json.dumps({"additionalContext": context[:LIMIT]})
