"""``Index``: the one owner of reads from the index, and of what a long-lived process keeps of it.

Every module outside ``paqad/index/`` that reads the index does it through an ``Index``: search,
the graph, the agent actions, ``describe``, the evaluation and ``bootstrap``. It holds

- the read-only connection to the live generation, reopened when ``CURRENT`` names another file
  (a rebuild) and noticing commits to the same file (an update, a vector batch) through SQLite's
  ``PRAGMA data_version``: :meth:`Index.refresh`, called at the start of each operation, so one
  search reads one generation;
- the caches derived from a generation (the vector matrix, the code graph, the meta table),
  each kept until the generation changes (:meth:`Index.cached`), and the query embedding provider;
- typed reads (:mod:`paqad.index.records`): rows come back as ``StoredUnit`` and friends, never
  as positional tuples, and a damaged file becomes ``IndexCorruptError`` with the rebuild hint.

A session (``paqad agent``, ``paqad mcp``) opens one ``Index`` and keeps it; one-shot callers and
the ``search(root, ...)`` convenience use :meth:`Index.shared`, the process's ``Index`` per root.
The builder, postings and vector-writing code keep their own connections (``paqad.index.writing.build``).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from paqad import localstate
from paqad.errors import IndexCorruptError, IndexMissingError
from paqad.index import postings, schema, store
from paqad.index.models import provider_for
from paqad.index.records import Counts, Generation, IndexMeta, StoredUnit, TermInfo, VectorRows, check_fields

if TYPE_CHECKING:
    from array import array

    import numpy as np

    from paqad.embed import Provider

T = TypeVar("T")
#: What a query binds to a ``?``.
SQLParam = str | int | float | bytes | None
_CHUNK = 500  # bound parameters per IN (...) list, well under SQLite's limit
KEPT_UNITS = 50_000  # unit records kept per generation and column set (no text column)
KEPT_TEXTS = 1_000  # the same with the text column
KEPT_TERMS = 100_000  # term lookups (found or not) kept per generation
_MISSING = "no index yet; run `paqad rag init` (or `paqad rag rebuild`)"


class Index:
    """The live index of one repository, read through one connection (see the module docstring).

    Thread-safe for the way the doors use it: the connection is shared (``check_same_thread``
    off) and refreshing and caching happen under a lock; the MCP server serialises requests anyway.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.changes = 0  # generations or commits noticed since opened (``stats`` reports it)
        self._con: sqlite3.Connection | None = None
        self._file: tuple[str, int] | None = None  # (generation file name, inode) of the open file
        self._pointer: store.PointerStat | None = None  # CURRENT's settled stat when it named that file
        self._seen: Generation | None = None
        self._cache: dict[str, tuple[Generation, object]] = {}  # name -> (generation, what cached() built)
        self._provider: tuple[tuple[str, str, str, str], Provider | None] | None = None
        self._lock = threading.RLock()
        self._pinned = threading.local()  # ``at``: the generation this thread's operation reads (:meth:`reading`)

    # ---- opening and generations ------------------------------------------------------------

    @classmethod
    def open(cls, root: Path) -> Index:
        """Open the live index at ``root``; raises ``IndexMissingError`` / ``IndexCorruptError``."""
        index = cls(root)
        index.refresh()
        return index

    @classmethod
    def shared(cls, root: Path) -> Index:
        """The process's ``Index`` for ``root``. Lazy: nothing is opened (and nothing raised) until
        an operation refreshes it, so a caller can order its own checks before the index's."""
        key = Path(localstate.real_path(root))  # ``root.resolve()``, kept while the work tree stays put
        with _SHARED_LOCK:
            index = _SHARED.get(key)
            if index is None:
                index = _SHARED[key] = cls(root)
        return index

    @staticmethod
    def forget(root: Path) -> None:
        """Close and drop the process's shared ``Index`` for ``root`` (a scratch index being removed)."""
        with _SHARED_LOCK:
            index = _SHARED.pop(root.resolve(), None)
        if index is not None:
            index.close()

    def refresh(self) -> Generation:
        """Reopen when a rebuild published a new generation; note commits to the same file.
        Returns the generation now read; counts a change against the one seen before.

        A rebuild's swap is not damage: when opening the generation ``CURRENT`` named fails and
        ``CURRENT`` now names another one, the pointer is read again and the open retried once."""
        with self._lock:
            if self._file is not None and self._still_current(self._file):
                return self._note(self._file[0])
            before = store.pointer_stat(self.root)
            tried = store.pointer_name(self.root)
            try:
                seen = self._refresh_once()
            except (IndexCorruptError, OSError):
                if store.pointer_name(self.root) in (tried, None):
                    raise
                return self._refresh_once()
            # CURRENT vouches for the file now open when it was the same settled file before and after the read
            self._pointer = before if before is not None and store.settled(before) and store.pointer_stat(self.root) == before else None
            return seen

    def _still_current(self, file: tuple[str, int]) -> bool:
        """True when ``CURRENT`` is the very file (settled, unchanged) that named the generation
        open now, and that name still holds the file open: no rebuild published since. Two stats
        instead of reading and validating ``CURRENT`` twice (a tenth of a warm lexical query)."""
        if self._con is None or self._pointer is None or store.pointer_stat(self.root) != self._pointer:
            return False
        try:
            st = os.lstat(os.path.join(os.path.dirname(self._pointer[0]), file[0]))
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and st.st_ino == file[1]

    def _refresh_once(self) -> Generation:
        path = store.current_path(self.root)
        if path is None:
            self._drop()
            raise IndexMissingError(_MISSING)
        ident = (path.name, path.stat().st_ino)
        if self._con is None or self._file != ident:
            self._drop()
            self._con = store.connect(path, readonly=True)
            self._file = ident
        return self._note(path.name)

    def _note(self, name: str) -> Generation:
        """The generation read now (``name`` at the connection's ``data_version``), a change
        counted against the one seen before."""
        assert self._con is not None
        with self.guard():
            seen = Generation(name, int(self._con.execute("PRAGMA data_version").fetchone()[0]))
        if self._seen is not None and seen != self._seen:
            self.changes += 1
        self._seen = seen
        return seen

    @contextmanager
    def reading(self) -> Iterator[Generation]:
        """:meth:`refresh`, then one operation's reads: inside the block :meth:`cached` takes the
        generation refreshed here instead of asking SQLite for ``data_version`` at each lookup (a
        warm search makes a dozen). A commit landing meanwhile is noticed by the next operation."""
        seen = self.refresh()
        outer = getattr(self._pinned, "at", None)
        self._pinned.at = seen
        try:
            yield seen
        finally:
            self._pinned.at = outer

    @property
    def generation(self) -> Generation | None:
        """The generation seen at the last :meth:`refresh` (None before the first)."""
        return self._seen

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._con is not None:
            self._con.close()
        self._con, self._file, self._pointer = None, None, None
        self._cache.clear()

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a SQLite failure into ``IndexCorruptError`` and drop the connection, so the next
        operation reopens rather than reusing a broken handle. Damage found while reading (a
        malformed posting block, a failed page) is noted for the generation read
        (:func:`paqad.index.store.mark_damaged`): the next ``rag update`` rebuilds it."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            damage = not isinstance(exc, sqlite3.OperationalError) or _is_damage(exc)
            self._failed(str(exc) if damage else None)
            raise IndexCorruptError(f"index read failed ({exc})") from exc
        except IndexCorruptError as exc:
            self._failed(exc.detail)
            raise

    def _failed(self, damage: str | None) -> None:
        """Drop the connection; note ``damage`` against the generation read if it is still current."""
        if damage is not None and self._file is not None and store.pointer_name(self.root) == self._file[0]:
            store.mark_damaged(self.root, self._file[0], damage)
        self._drop()

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            self.refresh()
        assert self._con is not None
        return self._con

    def _rows(self, sql: str, params: Iterable[SQLParam] = ()) -> list[sqlite3.Row]:
        return self._read(lambda con: _fetch(con, sql, tuple(params)))

    def _read(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """``read(connection)`` under :meth:`guard`; once more on the new generation when it
        failed because a rebuild swapped the one it was reading."""
        name = self._file[0] if self._file is not None else None
        try:
            with self.guard():
                return read(self._connection())
        except IndexCorruptError:
            if name is None or store.pointer_name(self.root) in (name, None):
                raise
        self.refresh()
        with self.guard():
            return read(self._connection())

    def cached(self, name: str, build: Callable[[], T]) -> T:
        """``build()``'s value for the generation read now, built once per generation (the vector
        matrix, the graph, the meta table): a commit or a rebuild yields a fresh one on next use."""
        with self._lock:
            now = getattr(self._pinned, "at", None)
            if now is None or self._file is None or now.name != self._file[0]:  # not pinned, or reopened since
                con = self._connection()
                with self.guard():
                    version = int(con.execute("PRAGMA data_version").fetchone()[0])
                assert self._file is not None
                now = Generation(self._file[0], version)
            hit = self._cache.get(name)
            if hit is not None and hit[0] == now:
                return cast(T, hit[1])  # what build() of this name returned: one name, one type
            value = build()
            self._cache[name] = (now, value)
            return value

    # ---- meta, terms, postings ----------------------------------------------------------------

    def meta(self) -> IndexMeta:
        return self.cached("meta", lambda: IndexMeta({r["key"]: r["value"] for r in self._rows("SELECT key, value FROM meta")}))

    def terms(self, words: list[str]) -> dict[str, TermInfo]:
        """The index's entry for each of ``words`` it knows (a new dict each call). Entries, and
        words it lacks, are kept for the generation (up to ``KEPT_TERMS``): a warm process looks
        the same query words up again and again."""
        kept: dict[str, TermInfo | None] = self.cached("terms", dict)
        missing = [w for w in dict.fromkeys(words) if w not in kept]
        fresh: dict[str, TermInfo | None] = dict.fromkeys(missing)
        for chunk in _chunks(missing):
            for r in self._rows(f"SELECT term, tid, df FROM terms WHERE term IN ({_marks(chunk)})", chunk):
                fresh[r["term"]] = TermInfo(r["term"], int(r["tid"]), int(r["df"]))
        if fresh:
            if len(kept) + len(fresh) > KEPT_TERMS:
                kept.clear()
            kept.update(fresh)
        return {w: info for w in words if (info := kept.get(w) or fresh.get(w)) is not None}

    def terms_with_prefix(self, prefix: str, max_len: int, limit: int = 32) -> list[TermInfo]:
        """Up to ``limit`` of the index's terms that start with ``prefix`` and are at most
        ``max_len`` long, commonest first (a range scan of the terms' unique index), for the
        query's derivational fallback. Kept for the generation, as :meth:`terms` keeps its lookups
        (a warm process asks for the same query words' prefixes again and again)."""
        kept: dict[tuple[str, int, int], list[TermInfo]] = self.cached("terms-with-prefix", dict)
        found = kept.get((prefix, max_len, limit))
        if found is None:
            rows = self._rows(
                "SELECT term, tid, df FROM terms WHERE term >= ? AND term < ? AND length(term) <= ? ORDER BY df DESC, term LIMIT ?",
                (prefix, prefix + "\uffff", max_len, limit),
            )
            found = [TermInfo(r["term"], int(r["tid"]), int(r["df"])) for r in rows]
            if len(kept) >= KEPT_TERMS:
                kept.clear()
            kept[(prefix, max_len, limit)] = found
        return list(found)

    def common_terms(self, limit: int) -> list[str]:
        """The ``limit`` most frequent terms, most frequent first (benchmarks build queries from them)."""
        return [r["term"] for r in self._rows("SELECT term FROM terms ORDER BY df DESC LIMIT ?", (limit,))]

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A term's posting list as numpy arrays (unit ids, weights, field masks)."""
        return self._read(lambda con: postings.read(con, tid))

    def posting_arrays(self, tid: int) -> tuple[array, array, array]:
        """A term's posting list as ``array``s, for a process that has not imported numpy."""
        return self._read(lambda con: postings.read_arrays(con, tid))

    def posting_counts(self, tid: int, ident_mask: int) -> tuple[int, int]:
        """(units containing the term, units where a field in ``ident_mask`` does)."""
        return self._read(lambda con: postings.counts(con, tid, ident_mask))

    # ---- units --------------------------------------------------------------------------------

    def units(self, uids: Iterable[int], fields: tuple[str, ...]) -> dict[int, StoredUnit]:
        """The units with these row ids (those still present), read with ``fields`` (+ ``uid``),
        in row-id order. Rows read are kept for the generation (per column set, up to
        ``KEPT_UNITS``, or ``KEPT_TEXTS`` with the text column): a warm search asks for the same
        candidates' names and spans query after query. Callers must not change the records."""
        cols = check_fields(_with("uid", fields))
        kept: dict[int, StoredUnit] = self.cached("units:" + cols, dict)
        wanted = sorted(set(uids))
        fresh: dict[int, StoredUnit] = {}
        for chunk in _chunks([uid for uid in wanted if uid not in kept]):
            for r in self._rows(f"SELECT {cols} FROM units WHERE uid IN ({_marks(chunk)})", chunk):
                fresh[int(r["uid"])] = StoredUnit.from_row(r)
        out = {uid: unit for uid in wanted if (unit := kept.get(uid) or fresh.get(uid)) is not None}
        if fresh:
            if len(kept) + len(fresh) > (KEPT_TEXTS if "text" in fields else KEPT_UNITS):
                kept.clear()
            kept.update(fresh)
        return out

    def units_named(self, names: Iterable[str], fields: tuple[str, ...], limit: int = 64, paths: Iterable[str] = ()) -> dict[int, StoredUnit]:
        """Up to ``limit`` units *per name* whose ``name`` is exactly one of ``names`` (the
        ``units_name`` index; an index built before it has none and finds nothing here rather than
        scanning every row). Per name, so a common name (``__mul__``) cannot crowd out a rare one
        asked beside it (``__matmul__``); declarations' first parts first, so the continuations of
        a split class cannot crowd out its head. With ``paths``, only units in those files."""
        wanted = sorted(set(names))
        if not wanted or not self.cached("name_index", lambda: bool(self._rows("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'units_name'"))):
            return {}
        cols = ", ".join(_with("uid", fields))
        out: dict[int, StoredUnit] = {}
        for name in wanted:
            where = f" AND path IN ({_marks(within)})" if (within := sorted(set(paths))) else ""
            for r in self._rows(f"SELECT {cols} FROM units WHERE name = ?{where} ORDER BY part > 1, uid LIMIT ?", [name, *within, limit]):
                out[int(r["uid"])] = StoredUnit.from_row(r)
        return out

    def units_named_after(self, names: Iterable[str], kinds: Iterable[str], fields: tuple[str, ...], limit: int = 64) -> dict[int, StoredUnit]:
        """Up to ``limit`` units of ``kinds`` whose ``name`` ends in ``_<name>`` for one of
        ``names`` (``_print_Product``, ``visit_Call``: code named for a type it handles). A scan
        of the name column (no index serves a suffix), so callers ask it only for reports. GLOB, not
        LIKE: the match is case-sensitive as names are (``LIKE '%_latex'`` would also take every
        ``test_latex`` and crowd the real ``_print_LaTeX`` out of the limit)."""
        wanted = sorted({n for n in names if n and n.isidentifier() and "_" not in n})
        kind_list = sorted(set(kinds))
        if not wanted or not kind_list:
            return {}
        cols = ", ".join(_with("uid", fields))
        globs = " OR ".join("name GLOB ?" for _ in wanted)
        rows = self._rows(f"SELECT {cols} FROM units WHERE kind IN ({_marks(kind_list)}) AND ({globs}) ORDER BY uid LIMIT ?",
                          [*kind_list, *(f"*_{n}" for n in wanted), limit])
        return {int(r["uid"]): StoredUnit.from_row(r) for r in rows}

    def units_by_id(self, ids: Iterable[str], fields: tuple[str, ...]) -> dict[str, StoredUnit]:
        """The units with these public ids (those present), read with ``fields`` (+ ``id``)."""
        cols = check_fields(_with("id", fields))
        out: dict[str, StoredUnit] = {}
        for chunk in _chunks(list(ids)):
            for r in self._rows(f"SELECT {cols} FROM units WHERE id IN ({_marks(chunk)})", chunk):
                out[r["id"]] = StoredUnit.from_row(r)
        return out

    def unit(self, unit_id: str, fields: tuple[str, ...]) -> StoredUnit | None:
        return self.units_by_id([unit_id], fields).get(unit_id)

    def all_units(self, fields: tuple[str, ...]) -> list[StoredUnit]:
        """Every unit in row-id order (the order they were indexed in), read with ``fields``."""
        return [StoredUnit.from_row(r) for r in self._rows(f"SELECT {check_fields(fields)} FROM units ORDER BY uid")]

    def module_texts_containing(self, language: str, needle: str) -> dict[str, str]:
        """Path → text of the ``language`` module units whose text contains ``needle`` (the graph
        reads Python ``import ... as`` aliases from them; filtered in SQLite, not in Python)."""
        rows = self._rows("SELECT path, text FROM units WHERE kind = 'module' AND language = ? AND instr(text, ?) > 0", (language, needle))
        return {r["path"]: r["text"] for r in rows}

    # ---- files, counts, vectors ---------------------------------------------------------------

    def has_file(self, path: str) -> bool:
        return bool(self._rows("SELECT 1 FROM files WHERE path = ?", (path,)))

    def paths(self) -> tuple[str, ...]:
        """Every indexed file's path, sorted (read once per generation: the ranking stack matches
        file names against the query)."""
        return self.cached("paths", lambda: tuple(r["path"] for r in self._rows("SELECT path FROM files ORDER BY path")))

    def first_units(self, paths: Iterable[str], fields: tuple[str, ...]) -> dict[int, StoredUnit]:
        """Each of ``paths``' first unit (lowest row id: its module or first declaration)."""
        wanted = sorted(set(paths))
        if not wanted:
            return {}
        cols = ", ".join(_with("uid", fields))
        rows = self._rows(f"SELECT {cols} FROM units WHERE uid IN (SELECT MIN(uid) FROM units WHERE path IN ({_marks(wanted)}) GROUP BY path)", wanted)
        return {int(r["uid"]): StoredUnit.from_row(r) for r in rows}

    def units_in(self, paths: Iterable[str], fields: tuple[str, ...]) -> dict[int, StoredUnit]:
        """Every unit of ``paths`` (the ``units_path`` index), read with ``fields`` (+ ``uid``)."""
        cols = ", ".join(_with("uid", fields))
        out: dict[int, StoredUnit] = {}
        for chunk in _chunks(sorted(set(paths))):
            out.update((int(r["uid"]), StoredUnit.from_row(r)) for r in self._rows(f"SELECT {cols} FROM units WHERE path IN ({_marks(chunk)})", chunk))
        return out

    def file_languages(self) -> dict[str, int]:
        """Indexed files per language, most first (then by name)."""
        rows = self._rows("SELECT language, COUNT(*) AS n FROM files GROUP BY language ORDER BY 2 DESC, 1")
        return {r["language"]: int(r["n"]) for r in rows}

    def files_without_declarations(self) -> dict[str, str]:
        """Path → language of the files indexed only as module/document units, by path."""
        rows = self._rows("SELECT path, language FROM units GROUP BY path HAVING SUM(kind NOT IN ('module', 'document')) = 0 ORDER BY path")
        return {r["path"]: r["language"] for r in rows}

    def counts(self) -> Counts:
        """Sizes for ``rag status``."""
        files = self._rows("SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM files")[0]
        langs = self._rows("SELECT language AS k, COUNT(*) AS n FROM units GROUP BY language ORDER BY 2 DESC")
        kinds = self._rows("SELECT kind AS k, COUNT(*) AS n FROM units GROUP BY kind ORDER BY 2 DESC")
        with self.guard():
            pending = store.pending_vectors(self._connection())
        return Counts(int(files["n"]), int(files["bytes"]), {r["k"]: int(r["n"]) for r in langs}, {r["k"]: int(r["n"]) for r in kinds}, pending)

    def has_vectors_table(self) -> bool:
        with self.guard():
            return schema.has_table(self._connection(), "vectors")

    def vector_rows(self) -> VectorRows:
        """Every stored vector in uid order (the matrix is assembled by ``paqad.search.vector``)."""
        rows = self._rows("SELECT uid, vec FROM vectors ORDER BY uid")
        return VectorRows([int(r["uid"]) for r in rows], [r["vec"] for r in rows])

    def interim_rows(self) -> VectorRows | None:
        """Every stand-in vector (``paqad.index.embedding.interim``) in uid order, or None without the table."""
        with self.guard():
            if not schema.has_table(self._connection(), schema.INTERIM_TABLE):
                return None
        rows = self._rows(f"SELECT uid, vec FROM {schema.INTERIM_TABLE} ORDER BY uid")
        return VectorRows([int(r["uid"]) for r in rows], [r["vec"] for r in rows])

    def query_provider(self) -> Provider | None:
        """The provider that embeds queries in this index's vector space (the one its ``meta``
        names, never the current settings); None for a lexical index. Held for the ``Index``'s
        life; the model itself is loaded once per process (``index.models.provider_for``), so a
        process that builds and searches never loads it twice."""
        meta = self.meta()
        key = (meta.embedding_provider, meta.embedding_model, meta.embedding_base_url, meta.embedding_fingerprint)
        with self._lock:
            if self._provider is None or self._provider[0] != key:
                # Built with an earlier model file (being re-embedded), the fingerprints differ and
                # the search answers lexically (paqad.search.vector) until the rebuild.
                provider = provider_for(*key[:3], self.root)
                self._provider = (key, provider)
            return self._provider[1]


_SHARED: dict[Path, Index] = {}
_NOT_DAMAGE = ("locked", "busy", "unable to open", "readonly", "interrupted")


def _is_damage(exc: sqlite3.OperationalError) -> bool:
    """An operational error that says the file is damaged, not that it is busy or gone."""
    text = str(exc).lower()
    return not any(word in text for word in _NOT_DAMAGE)


def _fetch(con: sqlite3.Connection, sql: str, params: tuple[SQLParam, ...]) -> list[sqlite3.Row]:
    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    return cur.execute(sql, params).fetchall()
_SHARED_LOCK = threading.Lock()


def _with(first: str, fields: tuple[str, ...]) -> tuple[str, ...]:
    return fields if first in fields else (first, *fields)


def _chunks(items: list[T]) -> Iterator[list[T]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _marks(chunk: Sized) -> str:
    return ",".join("?" * len(chunk))
