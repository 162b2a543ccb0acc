"""Posting lists stored as packed blocks: one row per (term, block of 1,024 unit ids).

Why blocks and not one row per posting: a query reads whole posting lists, and fetching them
row by row from SQLite made a Python tuple per posting (over half of a warm query's time at
10,000 units went to ``fetchall`` and converting the tuples). A block row holds three packed
arrays, sorted by unit id — ``uids`` (int32), ``w`` (float64 BM25F weight) and ``mask`` (uint8
field mask) — so a term with 10,000 postings is ten rows decoded by ``numpy.frombuffer``.

Why blocks and not one blob per term: an incremental update rewrites only the blocks holding
the units it removes or adds (new units get the highest ids, so they land in the last block),
at most 1,024 postings each, instead of a common term's whole list. ``unit_terms`` keeps each
unit's term ids so a removal knows which blocks to touch.

Everything read here is untrusted: a block whose arrays disagree in length, or hold a negative
id or a mask outside the field bits, raises ``IndexCorruptError``.
"""

from __future__ import annotations

import math
import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from paqad.errors import IndexCorruptError
from paqad.index.fields import FIELDS

if TYPE_CHECKING:
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

BLOCK = 1024
MAX_MASK = 1 << len(FIELDS)


Entry = tuple[int, float, int]  # (uid, w, mask) for one term


class BlockWriter:
    """Collects postings in memory and writes them as blocks: the full build's writer.

    Memory is 13 bytes per posting (three ``array``s per term), not a Python tuple each.
    """

    def __init__(self) -> None:
        self._terms: dict[int, tuple[array, array, array]] = {}
        self._unit_terms: list[tuple[int, bytes]] = []

    def add_unit(self, uid: int, weights: Iterable[tuple[int, float, int]]) -> None:
        """Postings of one unit: ``(tid, w, mask)`` per term. Units must come in increasing uid."""
        tids = array("i")
        for tid, w, mask in weights:
            lists = self._terms.get(tid)
            if lists is None:
                lists = self._terms[tid] = (array("i"), array("d"), array("B"))
            lists[0].append(uid)
            lists[1].append(w)
            lists[2].append(mask)
            tids.append(tid)
        self._unit_terms.append((uid, tids.tobytes()))

    def flush(self, con: sqlite3.Connection) -> None:
        """Write every collected posting (inside the caller's transaction) and forget them."""
        con.executemany("INSERT INTO unit_terms(uid, tids) VALUES (?, ?)", self._unit_terms)
        rows = []
        for tid, (uids, ws, masks) in self._terms.items():
            start = 0
            while start < len(uids):
                blk = uids[start] // BLOCK
                end = start
                while end < len(uids) and uids[end] // BLOCK == blk:
                    end += 1
                rows.append((tid, blk, uids[start:end].tobytes(), ws[start:end].tobytes(), masks[start:end].tobytes()))
                start = end
        con.executemany("INSERT INTO postings(tid, blk, uids, w, mask) VALUES (?, ?, ?, ?, ?)", rows)
        self._terms.clear()
        self._unit_terms.clear()


def _decode(row: tuple[bytes, bytes, bytes]) -> tuple[array, array, array]:
    uids, ws, masks = array("i"), array("d"), array("B")
    try:
        uids.frombytes(row[0])
        ws.frombytes(row[1])
        masks.frombytes(row[2])
    except (TypeError, ValueError) as exc:
        raise IndexCorruptError(f"a posting block is malformed ({exc})") from None
    if not (len(uids) == len(ws) == len(masks)):
        raise IndexCorruptError("a posting block's arrays differ in length")
    return uids, ws, masks


def _unit_tids(blob: bytes) -> array:
    tids = array("i")
    try:
        tids.frombytes(blob)
    except (TypeError, ValueError) as exc:
        raise IndexCorruptError(f"a unit's term list is malformed ({exc})") from None
    return tids


def remove_units(con: sqlite3.Connection, uids: Iterable[int]) -> dict[int, int]:
    """Drop the postings of ``uids`` (inside the caller's transaction). Returns, per term id, how
    many of the removed units held it (the caller lowers the terms' document frequencies)."""
    gone: dict[tuple[int, int], set[int]] = defaultdict(set)
    per_term: dict[int, int] = defaultdict(int)
    for uid in uids:
        row = con.execute("SELECT tids FROM unit_terms WHERE uid = ?", (uid,)).fetchone()
        if row is None:
            continue
        tids = _unit_tids(row[0])
        for tid in tids:
            gone[(tid, uid // BLOCK)].add(uid)
            per_term[tid] += 1
        con.execute("DELETE FROM unit_terms WHERE uid = ?", (uid,))
    for (tid, blk), dead in gone.items():
        row = con.execute("SELECT uids, w, mask FROM postings WHERE tid = ? AND blk = ?", (tid, blk)).fetchone()
        if row is None:
            continue
        uids_a, ws, masks = _decode(row)
        keep = [i for i, u in enumerate(uids_a) if u not in dead]
        if keep:
            con.execute(
                "UPDATE postings SET uids = ?, w = ?, mask = ? WHERE tid = ? AND blk = ?",
                (array("i", (uids_a[i] for i in keep)).tobytes(), array("d", (ws[i] for i in keep)).tobytes(),
                 array("B", (masks[i] for i in keep)).tobytes(), tid, blk),
            )
        else:
            con.execute("DELETE FROM postings WHERE tid = ? AND blk = ?", (tid, blk))
    return dict(per_term)


def add_units(con: sqlite3.Connection, units: Iterable[tuple[int, Iterable[tuple[int, float, int]]]]) -> None:
    """Merge new units' postings into their blocks (inside the caller's transaction): each
    touched block is read and rewritten once, however many of the new units it receives."""
    fresh: dict[tuple[int, int], list[Entry]] = defaultdict(list)
    for uid, weights in units:
        tids = array("i")
        for tid, w, mask in weights:
            tids.append(tid)
            fresh[(tid, uid // BLOCK)].append((uid, w, mask))
        con.execute("INSERT OR REPLACE INTO unit_terms(uid, tids) VALUES (?, ?)", (uid, tids.tobytes()))
    for (tid, blk), entries in fresh.items():
        row = con.execute("SELECT uids, w, mask FROM postings WHERE tid = ? AND blk = ?", (tid, blk)).fetchone()
        merged = list(zip(*_decode(row))) if row is not None else []
        merged.extend(entries)
        merged.sort(key=lambda e: e[0])
        packed = (array("i", (e[0] for e in merged)).tobytes(), array("d", (e[1] for e in merged)).tobytes(),
                  array("B", (e[2] for e in merged)).tobytes())
        con.execute("INSERT OR REPLACE INTO postings(tid, blk, uids, w, mask) VALUES (?, ?, ?, ?, ?)", (tid, blk, *packed))


def read(con: sqlite3.Connection, tid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One term's whole posting list as (uids int64, w float64, mask int64), sorted by uid."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    rows = con.execute("SELECT uids, w, mask FROM postings WHERE tid = ? ORDER BY blk", (tid,)).fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    try:
        uids = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.int32)
        ws = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float64)
        masks = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.uint8)
    except (TypeError, ValueError) as exc:
        raise IndexCorruptError(f"a posting block is malformed ({exc})") from None
    if not (uids.size == ws.size == masks.size):
        raise IndexCorruptError("a posting block's arrays differ in length")
    if uids.size and (int(uids.min()) < 0 or int(masks.max()) >= MAX_MASK or not np.isfinite(ws).all()):
        raise IndexCorruptError("a posting block holds an impossible unit id, field mask or weight")
    return uids.astype(np.int64), ws, masks.astype(np.int64)


def read_arrays(con: sqlite3.Connection, tid: int) -> tuple[array, array, array]:
    """The same list as ``read``, as ``array``s (no numpy): for a fresh process scoring a few
    thousand postings, where importing numpy would cost more than the arithmetic."""
    uids, ws, masks = array("i"), array("d"), array("B")
    for row in con.execute("SELECT uids, w, mask FROM postings WHERE tid = ? ORDER BY blk", (tid,)):
        u, w, m = _decode(row)
        uids.extend(u)
        ws.extend(w)
        masks.extend(m)
    # Real weights are small: a non-finite sum means a NaN, an infinity or a crafted huge value.
    if uids and (min(uids) < 0 or max(masks) >= MAX_MASK or not math.isfinite(sum(ws))):
        raise IndexCorruptError("a posting block holds an impossible unit id, field mask or weight")
    return uids, ws, masks


def counts(con: sqlite3.Connection, tid: int, ident_mask: int) -> tuple[int, int]:
    """(postings, postings whose mask shares a bit with ``ident_mask``) for one term: read from
    the mask column alone and counted by ``bytes.translate`` (C speed, no numpy)."""
    try:
        masks = b"".join(row[0] for row in con.execute("SELECT mask FROM postings WHERE tid = ?", (tid,)))
    except TypeError as exc:
        raise IndexCorruptError(f"a posting block is malformed ({exc})") from None
    if masks and max(masks) >= MAX_MASK:
        raise IndexCorruptError("a posting block holds an impossible field mask")
    hits = masks.translate(bytes(1 if m & ident_mask else 0 for m in range(256)))
    return len(masks), hits.count(1)


def terms_of_units(con: sqlite3.Connection, uids: Iterable[int]) -> set[int]:
    """Term ids held by any of ``uids`` (unknown uids contribute nothing)."""
    found: set[int] = set()
    for uid in uids:
        row = con.execute("SELECT tids FROM unit_terms WHERE uid = ?", (int(uid),)).fetchone()
        if row is None:
            continue
        found.update(_unit_tids(row[0]))
    return found


def orphans(con: sqlite3.Connection) -> int:
    """Postings or term lists naming a unit that does not exist (0 in a sound index)."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    live = {r[0] for r in con.execute("SELECT uid FROM units")}
    bad = sum(1 for (uid,) in con.execute("SELECT uid FROM unit_terms") if uid not in live)
    for row in con.execute("SELECT uids FROM postings"):
        bad += sum(1 for u in np.frombuffer(row[0], dtype=np.int32).tolist() if u not in live)
    return bad
