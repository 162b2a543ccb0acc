"""Row edits of an open index: a build's term and unit inserts, and during an incremental update
(``paqad.index.writing.build.update``) a file's rows removed, a changed file's terms registered, the files
whose descriptions changed. Kept apart from the builder so each stays small; an update's edits run
inside its one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

from paqad.index import store
from paqad.index.sidecar import Sidecar, description_for
from paqad.units import CodeUnit


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


def redescribed(con: sqlite3.Connection, sidecar: Sidecar) -> tuple[set[str], int]:
    """Files holding a unit whose applicable description differs from the one indexed, and how
    many such units. Nothing to do (no query) while the sidecar's sha256 is the one indexed."""
    if store.get_meta(con).get("descriptions_sha", "") == sidecar.sha:
        return set(), 0
    applied: dict[str, str] = {}
    if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'descriptions'").fetchone():
        applied = dict(con.execute("SELECT u.id, d.text FROM descriptions d JOIN units u ON u.uid = d.uid"))
    paths: set[str] = set()
    count = 0
    for unit_id in set(applied) | set(sidecar.entries):
        row = con.execute("SELECT path, content_hash FROM units WHERE id = ?", (unit_id,)).fetchone()
        if row and description_for(sidecar, unit_id, row[1]) != applied.get(unit_id, ""):
            paths.add(row[0])
            count += 1
    return paths, count


def nothing_to_write(con: sqlite3.Connection, changed: list, removed: list[str], active_packs: list[str], sidecar: Sidecar) -> bool:
    """True when an update found no file to change and the packs and descriptions are the indexed ones."""
    if changed or removed:
        return False
    meta = store.get_meta(con)
    same_meta = meta.get("descriptions_sha", "") == sidecar.sha and meta.get("active_packs") == json.dumps(active_packs)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('descriptions', 'vectors')")}
    return same_meta and tables == {"descriptions", "vectors"}


def insert_terms(con: sqlite3.Connection, df: Counter[str]) -> dict[str, int]:
    con.execute("BEGIN")
    con.executemany("INSERT INTO terms(tid, term, df) VALUES (?, ?, ?)", ((i, t, n) for i, (t, n) in enumerate(sorted(df.items()), 1)))
    con.execute("COMMIT")
    return {t: i for i, t in enumerate(sorted(df), 1)}


def insert_unit(con: sqlite3.Connection, u: CodeUnit, counts: list[Counter[str]], is_test: bool) -> int:
    lengths = [sum(c.values()) for c in counts]
    cur = con.execute(
        "INSERT INTO units(id, path, language, kind, name, qualified_name, signature, docstring, start_line, end_line,"
        " text, calls, imports, bases, part, parts, content_hash, lengths, is_test) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            u.id, u.path, u.language, u.kind, u.name, u.qualified_name, u.signature, u.docstring, u.start_line,
            u.end_line, u.text, json.dumps(u.calls), json.dumps(u.imports), json.dumps(u.bases), u.part, u.parts,
            u.content_hash, json.dumps(lengths), int(is_test),
        ),
    )
    return int(cur.lastrowid or 0)
