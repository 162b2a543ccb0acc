"""The user-level embedding cache: vectors by (model fingerprint, sha256 of the exact text), shared
by every work tree and clone of every repository this user indexes.

Why user-level: a second clone, a git worktree or a branch checked out elsewhere holds mostly the
same units, and embedding is the slow part of a build; with one cache per user the second tree
sends only what differs to the model. Where: ``$XDG_CACHE_HOME/paqad/embeddings.sqlite`` (or
``~/.cache/paqad/``; ``PAQAD_CACHE_DIR`` overrides both), created 0700 since it belongs to one user.

What it holds, and only that: model fingerprints (``local:all-MiniLM-L6-v2:df1d13322d00:prep1``),
32-byte sha256 digests of embedded texts, float16 vectors, and a last-used day for eviction.
Never a text, a path or a key. float16 halves the size of float32 (768 bytes for 384 dims, about
0.85 KB a vector with its key; the old per-tree cache took 4.7 KB, its 1.6 KB rows overflowing
into pages of their own) and moves a cosine by about 1e-5; ``vectors.fill`` rounds fresh vectors
through float16 too, so an index is byte-identical whether its vectors came from the model or
from here.

Safe for concurrent writers: SQLite in WAL mode, a 30 s busy timeout, each put one ``BEGIN
IMMEDIATE`` transaction. Only a cache, so nothing here is fatal: a file that is not a database
(or turns out damaged mid-run) is deleted and started afresh, a cache that stays locked or
unwritable is skipped for this run (every lookup a miss, every put dropped), and the caller embeds
as if it were empty. Bounded: when the live pages pass ``limit_mb`` the least recently used
vectors (whole days at a time, oldest first) are deleted until it is back under 90%; SQLite reuses
the freed pages, so the file stops growing at about the limit. ``limit_mb`` 0 turns it off.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from paqad import workspace
from paqad.embed.base import TEXT_PREP_VERSION
from paqad.index import schema

FILE_NAME = schema.EMBED_CACHE_FILE
#: Days since the epoch: last-use stamps are this coarse so that a hit writes at most once a day.
_DAY = 86_400
_CHUNK = 500


def today() -> int:
    return int(time.time() // _DAY)


class VectorCache(Protocol):
    """What a fill reads and writes vectors through: the user cache, or ``shared_store.Tiered``
    (the user cache, then the team's store behind it). ``con`` is None when the user cache is off."""

    @property
    def con(self) -> sqlite3.Connection | None: ...

    def get(self, fingerprint: str, shas: Iterable[bytes], dims: int, /) -> dict[bytes, bytes]: ...

    def put(self, fingerprint: str, items: dict[bytes, bytes], dims: int, /) -> None: ...

    def close(self) -> None: ...


def _damaged(exc: sqlite3.Error) -> bool:
    """Is the file itself bad? Only then may it be deleted: a lock or a busy database (two processes
    opening a new cache at once) is a DatabaseError too, and deleting the other's live file loses
    every vector it writes after."""
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB")


class UserEmbedCache:
    """Vectors by (fingerprint, text sha256). ``hits``/``misses`` count lookups since it was opened
    (tests use them); ``broken`` names why the cache is skipped for this run ("" while it works)."""

    def __init__(self, path: Path | None = None, limit_mb: float = 512.0) -> None:
        self.path = path or workspace.cache_dir() / FILE_NAME
        self.limit_bytes = int(limit_mb * 1024 * 1024)
        self.hits = 0
        self.misses = 0
        self.evicted = 0
        self.broken = ""
        self.con: sqlite3.Connection | None = None
        self._models: dict[str, tuple[int, int]] = {}  # fingerprint -> (id, dims)
        if self.limit_bytes <= 0:
            self.broken = "off"
            return
        try:
            self.con = self._open()
        except sqlite3.DatabaseError as exc:
            if _damaged(exc):  # a lock (another process creating the file) is no damage: never delete its work
                self._delete_damaged()
            self._try_open()
        except (sqlite3.Error, OSError) as exc:
            self.broken = f"unusable: {exc}"

    # ---- opening ---------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            schema.create_embed_cache(con)
            con.execute("SELECT COUNT(*) FROM models").fetchone()
        except BaseException:
            con.close()
            raise
        return con

    def _try_open(self) -> None:
        try:
            self.con = self._open()
        except (sqlite3.Error, OSError) as exc:
            self.broken = f"unusable: {exc}"

    def _delete_damaged(self) -> None:
        """Delete a damaged file and its WAL (only a cache); a process that still has it open keeps
        its handle to the unlinked file, every later open starts afresh."""
        for suffix in ("", "-wal", "-shm"):
            try:
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            except OSError:
                pass

    def _failed(self, exc: sqlite3.Error) -> None:
        """A query failed mid-run: a damaged file is deleted (rebuilt on the next open), a lock or
        a full disk just turns the cache off for this run."""
        if self.con is not None:
            self.con.close()  # rolls back an open transaction
            self.con = None
        if _damaged(exc):
            self._delete_damaged()
        self.broken = f"skipped: {exc}"

    # ---- lookups ---------------------------------------------------------------------------

    def _model_id(self, fingerprint: str, dims: int, create: bool) -> int | None:
        """The id of ``fingerprint`` if it is recorded with ``dims`` (``create``: record it if absent)."""
        known = self._models.get(fingerprint)
        if known is None:
            assert self.con is not None
            row = self.con.execute("SELECT id, dims FROM models WHERE fingerprint = ?", (fingerprint,)).fetchone()
            if row is None and create:
                self.con.execute("INSERT OR IGNORE INTO models(fingerprint, dims) VALUES (?, ?)", (fingerprint, dims))
                row = self.con.execute("SELECT id, dims FROM models WHERE fingerprint = ?", (fingerprint,)).fetchone()
            if row is None:
                return None
            known = self._models[fingerprint] = (int(row[0]), int(row[1]))
        return known[0] if known[1] == dims else None

    def get(self, fingerprint: str, shas: Iterable[bytes], dims: int) -> dict[bytes, bytes]:
        """float16 vector bytes (``2 * dims`` each) by sha for the shas found; misses are absent."""
        wanted = list(dict.fromkeys(shas))
        found: dict[bytes, bytes] = {}
        if self.con is not None:
            try:
                found = self._get(fingerprint, wanted, dims)
            except sqlite3.Error as exc:
                self._failed(exc)
                found = {}
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def _get(self, fingerprint: str, wanted: list[bytes], dims: int) -> dict[bytes, bytes]:
        assert self.con is not None
        model = self._model_id(fingerprint, dims, create=False)
        if model is None:
            return {}
        found: dict[bytes, bytes] = {}
        stale: list[bytes] = []
        day = today()
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            sql = f"SELECT sha, vec, used FROM vectors WHERE model = ? AND sha IN ({','.join('?' * len(chunk))})"
            for sha, blob, used in self.con.execute(sql, (model, *chunk)):
                if len(blob) == 2 * dims:
                    found[bytes(sha)] = bytes(blob)
                    if used < day:
                        stale.append(bytes(sha))
        if stale:
            self._touch(model, stale, day)
        return found

    def _touch(self, model: int, shas: list[bytes], day: int) -> None:
        """Mark hits as used today (best effort: a busy cache skips it, eviction order is a hint)."""
        assert self.con is not None
        try:
            self.con.execute("BEGIN IMMEDIATE")
            self.con.executemany("UPDATE vectors SET used = ? WHERE model = ? AND sha = ?", ((day, model, s) for s in shas))
            self.con.execute("COMMIT")
        except sqlite3.OperationalError:
            if self.con.in_transaction:
                self.con.execute("ROLLBACK")

    # ---- writes ----------------------------------------------------------------------------

    def put(self, fingerprint: str, items: dict[bytes, bytes], dims: int) -> None:
        """Store float16 vector bytes by sha, then evict if over the limit. Errors only turn the
        cache off for this run: the vectors are in the index either way."""
        if self.con is None or not items:
            return
        try:
            self._put(fingerprint, items, dims)
            self._evict_if_over()
        except sqlite3.Error as exc:
            self._failed(exc)  # closing the connection rolls back what this put began

    def _put(self, fingerprint: str, items: dict[bytes, bytes], dims: int) -> None:
        assert self.con is not None
        self.con.execute("BEGIN IMMEDIATE")
        model = self._model_id(fingerprint, dims, create=True)
        if model is None:  # the fingerprint is recorded with other dims: never mix them
            self.con.execute("ROLLBACK")
            return
        day = today()
        rows = ((model, sha, blob, day) for sha, blob in items.items() if len(blob) == 2 * dims)
        self.con.executemany("INSERT OR REPLACE INTO vectors(model, sha, vec, used) VALUES (?, ?, ?, ?)", rows)
        self.con.execute("COMMIT")

    def live_bytes(self) -> int:
        """Bytes of the pages in use (the file may be larger by pages freed for reuse)."""
        assert self.con is not None
        pages = self.con.execute("PRAGMA page_count").fetchone()[0] - self.con.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages) * int(self.con.execute("PRAGMA page_size").fetchone()[0])

    def _evict_if_over(self) -> None:
        assert self.con is not None
        live = self.live_bytes()
        if live <= self.limit_bytes:
            return
        count = int(self.con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        # Rows to drop so that the live size falls to 90% of the limit, at the current bytes per row.
        drop = count - int(count * 0.9 * self.limit_bytes / live) if count else 0
        if drop <= 0:
            return
        self.con.execute("BEGIN IMMEDIATE")
        cur = self.con.execute(
            "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY used, rowid LIMIT ?)", (drop,)
        )
        self.con.execute("COMMIT")
        self.evicted += max(0, cur.rowcount)

    def count(self) -> int:
        """Vectors held (0 when the cache is off or broken)."""
        if self.con is None:
            return 0
        return int(self.con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


def migrate_tree_cache(old: Path, cache: UserEmbedCache, key: Callable[[str], str]) -> int:
    """Move the vectors of an old per-tree cache (``<per-developer folder>/vectors/embed-cache.sqlite``: float32
    rows keyed by fingerprint, hex text sha and prep) into ``cache``, then delete the old file.
    ``key(fingerprint)`` is the user cache's key for a fingerprint at the current text prep: rows
    of another prep are dropped. A damaged old file is deleted as well. Returns the rows moved."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    moved = 0
    if cache.con is not None:
        try:
            con = sqlite3.connect(f"file:{old}?mode=ro", uri=True, timeout=5.0)
            try:
                rows = con.execute("SELECT fingerprint, text_sha, dims, vec FROM cache WHERE prep = ?", (TEXT_PREP_VERSION,)).fetchall()
            finally:
                con.close()
        except sqlite3.Error:
            rows = []
        groups: dict[tuple[str, int], dict[bytes, bytes]] = {}
        for fingerprint, sha_hex, dims, vec in rows:
            if len(vec) == 4 * dims and len(sha_hex) == 64:
                half = np.frombuffer(vec, dtype="<f4").astype("<f2").tobytes()
                groups.setdefault((fingerprint, int(dims)), {})[bytes.fromhex(sha_hex)] = half
        for (fingerprint, dims), items in groups.items():
            cache.put(key(fingerprint), items, dims)
            moved += len(items)
        if cache.con is None:  # the put failed: keep the old file for the next run
            return 0
    for suffix in ("", "-wal", "-shm"):
        Path(f"{old}{suffix}").unlink(missing_ok=True)
    return moved
