"""Is an index file sound enough to update in place? The checks an update runs before it writes.

An index is untrusted input (a copied or crafted file, a disk that lost pages, a killed writer on
a filesystem that lies about ``fsync``). A reader checks what it decodes as it goes (posting
blocks, JSON lists); an update, which writes on top of what it finds, checks the whole file
first, because damage it does not touch would otherwise survive it and every search after it:

- the ``meta`` values have their types (:func:`meta_problem`, also run by every open);
- SQLite's own ``PRAGMA integrity_check`` (page and b-tree structure, and every index against its
  table, so a damaged unit id or path is found; a damaged value in a column no index covers,
  such as a unit's text, is only found by the reader that decodes it, which notes it for the
  next update: :func:`paqad.index.store.mark_damaged`);
- every unit belongs to an indexed file, and ``n_units`` counts the units;
- every posting block's three arrays and every unit's term list have consistent byte lengths.

What a check finds is a sentence for ``IndexCorruptError``; the update then rebuilds (a full
build never reads the old file) and the audit log says why. The checks cost one pass over the
file's pages (:mod:`benchmarks.faults` measures them on the benchmark corpora).
"""

from __future__ import annotations

import json
import math
import sqlite3

from paqad.index.fields import FIELDS

# meta keys whose values are JSON lists (of numbers for field_totals) or non-negative integers
_INT_KEYS = ("n_units", "embedding_dims", "max_unit_lines")
_LIST_KEYS = ("field_totals", "active_packs")


def meta_problem(meta: dict[str, str]) -> str | None:
    """What is wrong with the ``meta`` values (``n_units='abc'``, ``field_totals`` not JSON), or None."""
    for key in _INT_KEYS:
        value = meta.get(key)
        if value is not None and value != "" and not value.isdigit():
            return f"meta {key} = {value[:40]!r} is not a non-negative integer"
    for key in _LIST_KEYS:
        value = meta.get(key)
        if value is None:
            continue
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return f"meta {key} is not JSON"
        if not isinstance(decoded, list):
            return f"meta {key} is not a JSON list"
    return _totals_problem(meta.get("field_totals"))


def _totals_problem(value: str | None) -> str | None:
    if value is None:
        return None
    totals = json.loads(value)
    if len(totals) != len(FIELDS):
        return f"meta field_totals has {len(totals)} fields, not {len(FIELDS)}"
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0 for t in totals):
        return "meta field_totals holds a value that is not a non-negative number"
    return None


def problem(con: sqlite3.Connection) -> str | None:
    """The first thing found wrong with the whole file, or None when it is sound. Raises
    ``sqlite3.DatabaseError`` when SQLite cannot even read it (the caller treats that as damage too)."""
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    found = meta_problem(meta)
    if found:
        return found
    checked = [row[0] for row in con.execute("PRAGMA integrity_check(3)")]
    if checked != ["ok"]:
        return "SQLite's check failed: " + "; ".join(str(c) for c in checked)[:300]
    return _rows_problem(con, int(meta.get("n_units", "0") or 0))


def _rows_problem(con: sqlite3.Connection, n_units: int) -> str | None:
    orphans = con.execute("SELECT COUNT(*) FROM units WHERE path NOT IN (SELECT path FROM files)").fetchone()[0]
    if orphans:
        return f"{orphans} unit rows name a file the index does not have"
    units = con.execute("SELECT COUNT(*) FROM units").fetchone()[0]
    if units != n_units:
        return f"meta n_units is {n_units} but the index holds {units} units"
    bad_blocks = con.execute(
        "SELECT COUNT(*) FROM postings WHERE length(uids) % 4 != 0 OR length(w) != 2 * length(uids)"
        " OR 4 * length(mask) != length(uids) OR typeof(uids) != 'blob' OR typeof(w) != 'blob' OR typeof(mask) != 'blob'"
    ).fetchone()[0]
    if bad_blocks:
        return f"{bad_blocks} posting blocks are malformed"
    bad_lists = con.execute("SELECT COUNT(*) FROM unit_terms WHERE typeof(tids) != 'blob' OR length(tids) % 4 != 0").fetchone()[0]
    if bad_lists:
        return f"{bad_lists} unit term lists are malformed"
    return None
