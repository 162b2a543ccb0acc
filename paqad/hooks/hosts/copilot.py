"""GitHub Copilot (CLI and coding agent): paqad's own ``.github/hooks/paqad.json``.

Protocol (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference,
https://docs.github.com/en/copilot/reference/hooks-configuration): every ``.github/hooks/*.json``
is loaded, ``{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "...",
"timeoutSec": N}]}}``. ``userPromptSubmitted`` gets ``{timestamp, cwd, prompt}`` and its output is
ignored, so paqad records the prompt there and starts a background refresh; the context goes out
as ``{"additionalContext": "..."}`` on ``sessionStart`` and ``postToolUse``, the events the
Copilot hook API lets carry context (https://docs.github.com/en/copilot/how-tos/copilot-sdk/hooks/hooks-overview;
note github/copilot-cli#2142: some CLI releases drop sessionStart's). The input has no event
name, so the hook command says which event it serves.

paqad owns the whole file: install writes it, uninstall deletes it; the user's other hook files
are never touched.
"""

from __future__ import annotations

import json
from pathlib import Path

from paqad import workspace
from paqad.hooks.hosts import base

NAME = "copilot"
LIMIT = 10_000
DELIVERS_ON_PROMPT = False
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("vscode", ".vscode/mcp.json", "servers", {"type": "stdio", **base.MCP_WORKSPACE}),)  # Copilot in VS Code
CONFIG = ".github/hooks/paqad.json"
EVENTS = {"userPromptSubmitted": "prompt-submit", "sessionStart": "session-start", "postToolUse": "tool-use"}
KINDS = {"prompt-submit": "prompt", "session-start": "session-start", "tool-use": "tool"}


def document() -> str:
    hooks = {e: [{"type": "command", "bash": base.command(hint, NAME), "timeoutSec": base.HOOK_TIMEOUT_S}] for e, hint in EVENTS.items()}
    return base.dump_json({"version": 1, "hooks": hooks})


def detect(root: Path) -> bool:
    return (root / ".github" / "copilot-instructions.md").is_file() or (root / ".github" / "hooks").is_dir()


def install(root: Path) -> base.HostState:
    path = root / CONFIG
    if path.exists() and not base.is_ours(path.read_text(encoding="utf-8", errors="replace")):
        state = status(root)
        state.action, state.note = "refused", f"{CONFIG} exists and is not paqad's; paqad left it alone"
        return state
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old != document():
        workspace.atomic_write_text(path, document())
    state = status(root)
    state.action = "unchanged" if old == document() else ("updated" if old else "installed")
    return state


def uninstall(root: Path) -> base.HostState:
    path = root / CONFIG
    removed = path.exists() and base.is_ours(path.read_text(encoding="utf-8", errors="replace"))
    if removed:
        path.unlink()
        base._prune_dirs(root, path.parent)
    state = status(root)
    state.action = "removed" if removed else "unchanged"
    return state


def status(root: Path) -> base.HostState:
    path = root / CONFIG
    ours = path.exists() and base.is_ours(path.read_text(encoding="utf-8", errors="replace"))
    return base.HostState(NAME, [CONFIG], "installed" if ours else "absent")


def read_event(stdin: str, hint: str) -> base.Event:
    data = base.parse_json(stdin)
    session = str(data.get("sessionId") or data.get("session_id") or "")
    prompt = base.text_or_none(data.get("prompt")) or base.text_or_none(data.get("initialPrompt"))
    return base.Event(NAME, KINDS.get(hint, "other"), prompt, session, base.text_or_none(data.get("cwd")), hint)


def render(context: str | None, event: base.Event) -> str:
    if event.kind == "prompt" or not context:
        return ""
    return json.dumps({"additionalContext": context[:LIMIT]})
