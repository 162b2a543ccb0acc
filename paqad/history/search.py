"""Ask the history: commits by BM25 over their messages, and the units of the current index they touched.

A commit's hunks give the lines it wrote at that commit; they are carried forward through the
later commits that touched the same file (:func:`paqad.history.lines.forward`) to where they are
now, dropping those rewritten since, and laid over the units of the file as it is indexed now (a
file that is gone or not indexed has no units). The carrying is exact along one line of commits
and approximate where branches ran in parallel (``benchmarks/history_lines.py`` measures it
against ``git blame``). Where lines overlap both a unit and a unit inside it, the innermost is
named (a method rather than its class, a declaration rather than the module's rest).
"""

from __future__ import annotations

import datetime as dt
import itertools
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from paqad import tokenize
from paqad.errors import IndexMissingError
from paqad.history import follow, lines
from paqad.history.build import HistoryMissingError, history_path
from paqad.index import history as store
from paqad.index.reader import Index
from paqad.index.records import StoredUnit
from paqad.jsontypes import JSONObject

SPAN_FIELDS = ("id", "path", "start_line", "end_line")


@dataclass
class Found:
    commit: store.StoredCommit
    units: list[str] = field(default_factory=list)  # unit ids in the current index
    now: dict[str, list[lines.Span]] = field(default_factory=dict)  # the lines it wrote that are still its, where they are now

    def to_dict(self) -> JSONObject:
        c = self.commit
        return {"sha": c.sha, "date": day(c.date), "subject": c.subject, "body": c.body, "score": round(c.score, 4),
                "files": sorted(c.files), "units": list(self.units), "lines": {p: [list(s) for s in v] for p, v in sorted(self.now.items())}}


def day(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).date().isoformat()


def search(root: Path, question: str, limit: int = 10) -> list[Found]:
    """The ``limit`` commits whose messages answer ``question`` best, with the units they touched."""
    path = history_path(root)
    if not path.is_file():
        raise HistoryMissingError("no history index yet: run `paqad rag history` to build it")
    with store.opened(path) as con:
        commits = store.search(con, tokenize.terms(question), limit)
        now = [carried(con, c) for c in commits]
    spans = _spans(root, {p for n in now for p in n})
    return [Found(c, units_touched(n, spans), n) for c, n in zip(commits, now, strict=True)]


def carried(con: sqlite3.Connection, commit: store.StoredCommit) -> dict[str, list[lines.Span]]:
    """The lines ``commit`` wrote, per file, carried to the newest stored commit under the file's
    name then (rewritten ones dropped; a rename followed)."""
    out: dict[str, list[lines.Span]] = {}
    for path, hunks in commit.hunks.items():
        spans, name = lines.written(hunks), path
        for _, moved_to, later in follow.forward(con, path, commit.cid):
            spans, name = lines.forward(spans, later), moved_to
            if not spans:
                break
        if spans:
            out.setdefault(name, []).extend(spans)
    return out


def _spans(root: Path, paths: set[str]) -> dict[str, list[StoredUnit]]:
    """The current index's units of ``paths`` (none when there is no index)."""
    if not paths:
        return {}
    try:
        index = Index.open(root)
    except IndexMissingError:
        return {}
    try:
        by_path: dict[str, list[StoredUnit]] = {}
        for unit in index.units_in(paths, SPAN_FIELDS).values():
            by_path.setdefault(unit.path, []).append(unit)
        return by_path
    finally:
        index.close()


def units_touched(files: dict[str, list[tuple[int, int]]], spans: dict[str, list[StoredUnit]]) -> list[str]:
    """The innermost units whose lines overlap the ranges, file by file, in line order."""
    out: list[str] = []
    for path in sorted(files):
        hit = [u for u in spans.get(path, ()) if any(a <= u.end_line and b >= u.start_line for a, b in files[path])]
        inner = [u for u in hit if not any(v is not u and _inside(v, u) for v in hit)]
        out.extend(u.id for u in sorted(inner, key=lambda u: (u.start_line, u.end_line)))
    return out


def _inside(inner: StoredUnit, outer: StoredUnit) -> bool:
    return outer.start_line <= inner.start_line and inner.end_line <= outer.end_line and \
        (inner.start_line, inner.end_line) != (outer.start_line, outer.end_line)


def commits_for_unit(root: Path, unit_id: str, limit: int = 10) -> list[store.StoredCommit]:
    """The newest commits that touched the unit's lines, carried back through the file's history."""
    index = Index.open(root)
    try:
        unit = index.unit(unit_id, SPAN_FIELDS)
    finally:
        index.close()
    path = history_path(root)
    if unit is None or not path.is_file():
        return []
    with store.opened(path) as con:
        walked = lines.walk(unit.start_line, unit.end_line, follow.back(con, unit.path))
        return store.commits_by_id(con, list(itertools.islice(walked, limit)))
