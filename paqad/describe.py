"""Agent-written descriptions: the vocabulary the source never contained.

An agent reads a unit and writes one paragraph saying what it is for; ``put`` stores it in the
committed sidecar ``paqad.descriptions.json`` at the repository root, keyed by unit id and the
unit's ``content_hash``. The index puts a description in the unit's ``description`` field
(BM25F, ``index.fields``) and in the text it embeds, but only while the hash matches: when the
code changes, the description stops applying and the unit is pending again. ``promote`` turns descriptions into docstrings or
doc comments as a unified diff for review (``paqad describe promote | git apply``); paqad never
writes source itself.

The sidecar is untrusted input (it is committed, edited by hand, merged by git):
- a file that is not JSON, not the documented shape, or larger than ``MAX_SIDECAR_BYTES`` makes
  the ``describe`` commands fail with a one-line ``ConfigError`` naming the file, and is ignored
  by the index (builds and searches go on without descriptions, with an audit-log warning);
- an entry with the wrong types, an empty text or a text longer than ``MAX_DESCRIPTION_CHARS``,
  and an entry whose unit id the index does not know, is ignored and counted (``status``);
- ``put`` rewrites the file atomically, keys sorted, under a file lock, keeping every other
  entry as it was (even ignored ones: a unit may come back on another branch).

Format::

    {"version": 1,
     "descriptions": {"src/app.py::Cart.total": {"content_hash": "3f2a…", "text": "…"}}}
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import textwrap
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import filelock

from paqad import workspace
from paqad.errors import ConfigError, UsageError
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    from paqad.eligibility.collect import Eligibility
    from paqad.index.reader import Index
    from paqad.units import CodeUnit

SIDECAR_NAME = "paqad.descriptions.json"
SIDECAR_VERSION = 1
#: A description is one paragraph. 1,000 characters is several times what the embedding sees
#: (30% of ``embed.UNIT_TEXT_MAX_CHARS``) and keeps one entry from swamping a unit's description field.
MAX_DESCRIPTION_CHARS = 1000
#: A larger sidecar is refused as a whole rather than parsed (about 100,000 full entries).
MAX_SIDECAR_BYTES = 64 * 1024 * 1024
#: Characters of source ``pending`` returns per unit: enough to describe a unit from, bounded.
PENDING_SOURCE_CHARS = 1200
#: Declarations an agent is asked to describe (module leftovers, prose and config keys are not).
DESCRIBABLE_KINDS = ("function", "method", "class", "interface", "struct", "enum", "trait")
LOCK_TIMEOUT_S = 30.0
_HASH = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Entry:
    content_hash: str
    text: str


@dataclass
class Sidecar:
    """The parsed sidecar: valid entries, how many were ignored, and the raw object to rewrite."""

    entries: dict[str, Entry] = field(default_factory=dict)
    invalid: int = 0
    raw: dict = field(default_factory=lambda: {"version": SIDECAR_VERSION, "descriptions": {}})
    sha: str = ""
    error: str | None = None


def sidecar_path(root: Path) -> Path:
    return root / SIDECAR_NAME


def normalize(text: str) -> str:
    """One paragraph: whitespace runs become one space, control characters are dropped."""
    kept = "".join(ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) != "Cc")
    return " ".join(kept.split())


def read_sidecar(root: Path, strict: bool = True) -> Sidecar:
    """The sidecar at ``root`` (empty when absent). A malformed file raises ``ConfigError`` when
    ``strict``, else yields an empty ``Sidecar`` whose ``error`` says why (the index's way)."""
    path = sidecar_path(root)
    try:
        return _parse_sidecar(path)
    except ConfigError as exc:
        if strict:
            raise
        return Sidecar(sha="invalid", error=str(exc))


def _parse_sidecar(path: Path) -> Sidecar:
    if not path.exists() and not path.is_symlink():
        return Sidecar()
    fix = "fix it or delete it (descriptions are then pending again)"
    if path.is_symlink() or not path.is_file():
        raise ConfigError(f"{path}: not a regular file; {fix}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror}); {fix}") from exc
    if len(data) > MAX_SIDECAR_BYTES:
        raise ConfigError(f"{path}: {len(data)} bytes, more than the {MAX_SIDECAR_BYTES} allowed; {fix}")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); {fix}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("descriptions"), dict):
        raise ConfigError(f'{path}: expected {{"version": 1, "descriptions": {{...}}}}; {fix}')
    if raw.get("version") != SIDECAR_VERSION:
        raise ConfigError(f"{path}: version {raw.get('version')!r}, this paqad reads version {SIDECAR_VERSION}; {fix}")
    out = Sidecar(raw=raw, sha=hashlib.sha256(data).hexdigest())
    for key, value in raw["descriptions"].items():
        entry = _entry(value)
        if entry is None:
            out.invalid += 1
        else:
            out.entries[key] = entry
    return out


def _entry(value: object) -> Entry | None:
    """A valid entry, or None (wrong types, bad hash, empty or too-long text)."""
    if not isinstance(value, dict):
        return None
    digest, text = value.get("content_hash"), value.get("text")
    if not isinstance(digest, str) or not isinstance(text, str) or not _HASH.match(digest):
        return None
    text = normalize(text)
    if not text or len(text) > MAX_DESCRIPTION_CHARS:
        return None
    return Entry(digest, text)


def for_index(root: Path) -> Sidecar:
    """What the index applies: never raises (a broken sidecar means no descriptions)."""
    try:
        return read_sidecar(root, strict=False)
    except Exception as exc:  # noqa: BLE001 - the index and the prompt hook must never fail on it
        return Sidecar(sha="invalid", error=f"{type(exc).__name__}: {exc}")


def description_for(sidecar: Sidecar, unit_id: str, content_hash: str) -> str:
    """The description that applies to this unit now ("" when none, or when the code changed)."""
    entry = sidecar.entries.get(unit_id)
    return entry.text if entry is not None and entry.content_hash == content_hash else ""


# --------------------------------------------------------------------------- reading the index


#: What ``pending`` and ``status`` read of each unit (no text: excerpts are read for one page only).
_ROW_FIELDS = ("id", "path", "kind", "name", "qualified_name", "signature", "docstring", "start_line", "end_line", "content_hash", "is_test", "part", "calls")


def _index_rows(index: Index) -> tuple[list[StoredUnit], Counter[str]]:
    """Describable units of the live index and how often each name is called (graph in-degree)."""
    units = index.all_units(_ROW_FIELDS)
    rows = [u for u in units if u.part == 1 and u.kind in DESCRIBABLE_KINDS]
    callers: Counter[str] = Counter()
    for u in units:
        callers.update({str(c).rsplit(".", 1)[-1] for c in u.calls})
    return rows, callers


def _has_docstring(row: StoredUnit) -> bool:
    return bool(row.docstring.strip())


def _usefulness(row: StoredUnit, callers: Counter[str]) -> tuple:
    """Order of the pending queue: undocumented first, then non-test, public, most-called, largest.

    A unit without a docstring gains the most from a description; tests rarely answer questions;
    a public name called from many places is what questions are about; a larger unit has more
    behaviour to name. Path and line make the order stable.
    """
    private = row.name.startswith("_") and not row.name.startswith("__")
    size = row.end_line - row.start_line + 1
    return (_has_docstring(row), row.is_test, private, -callers.get(row.name, 0), -size, row.path, row.start_line)


def pending(index: Index, limit: int = 20, offset: int = 0) -> dict:
    """Units without a valid description, most useful first (see ``_usefulness``), as of the last
    index update. Each carries a bounded source excerpt to describe it from."""
    if limit < 0 or offset < 0:
        raise UsageError("limit and offset must not be negative")
    sidecar = read_sidecar(index.root)
    index.refresh()
    rows, callers = _index_rows(index)
    todo = [r for r in rows if not description_for(sidecar, r.id, r.content_hash)]
    todo.sort(key=lambda r: _usefulness(r, callers))
    page = todo[offset : offset + limit]
    sources = _sources(index, [r.id for r in page])
    units = [
        {
            "id": r.id, "path": r.path, "kind": r.kind, "qualified_name": r.qualified_name, "signature": r.signature,
            "start_line": r.start_line, "end_line": r.end_line, "content_hash": r.content_hash,
            "source": sources.get(r.id, ""), "has_docstring": _has_docstring(r), "stale": r.id in sidecar.entries,
        }
        for r in page
    ]
    return {"total": len(todo), "units": units}


def _sources(index: Index, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    return {i: u.text[:PENDING_SOURCE_CHARS] for i, u in index.units_by_id(ids, ("text",)).items()}


def status(index: Index) -> dict:
    """How much of the code is described: valid (described), stale (the code changed), pending
    (no valid description), total describable units, share; plus ignored sidecar entries."""
    sidecar = read_sidecar(index.root)
    index.refresh()
    rows, _ = _index_rows(index)
    described = sum(1 for r in rows if description_for(sidecar, r.id, r.content_hash))
    stale = sum(1 for r in rows if r.id in sidecar.entries and not description_for(sidecar, r.id, r.content_hash))
    known = {r.id for r in rows}
    total = len(rows)
    return {
        "described": described,
        "stale": stale,
        "pending": total - described,
        "total": total,
        "share": round(described / total, 4) if total else 0.0,
        "unknown_ids": sum(1 for key in sidecar.entries if key not in known),
        "invalid_entries": sidecar.invalid,
        "sidecar": SIDECAR_NAME,
    }


# --------------------------------------------------------------------------- writing


def put(root: Path, unit_id: str, text: str, content_hash: str | None = None) -> dict:
    """Store ``text`` as the description of ``unit_id`` in its current version.

    ``content_hash`` (from ``pending``) guards against describing code that changed since it was
    read: a mismatch is refused as stale. The unit is looked up in the current file, not the
    index, so the hash is always today's.
    """
    clean = normalize(text)
    if not clean:
        raise UsageError("the description is empty; write what the unit is for, in a sentence or two")
    if len(clean) > MAX_DESCRIPTION_CHARS:
        raise UsageError(f"the description has {len(clean)} characters; at most {MAX_DESCRIPTION_CHARS} are kept per unit")
    unit = _current_unit(root, unit_id)
    if content_hash is not None and content_hash != unit.content_hash:
        raise UsageError(
            f"stale: {unit_id} changed since it was read (hash {content_hash}, now {unit.content_hash}); describe the current code"
            " (`paqad rag update` refreshes `paqad describe pending`)"
        )
    workspace.ensure(root)
    lock = filelock.FileLock(str(workspace.state_dir(root) / "descriptions.lock"), timeout=LOCK_TIMEOUT_S)
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    with lock:
        sidecar = read_sidecar(root)  # strict: a broken file is reported, never overwritten
        sidecar.raw["descriptions"][unit_id] = {"content_hash": unit.content_hash, "text": clean}
        workspace.atomic_write_text(sidecar_path(root), dump(sidecar.raw))
    return {"id": unit_id, "content_hash": unit.content_hash, "stored": True}


def dump(raw: dict) -> str:
    """Stable text: sorted keys, two-space indent, one trailing newline (reviewable diffs)."""
    return json.dumps(raw, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _current_unit(root: Path, unit_id: str) -> CodeUnit:
    """The unit with this id as the file is now (raises ``UsageError`` when there is none)."""
    path, sep, _ = unit_id.partition("::")
    if not sep:
        raise UsageError(f"{unit_id!r} is not a unit id (path::qualified_name); ids come from `paqad describe pending`")
    units, reason = _parse_current(root, path)
    for unit in units:
        if unit.id == unit_id:
            return unit
    raise UsageError(f"no unit {unit_id!r} in the current code{f' ({reason})' if reason else ''}; ids come from `paqad describe pending`")


def _parse_current(root: Path, path: str, elig: Eligibility | None = None) -> tuple[list[CodeUnit], str | None]:
    """Parse one repository file as the index would; ([], why) when it is not indexed."""
    from paqad import config
    from paqad.eligibility import collect
    from paqad.parse import parse_file

    try:
        workspace.join_within(root, path)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    cfg = config.load(root)
    elig = elig or collect.Eligibility(root, cfg.rag_max_file_size)
    decision, text = elig.decide(path)
    if not decision.kept or text is None or decision.rule is None:
        return [], f"{path} is not indexed: {decision.reason}"
    return parse_file(path, text, decision.rule.parser, decision.rule.grammar, cfg.rag_max_unit_lines), None


# --------------------------------------------------------------------------- promote


def promote(root: Path) -> str:
    """A unified diff (``git apply``-able, paths ``a/…`` ``b/…``) that writes each valid
    description into the source: a docstring in Python, a ``//`` or ``#`` comment block above the
    declaration elsewhere. Units that already have a docstring, and languages without line
    comments, are skipped. Nothing is written here."""
    from paqad import config
    from paqad.eligibility import collect

    sidecar = read_sidecar(root)
    by_path: dict[str, list[str]] = {}
    for unit_id in sorted(sidecar.entries):
        by_path.setdefault(unit_id.partition("::")[0], []).append(unit_id)
    if not by_path:
        return ""
    elig = collect.Eligibility(root, config.load(root)["rag_max_file_size"])
    return "".join(_promote_file(root, path, ids, sidecar, elig) for path, ids in sorted(by_path.items()))


def _promote_file(root: Path, path: str, ids: list[str], sidecar: Sidecar, elig: Eligibility) -> str:
    try:
        units, _ = _parse_current(root, path, elig)
    except UsageError:
        return ""
    wanted = {u.id: u for u in units if u.id in ids and u.part == 1 and not u.docstring.strip()}
    todo = [(u, description_for(sidecar, u.id, u.content_hash)) for u in wanted.values()]
    todo = [(u, text) for u, text in todo if text]
    if not todo:
        return ""
    old = (root / path).read_text(encoding="utf-8")
    lines = old.splitlines(keepends=True)
    inserts = _python_inserts(old, todo) if todo[0][0].language == "python" else _comment_inserts(lines, todo)
    new = list(lines)
    for at, block in sorted(inserts, key=lambda item: -item[0]):
        new[at:at] = block
    return _unified(path, lines, new)


def _python_inserts(source: str, todo: list) -> list[tuple[int, list[str]]]:
    """A docstring as the first statement of each def/class (matched by its ``def`` line)."""
    import ast

    lines = source.splitlines(keepends=True)
    nodes = {n.lineno: n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    out = []
    for unit, text in todo:
        node = nodes.get(unit.start_line)
        if node is None or not node.body:
            continue
        first = node.body[0]
        at = min([first.lineno, *[d.lineno for d in getattr(first, "decorator_list", [])]])
        if at <= node.lineno or at > len(lines):  # a one-line def: no body line to put it above
            continue
        indent = re.match(r"[ \t]*", lines[at - 1]).group(0)  # type: ignore[union-attr]
        out.append((at - 1, _docstring(text, indent)))
    return out


def _docstring(text: str, indent: str, width: int = 88) -> list[str]:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    one = f'{indent}"""{body}"""\n'
    if len(one) <= width + 1:
        return [one]
    wrapped = textwrap.wrap(body, max(20, width - len(indent)), break_long_words=False, break_on_hyphens=False)
    return [f'{indent}"""{wrapped[0]}\n', *[f"{indent}{w}\n" for w in wrapped[1:]], f'{indent}"""\n']


#: Line-comment marker per language for the comment block ``promote`` writes above a declaration.
COMMENT_MARKERS = {
    "go": "//", "javascript": "//", "typescript": "//", "java": "//", "kotlin": "//", "c": "//", "cpp": "//",
    "csharp": "///", "rust": "///", "swift": "///", "scala": "//", "php": "//", "ruby": "#", "shell": "#",
}


def _comment_inserts(lines: list[str], todo: list) -> list[tuple[int, list[str]]]:
    out = []
    for unit, text in todo:
        marker = COMMENT_MARKERS.get(unit.language)
        if marker is None or not 1 <= unit.start_line <= len(lines):
            continue
        indent = re.match(r"[ \t]*", lines[unit.start_line - 1]).group(0)  # type: ignore[union-attr]
        text = _go_doc(unit.name, text) if unit.language == "go" else text
        width = max(20, 88 - len(indent) - len(marker) - 1)
        wrapped = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
        out.append((unit.start_line - 1, [f"{indent}{marker} {w}\n" for w in wrapped]))
    return out


def _go_doc(name: str, text: str) -> str:
    """Go doc comments start with the declared name (``// Void cancels ...``, Effective Go; golint
    and gofmt's doc tooling expect it): "Cancels an invoice" becomes "Void cancels an invoice"."""
    if not name or text.split(" ", 1)[0].strip(".,:;") == name:
        return text
    first, _, rest = text.partition(" ")
    lowered = first[:1].lower() + first[1:] if first[1:2].islower() or len(first) == 1 else first
    return f"{name} {lowered} {rest}".rstrip()


def _unified(path: str, old: list[str], new: list[str]) -> str:
    """difflib's unified diff with git's headers and ``\\ No newline at end of file`` markers."""
    out = []
    for line in difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return f"diff --git a/{path} b/{path}\n" + "".join(out) if out else ""
