"""The ``minilm-static`` local model: one vector per WordPiece token, distilled from all-MiniLM-L6-v2.

Why: a transformer reads every token of every unit through six layers (60-90 ms of CPU a unit
here, benchmarks/README.md "Embedding speed"); a static model looks each token up in a table and
averages, so a whole repository embeds in seconds. The table is built offline by
``benchmarks/make_static_model.py`` from the packaged MiniLM itself (each vocabulary token run
through the network alone, then fitted so that a text's mean token vector points where MiniLM's
vector of that text does, over code no ruler covers), so it needs no hub, no labelled data and
no other model, and it ships inside paqad (``paqad/embed/data/minilm-static/``; provenance in the
README there).

Not the default: its ranking is close to MiniLM's, but its cosines separate answerable questions
from unanswerable ones less well, so ``search`` refuses more (benchmarks/README.md, "A static
model"). It is the choice for a repository too large to wait for MiniLM.

A document or query is its WordPiece tokens (the MiniLM tokenizer, special tokens dropped), each
looked up, averaged and L2-normalised. No window: every token of the bounded ``unit_text`` counts.
The table is a NumPy ``.npz`` of int8 rows (``vectors``) and one float32 scale a row (``scales``,
row cosine to the float table >= 0.9994; 11.8 MB instead of 47), read with ``allow_pickle=False``
and checked against its pinned sha256, so a replaced file is a clear error rather than other vectors.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from paqad.embed.base import TEXT_PREP_VERSION
from paqad.embed.files import ShippedFile
from paqad.embed.inputs import clean_text
from paqad.embed.onnx_session import Tokenizer
from paqad.errors import PaqadError

#: Characters of one input kept before tokenizing (as the transformer's provider does).
MAX_INPUT_CHARS = 32_768


@dataclass(frozen=True)
class StaticModel:
    """A token table and the tokenizer whose ids index it."""

    model: str
    dims: int
    table: ShippedFile
    tokenizer: ShippedFile
    #: Cosine bars of the vector-side evidence (top, margin, veto; ``paqad.search.fusion.VectorBars``):
    #: averaged token vectors sit closer together than MiniLM's, so the table has its own.
    cosine_bars: tuple[float, float, float] | None = None


#: The distilled table (``benchmarks/make_static_model.py``) and MiniLM's own tokenizer.
MINILM_STATIC = StaticModel(
    model="minilm-static",
    dims=384,
    table=ShippedFile("paqad.embed", "data/minilm-static/tokens-int8.npz", "65bdf73a679bdff484f041e06cb9b6eb64d229fa0428f9a764fc45abf1670464"),
    tokenizer=ShippedFile("paqad.embed", "data/all-MiniLM-L6-v2/tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    # Chosen on semble half A (benchmarks/README.md, "A static model"): the best gated NDCG with
    # probe silence >= 0.95. Answerable questions' best cosine runs 0.52 / 0.68 / 0.83 (p10 / p50 /
    # p90), unanswerable probes' 0.27 / 0.42 / 0.60; the margin bar did not matter from 0.25 to 0.45.
    cosine_bars=(0.85, 0.3, 0.35),
)


class StaticProvider:
    """Embeds by averaging token vectors: tokenize, look up, mean, L2-normalise.

    Lazy like the transformer's provider: the files are verified and loaded on the first embed.
    """

    name = "local"

    def __init__(self, spec: StaticModel) -> None:
        self.spec = spec
        self.model = spec.model
        self.dims = spec.dims
        self.cosine_bars = spec.cosine_bars
        self.text_prep_version = TEXT_PREP_VERSION
        self._rows: np.ndarray | None = None  # int8, one row a token
        self._scales: np.ndarray | None = None  # float32, one a row
        self._tokenizer: Tokenizer | None = None
        self._specials: frozenset[int] = frozenset()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"StaticProvider(name={self.name!r}, model={self.model!r}, dims={self.dims})"

    @property
    def fingerprint(self) -> str:
        """The table's sha256 and the text prep: what an index and the user-level cache key on."""
        return f"{self.name}:{self.model}:{self.spec.table.sha256[:12]}:prep{self.text_prep_version}"

    def load(self) -> None:
        """Verify and read the files now (otherwise the first embed does)."""
        if self._rows is not None:
            return
        with self._lock:
            if self._rows is None:
                import tokenizers  # lazy: its Rust library loads with the table, on the first embed

                tokenizer = tokenizers.Tokenizer.from_file(str(self.spec.tokenizer.locate()))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                with np.load(self.spec.table.locate(), allow_pickle=False) as npz:
                    rows, scales = npz["vectors"], npz["scales"]
                want = (tokenizer.get_vocab_size(), self.dims)
                if rows.shape != want or scales.shape != want[:1]:
                    raise PaqadError(f"{self.spec.table.path}: expected a {want[0]} x {want[1]} table, found {rows.shape}.")
                specials = (tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]"))
                self._specials = frozenset(i for i in specials if i is not None)
                self._tokenizer = tokenizer
                self._scales = scales.astype(np.float32)
                self._rows = rows  # kept int8 (12 MB, not 47): a token's row is scaled when looked up

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        self.load()
        assert self._rows is not None and self._scales is not None and self._tokenizer is not None
        for row, text in enumerate(texts):
            ids = [i for i in self._tokenizer.encode(clean_text(text, MAX_INPUT_CHARS)).ids if i not in self._specials]
            if ids:
                vec = (self._rows[ids].astype(np.float32) * self._scales[ids, None]).mean(axis=0)
                norm = float(np.linalg.norm(vec))
                out[row] = vec / norm if norm > 1e-12 else 0.0
        return out
