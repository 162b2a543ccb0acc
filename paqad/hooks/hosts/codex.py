"""Codex CLI: ``.codex/hooks.json`` (``UserPromptSubmit``, ``SessionStart``) and its feature flag.

Protocol (https://developers.openai.com/codex/hooks.md): hooks are discovered in ``hooks.json``
next to each config layer (``.codex/hooks.json`` for a project); the shape and the stdin/stdout
JSON follow Claude Code's (``hookSpecificOutput.additionalContext``, schema in
openai/codex ``codex-rs/hooks/schema/generated/session-start.command.output.schema.json``); the JSON
root accepts only ``description`` and ``hooks``. The feature is ``[features] hooks = true`` in
``config.toml`` (``codex_hooks`` is the older, deprecated alias; newer releases default it on):
paqad adds the line only when neither key is set, marked so uninstall removes exactly it.

Codex 0.171 runs no project hook until the user has reviewed it (its ``startup_hooks_review``:
"hooks need review before they can run"; the approval is kept as ``trusted_hash`` under
``[hooks.state]`` in ``~/.codex/config.toml``), and only in a trusted project
(``[projects."<path>"] trust_level = "trusted"``); ``codex exec`` skips unreviewed hooks silently.
Install therefore says how to trust them (``TRUST_NOTE``), and ``paqad doctor`` checks both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "codex"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("codex", ".codex/config.toml", "mcp_servers", dict(base.MCP_PLAIN)),)  # read for trusted projects
CONFIG = ".codex/hooks.json"
TOML = ".codex/config.toml"
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}
TOML_MARK = "# added by paqad hooks install"
TRUST_NOTE = (
    "Codex runs these hooks only after you review them: start `codex` here and approve paqad's hooks "
    "(or `/hooks`); `codex exec` skips unreviewed hooks (`--dangerously-bypass-hook-trust` for one run)"
)
_FLAG = re.compile(r"^\s*(hooks|codex_hooks)\s*=", re.M)


def _group(event: str) -> JSONObject:
    return {"hooks": [{"type": "command", "command": base.command(EVENTS[event], NAME), "timeout": base.HOOK_TIMEOUT_S}]}


def detect(root: Path) -> bool:
    return (root / ".codex").is_dir() or (root / "AGENTS.md").is_file()


def enable_flag(text: str | None) -> str | None:
    """``config.toml`` with ``[features] hooks = true`` unless a hooks flag is already set there."""
    text = text or ""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip().split("#")[0].strip() == "[features]"), None)
    if start is not None:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
        if _FLAG.search("".join(lines[start + 1 : end])):
            return text or None
        lines.insert(start + 1, f"hooks = true  {TOML_MARK}\n")
        return "".join(lines)
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}[features]  {TOML_MARK}\nhooks = true  {TOML_MARK}\n"


def disable_flag(text: str) -> str | None:
    kept = [line for line in text.splitlines(keepends=True) if TOML_MARK not in line]
    out = "".join(kept)
    out = out[:-1] if out.endswith("\n\n") and not text.endswith("\n\n") else out
    return out if out.strip() else None


def install(root: Path) -> base.HostState:
    action = base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS})
    flag = base.edit_file(root, NAME, TOML, enable_flag)
    state = base.after(action if flag == "unchanged" else ("installed" if action == "installed" else "updated"), status, root)
    state.note = "; ".join(n for n in (state.note, TRUST_NOTE) if n)
    return state


def uninstall(root: Path) -> base.HostState:
    flag = base.restore_file(root, NAME, TOML, disable_flag)  # first: hooks.json's backup knows the folders paqad made
    action = base.json_uninstall(root, NAME, CONFIG, list(EVENTS))
    return base.after(action if action != "unchanged" else flag, status, root)


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(EVENTS))
    state.paths.append(TOML)
    toml = root / TOML
    if state.state == "installed" and not (toml.exists() and _FLAG.search(toml.read_text(encoding="utf-8"))):
        state.note = "hooks feature flag not set in .codex/config.toml (on by default in recent Codex)"
    return state


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
