"""``rag status`` (and the agent's ``stats``): the facts of the live index, as one JSON-able dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from paqad import workspace
from paqad.index import schema, store
from paqad.index.reader import Index
from paqad.index.records import IndexMeta


class CacheFacts(TypedDict):
    path: str
    bytes: int


def status(root: Path, index: Index | None = None) -> dict[str, Any]:
    """Generation, counts, languages, build times, versions; ``{"built": False}`` without an index.
    ``index`` is the caller's reader (a session's); by default the process's shared one."""
    path = store.current_path(root)
    if path is None:
        return {"built": False}
    index = index if index is not None else Index.shared(root)
    index.refresh()
    meta, counts = index.meta(), index.counts()
    return {
        "built": True,
        "index_file": str(path),
        "index_bytes": path.stat().st_size,
        "files": counts.files,
        "source_bytes": counts.source_bytes,
        "units": meta.n_units,
        "units_by_language": counts.units_by_language,
        "units_by_kind": counts.units_by_kind,
        "built_at": meta.get("built_at"),
        "updated_at": meta.get("updated_at"),
        "embedding_provider": meta.get("embedding_provider"),
        "embedding_model": meta.get("embedding_model") or None,
        "vectors": vectors_text(meta, counts.vectors_pending),
        "vectors_pending": counts.vectors_pending,
        "interim_model": meta.get("interim_model") or None,
        "active_packs": meta.active_packs,
        "embedding_cache": cache_facts(),
        "versions": {k: meta.get(k) for k in ("schema_version", "tokenizer_version", "parser_version", "paqad_version")},
    }


def vectors_text(meta: IndexMeta, pending: int) -> str:
    """``rag status``'s vectors line: how many units are embedded, by what, and what is pending."""
    if not meta.has_vectors:
        return "none (lexical only)"
    units = meta.n_units
    tail = f", {pending} pending (run `paqad rag update`)" if pending else ""
    if pending and meta.get("interim_model"):
        tail += f"; {meta.get('interim_model')} stand-in vectors serve hybrid search meanwhile"
    return f"{units - pending}/{units} units embedded ({meta.get('embedding_model')}, {meta.get('embedding_dims')} dims){tail}"


def cache_facts() -> CacheFacts:
    """Where the user-level embedding cache is and its size on disk (file sizes only: no lock taken)."""
    path = workspace.cache_dir() / schema.EMBED_CACHE_FILE
    parts = [Path(f"{path}{s}") for s in ("", "-wal")]
    return {"path": str(path), "bytes": sum(p.stat().st_size for p in parts if p.exists())}
