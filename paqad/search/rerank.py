"""Second-stage reranking of the fused candidates: ``off``, a local cross-encoder, or Cohere.

The fused ranking (BM25F, plus cosine when there are vectors) judges a unit by its words; a
cross-encoder reads the query and the passage together and judges the pair. It is far slower
(one model run per pair), so it only reorders a bounded pool: the top ``rag_rerank_pool`` fused
candidates (default 50), after the calibrated score is set and before the confidence floor.

What reranking may and may not do:

- **Only reorder.** Every candidate keeps its calibrated ``score``: the floor still decides on the
  evidence, so a reranker cannot make a refused query answered nor lift a weak passage over the
  threshold. It decides which of the passages that pass come first, and which two a relief
  delivery keeps. Each reranked result carries the model's own number as ``signals.rerank``.
- **Never fail a search.** A missing model, a bad file, an output of the wrong shape, a timeout,
  an HTTP error, a missing key: the fused order is kept, one ``rag-rerank-fallback`` line goes to
  ``audit.log`` in the per-developer folder (redacted: no key reaches it), and the search carries on (exit 0).
- **Never run for a refused query**: the pipeline calls it only after the evidence gate passed, so
  a refused query loads no model and sends nothing.
- **Bounded in time.** ``rag_rerank_timeout`` bounds the step; the prompt hook passes its own
  deadline, so reranking can never push the hook past its budget (the local model is run in
  batches and the deadline is checked between them; Cohere's timeout is the time left).

Modes:

- ``local``: a cross-encoder in ONNX form (BERT-style: ``input_ids``, ``attention_mask``, optionally
  ``token_type_ids``, int64 ``[batch, seq]`` -> ``logits`` ``[batch, 1]``), such as
  ms-marco-MiniLM-L-6-v2, from the folder ``rag_rerank_model`` names, holding ``model.onnx`` and
  ``tokenizer.json``. paqad never downloads it: no registry package ships one (see docs/search.md,
  "Reranking"). A relative folder is resolved inside the repository and may not leave it
  (``workspace.join_within``); an absolute folder (or ``~/...``) is taken as the user wrote it.
- ``cohere``: ``POST {base}/v2/rerank`` with ``{"model", "query", "documents", "top_n"}``; the answer
  is ``{"results": [{"index", "relevance_score"}, ...]}`` (docs.cohere.com/reference/rerank).
  Key: ``CO_API_KEY`` (the name Cohere's SDK documents), else ``COHERE_API_KEY``, from the
  environment or ``secrets.env`` (in paqad's per-developer folder). Transport, key handling and retries are
  :mod:`paqad.transport`'s, the same client the remote embedding providers use: https, or http
  only to loopback; no redirects; redaction.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from paqad import audit, workspace
from paqad.errors import PaqadError
from paqad.secrets import redact

if TYPE_CHECKING:
    from paqad.embed.onnx_session import Session
    from paqad.jsontypes import JSONObject
    from paqad.transport import JsonClient

MODES = ("off", "local", "cohere")
DEFAULT_POOL = 50
DEFAULT_TIMEOUT_S = 5.0
COHERE_MODEL = "rerank-english-v3.0"
COHERE_BASE_URL = "https://api.cohere.com"
#: Cohere's SDK reads CO_API_KEY ("preferred and documented") and accepts COHERE_API_KEY.
COHERE_KEYS = ("CO_API_KEY", "COHERE_API_KEY")
#: Cohere in messages ("Cohere rerank rejected the API key (401)...").
COHERE_LABEL = "Cohere rerank"
#: The URL setting in the message that refuses one.
URL_SETTING = "Rerank endpoint"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
#: Characters of a unit given to the reranker (path and name first, then its source). 1,500
#: characters of code is about 500 tokens, past what the local model reads anyway.
DOC_CHARS = 1500
#: Tokens of one (query, passage) pair for the local model. ms-marco cross-encoders were trained
#: on 512; the cost of a run grows with the length, and the head of a unit (name, signature,
#: docstring) is what says what it is for. 256 halves the cost of 512 (benchmarks/rerank_latency.py).
MAX_PAIR_TOKENS = 256
#: Pairs per onnxruntime run; the deadline is checked between runs.
LOCAL_BATCH = 8
#: Below this much time left, the hook does not start reranking at all.
MIN_TIME_S = 0.05
#: Nor a Cohere request: the HTTP client (paqad.transport) gives each try at least this long.
MIN_REQUEST_S = 0.5
AUDIT_EVENT = "rag-rerank-fallback"

T = TypeVar("T")


class RerankError(PaqadError):
    """Reranking could not run; the caller keeps the fused order."""


@dataclass(frozen=True)
class RerankConfig:
    """What to rerank with, for the repository at ``root``.

    ``model``: ``local`` -> the model folder (required); ``cohere`` -> the model name ("" = default).
    ``deadline``: a ``time.monotonic()`` instant the step must finish by (the prompt hook's budget).
    """

    root: Path
    mode: str = "off"
    pool: int = DEFAULT_POOL
    model: str = ""
    base_url: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    deadline: float | None = None

    def time_left(self, started: float) -> float:
        """Seconds left for this step: the timeout from ``started``, cut by the deadline if any."""
        end = started + self.timeout_s
        if self.deadline is not None:
            end = min(end, self.deadline)
        return end - time.monotonic()


@dataclass
class Outcome:
    """What reranking did, for ``search --json`` (``rerank``) and the audit line."""

    mode: str
    model: str = ""
    pool: int = 0
    reranked: int = 0
    ms: float = 0.0
    fallback: str | None = None

    def to_dict(self) -> JSONObject:
        return asdict(self)


class Scorer(Protocol):
    """Scores (query, document) pairs; higher is more relevant. Raises on any failure."""

    def score(self, query: str, documents: list[str], time_left: Callable[[], float]) -> list[float]: ...


# ---------------------------------------------------------------------------- the step


def apply(
    config: RerankConfig | None, query: str, ranked: list[T], uid_of: Callable[[T], int], texts: Callable[[list[int]], list[str]]
) -> tuple[list[T], dict[int, float], Outcome | None]:
    """``ranked`` with its first ``config.pool`` items reordered by the reranker, their scores by
    uid, and the outcome. ``off`` (or no config) returns ``ranked`` untouched and no outcome; any
    failure returns it untouched with ``outcome.fallback`` set and one audit line written."""
    if config is None or config.mode == "off" or not ranked:
        return ranked, {}, None
    started = time.monotonic()
    pool = ranked[: max(1, config.pool)]
    outcome = Outcome(mode=config.mode, model=_model_label(config), pool=len(pool))
    try:
        if config.mode not in MODES:
            raise RerankError(f"unknown rag_rerank {config.mode!r}; choose from {', '.join(MODES)}")
        if config.time_left(started) < MIN_TIME_S:
            raise RerankError("no time left in the budget to rerank")
        uids = [uid_of(item) for item in pool]
        scores = scorer_for(config).score(query, texts(uids), lambda: config.time_left(started))
        _check_scores(scores, len(pool))
    except Exception as exc:  # noqa: BLE001 - any failure keeps the fused order (the contract)
        outcome.fallback = _reason(exc)
        outcome.ms = round((time.monotonic() - started) * 1000, 2)
        audit.log(config.root, "WARN", AUDIT_EVENT, mode=config.mode, model=outcome.model, candidates=len(pool), reason=outcome.fallback)
        return ranked, {}, outcome
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))  # ties keep the fused order
    outcome.reranked = len(pool)
    outcome.ms = round((time.monotonic() - started) * 1000, 2)
    by_uid = {uids[i]: float(scores[i]) for i in range(len(pool))}
    return [pool[i] for i in order] + ranked[len(pool) :], by_uid, outcome


def document_text(path: str, qualified_name: str, text: str) -> str:
    """What the reranker reads of a unit: where it is and what it is called, then its source."""
    head = f"{path} {qualified_name}".strip()
    return f"{head}\n{text}"[:DOC_CHARS]


def scorer_for(config: RerankConfig) -> Scorer:
    if config.mode == "local":
        return local_scorer(model_folder(config.root, config.model))
    return CohereScorer(config)


def _check_scores(scores: Sequence[float], count: int) -> None:
    if len(scores) != count:
        raise RerankError(f"the reranker returned {len(scores)} scores for {count} passages")
    if not all(isinstance(s, (int, float)) and math.isfinite(s) for s in scores):
        raise RerankError("the reranker returned a score that is not a finite number")


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return redact(" ".join(text.split()))[:400]


def _model_label(config: RerankConfig) -> str:
    if config.mode == "cohere":
        return config.model or COHERE_MODEL
    return config.model


# ---------------------------------------------------------------------------- local cross-encoder


def model_folder(root: Path, setting: str) -> Path:
    """The folder ``rag_rerank_model`` names. Relative: inside the repository (confined); absolute
    or ``~``: as written. Its two files must be there."""
    if not setting.strip():
        raise RerankError(
            f"rag_rerank=local needs rag_rerank_model: the folder holding {MODEL_FILE} and {TOKENIZER_FILE} "
            "of a cross-encoder such as ms-marco-MiniLM-L-6-v2 (see docs/search.md, Reranking)"
        )
    expanded = os.path.expanduser(setting.strip())
    if os.path.isabs(expanded):
        folder = Path(expanded)
    else:
        try:
            folder = workspace.join_within(root, expanded)
        except ValueError as exc:
            raise RerankError(f"rag_rerank_model: {exc}; use a folder inside the repository or an absolute path") from None
    if not folder.is_dir():
        raise RerankError(f"rerank model folder {folder} does not exist; put {MODEL_FILE} and {TOKENIZER_FILE} there (see docs/search.md, Reranking)")
    for name in (MODEL_FILE, TOKENIZER_FILE):
        if not (folder / name).is_file():
            raise RerankError(f"{folder} has no {name}; the folder must hold {MODEL_FILE} and {TOKENIZER_FILE} (see docs/search.md, Reranking)")
    return folder


_LOADED: dict[tuple, CrossEncoder] = {}
_LOADED_LOCK = threading.Lock()


def local_scorer(folder: Path) -> CrossEncoder:
    """The cross-encoder in ``folder``, loaded once per process per file version (path, size, mtime)."""
    key = tuple((str(folder / n), (folder / n).stat().st_size, (folder / n).stat().st_mtime_ns) for n in (MODEL_FILE, TOKENIZER_FILE))
    with _LOADED_LOCK:
        found = _LOADED.get(key)
        if found is None:
            found = CrossEncoder(folder)
            _LOADED.clear()  # one model at a time: a changed file replaces the old session
            _LOADED[key] = found
    return found


class PairEncoding(Protocol):
    """A (query, passage) pair as ``tokenizers`` encodes it."""

    @property
    def ids(self) -> list[int]: ...

    @property
    def type_ids(self) -> list[int]: ...


class PairTokenizer(Protocol):
    """What the cross-encoder calls on a ``tokenizers.Tokenizer``."""

    def encode(self, sequence: str, pair: str) -> PairEncoding: ...

    def token_to_id(self, token: str) -> int | None: ...


class CrossEncoder:
    """A BERT-style cross-encoder in ONNX: encode (query, passage) as one pair, run, read one logit.

    Loaded in the constructor (tokenizer, then the onnxruntime session, then the input names are
    checked), so a bad file fails here, before any pair is scored.
    """

    def __init__(self, folder: Path, max_tokens: int = MAX_PAIR_TOKENS, batch: int = LOCAL_BATCH, threads: int | None = None) -> None:
        self.folder = folder
        self.batch = batch
        self._tokenizer = _load_tokenizer(folder / TOKENIZER_FILE, max_tokens)
        self._session = _load_session(folder / MODEL_FILE, threads)
        self._inputs = tuple(i.name for i in self._session.get_inputs())
        missing = {"input_ids", "attention_mask"} - set(self._inputs)
        if missing:
            raise RerankError(f"{folder / MODEL_FILE} is not a cross-encoder paqad can feed: it has no input {', '.join(sorted(missing))} (inputs: {', '.join(self._inputs)})")
        pad = self._tokenizer.token_to_id("[PAD]")
        self._pad = int(pad) if pad is not None else 0

    def score(self, query: str, documents: list[str], time_left: Callable[[], float] = lambda: math.inf) -> list[float]:
        out: list[float] = []
        for start in range(0, len(documents), self.batch):
            if time_left() <= 0:
                raise RerankError(f"the local reranker ran out of time after {start} of {len(documents)} passages")
            pairs = [self._tokenizer.encode(_clean(query), _clean(doc)) for doc in documents[start : start + self.batch]]
            out.extend(self._run(pairs))
        if time_left() <= 0:
            raise RerankError(f"the local reranker ran out of time after {len(documents)} passages")
        return out

    def _run(self, pairs: list[PairEncoding]) -> list[float]:
        import numpy as np  # lazily: a lexical search never loads numpy for reranking it does not do

        width = max(len(p.ids) for p in pairs)
        ids = np.full((len(pairs), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(pairs), width), dtype=np.int64)
        types = np.zeros((len(pairs), width), dtype=np.int64)
        for i, pair in enumerate(pairs):
            n = len(pair.ids)
            ids[i, :n], mask[i, :n], types[i, :n] = pair.ids, 1, pair.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = types
        logits = np.asarray(self._session.run(None, feeds)[0])
        if logits.shape not in ((len(pairs), 1), (len(pairs),)):
            raise RerankError(f"{self.folder / MODEL_FILE} answered logits of shape {list(logits.shape)}; a cross-encoder gives [batch, 1]")
        return [float(v) for v in logits.reshape(-1)]


def _load_tokenizer(path: Path, max_tokens: int) -> PairTokenizer:
    import tokenizers  # lazily: its Rust library loads only when a local reranker is used

    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - the library raises plain Exception for a bad file
        raise RerankError(f"{path} is not a tokenizers file ({_short(exc)})") from None
    tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
    tokenizer.no_padding()
    return tokenizer


def _load_session(path: Path, threads: int | None) -> Session:
    from paqad.embed.onnx_session import cpu_session  # lazily: the embedding package, off the lexical path

    try:
        return cpu_session(path, threads)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception types
        raise RerankError(f"{path} is not a model onnxruntime can load ({_short(exc)})") from None


def _clean(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8") if text else " "


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


# ---------------------------------------------------------------------------- Cohere


def _cohere_client(config: RerankConfig, timeout_s: float) -> JsonClient:
    """The shared JSON client pointed at Cohere's rerank URL, with a retry policy that fits ``timeout_s``."""
    from paqad.transport import ApiKey, JsonClient, RetryPolicy  # lazily: a lexical search loads no HTTP stack

    # A second try only when there is time for it: the client gives every try at least 0.5 s.
    attempts = 2 if timeout_s >= 2 * MIN_REQUEST_S + 1.0 else 1
    policy = RetryPolicy(max_attempts=attempts, max_total_s=timeout_s, timeout_s=timeout_s, backoff_base_s=0.2, backoff_cap_s=1.0, max_retry_after_s=timeout_s)
    key = ApiKey(COHERE_KEYS, label=COHERE_LABEL, root=config.root)
    return JsonClient(
        rerank_url(config.base_url or COHERE_BASE_URL), label=COHERE_LABEL, key=key, model=config.model or COHERE_MODEL, retry=policy, what=URL_SETTING
    )


def rerank_url(base_url: str) -> str:
    """``{base}/v2/rerank``: ``https://host``, ``https://host/v2`` and a full ``.../rerank`` all work."""
    from paqad.transport import check_url  # lazily: as in _cohere_client

    base = base_url.strip().rstrip("/")
    check_url(base, URL_SETTING)
    if base.endswith("/rerank"):
        return base
    if base.endswith("/v2"):
        return base + "/rerank"
    return base + "/v2/rerank"


class CohereScorer:
    """Cohere's rerank API: one request for the whole pool, scores read back by index."""

    def __init__(self, config: RerankConfig) -> None:
        self.config = config

    def score(self, query: str, documents: list[str], time_left: Callable[[], float] = lambda: math.inf) -> list[float]:
        left = max(0.0, min(self.config.timeout_s, time_left()))
        if self.config.deadline is not None and self.config.deadline - time.monotonic() < MIN_REQUEST_S:
            raise RerankError(f"{left:.2f} s left in the prompt budget, too little to ask Cohere (at least {MIN_REQUEST_S:g} s)")
        client = _cohere_client(self.config, left)
        body = {"model": client.model, "query": query, "documents": [d if d.strip() else " " for d in documents], "top_n": len(documents)}
        return parse_cohere(client.post(body), len(documents))


def parse_cohere(payload: object, count: int) -> list[float]:
    """Scores by document position from ``{"results": [{"index", "relevance_score"}]}``; a document
    the answer leaves out scores below every returned one (it keeps its fused place among those)."""
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(results, list):
        raise RerankError("Cohere answered without a 'results' list")
    scores = [-math.inf] * count
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        value = item.get("relevance_score") if isinstance(item, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or scores[index] != -math.inf:
            raise RerankError(f"Cohere answered with a missing, repeated or out-of-range index {index!r}")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise RerankError(f"Cohere answered with a relevance_score that is not a number for index {index}")
        scores[index] = float(value)
    low = min((s for s in scores if s != -math.inf), default=0.0) - 1.0
    return [s if s != -math.inf else low for s in scores]
