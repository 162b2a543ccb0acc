"""The line a delivered passage can carry: ``last changed in 3f2a1c9 (2024-05-02): Fix …``.

Off unless ``rag_last_changed`` is on (issue 35, item 3: no ruler or uptake figure shows it helps
yet). For a span of a file as indexed now, the newest stored commit whose hunks touched those
lines, found by carrying the span back through the file's stored hunks
(:func:`paqad.history.lines.walk`): no ``git blame`` on the way, one read of the history store per
file, kept per file while the store's tip stays the same (a warm ``paqad serve`` pays it once).

Said only when it can be true: the history store exists and was brought to HEAD (its line numbers
are HEAD's; when it lags, nothing is said, as without a store). Lines edited since HEAD are not in
any commit: a span is taken at the same numbers in HEAD's file. The subject was masked when it was
stored (:func:`paqad.history.build.keep`) and is escaped here (no control character, no newline
reaches the agent); the line is cut at :data:`WIDTH` characters.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

from paqad import git
from paqad.history import follow, lines
from paqad.history.build import history_path
from paqad.history.search import day
from paqad.index import history as store
from paqad.textsafe import escape

WIDTH = 100
CACHED_FILES = 256
_files: OrderedDict[tuple[str, str, str], list[tuple[int, list[lines.Hunk]]]] = OrderedDict()


def line_of(commit: store.StoredCommit, width: int = WIDTH) -> str:
    text = escape(f"last changed in {commit.sha[:7]} ({day(commit.date)}): {' '.join(commit.subject.split())}")
    return text if len(text) <= width else text[: width - 1] + "…"


def for_spans(root: Path, spans: Iterable[tuple[str, int, int]]) -> list[str]:
    """One line per ``(path, start, end)``: the last change of those lines, or "" when unknown."""
    wanted = list(spans)
    path = history_path(root)
    if not wanted or not path.is_file():
        return [""] * len(wanted)
    try:
        with store.opened(path) as con:
            tip = store.meta(con, "tip")
            if tip is None or tip != git.head_commit(root):
                return [""] * len(wanted)
            cids = [next(lines.walk(start, end, _hunks(con, str(path), tip, rel)), None) for rel, start, end in wanted]
            found = {c.cid: c for c in store.commits_by_id(con, sorted({c for c in cids if c is not None}))}
    except sqlite3.Error:  # a store being rebuilt, or a damaged one: say nothing
        return [""] * len(wanted)
    return [line_of(found[c]) if c in found else "" for c in cids]


def _hunks(con: sqlite3.Connection, store_path: str, tip: str, rel: str) -> list[tuple[int, list[lines.Hunk]]]:
    key = (store_path, tip, rel)
    if key in _files:
        _files.move_to_end(key)
        return _files[key]
    got = _files[key] = list(follow.back(con, rel))
    while len(_files) > CACHED_FILES:
        _files.popitem(last=False)
    return got


def annotate(root: Path, results: list[dict]) -> None:
    """Set ``last_changed`` on each result dict of this repository (``path``, ``start_line``, ``end_line``)."""
    mine = [r for r in results if not r.get("repository")]  # a workspace member's result is another history's
    said = for_spans(root, [(str(r["path"]), int(r["start_line"]), int(r["end_line"])) for r in mine])
    for result, line in zip(mine, said, strict=True):
        result["last_changed"] = line
