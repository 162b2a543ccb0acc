"""Vector candidates: exact cosine by numpy brute force over the index's (n, dims) float32 matrix.

The matrix loads once per index generation and is cached by the ``Index`` until another
connection commits (``PRAGMA data_version``: a fill batch or an incremental update) or a rebuild
publishes a new file, so a long-lived process pays the load once. At 10,000 vectors a query costs well under a millisecond; an approximate index would only
pay for its build time past a few hundred thousand units (see benchmarks/README.md).

The query vector comes from the provider named in the index's ``meta`` (never from the current
settings, so a query is always embedded in the space the index was built in), or, while that
model's vectors are still being made, from the stand-in that made the interim ones (:func:`space`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paqad.deadline import remaining, run_within
from paqad.errors import PaqadError
from paqad.search.fusion import VectorBars, bars_of, default_bars

if TYPE_CHECKING:  # numpy is imported where vectors are used: a lexical-only search never loads it
    import numpy as np

    from paqad.embed import Provider
    from paqad.index.reader import Index
    from paqad.index.records import VectorRows

#: Vector candidates taken into fusion (the lexical side brings its own pool).
POOL = 200


@dataclass
class Matrix:
    uids: np.ndarray  # (n,) int64
    vecs: np.ndarray  # (n, dims) float32, rows L2-normalised
    dims: int

    @property
    def size(self) -> int:
        return int(self.uids.size)


@dataclass
class VectorHits:
    """Cosines of the query against every unit with a vector, and the vector-side evidence test."""

    cos: np.ndarray  # aligned with Matrix.uids
    uids: np.ndarray
    top: float
    median: float
    z: float  # (top − mean) / std over the corpus: how far the best unit stands out
    bars: VectorBars = field(default_factory=default_bars)  # the query model's cosine bars

    def ranked(self, pool: int = POOL) -> list[tuple[int, float]]:
        """(uid, cosine), best first, at most ``pool``."""
        import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

        if not self.cos.size:
            return []
        k = min(pool, self.cos.size)
        part = np.argpartition(-self.cos, k - 1)[:k]
        order = part[np.lexsort((self.uids[part], -self.cos[part]))]
        return [(int(self.uids[i]), float(self.cos[i])) for i in order]

    def by_uid(self, uids: list[int] | None = None) -> dict[int, float]:
        """uid -> cosine for ``uids`` (every unit with a vector when None); ``uids`` are sorted ascending."""
        import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

        if uids is None:
            return dict(zip(self.uids.tolist(), self.cos.tolist()))
        want = np.asarray(uids, dtype=np.int64)
        pos = np.clip(np.searchsorted(self.uids, want), 0, max(self.uids.size - 1, 0))
        found = self.uids[pos] == want if self.uids.size else np.zeros(want.size, bool)
        return {int(u): float(self.cos[p]) for u, p, ok in zip(want, pos, found) if ok}


@dataclass
class Space:
    """What a query is searched against: a matrix, the provider that embeds the query in its space
    (None when that model is not available here), and whether every unit has a vector in it."""

    matrix: Matrix
    provider: Provider | None
    complete: bool
    interim: bool = False  # stand-in vectors while the model's own are still being made

    @property
    def bars(self) -> VectorBars:
        return bars_of(self.provider)


def matrix(index: Index) -> Matrix | None:
    """The index's vectors (cached by the ``Index`` per generation), or None for a lexical-only index."""
    meta = index.meta()
    if not meta.has_vectors or not index.has_vectors_table():
        return None
    return index.cached("vector-matrix", lambda: _load(index.vector_rows(), meta.embedding_dims))


def space(index: Index) -> Space | None:
    """The vectors to search: the model's when they cover every unit; while they do not, the
    stand-in's (``paqad.index.embedding.interim``) when those cover more units; else the model's partial
    ones. None for a lexical-only index or one with no vector yet."""
    meta = index.meta()
    if not meta.has_vectors:
        return None
    main = matrix(index)
    n_units = meta.n_units
    if main is not None and main.size >= n_units:
        return Space(main, _model_provider(index), complete=True)
    stand = index.cached("interim-space", lambda: _interim_space(index))
    if stand is not None and stand.matrix.size > (main.size if main is not None else 0):
        return stand
    return Space(main, _model_provider(index), complete=False) if main is not None and main.size else None


def _model_provider(index: Index) -> Provider | None:
    from paqad.index.embedding import vectors  # lazy: the vector lifecycle, only for an index that has vectors

    provider = index.query_provider()
    return provider if provider is not None and vectors.fingerprint(provider) == index.meta().embedding_fingerprint else None


def _interim_space(index: Index) -> Space | None:
    from paqad.index.embedding import interim, vectors  # lazy: as above

    meta = index.meta()
    rows = index.interim_rows()
    if rows is None:
        return None
    try:  # the model name comes from an untrusted index: an unknown one means no stand-in
        provider = vectors.provider_for("local", meta.get(interim.META_MODEL) or "")
    except PaqadError:
        return None
    if provider is None or vectors.fingerprint(provider) != meta.get(interim.META_FINGERPRINT):
        return None
    mat = _load(rows, provider.dims)
    return Space(mat, provider, complete=mat.size >= meta.n_units, interim=True)


def _load(rows: VectorRows, dims: int) -> Matrix:
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    kept = [(u, b) for u, b in zip(rows.uids, rows.blobs) if len(b) == 4 * dims]  # the index is untrusted
    uids = np.array([u for u, _ in kept], dtype=np.int64)
    vecs = np.frombuffer(b"".join(b for _, b in kept), dtype="<f4").reshape(len(kept), dims) if kept else np.zeros((0, dims), np.float32)
    return Matrix(uids, np.ascontiguousarray(vecs, dtype=np.float32), dims)


class DeadlinePassed(PaqadError):
    """The query embedding did not finish before the caller's deadline (the answer goes lexical)."""


def embed_query(where: Space, text: str, deadline: float | None = None) -> np.ndarray | None:
    """The query in ``where``'s vector space (loads the model on first use), or None if the
    provider that made those vectors is not available here.

    With ``deadline`` (``time.monotonic()``), the embedding runs in a worker thread joined until
    then; if it has not finished (a model still loading in a fresh prompt-hook process, a slow
    remote API) this raises ``DeadlinePassed`` and the caller answers from the lexical side alone.
    The worker finishes (or dies with the process) on its own: nothing waits for it.
    """
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    provider = where.provider
    if provider is None:
        return None
    if deadline is None:
        return np.asarray(provider.embed_query(text), dtype=np.float32)
    outcome = run_within(lambda: provider.embed_query(text), remaining(deadline), name="paqad-embed-query")
    if outcome.error is not None:
        raise outcome.error
    if outcome.timed_out:
        raise DeadlinePassed
    return np.asarray(outcome.value, dtype=np.float32)


def similarities(mat: Matrix, qvec: np.ndarray, bars: VectorBars | None = None) -> VectorHits:
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    bars = bars or default_bars()
    cos = mat.vecs @ qvec if mat.size else np.zeros(0, np.float32)
    if not cos.size:
        return VectorHits(cos, mat.uids, 0.0, 0.0, 0.0, bars)
    std = float(cos.std()) or 1e-6
    top = float(cos.max())
    return VectorHits(cos, mat.uids, top, float(np.median(cos)), (top - float(cos.mean())) / std, bars)
