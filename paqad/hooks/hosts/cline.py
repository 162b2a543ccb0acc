"""Cline: executable hook files ``.clinerules/hooks/UserPromptSubmit`` and ``TaskStart``.

Protocol (https://docs.cline.bot/features/hooks/hook-reference, https://docs.cline.bot/customization/hooks):
a project hook is an executable file named after its event in ``.clinerules/hooks/``; stdin is
JSON with ``clineVersion``, ``hookName``, ``timestamp``, ``taskId``, ``workspaceRoots``, ``userId``
and the event's own object (``userPromptSubmit.prompt``; ``taskStart.taskMetadata.initialTask``);
stdout is JSON ``{"cancel": false, "contextModification": "...", "errorMessage": ""}`` and the
``contextModification`` text is added to the conversation. ``TaskStart`` with the task text is
answered like a prompt. Hooks must be enabled in Cline's settings ("Enable Hooks"); macOS and Linux only.

What each Cline surface sends (the extension from its documentation; the CLI from the 3.0.65
binary against a fake model, tests/hosts_e2e_test.py): the extension runs ``.clinerules/hooks/``
and sends ``hookName: "TaskStart"`` with ``taskMetadata.initialTask`` and ``UserPromptSubmit``
with ``userPromptSubmit.prompt``. Cline CLI 3.0.65 (``cline "<task>"``) ran hooks from
``~/.cline/hooks/`` only, not the project's ``.clinerules/hooks/``; it sent ``TaskStart`` as
``hookName: "agent_start"`` with ``taskMetadata: {}``, ``sessionContext.rootSessionId``,
``agent_id`` and ``parent_agent_id: null``, and no ``UserPromptSubmit`` for the task. paqad reads
the task text from the session record the CLI has written by then (:func:`session_prompt`), so the
task is answered; without a record, the orientation.

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
        path = workspace.repo_file(root, f"{FOLDER}/{event}")
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
    notes.append(CLI_NOTE)
    state.note = "; ".join(notes)
    return state


#: What ``hooks install`` tells Cline users: the CLI reads the user's hook folder only (3.0.65).
CLI_NOTE = "Cline CLI runs only ~/.cline/hooks/: for it, copy .clinerules/hooks/TaskStart there"


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


#: Cline CLI 3.x names its hook events by its runtime's names in ``hookName`` (the 3.0.65 binary's
#: table: TaskStart → agent_start, UserPromptSubmit → prompt_submit); the extension sends the file names.
RUNTIME_NAMES = {"agent_start": "TaskStart", "prompt_submit": "UserPromptSubmit"}


def read_event(stdin: str, hint: str) -> base.Event:
    data = base.parse_json(stdin)
    name = str(data.get("hookName") or "UserPromptSubmit")
    name = RUNTIME_NAMES.get(name, name)
    roots = data.get("workspaceRoots") or []
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    if name == "TaskStart":
        meta = (data.get("taskStart") or {}).get("taskMetadata") or {}
        prompt = base.text_or_none(meta.get("initialTask")) or session_prompt(data)
        kind = "session-start"
    else:
        prompt = base.text_or_none((data.get("userPromptSubmit") or {}).get("prompt"))
        kind = "prompt" if name in EVENTS else "other"
    # Cline CLI's input names the agent (``agent_id``) for the lead agent too; only a spawned
    # agent (``parent_agent_id`` set) is a machine's turn.
    machine = "machine-made prompt: a spawned agent's task (parent_agent_id)" if data.get("parent_agent_id") else ""
    if not machine and "agent_id" not in data:
        machine = base.machine_reason(data, prompt)
    return base.Event(NAME, kind, prompt, str(data.get("taskId") or ""), cwd, name, machine)


def session_prompt(data: dict) -> str | None:
    """The task text of a Cline CLI session, which its ``TaskStart`` input leaves out (3.0.65:
    ``taskMetadata: {}``): the CLI has already written the session's record,
    ``~/.cline/data/sessions/<id>/<id>.json`` with ``prompt``, where ``<id>`` is the input's
    ``sessionContext.rootSessionId`` (seen by tests/hosts_e2e_test.py)."""
    context = data.get("sessionContext")
    session = context.get("rootSessionId") if isinstance(context, dict) else None
    if not isinstance(session, str) or not session or "/" in session or session.startswith("."):
        return None
    path = Path.home() / ".cline" / "data" / "sessions" / session / f"{session}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return base.text_or_none(record.get("prompt")) if isinstance(record, dict) else None


def render(context: str | None, event: base.Event) -> str:
    if not context:
        return QUIET
    return json.dumps({"cancel": False, "contextModification": context[:LIMIT]})
