"""Unit vectors: the ``vectors`` table of an index, the embedding cache beside it, and the fill.

Embedding is the slow part of a build, so it runs *after* the lexical index is committed: lexical
search works at once, and units without a vector are "pending" (a valid, reported state). ``fill``
embeds pending units in batches, each batch its own transaction under the writer lock (the model
runs outside the lock), so a killed fill resumes where it stopped and never blocks other writers
for long.

The cache is the user's (``paqad.index.embedding.embed_cache``: ``$XDG_CACHE_HOME/paqad/embeddings.sqlite``),
shared by every work tree and clone, keyed by (provider fingerprint + ``TEXT_PREP_VERSION``,
sha256 of the exact text embedded), so only units whose embedded text changed anywhere on this
machine are ever sent to the model. The per-tree cache of earlier versions
(``<per-developer folder>/vectors/embed-cache.sqlite``) is moved into it on the first fill and deleted. An index
records the fingerprint and dimensions of its vectors in ``meta``; a different provider or model
(a changed model file included: the local fingerprint holds its sha256) forces a full rebuild
(``build.needs_full_rebuild``), so one index never mixes two vector spaces.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import filelock

from paqad import workspace
from paqad.embed import TEXT_PREP_VERSION, unit_text
from paqad.index import schema, store, timeline
from paqad.index.models import provider_for
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    from paqad.config import Config
    from paqad.embed import Provider
    from paqad.index.embedding import embed_cache

#: The per-tree cache of earlier versions, migrated into the user-level cache on the first fill.
TREE_CACHE_NAME = "embed-cache.sqlite"
#: Units per fill batch: one embed call, one transaction. About 3-6 s of model time on 2 cores.
FILL_BATCH = 64
#: What the embedded text is made of (``embed.unit_text``), plus what proves a unit unchanged.
_EMBED_FIELDS = ("uid", "id", "content_hash", "kind", "name", "qualified_name", "path", "signature", "docstring", "text")

Progress = Callable[[int, int], None]


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
    return schema.has_table(con, "vectors")


def pending_count(con: sqlite3.Connection) -> int:
    """Units still without a vector (0 for a lexical-only index)."""
    return store.pending_vectors(con)


def text_sha(text: str) -> bytes:
    """The cache key of an embedded text: its sha256 digest (32 bytes; the text itself is never stored)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def to_half(vec: np.ndarray) -> bytes:
    """The float16 bytes the user cache stores for a vector."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    return np.asarray(vec, dtype="<f2").tobytes()


def half_to_blob(half: bytes) -> bytes:
    """An index's float32 blob from the cache's float16 bytes."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    return np.frombuffer(half, dtype="<f2").astype("<f4").tobytes()


def cache_key(fp: str) -> str:
    """What the user cache files vectors under: the provider fingerprint and the text prep."""
    return f"{fp}#prep{TEXT_PREP_VERSION}"


def open_cache(root: Path, cfg: Config) -> embed_cache.VectorCache:
    """The user-level cache (``cfg.rag_embedding_cache_mb`` bounds it; 0: off), with this tree's old
    per-tree cache moved into it first; with ``rag_shared_store``, the team store behind it
    (``shared_store.Tiered``: same interface)."""
    from paqad.index.embedding import embed_cache, shared_store  # lazy: only a writer embeds; a search reads vectors without them

    cache = embed_cache.UserEmbedCache(limit_mb=cfg.rag_embedding_cache_mb)
    old = workspace.vectors_dir(root) / TREE_CACHE_NAME
    if old.exists():
        embed_cache.migrate_tree_cache(old, cache, cache_key)
    store = shared_store.open_store(root, cfg.rag_shared_store)
    return cache if store is None else shared_store.Tiered(cache, store)


@dataclass
class Estimate:
    """What a fill of the current index still has to do: units without a vector, how many of them
    the user cache already holds, and the seconds for the rest at the rate this work tree's last
    fill of this model measured (None: no fill measured one yet; ``paqad.index.timeline``)."""

    pending: int
    cached: int
    seconds: float | None


def estimate(root: Path, cfg: Config) -> Estimate:
    """Cheap (no model is loaded): the pending units' texts are hashed and looked up in the cache.
    No rate is assumed: a fixed one was 2-3x short on a loaded machine (issue 34)."""
    provider = provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    path = store.current_path(root)
    if provider is None or path is None:
        return Estimate(0, 0, 0.0)
    con = store.connect(path)
    cache = open_cache(root, cfg)
    todo: list[int] = []
    cached = 0
    try:
        vec_filter = " WHERE uid NOT IN (SELECT uid FROM vectors)" if has_table(con) else ""
        todo = [r[0] for r in con.execute(f"SELECT uid FROM units{vec_filter}")]
        key = cache_key(fingerprint(provider))
        for _, chunk in chunks(todo, 500):
            shas = [text_sha(embedded_text(r.unit, r.description)) for r in unit_rows(con, chunk)]
            cached += len(cache.get(key, shas, provider.dims))
    except sqlite3.Error:  # an index without the descriptions table yet: no cache figure
        pass
    finally:
        cache.close()
        con.close()
    left = len(todo) - cached
    rate = timeline.last_rate(root, fingerprint(provider))
    return Estimate(len(todo), cached, 0.0 if not left else left / rate if rate else None)


#: A unit's work for the model, in characters of its text: the model reads about ``WORK_CAP``
#: of them at most (256 tokens), and each unit costs about ``WORK_PER_UNIT`` more. Measured on
#: flask (issue 34): 64 units of 36.7k characters took 2.25 s, 64 of 17.7k took 1.35 s.
WORK_CAP = 1024
WORK_PER_UNIT = 170


def pending_work(root: Path) -> list[int]:
    """The work of each unit of the current index without a vector, in the order a fill embeds
    them (``paqad.index.timeline`` times the fill by it); [] without an index."""
    path = store.current_path(root)
    if path is None:
        return []
    con = store.connect(path)
    try:
        vec_filter = " WHERE uid NOT IN (SELECT uid FROM vectors)" if has_table(con) else ""
        todo = [r[0] for r in con.execute(f"SELECT uid FROM units{vec_filter} ORDER BY uid")]
        return [min(len(text), WORK_CAP) + WORK_PER_UNIT for _, chunk in chunks(todo, 500) for text in texts_of(con, chunk)]
    except sqlite3.Error:  # an index without the descriptions table yet
        return []
    finally:
        con.close()


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


def fill(root: Path, cfg: Config, lock: filelock.FileLock, progress: Progress | None = None, batch: int = FILL_BATCH) -> VectorReport:
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
    cache = open_cache(root, cfg)
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


def _fill_batches(
    root: Path, path: Path, con: sqlite3.Connection, provider: Provider, report: VectorReport, cache: embed_cache.VectorCache,
    lock: filelock.FileLock, progress: Progress | None, batch: int,
) -> None:
    with lock:
        con.execute(schema.VECTORS)
        con.execute(schema.DESCRIPTIONS)
    todo = [r[0] for r in con.execute("SELECT uid FROM units WHERE uid NOT IN (SELECT uid FROM vectors) ORDER BY uid")]
    for done, chunk in chunks(todo, batch):
        rows = unit_rows(con, chunk)
        blobs = _vectors_for(rows, provider, report, cache)
        with lock:
            if store.current_path(root) != path:
                report.stopped = "superseded"
                return
            _write_batch(con, rows, blobs)
        if progress:
            progress(done + len(chunk), len(todo))


def chunks(items: list[int], size: int) -> Iterator[tuple[int, list[int]]]:
    for i in range(0, len(items), max(1, size)):
        yield i, items[i : i + size]


@dataclass
class _Pending:
    """A unit to embed and the agent-written description applied to it ("" when none)."""

    unit: StoredUnit
    description: str


def unit_rows(con: sqlite3.Connection, uids: list[int]) -> list[_Pending]:
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


def texts_of(con: sqlite3.Connection, uids: list[int]) -> list[str]:
    """The exact texts embedded for these units of an index (descriptions applied)."""
    return [embedded_text(r.unit, r.description) for r in unit_rows(con, uids)]


def embedded_text(unit: StoredUnit, description: str = "") -> str:
    """The exact text embedded for a stored unit, with its applied description."""
    return unit_text(unit, description=description)  # type: ignore[arg-type]  # reads the fields a CodeUnit and a StoredUnit share


def _vectors_for(rows: list[_Pending], provider: Provider, report: VectorReport, cache: embed_cache.VectorCache) -> list[bytes]:
    """float32 blobs for ``rows``: from the cache where it has them, else from the model (then cached).
    Fresh vectors are rounded through float16 like cached ones, so an index is the same either way."""
    texts = [embedded_text(r.unit, r.description) for r in rows]
    shas = [text_sha(t) for t in texts]
    key = cache_key(report.fingerprint)
    found = cache.get(key, shas, provider.dims)
    missing = sorted({s: t for s, t in zip(shas, texts) if s not in found}.items())
    if missing:
        vecs = provider.embed_documents([t for _, t in missing])
        fresh = {sha: to_half(v) for (sha, _), v in zip(missing, vecs)}
        cache.put(key, fresh, provider.dims)
        found.update(fresh)
    report.embedded += len(missing)
    report.cached += len(rows) - len(missing)
    return [half_to_blob(found[s]) for s in shas]


def _write_batch(con: sqlite3.Connection, rows: list[_Pending], blobs: list[bytes]) -> None:
    """Store vectors for units that are still what was embedded (an update may have replaced them)."""
    with store.transaction(con):
        for row, blob in zip(rows, blobs):
            u = row.unit
            now = con.execute("SELECT id, content_hash FROM units WHERE uid = ?", (u.uid,)).fetchone()
            if now == (u.id, u.content_hash):
                con.execute("INSERT OR REPLACE INTO vectors(uid, vec) VALUES (?, ?)", (u.uid, blob))

