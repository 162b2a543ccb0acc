"""The commit-history store: one SQLite file beside the index generations (issue 35, item 3).

Written by :mod:`paqad.history.build` and read by :mod:`paqad.history.search`; its DDL is
``schema.HISTORY``. It holds what the builder already filtered and masked: a commit's message
(subject and body after :func:`paqad.redaction.redact`), the files it touched with their line
hunks (``-U0`` headers as numbers; never a secrets file), and the message's terms for BM25 (FTS5's ``bm25()`` over paqad's
own terms, space-joined). It keeps no diff text. Appends only: an update adds the commits that
are new since the tip it recorded.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from paqad.index import schema

Hunk = tuple[int, int, int, int]

#: Keep "the newest commits first" stable when two scores tie.
_ORDER = "ORDER BY score, c.cid DESC"


@dataclass
class StoredCommit:
    """One commit as stored: what a search returns (``score``: BM25, higher is better)."""

    cid: int
    sha: str
    date: int
    subject: str
    body: str
    score: float = 0.0
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)  # (old start, count, new start, count) per path

    @property
    def files(self) -> dict[str, list[tuple[int, int]]]:
        """The lines the commit wrote, per path (its post-image; a pure deletion: the line left behind)."""
        return {p: [(max(n, 1), max(n, 1) + max(k, 1) - 1) for _, _, n, k in h if n or k] for p, h in self.hunks.items()}


@dataclass
class NewCommit:
    """One commit the builder hands over: masked message, terms, hunks per path, and its
    row id (``cid``: larger for newer commits, so "newest first" is one order however it was added)."""

    cid: int
    sha: str
    date: int
    subject: str
    body: str
    terms: list[str]
    hunks: dict[str, list[Hunk]]
    renames: dict[str, str] = field(default_factory=dict)  # new path -> old path


def path_of(root_state: Path) -> Path:
    return root_state / schema.HISTORY_FILE


@contextmanager
def opened(path: Path, write: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to the history file (created when writing); closed on exit."""
    if write:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        con = sqlite3.connect(path)
        con.execute("PRAGMA journal_mode=WAL")
        schema.create_history(con)
    else:
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        yield con
    finally:
        con.close()


def meta(con: sqlite3.Connection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None


def set_meta(con: sqlite3.Connection, values: dict[str, str]) -> None:
    con.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", sorted(values.items()))


def known(con: sqlite3.Connection, shas: Iterable[str]) -> set[str]:
    wanted = list(shas)
    out: set[str] = set()
    for i in range(0, len(wanted), 500):
        chunk = wanted[i:i + 500]
        out.update(r[0] for r in con.execute(f"SELECT sha FROM commits WHERE sha IN ({','.join('?' * len(chunk))})", chunk))
    return out


def append(con: sqlite3.Connection, commits: list[NewCommit]) -> int:
    """Add ``commits`` (skipping any already stored); the caller commits the transaction."""
    fresh = [c for c in commits if c.sha not in known(con, (c.sha for c in commits))]
    for c in fresh:
        cid = c.cid
        con.execute("INSERT INTO commits(cid, sha, date, subject, body) VALUES (?, ?, ?, ?, ?)", (cid, c.sha, c.date, c.subject, c.body))
        con.execute("INSERT INTO message_terms(rowid, terms) VALUES (?, ?)", (cid, " ".join(c.terms)))
        rows = [(_pid(con, p), cid, _pack(h)) for p, h in c.hunks.items()]
        con.executemany("INSERT OR REPLACE INTO touched(pid, cid, ranges) VALUES (?, ?, ?)", rows)
        moved = [(cid, _pid(con, new), _pid(con, old)) for new, old in c.renames.items()]
        con.executemany("INSERT OR REPLACE INTO renamed(cid, pid, old) VALUES (?, ?, ?)", moved)
    return len(fresh)


def _pid(con: sqlite3.Connection, path: str) -> int:
    row = con.execute("SELECT pid FROM paths WHERE path = ?", (path,)).fetchone()
    if row:
        return int(row[0])
    return int(con.execute("INSERT INTO paths(path) VALUES (?)", (path,)).lastrowid or 0)


def _pack(hunks: list[Hunk]) -> bytes:
    return array("i", [n for hunk in hunks for n in hunk]).tobytes()


def _unpack(blob: bytes) -> list[Hunk]:
    flat = array("i")
    flat.frombytes(blob)
    return list(zip(flat[0::4], flat[1::4], flat[2::4], flat[3::4], strict=True))


def search(con: sqlite3.Connection, terms: list[str], limit: int) -> list[StoredCommit]:
    """The ``limit`` best commits for ``terms`` by BM25 over their messages (each term quoted, ORed)."""
    words = _informative(con, sorted({t.replace('"', "") for t in terms if t.replace('"', "")}))
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    rows = con.execute(  # rank inside FTS5 first, then join the few: joining every match costs twice as much
        "SELECT c.cid, c.sha, c.date, c.subject, c.body, s.score FROM (SELECT rowid AS cid, bm25(message_terms) AS score"
        " FROM message_terms WHERE message_terms MATCH ? ORDER BY score, rowid DESC LIMIT ?) s JOIN commits c ON c.cid = s.cid"
        f" {_ORDER}", (match, limit)).fetchall()
    found = [StoredCommit(int(r[0]), r[1], int(r[2]), r[3], r[4], -float(r[5])) for r in rows]
    _attach_files(con, found)
    return found


def _informative(con: sqlite3.Connection, words: list[str]) -> list[str]:
    """``words`` minus those in more than half the messages (FTS5 floors their idf at 1e-6, so they
    add nothing to a score, yet an OR reads their whole lists); the rarest one is kept if all are."""
    if not words or not schema.has_table(con, "message_vocab"):
        return words
    total = int(con.execute("SELECT COUNT(*) FROM commits").fetchone()[0])
    df = dict(con.execute(f"SELECT term, doc FROM message_vocab WHERE term IN ({','.join('?' * len(words))})", words).fetchall())
    kept = [w for w in words if df.get(w, 0) * 2 <= total]
    return kept or sorted(words, key=lambda w: df.get(w, 0))[:1]


def _attach_files(con: sqlite3.Connection, commits: list[StoredCommit]) -> None:
    by_cid = {c.cid: c for c in commits}
    if not by_cid:
        return
    marks = ",".join("?" * len(by_cid))
    for cid, path, blob in con.execute(
            f"SELECT t.cid, p.path, t.ranges FROM touched t JOIN paths p ON p.pid = t.pid WHERE t.cid IN ({marks})", list(by_cid)):
        by_cid[int(cid)].hunks[path] = _unpack(blob)


def commits_by_sha(con: sqlite3.Connection, shas: list[str]) -> list[StoredCommit]:
    """The stored commits among ``shas``, in that order, with their hunks."""
    found: list[StoredCommit] = []
    for i in range(0, len(shas), 500):
        chunk = shas[i:i + 500]
        found += [StoredCommit(int(r[0]), r[1], int(r[2]), r[3], r[4]) for r in con.execute(
            f"SELECT cid, sha, date, subject, body FROM commits WHERE sha IN ({','.join('?' * len(chunk))})", chunk)]
    _attach_files(con, found)
    place = {sha: n for n, sha in enumerate(shas)}
    return sorted(found, key=lambda c: place[c.sha])


def file_hunks(con: sqlite3.Connection, path: str, newer_than: int = 0, older_than: int | None = None) -> list[tuple[int, list[Hunk]]]:
    """``(cid, hunks)`` of every commit stored with hunks in ``path`` (between the two commits), newest first."""
    rows = con.execute("SELECT t.cid, t.ranges FROM touched t JOIN paths p ON p.pid = t.pid WHERE p.path = ? AND t.cid > ? AND t.cid < ?"
                       " ORDER BY t.cid DESC", (path, newer_than, older_than if older_than is not None else 1 << 62)).fetchall()
    return [(int(cid), _unpack(blob)) for cid, blob in rows]


def renames_into(con: sqlite3.Connection, path: str) -> dict[int, str]:
    """The commits that made ``path`` by renaming another: cid -> the old path."""
    return {int(cid): old for cid, old in con.execute(
        "SELECT r.cid, o.path FROM renamed r JOIN paths p ON p.pid = r.pid JOIN paths o ON o.pid = r.old WHERE p.path = ?", (path,))}


def renames_out_of(con: sqlite3.Connection, path: str) -> dict[int, str]:
    """The commits that renamed ``path`` to another: cid -> the new path."""
    return {int(cid): new for cid, new in con.execute(
        "SELECT r.cid, p.path FROM renamed r JOIN paths p ON p.pid = r.pid JOIN paths o ON o.pid = r.old WHERE o.path = ?", (path,))}


def commits_by_id(con: sqlite3.Connection, cids: list[int]) -> list[StoredCommit]:
    """The commits ``cids`` (their messages, not their files), in that order; unknown ids left out."""
    if not cids:
        return []
    marks = ",".join("?" * len(cids))
    rows = {int(r[0]): r for r in con.execute(f"SELECT cid, sha, date, subject, body FROM commits WHERE cid IN ({marks})", cids)}
    return [StoredCommit(int(r[0]), r[1], int(r[2]), r[3], r[4]) for cid in cids if (r := rows.get(cid)) is not None]


def last_cid(con: sqlite3.Connection) -> int:
    return int(con.execute("SELECT COALESCE(MAX(cid), 0) FROM commits").fetchone()[0])


def counts(con: sqlite3.Connection) -> dict[str, int]:
    one = con.execute("SELECT (SELECT COUNT(*) FROM commits), (SELECT COUNT(*) FROM paths), (SELECT COUNT(*) FROM touched)").fetchone()
    return {"commits": int(one[0]), "paths": int(one[1]), "touched": int(one[2])}
