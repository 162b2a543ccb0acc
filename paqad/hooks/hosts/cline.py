"""Cline: executable hook files ``.clinerules/hooks/UserPromptSubmit`` and ``TaskStart``.

Protocol (https://docs.cline.bot/features/hooks/hook-reference, https://docs.cline.bot/customization/hooks):
a project hook is an executable file named after its event in ``.clinerules/hooks/``; stdin is
JSON with ``clineVersion``, ``hookName``, ``timestamp``, ``taskId``, ``workspaceRoots``, ``userId``
and the event's own object (``userPromptSubmit.prompt``; ``taskStart.taskMetadata.initialTask``);
stdout is JSON ``{"cancel": false, "contextModification": "...", "errorMessage": ""}`` and the
``contextModification`` text is added to the conversation. ``TaskStart`` with the task text is
answered like a prompt; without it (Cline CLI 3.0.65 sent none, issue 13) it gets the orientation. Hooks must be enabled in Cline's
settings ("Enable Hooks"); macOS and Linux only.

One file per event, so a user's own hook file cannot be merged into: paqad refuses to replace it
and says so (``paqad hooks status`` shows it as foreign).
"""

from __future__ import annotations

import json
from pathlib import Path

from paqad import workspace
from paqad.hooks.hosts import base

NAME = "cline"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = ()
FOLDER = ".clinerules/hooks"
EVENTS = {"UserPromptSubmit": "prompt-submit", "TaskStart": "prompt-submit"}
ID_LINE = "# paqad-hook-id: cline-v2"
ID_MARK = "# paqad-hook-id: cline-v"  # any version, so an older paqad's file is recognised and rewritten
QUIET = '{"cancel": false}'


def script(event: str) -> str:
    """The hook file: the repository's paqad shim, else PATH, and a harmless answer without either."""
    hint = "session-start" if event == "TaskStart" else EVENTS[event]
    return (
        f"#!/bin/sh\n{ID_LINE}\n# Written by `paqad hooks install`; `paqad hooks uninstall` removes it.\n"
        f"out=$({base.command(hint, NAME)})\n"
        f"if [ -n \"$out\" ]; then printf '%s\\n' \"$out\"; else echo '{QUIET}'; fi\n"
    )


def _ours(path: Path) -> bool:
    try:
        return ID_MARK in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def detect(root: Path) -> bool:
    return (root / ".clinerules").exists()


def install(root: Path) -> base.HostState:
    actions, notes = [], []
    for event in EVENTS:
        path = root / FOLDER / event
        if path.exists() and not _ours(path):
            actions.append("refused")
            notes.append(f"{FOLDER}/{event} is the user's own hook; paqad left it alone")
            continue
        existed = path.exists()
        same = existed and path.read_text(encoding="utf-8") == script(event) and base.executable(path)
        if not same:
            workspace.atomic_write_text(path, script(event), mode=0o755)
        actions.append("unchanged" if same else ("updated" if existed else "installed"))
    state = status(root)
    state.action = "refused" if "refused" in actions else ("unchanged" if set(actions) == {"unchanged"} else "installed")
    state.note = "; ".join(notes) or None
    return state


def uninstall(root: Path) -> base.HostState:
    removed = False
    for event in EVENTS:
        path = root / FOLDER / event
        if path.exists() and _ours(path):
            path.unlink()
            removed = True
    base._prune_dirs(root, root / FOLDER)
    state = status(root)
    state.action = "removed" if removed else "unchanged"
    return state


def status(root: Path) -> base.HostState:
    paths = [f"{FOLDER}/{e}" for e in EVENTS]
    ours = [p for p in paths if _ours(root / p)]
    state = "installed" if len(ours) == len(paths) else ("partial" if ours else "absent")
    foreign = [p for p in paths if (root / p).exists() and p not in ours]
    return base.HostState(NAME, paths, state, note=f"user hook kept: {', '.join(foreign)}" if foreign else None)


def read_event(stdin: str, hint: str) -> base.Event:
    data = base.parse_json(stdin)
    name = str(data.get("hookName") or "UserPromptSubmit")
    roots = data.get("workspaceRoots") or []
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    if name == "TaskStart":  # Cline CLI 3.0.65 sent it without the task text: then the orientation
        meta = (data.get("taskStart") or {}).get("taskMetadata") or {}
        prompt = base.text_or_none(meta.get("initialTask"))
        kind = "session-start"
    else:
        prompt = base.text_or_none((data.get("userPromptSubmit") or {}).get("prompt"))
        kind = "prompt" if name in EVENTS else "other"
    return base.Event(NAME, kind, prompt, str(data.get("taskId") or ""), cwd, name, base.machine_reason(data, prompt))


def render(context: str | None, event: base.Event) -> str:
    if not context:
        return QUIET
    return json.dumps({"cancel": False, "contextModification": context[:LIMIT]})
