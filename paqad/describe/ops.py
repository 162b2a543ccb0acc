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

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, final

import filelock

from paqad import workspace
from paqad.errors import UsageError
from paqad.index.records import StoredUnit
from paqad.index.sidecar import MAX_DESCRIPTION_CHARS, SIDECAR_NAME, description_for, normalize, read_sidecar, sidecar_path

if TYPE_CHECKING:
    from paqad.eligibility.collect import Eligibility
    from paqad.index.reader import Index
    from paqad.units import CodeUnit

#: Characters of source ``pending`` returns per unit: enough to describe a unit from, bounded.
PENDING_SOURCE_CHARS = 1200
#: Declarations an agent is asked to describe (module leftovers, prose and config keys are not).
DESCRIBABLE_KINDS = ("function", "method", "class", "interface", "struct", "enum", "trait")
LOCK_TIMEOUT_S = 30.0


class PendingUnit(TypedDict):
    """One unit ``pending`` asks to describe (a JSON object of ``paqad describe pending --json``)."""

    id: str
    path: str
    kind: str
    qualified_name: str
    signature: str
    start_line: int
    end_line: int
    content_hash: str
    source: str
    has_docstring: bool
    stale: bool


class PendingPage(TypedDict):
    total: int
    units: list[PendingUnit]


@final
class Coverage(TypedDict):
    """What ``status`` reports (``paqad describe status --json``)."""

    described: int
    stale: int
    pending: int
    total: int
    share: float
    unknown_ids: int
    invalid_entries: int
    sidecar: str


class Stored(TypedDict):
    id: str
    content_hash: str
    stored: bool


# --------------------------------------------------------------------------- reading the index


#: What ``pending`` reads of each unit (no text: excerpts are read for one page only).
_ROW_FIELDS = ("id", "path", "kind", "name", "qualified_name", "signature", "docstring", "start_line", "end_line", "content_hash", "is_test", "part", "calls")
#: What ``status`` reads: enough to count (the session-start orientation counts on every start).
_COUNT_FIELDS = ("id", "kind", "content_hash", "part")


def _index_rows(index: Index, fields: tuple[str, ...] = _ROW_FIELDS) -> tuple[list[StoredUnit], Counter[str]]:
    """Describable units of the live index and how often each name is called (graph in-degree;
    empty when ``fields`` has no ``calls``)."""
    units = index.all_units(fields)
    rows = [u for u in units if u.part == 1 and u.kind in DESCRIBABLE_KINDS]
    callers: Counter[str] = Counter()
    for u in units if "calls" in fields else ():
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


def pending(index: Index, limit: int = 20, offset: int = 0) -> PendingPage:
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
    units: list[PendingUnit] = [
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


def status(index: Index) -> Coverage:
    """How much of the code is described: valid (described), stale (the code changed), pending
    (no valid description), total describable units, share; plus ignored sidecar entries."""
    sidecar = read_sidecar(index.root)
    index.refresh()
    rows, _ = _index_rows(index, _COUNT_FIELDS)
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


def put(root: Path, unit_id: str, text: str, content_hash: str | None = None) -> Stored:
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
    units, reason = parse_current(root, path)
    for unit in units:
        if unit.id == unit_id:
            return unit
    raise UsageError(f"no unit {unit_id!r} in the current code{f' ({reason})' if reason else ''}; ids come from `paqad describe pending`")


def parse_current(root: Path, path: str, elig: Eligibility | None = None) -> tuple[list[CodeUnit], str | None]:
    """Parse one repository file as the index would; ([], why) when it is not indexed."""
    from paqad import config  # with eligibility and the parsers, ~50 ms that pending and status skip
    from paqad.eligibility import collect  # see above: only put and promote parse
    from paqad.parse import parse_file  # see above: only put and promote parse

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
