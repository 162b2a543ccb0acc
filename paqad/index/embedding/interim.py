"""Interim vectors: a fast stand-in model serves hybrid search while the real model embeds.

Why: the default model (all-MiniLM-L6-v2) embeds about 100 unit texts a second on two cores here,
so a new index of 10,000 units waits minutes for its vectors, and until then search is lexical (or,
worse for the evidence test, hybrid over the few units already embedded). ``minilm-static``, a
token table distilled from that same model, makes and stores about 4,500 vectors a second: the
whole index in about two seconds. So when a fill has many units to send through the model, every unit first gets
a stand-in vector in ``interim_vectors``, and :func:`paqad.search.vector.space` searches those,
with the stand-in's own cosine bars, until the model's vectors cover the index; then the interim
table is dropped and search uses the model's vectors alone (benchmarks/README.md, "Interim
vectors"). The stand-in is the model's own choice (a provider's ``stand_in``): only a model
distilled into the table stands in for it.

What is not done: stand-in vectors are never cached (they cost less to make than to look up),
and an index whose model vectors are complete never grows an interim table again, so an
incremental update's few pending units are searched as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import filelock

from paqad.index import schema, store, timeline
from paqad.index.embedding import vectors

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.embed import Provider

TABLE = schema.INTERIM_TABLE
#: Units the model must still embed (after the user cache) before a stand-in is worth making:
#: about ten seconds of MiniLM on two cores; fewer are embedded before anyone waits for them.
MIN_UNITS = 256
#: Units per write (one transaction each, under the writer lock).
BATCH = 2_000
META_MODEL = "interim_model"
META_FINGERPRINT = "interim_fingerprint"


def fill_then_model(
    root: Path, cfg: Config, lock: filelock.FileLock, progress: vectors.Progress | None = None, on_interim: Callable[[int], None] | None = None,
) -> tuple[int, vectors.VectorReport]:
    """A build's embedding step: stand-in vectors (when due; ``on_interim`` hears how many), then
    the model's fill, then the interim table dropped if the model's vectors now cover the index.
    A full build's record (``paqad.index.timeline``) hears each step, before the caller does."""
    rec = timeline.current(root)
    try:
        made = fill(root, cfg, lock)
    except filelock.Timeout:
        made = 0
    if rec is not None:
        rec.interim(made)
        work = vectors.pending_work(root)
        rec.embedding(len(work) or rec.total or rec.units, timeline.last_rate(root, _fingerprint(cfg, root)), work)
    if made and on_interim is not None:
        on_interim(made)
    report = vectors.fill(root, cfg, lock, _heard(rec, progress))
    if rec is not None:
        rec.finish(report.pending, report.stopped, report.embedded, report.seconds, report.fingerprint)
    if report.pending == 0 and report.stopped is None:
        _retire_current(root, lock)
    return made, report


def lexical_ready(root: Path, cfg: Config, rec: timeline.Record, units: int) -> None:
    """Tell a full build's record its lexical index is live, with what the model still has to
    embed and how much of it the user cache holds (none without a provider: the record is done)."""
    if cfg.rag_embedding_provider == "none":
        rec.lexical(units, "")
        return
    at = rec.elapsed()
    est = vectors.estimate(root, cfg)
    model = vectors.provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    prior = timeline.last_rate(root, _fingerprint(cfg, root))
    rec.lexical(units, model.model if model is not None else cfg.rag_embedding_provider, est.pending, est.cached, at, prior)


def _fingerprint(cfg: Config, root: Path) -> str:
    return vectors.fingerprint(vectors.provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root))


def _heard(rec: timeline.Record | None, progress: vectors.Progress | None) -> vectors.Progress | None:
    """The fill's progress told to the record first (the caller's line reads its rate), then the caller."""
    if rec is None:
        return progress

    def both(done: int, total: int) -> None:
        rec.progress(done, total)
        if progress is not None:
            progress(done, total)

    return both


def _retire_current(root: Path, lock: filelock.FileLock) -> None:
    path = store.current_path(root)
    if path is None:
        return
    con = store.connect(path)
    try:
        with lock:
            if store.current_path(root) == path:
                retire(con)
    except filelock.Timeout:
        pass  # the next fill retires it
    finally:
        con.close()


def stand_in_for(cfg: Config, root: Path | None = None) -> Provider | None:
    """The stand-in provider for the configured model (``rag_embedding_interim`` on, a local model
    that names one), or None."""
    if not cfg.rag_embedding_interim or cfg.rag_embedding_provider != "local":
        return None
    provider = vectors.provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    name = str(getattr(provider, "stand_in", "") or "")
    return vectors.provider_for("local", name) if name else None


def has_table(con: sqlite3.Connection) -> bool:
    return schema.has_table(con, TABLE)


def fill(root: Path, cfg: Config, lock: filelock.FileLock) -> int:
    """Give every unit of the current index without one a stand-in vector, when the model has at
    least ``MIN_UNITS`` to embed or an interim table already exists (an update during a long
    fill); returns how many were made. ``lock`` is the writer lock, held only while writing."""
    provider = stand_in_for(cfg, root)
    path = store.current_path(root)
    if provider is None or path is None:
        return 0
    con = store.connect(path)
    try:
        meta = store.get_meta(con)
        if meta.get("embedding_fingerprint") != _fingerprint(cfg, root):
            return 0  # the index is of another space; its rebuild comes first
        if not has_table(con):
            if vectors.pending_count(con) < MIN_UNITS:
                return 0  # too few even before the cache is asked (an everyday update: no cache or store opened)
            est = vectors.estimate(root, cfg)
            if est.pending - est.cached < MIN_UNITS:
                return 0
        return _fill(con, root, path, provider, lock)
    finally:
        con.close()


def _fill(con: sqlite3.Connection, root: Path, path: Path, provider: Provider, lock: filelock.FileLock) -> int:
    fp = vectors.fingerprint(provider)
    with lock:
        if store.current_path(root) != path:
            return 0
        with store.transaction(con):
            if store.get_meta(con).get(META_FINGERPRINT, fp) != fp:  # another stand-in before: start over
                con.execute(f"DROP TABLE IF EXISTS {TABLE}")
            schema.create_interim(con)
            store.set_meta(con, {META_MODEL: provider.model, META_FINGERPRINT: fp})
    todo = [r[0] for r in con.execute(f"SELECT uid FROM units WHERE uid NOT IN (SELECT uid FROM {TABLE}) ORDER BY uid")]
    made = 0
    for _, chunk in vectors.chunks(todo, BATCH):
        rows = vectors.unit_rows(con, chunk)
        vecs = provider.embed_documents([vectors.embedded_text(r.unit, r.description) for r in rows])
        with lock:
            if store.current_path(root) != path:
                return made
            with store.transaction(con):
                for row, vec in zip(rows, vecs):
                    u = row.unit
                    if con.execute("SELECT id, content_hash FROM units WHERE uid = ?", (u.uid,)).fetchone() == (u.id, u.content_hash):
                        con.execute(f"INSERT OR REPLACE INTO {TABLE}(uid, vec) VALUES (?, ?)", (u.uid, vec.astype("<f4").tobytes()))
                        made += 1
    return made


def forget(con: sqlite3.Connection, uids: list[int]) -> None:
    """Drop the stand-in vectors of removed units (inside the update's transaction)."""
    if uids and has_table(con):
        con.executemany(f"DELETE FROM {TABLE} WHERE uid = ?", [(u,) for u in uids])


def retire(con: sqlite3.Connection) -> bool:
    """Drop the interim table once the model's vectors cover the index; True when one was dropped.
    The caller holds the writer lock."""
    if not has_table(con) or vectors.pending_count(con):
        return False
    with store.transaction(con):
        con.execute(f"DROP TABLE {TABLE}")
        con.execute("DELETE FROM meta WHERE key IN (?, ?)", (META_MODEL, META_FINGERPRINT))
    return True
