"""A file's stored hunks across its renames: back from its name now, forward from a name then.

``git log -M`` records a rename as hunks under the new name (the old file's lines to the new
file's) and the pair of names (``paqad.index.history.renames_into``); these generators chain the
names, so :func:`paqad.history.lines.walk` and :func:`paqad.history.lines.forward` follow a file
that moved (flask's ``flask/`` to ``src/flask/``) as ``git blame`` does. A chain is followed for at
most :data:`MAX_NAMES` names (a crafted history cannot loop it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from paqad.history.lines import Hunk
from paqad.index import history as store

MAX_NAMES = 32


def back(con: sqlite3.Connection, path: str) -> Iterator[tuple[int, list[Hunk]]]:
    """``(cid, hunks)`` newest first: ``path``'s commits, then, past the commit that renamed another
    file to it, that file's older ones."""
    upper: int | None = None
    for _ in range(MAX_NAMES):
        into = {cid: old for cid, old in store.renames_into(con, path).items() if upper is None or cid < upper}
        rows = dict(store.file_hunks(con, path, older_than=upper))
        for cid in sorted(set(rows) | set(into), reverse=True):
            yield cid, rows.get(cid, [])  # a rename without a changed line has no hunks
            if cid in into:
                path, upper = into[cid], cid
                break
        else:
            return


def forward(con: sqlite3.Connection, path: str, after: int) -> Iterator[tuple[int, str, list[Hunk]]]:
    """``(cid, name, hunks)`` oldest first, of the commits after ``after`` that touched ``path``,
    and past a commit that renamed it, of the new name from that commit on."""
    for _ in range(MAX_NAMES):
        out = min(((cid, new) for cid, new in store.renames_out_of(con, path).items() if cid > after), default=None)
        upper = out[0] if out is not None else None
        for cid, hunks in reversed(store.file_hunks(con, path, newer_than=after, older_than=upper)):
            yield cid, path, hunks
        if out is None:
            return
        if not store.file_hunks(con, out[1], newer_than=out[0] - 1, older_than=out[0] + 1):
            yield out[0], out[1], []  # a rename without a changed line: only the name moves
        path, after = out[1], out[0] - 1  # the rename's own hunks are stored under the new name
