"""Row edits of an open index during an incremental update (``paqad.index.build.update``): a
file's rows removed, a changed file's terms registered. Kept apart from the builder so each stays
small; both run inside the update's one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter


def delete_file(con: sqlite3.Connection, path: str, totals: list[int]) -> list[int]:
    """Delete a file's rows except its postings; returns its unit ids (for ``postings.remove_units``)."""
    rows = con.execute("SELECT uid, lengths FROM units WHERE path = ?", (path,)).fetchall()
    for uid, lengths in rows:
        for f, n in enumerate(json.loads(lengths)):
            totals[f] -= n
        con.execute("DELETE FROM vectors WHERE uid = ?", (uid,))
        con.execute("DELETE FROM descriptions WHERE uid = ?", (uid,))
    con.execute("DELETE FROM units WHERE path = ?", (path,))
    con.execute("DELETE FROM files WHERE path = ?", (path,))
    return [uid for uid, _ in rows]


def ensure_terms(con: sqlite3.Connection, unit_counts: list[list[Counter[str]]]) -> dict[str, int]:
    """Term ids for every term of a file's units (``unit_counts``: per unit, per field), adding new
    terms and raising the document frequency of known ones."""
    per_unit = [{t for c in counts for t in c} for counts in unit_counts]
    all_terms = set().union(*per_unit) if per_unit else set()
    df = Counter(t for terms in per_unit for t in terms)
    tids: dict[str, int] = {}
    for term in all_terms:
        row = con.execute("SELECT tid FROM terms WHERE term = ?", (term,)).fetchone()
        if row:
            con.execute("UPDATE terms SET df = df + ? WHERE tid = ?", (df[term], row[0]))
            tids[term] = row[0]
        else:
            tids[term] = int(con.execute("INSERT INTO terms(term, df) VALUES (?, ?)", (term, df[term])).lastrowid or 0)
    return tids
