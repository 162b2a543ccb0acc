"""The agent-host interface (a ``Protocol``) and the defaults the host modules share.

A host is a plain module (``paqad/hooks/hosts/claude.py`` ...) with the members below; the literal
``HOSTS`` registry in ``paqad/hooks/hosts/__init__.py`` serves dispatch, the ``--agents`` choices and
MCP registration (each host names the MCP config files it reads).

Installing merges paqad's entries into the host's own config without losing the user's, and is
idempotent: an entry is ours when its command runs ``paqad hook run`` (``MARK``, older versions)
or paqad's launcher (:mod:`launcher`; older versions ran ``.paqad/bin/paqad``). Before the first
change to a file its original bytes are kept under ``<per-developer folder>/state/hosts/``; uninstall puts them
back byte for byte when the file is still exactly what paqad wrote, and otherwise removes only
paqad's entries (a teammate's clone has no backup: the same structural removal applies).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paqad import workspace
from paqad.errors import PaqadError
from paqad.hooks.hosts import launcher

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

MARK = "paqad hook run"
HOOK_TIMEOUT_S = 10  # what the host waits at most; the hook itself answers within its budget


@dataclass
class Event:
    """One hook call from a host, reduced to what paqad needs."""

    host: str
    kind: str  # prompt | session-start | subagent-start | tool | file-changed | other
    prompt: str | None = None
    session_id: str = ""
    cwd: str | None = None
    name: str = ""  # the host's own event name, echoed back where the host wants it
    machine: str = ""  # why the host, not the user, made this prompt (a loop, a subagent's result); "" = the user's
    can_deliver: bool = True  # False: this host version ignores context on this event (record, deliver later)
    files: list[str] = field(default_factory=list)  # kind "file-changed": the paths the host says it wrote
    agent: str = ""  # kind "subagent-start": the subagent's id (each gets its parent's context once)
    transcript: str = ""  # the session transcript the host names (``transcript_path``): ``paqad report`` reads it
    turn: str = ""  # the host's id of this turn, where it sends one (Codex ``turn_id``, Cursor ``generation_id``)
    tool: str = ""  # kind "tool": the tool the agent used (Copilot ``toolName``, Cursor ``tool_name``)
    tool_args: dict[str, Any] = field(default_factory=dict)  # its arguments (``paqad report`` reads paths and patterns)
    tool_result: str = ""  # the start of what it returned (a search's result names the files it found)


@dataclass(frozen=True)
class McpConfig:
    """A project MCP config file a host reads, and the entry ``paqad mcp install`` puts there."""

    name: str  # the ``paqad mcp install --host`` name
    rel: str  # the file, relative to the repository
    key: str  # the object that maps server names to entries
    entry: dict[str, Any]

    @property
    def toml(self) -> bool:
        return self.rel.endswith(".toml")


MCP_SERVER = "paqad"


def registers_paqad(config: McpConfig, root: Path) -> bool:
    """Whether the host's project MCP config has a server named paqad (unreadable: no)."""
    try:
        text = (root / config.rel).read_text(encoding="utf-8")
        data = tomllib.loads(text) if config.toml else json.loads(text)
    except (OSError, ValueError):
        return False
    servers = data.get(config.key) if isinstance(data, dict) else None
    return isinstance(servers, dict) and MCP_SERVER in servers
#: An MCP entry runs what the hook commands run: paqad's per-user launcher, else ``paqad`` on PATH
#: (``launcher.SERVE``, the Claude Code plugin's command; a committed file names no machine path).
#: Claude Code, Codex and the others start project servers in the project, where ``paqad mcp``
#: finds the repository.
MCP_PLAIN: JSONObject = {"command": "sh", "args": ["-c", launcher.SERVE]}
#: Cursor and VS Code interpolate ``${workspaceFolder}``, so their entry names the repository (an
#: argument after the script: ``"$@"``, which no host substitutes).
MCP_WORKSPACE: JSONObject = {"command": "sh", "args": ["-c", launcher.SERVE + ' "$@"', "paqad-mcp", "--root", "${workspaceFolder}"]}
#: What older paqad versions wrote (``paqad`` from PATH); ``paqad mcp install`` rewrites them.
MCP_OLD_PLAIN: JSONObject = {"command": "paqad", "args": ["mcp"]}
MCP_OLD_WORKSPACE: JSONObject = {"command": "paqad", "args": ["mcp", "--root", "${workspaceFolder}"]}


@dataclass
class HostState:
    """Where a host's hooks live and what install/uninstall did there."""

    host: str
    paths: list[str] = field(default_factory=list)
    state: str = "absent"  # installed | absent | partial
    action: str | None = None  # installed | updated | unchanged | removed | restored | refused
    note: str | None = None

    def to_dict(self) -> JSONObject:
        return asdict(self)


class AgentHost(Protocol):
    NAME: str  # the --agents name
    LIMIT: int  # most characters of context one hook answer may carry
    DELIVERS_ON_PROMPT: bool  # False: the prompt event cannot carry context (record there, deliver later)
    MCP: tuple[McpConfig, ...]  # the project MCP configs it reads (``paqad mcp install``); () for none

    def detect(self, root: Path) -> bool: ...  # is this host in use in the repository?

    def install(self, root: Path) -> HostState: ...  # merge paqad's hooks into the host's config; idempotent

    def uninstall(self, root: Path) -> HostState: ...  # remove them, restoring what was there

    def status(self, root: Path) -> HostState: ...  # what is installed now

    def read_event(self, stdin: str, hint: str) -> Event: ...  # the JSON the host sent → Event

    def render(self, context: str | None, event: Event) -> str: ...  # stdout for the host ("" = nothing)


# ---- shared defaults ----------------------------------------------------------------------


def after(action: str, status: Callable[[Path], HostState], root: Path) -> HostState:
    """The host's status once ``action`` (what install/uninstall just did) has happened.

    ``action`` is the first argument so that it is evaluated before the status is read."""
    state = status(root)
    state.action = action
    return state


def command(event: str, host: str) -> str:
    """The hook command written into a host's config: the per-user launcher, else PATH, else exit 0."""
    return launcher.command(event, host)


def parse_json(stdin: str) -> dict[str, Any]:
    data = json.loads(stdin or "{}")
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def is_ours(entry: object) -> bool:
    """paqad's entry: it runs ``paqad hook run`` through the launcher, or an older version's command."""
    text = entry if isinstance(entry, str) else json.dumps(entry)
    return MARK in text or launcher.COMMAND_MARK in text or launcher.OLD_SHIM_REL in text


def load_json(path: Path) -> dict[str, Any]:
    """A host's JSON config, {} when absent; a file paqad cannot parse is never overwritten."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise PaqadError(f"{path}: not valid JSON ({exc}); fix it, then run `paqad hooks install` again") from None
    if not isinstance(data, dict):
        raise PaqadError(f"{path}: expected a JSON object at the top level")
    return data


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def merge_groups(hooks: dict[str, Any], event: str, group: dict[str, Any]) -> None:
    """Put ``group`` as the only paqad entry of ``hooks[event]``, after the user's own entries."""
    groups = hooks.get(event)
    groups = groups if isinstance(groups, list) else []
    hooks[event] = [g for g in groups if not is_ours(g)] + [group]


def drop_groups(hooks: dict[str, Any], event: str) -> None:
    groups = hooks.get(event)
    if not isinstance(groups, list):
        return
    kept = [g for g in groups if not is_ours(g)]
    if kept:
        hooks[event] = kept
    else:
        hooks.pop(event, None)


# ---- backups and edits --------------------------------------------------------------------


def _backup_path(root: Path, host: str, rel: str) -> Path:
    return workspace.state_dir(root) / "hosts" / f"{host}-{rel.replace('/', '_')}.json"


def edit_file(root: Path, host: str, rel: str, change: Callable[[str | None], str | None]) -> str:
    """Apply ``change(old_text) -> new_text`` (None = delete) to ``root/rel``, keeping the first original.

    Returns installed | updated | unchanged | removed. A symlink on the way is refused
    (:func:`paqad.workspace.repo_file`).
    """
    path = workspace.repo_file(root, rel)
    old = path.read_text(encoding="utf-8") if path.exists() else None
    new = change(old)
    if new == old:
        return "unchanged"
    backup = _backup_path(root, host, rel)
    if not backup.exists():
        backup.parent.mkdir(parents=True, exist_ok=True)
        created = [str(p.relative_to(root)) for p in _missing_parents(root, path)]
        workspace.atomic_write_text(backup, json.dumps({"original": old, "written": None, "created_dirs": created}))
    record = json.loads(backup.read_text(encoding="utf-8"))
    if new is None:
        path.unlink(missing_ok=True)
        _prune_dirs(root, path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        workspace.atomic_write_text(path, new)
    record["written"] = new
    workspace.atomic_write_text(backup, json.dumps(record))
    return "installed" if old is None or record["original"] == old else "updated"


def restore_file(root: Path, host: str, rel: str, strip: Callable[[str], str | None]) -> str:
    """Undo ``edit_file``: the original bytes when the file is as paqad left it, else ``strip(text)``."""
    path = workspace.repo_file(root, rel)
    backup = _backup_path(root, host, rel)
    current = path.read_text(encoding="utf-8") if path.exists() else None
    record = None
    if backup.exists():
        try:
            record = json.loads(backup.read_text(encoding="utf-8"))
        except ValueError:
            record = None
    if record is not None and record.get("written") == current:
        original = record.get("original")
        if original is None:
            path.unlink(missing_ok=True)
            for folder in record.get("created_dirs", []):  # deepest first; only folders paqad made
                _rmdir_quiet(root / folder)
        else:
            workspace.atomic_write_text(path, original)
        backup.unlink()
        return "restored" if original is not None else "removed"
    if current is None:
        return "unchanged"
    stripped = strip(current)
    if stripped == current:
        return "unchanged"
    _write_or_delete(root, path, stripped)
    backup.unlink(missing_ok=True)
    return "removed"


def _write_or_delete(root: Path, path: Path, text: str | None) -> None:
    if text is None:
        path.unlink(missing_ok=True)
        _prune_dirs(root, path.parent)
    else:
        workspace.atomic_write_text(path, text)


def _missing_parents(root: Path, path: Path) -> list[Path]:
    """The folders above ``path`` (inside ``root``) that do not exist yet, deepest first."""
    out, folder = [], path.parent
    while folder != root and not folder.exists():
        out.append(folder)
        folder = folder.parent
    return out


def _rmdir_quiet(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _prune_dirs(root: Path, folder: Path) -> None:
    """Remove empty folders paqad may have created (``.claude/``), never the repository root."""
    root = root.resolve()
    folder = folder.resolve()
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


# ---- a host whose config is one JSON file with {"hooks": {event: [group, ...]}} ------------


def json_install(root: Path, host: str, rel: str, groups: dict[str, dict], extra: Callable[[dict], None] | None = None) -> str:
    def change(old: str | None) -> str:
        data = load_json(root / rel) if old is not None else {}
        hooks = data.get("hooks")
        if not isinstance(hooks, dict):
            hooks = {}
        for event, group in groups.items():
            merge_groups(hooks, event, group)
        data["hooks"] = hooks
        if extra:
            extra(data)
        new = dump_json(data)
        return old if old is not None and _same_json(old, new) else new

    return edit_file(root, host, rel, change)


def _same_json(old: str, new: str) -> bool:
    try:
        return json.loads(old) == json.loads(new)
    except ValueError:
        return False


def json_uninstall(root: Path, host: str, rel: str, events: list[str], extra: Callable[[dict], None] | None = None) -> str:
    def strip(text: str) -> str | None:
        try:
            data = json.loads(text)
        except ValueError:
            return text
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if not isinstance(hooks, dict):
            return text
        for event in events:
            drop_groups(hooks, event)
        if not hooks:
            data.pop("hooks")
        if extra:
            extra(data)
        return dump_json(data) if data else None

    return restore_file(root, host, rel, strip)


def json_status(root: Path, host: str, rel: str, events: list[str]) -> HostState:
    path = root / rel
    try:
        hooks = load_json(path).get("hooks", {})
    except PaqadError as exc:
        return HostState(host, [rel], "absent", note=str(exc))
    found = [e for e in events if isinstance(hooks, dict) and any(is_ours(g) for g in hooks.get(e, []) or [])]
    state = "installed" if len(found) == len(events) else ("partial" if found else "absent")
    return HostState(host, [rel], state)


# ---- a host whose config is one file paqad owns whole (Copilot's hooks file, Kiro's agent, OpenCode's plugin) ----


def owns(path: Path) -> bool:
    """The file is paqad's: it runs paqad's hook command (or carries an older paqad's mark)."""
    try:
        return is_ours(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def owned_status(root: Path, host: str, rel: str, ours: Callable[[Path], bool] = owns) -> HostState:
    return HostState(host, [rel], "installed" if ours(root / rel) else "absent")


def owned_write(root: Path, host: str, rel: str, text: str, ours: Callable[[Path], bool] = owns) -> HostState:
    """Write paqad's whole file; a file of the same name that is not paqad's is left alone (refused),
    and so is a symlink on the way (:func:`paqad.workspace.repo_file`)."""
    path = workspace.repo_file(root, rel)
    if path.exists() and not ours(path):
        state = owned_status(root, host, rel, ours)
        state.action, state.note = "refused", f"{rel} exists and is not paqad's; paqad left it alone"
        return state
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old != text:
        workspace.atomic_write_text(path, text)
    state = owned_status(root, host, rel, ours)
    state.action = "unchanged" if old == text else ("updated" if old else "installed")
    return state


def owned_remove(root: Path, host: str, rel: str, ours: Callable[[Path], bool] = owns) -> HostState:
    """Remove paqad's file (and the folders it leaves empty); someone else's stays."""
    path = root / rel
    removed = path.exists() and ours(path)
    if removed:
        path.unlink()
        _prune_dirs(root, path.parent)
    state = owned_status(root, host, rel, ours)
    state.action = "removed" if removed else "unchanged"
    return state


def executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


# ---- the "hookSpecificOutput" protocol shared by Claude Code, Codex and Gemini CLI -------------


#: How Claude Code (2.1.x; tags in its bundled cli) marks prompts it makes itself: a background
#: task's result, another session's or a teammate's message, a channel post, a scheduled loop, a
#: local command's output. Hosts that share its protocol may send the same.
MACHINE_TAGS = ("<task-notification>", "<teammate-message", "<cross-session-message", "<channel", "<loop", "<local-command-")


def machine_reason(data: dict[str, Any], prompt: str | None) -> str:
    """Why this prompt was made by the host rather than typed ("" when it is the user's)."""
    if data.get("agent_id") or data.get("agentId"):
        return "machine-made prompt: a subagent's turn (agent_id)"
    head = (prompt or "").lstrip()[:40]
    tag = next((t for t in MACHINE_TAGS if head.startswith(t)), None)
    return f"machine-made prompt: {tag.strip('<>-')}" if tag else ""


TOOL_RESULT_CHARS = 20_000  # of a tool's result kept on its Event: enough to see the files a search found


def tool_fields(event: Event, name: object, args: object, result: object) -> Event:
    """Fill a tool event's ``tool``, ``tool_args`` (an object, or JSON text of one) and
    ``tool_result`` (text, or an object holding it) from what the host sent; odd values are dropped."""
    event.tool = name if isinstance(name, str) else ""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {}
    event.tool_args = args if isinstance(args, dict) else {}
    if isinstance(result, dict):
        result = result.get("textResultForLlm") or result.get("output") or result.get("text") or ""
    event.tool_result = result[:TOOL_RESULT_CHARS] if isinstance(result, str) else ""
    return event


def hook_specific_event(host: str, kinds: dict[str, str], stdin: str, hint: str, prompt_event: str) -> Event:
    """Read the JSON these hosts send (``hook_event_name``, ``prompt``, ``session_id``, ``cwd``;
    the camelCase spellings too, which Factory Droid's documentation shows)."""
    data = parse_json(stdin)
    name = str(data.get("hook_event_name") or data.get("hookEventName") or ("SessionStart" if hint == "session-start" else prompt_event))
    prompt = text_or_none(data.get("prompt"))
    session = str(data.get("session_id") or data.get("sessionId") or "")
    event = Event(host, kinds.get(name, "other"), prompt, session, text_or_none(data.get("cwd")), name, machine_reason(data, prompt))
    event.transcript = str(data.get("transcript_path") or data.get("transcriptPath") or "")
    event.turn = str(data.get("turn_id") or data.get("generation_id") or "")
    return event


def hook_specific_output(context: str | None, event: Event, prompt_event: str, limit: int) -> str:
    """``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}``, or nothing."""
    if not context:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event.name or prompt_event, "additionalContext": context[:limit]}})
