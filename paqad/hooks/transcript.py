"""What the agent did in one turn, read from the session transcript its host keeps.

Claude Code, Codex, Qwen Code and Factory Droid hand every hook a ``transcript_path``: a JSON-lines
file the host appends to as the session goes. ``paqad report`` reads the part of it that one turn
wrote (from the size it had at the delivery to the next delivery's, :mod:`paqad.hooks.uptake`) and
reduces it to :class:`Action` values: files read (with a line range when the tool gave one),
searches (the pattern, and the text the search returned), files edited.

The formats differ and change between host versions, so nothing here depends on a line's overall
shape: every JSON object in a line is visited and tool calls are recognised by the three shapes
the model APIs use (Anthropic ``tool_use`` with ``input``; Gemini ``functionCall`` with ``args``;
OpenAI ``function_call`` with ``arguments``, a JSON string), their results by ``tool_use_id`` or
``call_id``. Shell commands (``Bash``, Codex's ``shell``) are read for ``cat``/``sed -n``/``head``
(a read), ``grep``/``rg``/``find`` (a search), ``sed -i`` and redirections (an edit).

Defensive by design: the transcript is the host's, large, and its format is not ours. Reading is
capped (``MAX_BYTES`` per turn, ``MAX_LINE`` per line: longer lines are skipped), unknown lines and
malformed JSON are skipped and counted, and every failure becomes a one-line note, never an
exception. Nothing read here is kept beyond the counts: not the prompt, not the code.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

MAX_BYTES = 8_000_000  # read at most this much of one turn
MAX_LINE = 2_000_000  # a longer line (a huge tool result) is skipped
MAX_DEPTH = 12  # how deep a line's JSON is searched for tool calls
MAX_SUBAGENTS = 50  # subagent transcripts read for one turn
RESULT_CHARS = 20_000  # characters of a search's result kept to see which files it found
PATTERN_MAX = 200  # a longer search pattern is compared as text only, never compiled
NAME_MIN = 4  # a file stem or unit name shorter than this is not taken as named by a pattern

READ_TOOLS = frozenset({"read", "read_file", "readfile", "read_many_files", "view", "open", "notebookread", "view_file", "open_file"})
SEARCH_TOOLS = frozenset({
    "grep", "glob", "search_file_content", "grep_search", "glob_search", "find_files", "search", "codebase_search",
    "file_search", "list_directory", "ls", "research", "rg", "find",
})
EDIT_TOOLS = frozenset({
    "edit", "write", "multiedit", "write_file", "replace", "edit_file", "str_replace", "apply_patch", "create",
    "notebookedit", "search_replace", "str_replace_based_edit_tool", "multi_edit",
})
SHELL_TOOLS = frozenset({"bash", "shell", "run_shell_command", "exec_command", "local_shell", "run_terminal_cmd", "terminal", "shell_command"})
PATH_KEYS = ("file_path", "absolute_path", "filePath", "path", "target_file", "file", "notebook_path")
PATTERN_KEYS = ("pattern", "query", "regex", "glob", "q", "name")
SHELL_READS = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl", "sed", "awk"})
SHELL_SEARCHES = frozenset({"grep", "rg", "ag", "ack", "find", "fd", "git"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


@dataclass
class Action:
    """One thing the agent did: ``kind`` read, search or edit; the file (as the tool named it),
    the lines read when the tool said (None: the whole file), a search's pattern and what it returned."""

    kind: str
    path: str = ""
    start: int | None = None
    end: int | None = None
    pattern: str = ""
    result: str = ""
    call_id: str = ""
    named: list[str] = field(default_factory=list)  # from a tool event: the delivered spans (``path:start``) its pattern named


@dataclass
class Turn:
    """The actions of one turn, in order, and what could not be read."""

    actions: list[Action] = field(default_factory=list)
    skipped: int = 0  # lines that were not JSON, or too long
    read: int = 0  # lines read as JSON
    note: str = ""  # why the transcript could not be read (one line), "" when it was


def read_turn(path: str, start: int, end: int | None) -> Turn:
    """The actions between byte ``start`` and ``end`` (None: the end of the file) of the transcript
    at ``path``. Never raises: an unreadable or odd transcript gives a :attr:`Turn.note`."""
    turn = Turn()
    if not path or not os.path.isabs(path):
        turn.note = "the host named no transcript"
        return turn
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or a device would block or never end
            turn.note = "transcript is not a regular file"
            return turn
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if start < 0 or start > size:
                turn.note = f"transcript shorter than at the delivery ({size} < {start} bytes): rewritten since"
                return turn
            handle.seek(start)
            budget = min(MAX_BYTES, (end if end is not None and end >= start else size) - start)
            _scan(handle, budget, turn)
        if turn.skipped and not turn.read:
            turn.note = f"transcript not understood ({turn.skipped} lines, none of them JSON)"
    except OSError as exc:
        turn.note = f"transcript unreadable ({exc.strerror or type(exc).__name__})"
    except Exception as exc:  # noqa: BLE001 - a host's format is not ours: a note, never a crash
        turn.note = f"transcript not understood ({type(exc).__name__})"
    return turn


def subagent_actions(path: str, since: float, until: float | None) -> list[Action]:
    """The actions of the subagents a turn started: Claude Code 2.1 writes each subagent's
    transcript to ``<session>/subagents/agent-<id>.jsonl`` beside the session's ``<session>.jsonl``.
    The files last written within the turn (from ``since`` to ``until``, epoch seconds) are read
    whole, at most ``MAX_SUBAGENTS`` of them; an unreadable one adds nothing."""
    folder = os.path.join(path.removesuffix(".jsonl"), "subagents")
    if not path.endswith(".jsonl") or not os.path.isdir(folder):
        return []
    out: list[Action] = []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))[:MAX_SUBAGENTS]
    except OSError:
        return []
    for name in names:
        full = os.path.join(folder, name)
        try:
            written = os.stat(full).st_mtime
        except OSError:
            continue
        if written >= since and (until is None or written < until):
            out.extend(read_turn(full, 0, None).actions)
    return out


def _scan(handle: Any, budget: int, turn: Turn) -> None:
    calls: dict[str, Action] = {}
    read = 0
    while read < budget:
        line = handle.readline(MAX_LINE + 1)
        if not line:
            break
        read += len(line)
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            read += _skip_rest(handle)
            turn.skipped += 1
            continue
        try:
            data = json.loads(line)
        except ValueError:
            turn.skipped += line.strip() != b""
            continue
        turn.read += 1
        for node in _objects(data, 0):
            _visit(node, calls, turn)


def _skip_rest(handle: Any) -> int:
    skipped = 0
    while True:
        chunk = handle.readline(MAX_LINE)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def _objects(node: Any, depth: int) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``node``, outermost first (to ``MAX_DEPTH``)."""
    if depth > MAX_DEPTH:
        return
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _objects(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value, depth + 1)


def _visit(node: dict[str, Any], calls: dict[str, Action], turn: Turn) -> None:
    """A tool call (three API shapes) becomes actions; a tool result fills its search's ``result``."""
    response = node.get("functionResponse")
    if isinstance(response, dict) and str(response.get("id") or "") in calls:  # Gemini, Qwen: {functionResponse: {id, response}}
        calls[str(response.get("id"))].result = json.dumps(response.get("response"))[:RESULT_CHARS]
        return
    result_id = node.get("tool_use_id") or (node.get("call_id") if node.get("type") == "function_call_output" else None)
    if isinstance(result_id, str) and result_id in calls:
        calls[result_id].result = _text(node.get("content", node.get("output")))[:RESULT_CHARS]
        return
    name, args = node.get("name"), None
    if node.get("type") == "tool_use" and "input" in node:
        args = node.get("input")
    elif "args" in node and isinstance(name, str) and not node.get("type"):
        args = node.get("args")
    elif node.get("type") in ("function_call", "custom_tool_call") and ("arguments" in node or "input" in node):
        args = _maybe_json(node.get("arguments", node.get("input")))
    elif node.get("type") == "local_shell_call" and isinstance(node.get("action"), dict):
        name, args = "local_shell", node["action"]
    if not isinstance(name, str) or args is None:
        return
    call_id = str(node.get("call_id") or node.get("id") or "")
    for action in actions_of(name, args if isinstance(args, dict) else {"input": args}):
        action.call_id = call_id
        if call_id and action.kind == "search":
            calls[call_id] = action
        turn.actions.append(action)


def actions_of(name: str, args: dict[str, Any]) -> list[Action]:
    """What one tool call did, by the tool's name (``mcp__server__tool`` by its last part)."""
    tool = name.rsplit("__", 1)[-1].lower()
    paths = _paths(args)
    if tool in READ_TOOLS:
        start, end = _read_range(args)
        return [Action("read", p, start, end) for p in paths]
    if tool in SEARCH_TOOLS:
        pattern = next((str(args[k]) for k in PATTERN_KEYS if isinstance(args.get(k), str)), "")
        return [Action("search", paths[0] if paths else "", pattern=pattern)]
    if tool in EDIT_TOOLS:
        patch = next((v for v in args.values() if isinstance(v, str) and "*** " in v), "")
        return [Action("edit", p) for p in [*paths, *_PATCH_FILE.findall(patch)]]
    if tool in SHELL_TOOLS:
        command = args.get("command", args.get("cmd", args.get("input", "")))
        return shell_actions(" ".join(command[-1:]) if isinstance(command, list) else str(command or ""))
    return []


def _paths(args: dict[str, Any]) -> list[str]:
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return [value]
    listed = args.get("paths") or args.get("file_paths")
    return [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []


def _read_range(args: dict[str, Any]) -> tuple[int | None, int | None]:
    """The lines a read tool was asked for: Claude Code's ``offset`` (first line) and ``limit``
    (count), or ``start_line``/``end_line``; (None, None) for the whole file."""
    view = args.get("view_range")  # Copilot CLI's view: [first, last], last -1 for the end
    if isinstance(view, list) and len(view) == 2:
        first_line, last_line = _int(view[0]), _int(view[1])
        return (max(1, first_line or 1), last_line if last_line is not None and last_line > 0 else None)
    first = _int(args.get("start_line", args.get("offset")))
    last = _int(args.get("end_line"))
    count = _int(args.get("limit"))
    if first is None and last is None and count is None:
        return None, None
    first = max(1, first or 1)
    if last is None and count is not None:
        last = first + count - 1
    return first, last


def shell_actions(command: str) -> list[Action]:
    """Reads, searches and edits in a shell command line (each ``&&``, ``;`` or ``|`` part)."""
    out: list[Action] = []
    for part in re.split(r"&&|\|\||;|\|", command):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if not words:
            continue
        out.extend(_shell_part(words, part))
    return out


def _shell_part(words: list[str], part: str) -> list[Action]:
    exe, args = os.path.basename(words[0]), words[1:]
    redirect = re.search(r"(?<![0-9&])>>?\s*([^\s>&|;]+)", part)
    if redirect:
        return [Action("edit", redirect.group(1))]
    plain = [a for a in args if not a.startswith("-")]
    if exe == "sed" and any(a == "-i" or a.startswith("-i") for a in args):
        return [Action("edit", p) for p in plain[1:]]
    if exe == "sed" and plain:
        match = _SED_RANGE.match(plain[0])
        start, end = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (None, None)
        return [Action("read", p, start, end) for p in plain[1:]]
    if exe in SHELL_READS and exe not in ("sed", "awk"):
        return [Action("read", p) for p in plain if not p.isdigit()]
    if exe in SHELL_SEARCHES:
        plain = plain[1:] if exe == "git" and plain[:1] == ["grep"] else plain
        if exe == "git" and words[1:2] != ["grep"]:
            return []
        return [Action("search", " ".join(plain[1:2]), pattern=plain[0] if plain else "")]
    return []


def _text(value: Any) -> str:
    """A tool result's text: a string, or the strings in a list of content blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v.get("text") if isinstance(v, dict) else v) for v in value)
    if isinstance(value, dict):
        return _text(value.get("output", value.get("text", "")))
    return ""


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return {"input": value}
    return value


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


# ---- matching an action against a passage (the report, and tool events as they arrive) ----


def names(pattern: str, span: Mapping[str, object]) -> bool:
    """Whether a search pattern names the passage's unit or file (as text, or as a regex matching the name)."""
    if not pattern:
        return False
    unit = str(span.get("name") or "").rsplit(".", 1)[-1]
    base = str(span["path"]).rsplit("/", 1)[-1]
    needles = [n for n in (unit, base, base.rsplit(".", 1)[0]) if len(n) >= NAME_MIN]
    if any(n.lower() in pattern.lower() for n in needles):
        return True
    if len(pattern) < NAME_MIN or len(pattern) > PATTERN_MAX:
        return False
    try:
        return any(re.search(pattern, n) for n in needles if n != base)
    except re.error:
        return False


def relative(real_root: str, path: str) -> str | None:
    """``path`` relative to the work tree at ``real_root`` (a relative path as given), None outside it."""
    if not path:
        return None
    if not os.path.isabs(path):
        return os.path.normpath(path).replace(os.sep, "/")
    full = os.path.realpath(path)
    if full != real_root and not full.startswith(real_root + os.sep):
        return None
    return os.path.relpath(full, real_root).replace(os.sep, "/")
