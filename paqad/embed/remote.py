"""Remote embedding providers: OpenAI, Voyage AI, and any OpenAI-compatible endpoint.

HTTP through :mod:`paqad.transport` (standard library only; no SDK). Each provider posts JSON and reads JSON:

- ``openai`` (:class:`OpenAIProvider`): ``POST {base}/v1/embeddings`` with
  ``{"input": [...], "model": ...}`` (plus ``"dimensions"`` when a shorter vector of a
  text-embedding-3 model is asked for); the answer is ``{"data": [{"embedding": [...], "index": i},
  ...]}``. Limits per request, from the API reference (the ``input`` field of "Create embeddings",
  https://platform.openai.com/docs/api-reference/embeddings/create, as mirrored in the official
  SDK's docs: https://rubydoc.info/github/openai/openai-ruby/OpenAI/Models/EmbeddingCreateParams/Input
  and https://docs.rs/crate/openai-client-base/0.12.0/source/docs/CreateEmbeddingRequestInput.md):
  at most 2048 inputs, at most 8192 tokens per input, no empty string, at most 300,000 tokens
  summed over the inputs. Key: ``OPENAI_API_KEY``.
- ``voyageai`` (:class:`VoyageProvider`): ``POST https://api.voyageai.com/v1/embeddings`` with
  ``{"input": [...], "model": ..., "input_type": "document" | "query"}``; same answer shape
  (``data[i].embedding``, ``data[i].index``). Voyage's OpenAPI definition
  (https://docs.voyageai.com/reference/embeddings-api; the copy read is
  https://github.com/brainless/nocodo/blob/main/nocodo-llm-sdk/external-docs/voyageai_text_embedding_api.md)
  says: a list of at most 1,000 texts (older versions of the same page said 128:
  https://app.unpkg.com/voyageai@0.0.4/files/api/client/requests/EmbedRequest.d.ts), at most
  120K tokens per request for ``voyage-code-3`` (320K for voyage-3.5, 1M for the lite models),
  ``truncation`` defaults to true (over-long texts are cut by the server), and ``input_type``
  prepends "Represent the document for retrieval: " or "Represent the query for retrieving
  supporting documents: ". Key: ``VOYAGE_API_KEY``.
- ``openai-compatible`` (:class:`OpenAICompatibleProvider`): OpenAI's shape at any base URL
  (Ollama, vLLM, LM Studio, text-embeddings-inference, a company gateway). The model is
  required; the vector size is learnt from the first answer. Key (optional: a local server may
  need none): ``PAQAD_EMBEDDING_API_KEY``.

Rules every provider keeps:

- **Transport, keys and retries** are :mod:`paqad.transport`'s, shared with Cohere reranking:
  ``https://`` anywhere and plain ``http://`` only to loopback, checked on the URL text when the
  provider is made; certificates verified; no redirects followed (the ``Authorization`` header
  would go along); keys from :mod:`paqad.secrets` read on the first request (making a provider is
  offline and free) and masked in every message; 408, 429, 5xx and connection errors retried with
  backoff and jitter, honouring ``Retry-After`` and ``retry-after-ms``, within
  :class:`~paqad.transport.RetryPolicy`'s bounds. 401/403 are a :class:`RemoteError` that names
  the variable to set; other 4xx are not retried. ``repr`` shows no key.
- **Batches.** Inputs go in order, in requests of at most ``max_inputs`` texts and at most
  ``max_request_tokens`` tokens, counting one token per UTF-8 byte. That count is an upper bound,
  not an estimate: byte-level BPE tokenizers (OpenAI's tiktoken, and the byte-fallback tokenizers
  Voyage's models use) never make a token of less than one byte, so a request sized this way
  cannot exceed the limit whatever the text. Code runs at 3-4 bytes per token, so requests carry
  about a third of what they could; for 640-character unit texts that is still ~470 texts per
  OpenAI request. A single input is cut (at a character boundary) to ``max_input_tokens`` bytes
  where the service refuses longer ones (OpenAI: 8192); Voyage truncates on its side. An empty
  text is sent as one space (OpenAI refuses empty strings). When a server still answers 400/413/
  422 with a message about batch size or tokens (text-embeddings-inference allows 32 inputs by
  default), the batch is halved, and the smaller size is kept for later batches.
- **Answers.** Rows are put in ``index`` order; a wrong count, a missing or repeated index, a
  ragged or non-finite vector, a vector size other than ``dims``, or a body that is not JSON is a
  :class:`RemoteError` (not retried). Vectors are returned as float32, L2-normalised.
- ``fingerprint`` is ``provider:model:dims``.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypedDict, Unpack

import numpy as np

from paqad import workspace
from paqad.embed.base import TEXT_PREP_VERSION, Provider
from paqad.errors import ConfigError, RemoteError
from paqad.jsontypes import JSON, JSONObject
from paqad.secrets import COMPATIBLE_KEY, OPENAI_KEY, VOYAGE_KEY, Secret
from paqad.transport import MAX_DETAIL_CHARS, MAX_RESPONSE_BYTES, ApiKey, JsonClient, RetryPolicy, check_url, is_loopback

__all__ = [  # the transport names are re-exported: callers imported them from here before paqad.transport existed
    "MAX_DETAIL_CHARS",
    "MAX_RESPONSE_BYTES",
    "OPENAI_LIMITS",
    "REMOTE_PROVIDERS",
    "Limits",
    "OpenAICompatibleProvider",
    "OpenAIProvider",
    "RemoteError",
    "RemoteProvider",
    "RetryPolicy",
    "VoyageProvider",
    "check_url",
    "endpoint_url",
    "is_loopback",
    "remote_provider",
]

OPENAI_BASE_URL = "https://api.openai.com"
VOYAGE_BASE_URL = "https://api.voyageai.com"

#: Native vector sizes of the models we know; any other model's size is learnt from its first answer.
OPENAI_MODELS: dict[str, int] = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
#: Voyage models and their default sizes (docs.voyageai.com "Text embedding models").
VOYAGE_MODELS: dict[str, int] = {
    "voyage-code-3": 1024,
    "voyage-3-large": 1024,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3": 1024,
    "voyage-3-lite": 512,
    "voyage-code-2": 1536,
}
#: Tokens per request by Voyage model (the API reference's ``input`` field); unknown models get 120K.
VOYAGE_REQUEST_TOKENS: dict[str, int] = {"voyage-3.5": 320_000, "voyage-3": 320_000, "voyage-3.5-lite": 1_000_000, "voyage-3-lite": 1_000_000}

#: Statuses whose message may say the batch was too big; then the batch is halved.
_SPLIT_STATUS = frozenset({400, 413, 422})
_SPLIT_HINT = re.compile(r"batch|too many|too large|too long|token|maximum|exceed|limit", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    """Per-request limits of a service. Tokens are counted as UTF-8 bytes (an upper bound)."""

    max_inputs: int
    max_request_tokens: int
    #: Inputs are cut to this many bytes; None when the server truncates (Voyage).
    max_input_tokens: int | None
    #: Tokens the server adds to each input (Voyage's input_type prompt is about 8).
    per_input_overhead: int = 0


OPENAI_LIMITS = Limits(max_inputs=2048, max_request_tokens=300_000, max_input_tokens=8192)


def endpoint_url(base_url: str) -> str:
    """``{base}/v1/embeddings``: ``https://host`` and ``https://host/v1`` both work, and a URL that
    already ends in ``/embeddings`` is used as given."""
    base = base_url.strip().rstrip("/")
    if base.endswith("/embeddings"):
        return base
    if re.search(r"/v\d+$", base):
        return base + "/embeddings"
    return base + "/v1/embeddings"


class ClientOptions(TypedDict, total=False):
    """What a remote provider may be given besides its model, URL, size and limits (tests pass the clock)."""

    api_key: str | None
    retry: RetryPolicy | None
    environ: Mapping[str, str] | None
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    rng: random.Random | None


class RemoteOptions(ClientOptions, total=False):
    root: Path | None


class RemoteProvider:
    """What every remote embedding service shares on top of :class:`~paqad.transport.JsonClient`:
    batching, splitting a batch the server found too big, and the answer checks. Subclasses set the
    service's name, key variable, request body and limits."""

    name = "remote"
    label = "The embedding service"
    key_name = COMPATIBLE_KEY
    key_required = True

    def __init__(
        self,
        model: str,
        *,
        url: str,
        dims: int | None,
        limits: Limits,
        root: Path | None = None,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if not model:
            raise ConfigError(f"{self.label} needs a model name (rag_embedding_model).")
        if dims is not None and dims <= 0:
            raise ConfigError(f"Embedding dimensions must be positive, not {dims}.")
        self.model = model
        self.text_prep_version = TEXT_PREP_VERSION
        self.url = url
        self.limits = limits
        self.root = root
        self._dims = dims
        self._key = ApiKey([self.key_name], label=self.label, required=self.key_required, root=root, environ=environ, given=api_key)
        self._client = JsonClient(
            url,
            label=self.label,
            key=self._key,
            model=model,
            retry=retry,
            operation=f"{self.label} embeddings",
            advice=". Try again later, or use the offline provider: paqad rag init --provider local",
            sleep=sleep,
            clock=clock,
            rng=rng,
        )
        self.retry = self._client.retry
        self._batch_cap = limits.max_inputs
        self._lock = threading.Lock()

    # -- the Provider interface ---------------------------------------------------------------

    @property
    def dims(self) -> int:
        """Vector size; 0 while a model of unknown size has not answered yet (see ``discover_dims``).

        Reading it never touches the network (``isinstance(p, Provider)`` reads it on Python 3.11).
        """
        return self._dims or 0

    @property
    def fingerprint(self) -> str:
        """``provider:model:dims``; asks the service once for the size when it is not known yet."""
        return f"{self.name}:{self.model}:{self.discover_dims()}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(list(texts), "document")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query")[0]

    def discover_dims(self) -> int:
        """The vector size, embedding one short probe text if the model's size is not known yet."""
        if not self._dims:
            self._embed(["dimension probe"], "document")
        if not self._dims:  # pragma: no cover - _vectors sets it or raises
            raise self._client.error("did not say its vector size")
        return self._dims

    def require_key(self) -> Secret | None:
        """The key, read now; ``ConfigError`` naming where to put it when it is required and missing."""
        return self._key.get()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, dims={self._dims}, url={self.url!r})"

    # -- what subclasses define ---------------------------------------------------------------

    def _body(self, texts: list[str], kind: str) -> JSONObject:
        return {"input": texts, "model": self.model}

    # -- embedding ----------------------------------------------------------------------------

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.discover_dims()), dtype=np.float32)
        prepared = [self._prepare(t) for t in texts]
        rows: list[np.ndarray] = []
        start = 0
        while start < len(prepared):
            stop = self._next_batch_end(prepared, start)
            rows.append(self._embed_batch(prepared[start:stop], kind))
            start = stop
        return _normalise(np.concatenate(rows, axis=0))

    def _prepare(self, text: str) -> str:
        text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes "?"
        cap = self.limits.max_input_tokens
        overhead = self.limits.per_input_overhead
        cap = min(cap, self.limits.max_request_tokens - overhead) if cap else self.limits.max_request_tokens - overhead
        raw = text.encode("utf-8")
        if len(raw) > cap:
            text = raw[:cap].decode("utf-8", "ignore")
        return text if text.strip() else " "

    def _cost(self, text: str) -> int:
        return len(text.encode("utf-8")) + self.limits.per_input_overhead

    def _next_batch_end(self, texts: list[str], start: int) -> int:
        used = 0
        end = start
        while end < len(texts) and end - start < self._batch_cap:
            cost = self._cost(texts[end])
            if end > start and used + cost > self.limits.max_request_tokens:
                break
            used += cost
            end += 1
        return end

    def _embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        try:
            payload = self._client.post(self._body(texts, kind))
        except RemoteError as exc:
            if exc.status in _SPLIT_STATUS and len(texts) > 1 and _SPLIT_HINT.search(exc.detail):
                half = len(texts) // 2
                self._batch_cap = max(1, min(self._batch_cap, half))
                return np.concatenate([self._embed_batch(texts[:half], kind), self._embed_batch(texts[half:], kind)])
            raise
        return self._vectors(payload, len(texts))

    def _vectors(self, payload: object, count: int) -> np.ndarray:
        error = self._client.error
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise error("answered without a 'data' list of embeddings")
        if len(data) != count:
            raise error(f"returned {len(data)} embeddings for {count} inputs")
        rows: list[list[JSON] | None] = [None] * count
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise error(f"answered with an item without an 'embedding' list (position {position})")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or rows[index] is not None:
                raise error(f"answered with a missing, repeated or out-of-range index {index!r}")
            rows[index] = item["embedding"]
        try:
            matrix = np.asarray(rows, dtype=np.float64)
        except (ValueError, TypeError):
            raise error("answered with embeddings of different lengths or non-numbers") from None
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise error("answered with empty or non-finite embeddings")
        with self._lock:
            if self._dims is None:
                self._dims = int(matrix.shape[1])
        if matrix.shape[1] != self._dims:
            raise error(f"returned vectors of {matrix.shape[1]} dimensions; {self.model} was expected to give {self._dims}")
        return matrix


class OpenAIProvider(RemoteProvider):
    """OpenAI's embeddings API (``text-embedding-3-small`` by default, 1536 dimensions).

    ``dims`` smaller than the model's own asks text-embedding-3 models for shortened vectors
    (the ``dimensions`` request field). ``base_url`` may point at a gateway that speaks the same API.
    """

    name = "openai"
    label = "OpenAI"
    key_name = OPENAI_KEY
    DEFAULT_MODEL = "text-embedding-3-small"

    def __init__(self, model: str = "", *, base_url: str = OPENAI_BASE_URL, dims: int | None = None, limits: Limits | None = None, **options: Unpack[RemoteOptions]) -> None:
        model = model or self.DEFAULT_MODEL
        native = OPENAI_MODELS.get(model)
        self._ask_dims = dims if dims and native and dims != native else None
        limits = limits or OPENAI_LIMITS
        super().__init__(model, url=endpoint_url(base_url or OPENAI_BASE_URL), dims=dims or native, limits=limits, **options)

    def _body(self, texts: list[str], kind: str) -> JSONObject:
        body: JSONObject = {"input": texts, "model": self.model}
        if self._ask_dims:
            body["dimensions"] = self._ask_dims
        return body


class VoyageProvider(RemoteProvider):
    """Voyage AI's embeddings API (``voyage-code-3`` by default, 1024 dimensions), with
    ``input_type`` "document" for indexed texts and "query" for queries. ``dims`` other than the
    model's default is sent as ``output_dimension`` (voyage-code-3: 256, 512, 1024 or 2048)."""

    name = "voyageai"
    label = "Voyage AI"
    key_name = VOYAGE_KEY
    DEFAULT_MODEL = "voyage-code-3"

    def __init__(self, model: str = "", *, base_url: str = VOYAGE_BASE_URL, dims: int | None = None, limits: Limits | None = None, **options: Unpack[RemoteOptions]) -> None:
        model = model or self.DEFAULT_MODEL
        native = VOYAGE_MODELS.get(model)
        self._ask_dims = dims if dims and dims != native else None
        limits = limits or Limits(
            max_inputs=1000, max_request_tokens=VOYAGE_REQUEST_TOKENS.get(model, 120_000), max_input_tokens=None, per_input_overhead=16
        )
        super().__init__(model, url=endpoint_url(base_url or VOYAGE_BASE_URL), dims=dims or native, limits=limits, **options)

    def _body(self, texts: list[str], kind: str) -> JSONObject:
        body: JSONObject = {"input": texts, "model": self.model, "input_type": kind}
        if self._ask_dims:
            body["output_dimension"] = self._ask_dims
        return body


class OpenAICompatibleProvider(RemoteProvider):
    """OpenAI's request and answer shape at any ``base_url`` (``https://``, or ``http://`` to this
    machine). The model is required; ``dims`` is learnt from the first answer unless given. The key
    (``PAQAD_EMBEDDING_API_KEY``) is optional: without one no ``Authorization`` header is sent."""

    name = "openai-compatible"
    label = "The OpenAI-compatible endpoint"
    key_name = COMPATIBLE_KEY
    key_required = False

    def __init__(self, model: str = "", *, base_url: str = "", dims: int | None = None, limits: Limits | None = None, **options: Unpack[RemoteOptions]) -> None:
        if not base_url:
            raise ConfigError("The openai-compatible provider needs a base URL (rag_embedding_base_url), e.g. http://localhost:11434/v1.")
        if not model:
            raise ConfigError("The openai-compatible provider needs a model name (rag_embedding_model).")
        limits = limits or OPENAI_LIMITS
        super().__init__(model, url=endpoint_url(base_url), dims=dims, limits=limits, **options)


class RemoteFactory(Protocol):
    """A remote provider's class, as ``remote_provider`` calls it."""

    def __call__(self, model: str = "", *, base_url: str = ..., dims: int | None = None, limits: Limits | None = None, **options: Unpack[RemoteOptions]) -> RemoteProvider: ...


#: Provider name -> class, for ``remote_provider`` and the registry in ``paqad.embed``.
REMOTE_PROVIDERS: dict[str, RemoteFactory] = {
    OpenAIProvider.name: OpenAIProvider,
    VoyageProvider.name: VoyageProvider,
    OpenAICompatibleProvider.name: OpenAICompatibleProvider,
}


def remote_provider(
    name: str, model: str = "", *, root: Path | None = None, base_url: str = "", dims: int | None = None, **options: Unpack[ClientOptions]
) -> Provider:
    """The remote provider ``name`` for ``model`` ("" = its default). ``root`` is the repository whose
    ``secrets.env`` may hold the key (None: the nearest folder above the working directory that
    paqad is set up in); ``base_url`` "" means the service's own. Offline: nothing is sent yet."""
    cls = REMOTE_PROVIDERS.get(name)
    if cls is None:
        raise ConfigError(f"Unknown remote embedding provider {name!r}. Choose from {', '.join(REMOTE_PROVIDERS)}.")
    if root is None:
        root = _find_root(Path.cwd())
    if base_url:
        return cls(model, base_url=base_url, dims=dims, root=root, **options)
    return cls(model, dims=dims, root=root, **options)


def _find_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if workspace.is_set_up(folder):
            return folder
    return None


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
