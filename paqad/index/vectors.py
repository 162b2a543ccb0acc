"""Unit vectors: the ``vectors`` table of an index, the embedding cache beside it, and the fill.

Embedding is the slow part of a build, so it runs *after* the lexical index is committed: lexical
search works at once, and units without a vector are "pending" (a valid, reported state). ``fill``
embeds pending units in batches, each batch its own transaction under the writer lock (the model
runs outside the lock), so a killed fill resumes where it stopped and never blocks other writers
for long.

The cache (``.paqad/vectors/embed-cache.sqlite``) is keyed by (provider fingerprint, sha256 of the
exact text embedded, ``TEXT_PREP_VERSION``) and survives rebuilds and branch switches, so only
units whose embedded text changed are ever sent to the model. An index records the fingerprint and
dimensions of its vectors in ``meta``; a different provider or model forces a full rebuild
(``build.needs_full_rebuild``), so one index never mixes two vector spaces.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import filelock

from paqad import workspace
from paqad.embed import TEXT_PREP_VERSION, get_provider, unit_text
from paqad.index import store
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    import numpy as np

    from paqad.config import Config
    from paqad.embed import Provider

CACHE_NAME = "embed-cache.sqlite"
#: Units per fill batch: one embed call, one transaction. About 3-6 s of model time on 2 cores.
FILL_BATCH = 64
VECTORS_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors(uid INTEGER PRIMARY KEY, vec BLOB NOT NULL)"
_CACHE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cache(fingerprint TEXT NOT NULL, text_sha TEXT NOT NULL, prep INTEGER NOT NULL,"
    " dims INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY(fingerprint, text_sha, prep)) WITHOUT ROWID"
)
#: What the embedded text is made of (``embed.unit_text``), plus what proves a unit unchanged.
_EMBED_FIELDS = ("uid", "id", "content_hash", "kind", "name", "qualified_name", "path", "signature", "docstring", "text")
_PROVIDERS: dict[tuple[str, ...], Any] = {}  # the process's loaded models, shared by the builder and every Index

Progress = Callable[[int, int], None]


def provider_for(name: str, model: str = "", base_url: str = "", root: Path | None = None) -> Provider | None:
    """The (process-wide, lazily loading) provider for a setting pair; ``None`` for ``none``.
    ``root`` is the repository whose ``.paqad/secrets.env`` may hold a remote provider's key (not
    the working directory: ``paqad --root R`` run from elsewhere must find R's key)."""
    if name in ("", "none"):
        return None
    key = (name, model, base_url, str(root) if root is not None and name != "local" else "")
    if key not in _PROVIDERS:
        options = {} if name == "local" else {"base_url": base_url, "root": root}
        _PROVIDERS[key] = get_provider(name, model, **options)
    return _PROVIDERS[key]


def fingerprint(provider: Provider | None) -> str:
    if provider is None:
        return ""
    return str(getattr(provider, "fingerprint", f"{provider.name}:{provider.model}:prep{provider.text_prep_version}"))


def index_meta(cfg: Config, root: Path | None = None) -> dict[str, object]:
    """What an index records about its vector space (empty fingerprint: lexical only)."""
    provider = provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    return {
        "embedding_provider": cfg.rag_embedding_provider,
        "embedding_base_url": cfg.rag_embedding_base_url,
        "embedding_model": provider.model if provider else "",
        "embedding_fingerprint": fingerprint(provider),
        "embedding_dims": provider.dims if provider else 0,
    }


def has_table(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'").fetchone() is not None


def pending_count(con: sqlite3.Connection) -> int:
    """Units still without a vector (0 for a lexical-only index)."""
    if not store.get_meta(con).get("embedding_fingerprint"):
        return 0
    if not has_table(con):
        return int(con.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    return int(con.execute("SELECT COUNT(*) FROM units WHERE uid NOT IN (SELECT uid FROM vectors)").fetchone()[0])


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def to_blob(vec: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


class EmbedCache:
    """Vectors by (fingerprint, text sha256, text-prep version), in a SQLite file of their own.

    Only a cache: an unreadable file is deleted and started afresh. ``hits``/``misses`` count
    lookups since it was opened (the tests use them to prove a rebuild re-embeds nothing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.hits = 0
        self.misses = 0
        try:
            self.con = self._open()
        except sqlite3.DatabaseError:
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            self.con = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute(_CACHE_SCHEMA)
        return con

    def get(self, fp: str, shas: list[str], dims: int) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for i in range(0, len(shas), 500):
            chunk = shas[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT text_sha, vec FROM cache WHERE fingerprint = ? AND prep = ? AND dims = ? AND text_sha IN ({marks})"
            for sha, blob in self.con.execute(sql, (fp, TEXT_PREP_VERSION, dims, *chunk)):
                if len(blob) == 4 * dims:
                    found[sha] = blob
        self.hits += len(found)
        self.misses += len(set(shas)) - len(found)
        return found

    def put(self, fp: str, items: dict[str, bytes], dims: int) -> None:
        self.con.execute("BEGIN IMMEDIATE")
        self.con.executemany(
            "INSERT OR REPLACE INTO cache(fingerprint, text_sha, prep, dims, vec) VALUES (?, ?, ?, ?, ?)",
            ((fp, sha, TEXT_PREP_VERSION, dims, blob) for sha, blob in items.items()),
        )
        self.con.execute("COMMIT")

    def close(self) -> None:
        self.con.close()


def cache_path(root: Path) -> Path:
    return workspace.vectors_dir(root) / CACHE_NAME


@dataclass
class VectorReport:
    """What a fill did. ``stopped`` says why it ended early (``superseded``: a newer generation)."""

    provider: str
    fingerprint: str = ""
    embedded: int = 0
    cached: int = 0
    pending: int = 0
    seconds: float = 0.0
    stopped: str | None = None


def fill(root: Path, cfg: Config, lock: Any, progress: Progress | None = None, batch: int = FILL_BATCH) -> VectorReport:
    """Embed the current index's pending units (cache first), one transaction per batch.

    ``lock`` is the writer lock (re-entrant ``filelock``): held only while a batch is written.
    No model is loaded when the provider is ``none``, nothing is pending, or the cache has all.
    """
    started = time.perf_counter()
    provider = provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    report = VectorReport(cfg.rag_embedding_provider, fingerprint(provider))
    path = store.current_path(root)
    if provider is None or path is None:
        return report
    con = store.connect(path)
    cache = EmbedCache(cache_path(root))
    try:
        if store.get_meta(con).get("embedding_fingerprint") != report.fingerprint:
            report.stopped = "provider_mismatch"
            return report
        _fill_batches(root, path, con, provider, report, cache, lock, progress, batch)
        report.pending = pending_count(con)
    except filelock.Timeout:
        report.stopped = "locked"
        report.pending = pending_count(con)
    finally:
        cache.close()
        con.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _fill_batches(root: Path, path: Path, con: sqlite3.Connection, provider: Provider, report: VectorReport, cache: EmbedCache, lock: Any, progress: Progress | None, batch: int) -> None:
    with lock:
        con.execute(VECTORS_SCHEMA)
        con.execute(store.DESCRIPTIONS_SCHEMA)
    todo = [r[0] for r in con.execute("SELECT uid FROM units WHERE uid NOT IN (SELECT uid FROM vectors) ORDER BY uid")]
    for done, chunk in _chunks(todo, batch):
        rows = _unit_rows(con, chunk)
        blobs = _vectors_for(rows, provider, report, cache)
        with lock:
            if store.current_path(root) != path:
                report.stopped = "superseded"
                return
            _write_batch(con, rows, blobs)
        if progress:
            progress(done + len(chunk), len(todo))


def _chunks(items: list[int], size: int) -> Iterator[tuple[int, list[int]]]:
    for i in range(0, len(items), max(1, size)):
        yield i, items[i : i + size]


@dataclass
class _Pending:
    """A unit to embed and the agent-written description applied to it ("" when none)."""

    unit: StoredUnit
    description: str


def _unit_rows(con: sqlite3.Connection, uids: list[int]) -> list[_Pending]:
    marks = ",".join("?" * len(uids))
    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    sql = (
        f"SELECT {', '.join(_EMBED_FIELDS)}, COALESCE((SELECT d.text FROM descriptions d WHERE d.uid = units.uid), '') AS description"
        f" FROM units WHERE uid IN ({marks}) ORDER BY uid"
    )
    out = []
    for row in cur.execute(sql, uids).fetchall():
        out.append(_Pending(StoredUnit.from_row(row, _EMBED_FIELDS), row["description"]))
    return out


def embedded_text(unit: StoredUnit, description: str = "") -> str:
    """The exact text embedded for a stored unit, with its applied description."""
    return unit_text(unit, description=description)  # type: ignore[arg-type]  # reads the fields a CodeUnit and a StoredUnit share


def _vectors_for(rows: list[_Pending], provider: Provider, report: VectorReport, cache: EmbedCache) -> list[bytes]:
    texts = [embedded_text(r.unit, r.description) for r in rows]
    shas = [text_sha(t) for t in texts]
    found = cache.get(report.fingerprint, shas, provider.dims)
    missing = sorted({s: t for s, t in zip(shas, texts) if s not in found}.items())
    if missing:
        vecs = provider.embed_documents([t for _, t in missing])
        fresh = {sha: to_blob(v) for (sha, _), v in zip(missing, vecs)}
        cache.put(report.fingerprint, fresh, provider.dims)
        found.update(fresh)
    report.embedded += len(missing)
    report.cached += len(rows) - len(missing)
    return [found[s] for s in shas]


def _write_batch(con: sqlite3.Connection, rows: list[_Pending], blobs: list[bytes]) -> None:
    """Store vectors for units that are still what was embedded (an update may have replaced them)."""
    with store.transaction(con):
        for row, blob in zip(rows, blobs):
            u = row.unit
            now = con.execute("SELECT id, content_hash FROM units WHERE uid = ?", (u.uid,)).fetchone()
            if now == (u.id, u.content_hash):
                con.execute("INSERT OR REPLACE INTO vectors(uid, vec) VALUES (?, ?)", (u.uid, blob))

