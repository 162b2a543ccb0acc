"""Remote embedding providers: OpenAI, Voyage AI, and any OpenAI-compatible endpoint.

Standard library HTTP only (``urllib.request``); no SDK. Each provider posts JSON and reads JSON:

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

- **Transport.** ``https://`` anywhere; plain ``http://`` only to loopback (127.0.0.0/8, ``::1``,
  ``localhost``), checked on the URL text when the provider is made, so a refused URL is never
  resolved or connected to. Certificates are verified (``ssl.create_default_context``; it honours
  ``SSL_CERT_FILE``). Proxies from the environment are used, except for loopback. Redirects are
  not followed: the ``Authorization`` header would go with them to wherever the redirect points.
  A base URL carrying credentials or a query string is refused (keys go in ``secrets.env``).
- **Keys** come from :mod:`paqad.secrets` (environment, then ``.paqad/secrets.env``), are read on
  the first request (making a provider is offline and free), are held in a
  :class:`~paqad.secrets.Secret`, and are masked in every message this module raises
  (:func:`paqad.secrets.redact`). ``repr`` shows no key.
- **Retries.** 408, 429, 5xx and connection errors (refused, reset, timed out) are retried with
  exponential backoff and jitter (half the step fixed, half random), honouring ``Retry-After``
  (seconds or an HTTP date) and ``retry-after-ms``, within :class:`RetryPolicy`'s bounds on
  attempts and total time. A server that asks for a longer wait than the budget allows is given up
  on at once rather than slept on. 401/403 are a :class:`RemoteError` that names the variable to
  set; other 4xx are not retried.
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

import email.utils
import http.client
import ipaddress
import json
import random
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from paqad import __version__
from paqad.embed import TEXT_PREP_VERSION, Provider
from paqad.errors import ConfigError, PaqadError
from paqad.secrets import COMPATIBLE_KEY, OPENAI_KEY, VOYAGE_KEY, Secret, get_secret, redact

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

#: A response body larger than this is refused (2048 vectors of 3072 floats as JSON is ~130 MB).
MAX_RESPONSE_BYTES = 256 << 20
#: Characters of a server's error message kept in our message.
MAX_DETAIL_CHARS = 300

_RETRY_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
_SPLIT_STATUS = frozenset({400, 413, 422})
_SPLIT_HINT = re.compile(r"batch|too many|too large|too long|token|maximum|exceed|limit", re.IGNORECASE)


class RemoteError(PaqadError):
    """A remote embedding request failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        #: The server's own message (redacted), "" when there was none.
        self.detail = detail


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. ``timeout_s`` bounds each connect and each read; ``max_total_s`` bounds a
    request including its retries and waits; at most ``max_attempts`` tries."""

    max_attempts: int = 6
    max_total_s: float = 120.0
    timeout_s: float = 60.0
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 20.0
    #: A ``Retry-After`` longer than this is not waited for (the request fails at once).
    max_retry_after_s: float = 60.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Wait after failed try number ``attempt`` (1-based): half of the exponential step fixed, half random."""
        step = min(self.backoff_cap_s, self.backoff_base_s * (2 ** (attempt - 1)))
        return step / 2 + rng.uniform(0, step / 2)


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


def check_url(url: str, what: str = "Embedding endpoint") -> urllib.parse.SplitResult:
    """Parse ``url`` and refuse what paqad must not send a key to; nothing is resolved or connected.

    https anywhere; http only to 127.0.0.0/8, ::1 or ``localhost``. No credentials, query or
    fragment in the URL. Raises ``ConfigError``.
    """
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"{what} {redact(url)!r} is not a valid URL.") from None
    if parts.scheme not in ("https", "http") or not host:
        raise ConfigError(f"{what} {redact(url)!r} must be an https:// URL (http:// only to this machine).")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(f"{what} must not carry credentials; put the key in the environment or .paqad/secrets.env.")
    if parts.query or parts.fragment:
        raise ConfigError(f"{what} {redact(url)!r} must not have a query string or fragment.")
    if parts.scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"{what} {redact(url)!r} uses plain http:// to another machine; the API key and your code would travel "
            "unencrypted. Use https://, or http:// only to localhost, 127.0.0.0/8 or [::1]."
        )
    return parts


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1`` written literally (no DNS lookup: a name that
    merely resolves to 127.0.0.1 could resolve elsewhere tomorrow)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def endpoint_url(base_url: str) -> str:
    """``{base}/v1/embeddings``: ``https://host`` and ``https://host/v1`` both work, and a URL that
    already ends in ``/embeddings`` is used as given."""
    base = base_url.strip().rstrip("/")
    if base.endswith("/embeddings"):
        return base
    if re.search(r"/v\d+$", base):
        return base + "/embeddings"
    return base + "/v1/embeddings"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        return None  # urllib then raises HTTPError with the 3xx status, which we report


class _Transient(Exception):
    """A failure worth retrying that produced no HTTP status (connection refused, reset, timeout)."""


class RemoteProvider:
    """Shared client: key lookup, URL rules, batching, retries, answer checks. Subclasses set the
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
        self.retry = retry or RetryPolicy()
        self.root = root
        self._parts = check_url(url)
        self._dims = dims
        self._key: Secret | None = Secret(api_key, "argument") if api_key else None
        self._key_loaded = bool(api_key)
        self._environ = environ
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._batch_cap = limits.max_inputs
        self._lock = threading.Lock()
        self._opener = self._make_opener()

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
            raise self._error("did not say its vector size")
        return self._dims

    def require_key(self) -> Secret | None:
        """The key, read now; ``ConfigError`` naming where to put it when it is required and missing."""
        with self._lock:
            if not self._key_loaded:
                self._key = get_secret(self.key_name, self.root, self._environ)
                self._key_loaded = True
        if self._key is not None and not re.fullmatch(r"[\x21-\x7e]+", self._key.reveal()):
            # http.client would put the whole header, key included, into its ValueError.
            raise ConfigError(f"The API key from {self._key.source} has spaces or characters a header cannot carry; check {self.key_name}.")
        if self._key is None and self.key_required:
            raise ConfigError(
                f"{self.label} needs an API key: set {self.key_name} in the environment, "
                f"or put {self.key_name}=... in .paqad/secrets.env (mode 0600, never committed)."
            )
        return self._key

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, dims={self._dims}, url={self.url!r})"

    # -- what subclasses define ---------------------------------------------------------------

    def _body(self, texts: list[str], kind: str) -> dict[str, Any]:
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
            payload = self._post(self._body(texts, kind))
        except RemoteError as exc:
            if exc.status in _SPLIT_STATUS and len(texts) > 1 and _SPLIT_HINT.search(exc.detail):
                half = len(texts) // 2
                self._batch_cap = max(1, min(self._batch_cap, half))
                return np.concatenate([self._embed_batch(texts[:half], kind), self._embed_batch(texts[half:], kind)])
            raise
        return self._vectors(payload, len(texts))

    def _vectors(self, payload: Any, count: int) -> np.ndarray:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise self._error("answered without a 'data' list of embeddings")
        if len(data) != count:
            raise self._error(f"returned {len(data)} embeddings for {count} inputs")
        rows: list[Any] = [None] * count
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise self._error(f"answered with an item without an 'embedding' list (position {position})")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or rows[index] is not None:
                raise self._error(f"answered with a missing, repeated or out-of-range index {index!r}")
            rows[index] = item["embedding"]
        try:
            matrix = np.asarray(rows, dtype=np.float64)
        except (ValueError, TypeError):
            raise self._error("answered with embeddings of different lengths or non-numbers") from None
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise self._error("answered with empty or non-finite embeddings")
        with self._lock:
            if self._dims is None:
                self._dims = int(matrix.shape[1])
        if matrix.shape[1] != self._dims:
            raise self._error(f"returned vectors of {matrix.shape[1]} dimensions; {self.model} was expected to give {self._dims}")
        return matrix

    # -- HTTP ---------------------------------------------------------------------------------

    def _make_opener(self) -> urllib.request.OpenerDirector:
        proxies = urllib.request.ProxyHandler({}) if is_loopback(self._parts.hostname or "") else urllib.request.ProxyHandler()
        https = urllib.request.HTTPSHandler(context=ssl.create_default_context())
        return urllib.request.build_opener(proxies, https, _NoRedirect())

    def _post(self, body: dict[str, Any]) -> Any:
        key = self.require_key()
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": f"paqad/{__version__}"}
        if key is not None:
            headers["Authorization"] = "Bearer " + key.reveal()
        policy = self.retry
        started = self._clock()
        deadline = started + policy.max_total_s
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                status, response_headers, raw = self._send(data, headers, max(0.5, min(policy.timeout_s, deadline - self._clock())))
            except _Transient as exc:
                last = str(exc)
            else:
                if 200 <= status < 300:
                    return self._decode(raw, status)
                detail = self._detail(raw)
                if status in (401, 403):
                    raise self._auth_error(status, detail)
                if status not in _RETRY_STATUS:
                    raise self._refused(status, detail, response_headers)
                last = f"HTTP {status}" + (f": {detail}" if detail else "")
                retry_after = _retry_after(response_headers)
            elapsed = self._clock() - started
            tries = f"after {attempt} attempt{'s' if attempt > 1 else ''} in {elapsed:.1f} s"
            if attempt >= policy.max_attempts:
                raise self._give_up(tries, last)
            if retry_after is not None and retry_after > policy.max_retry_after_s:
                raise self._give_up(f"{tries}: the service asked to retry after {retry_after:g} s, more than the {policy.max_retry_after_s:g} s paqad waits", last)
            wait = retry_after if retry_after is not None else policy.backoff(attempt, self._rng)
            if self._clock() + wait > deadline:
                raise self._give_up(f"{tries}: the next wait, {wait:.1f} s, would pass the {policy.max_total_s:g} s budget", last)
            self._sleep(wait)

    def _send(self, data: bytes, headers: dict[str, str], timeout: float) -> tuple[int, Any, bytes]:
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return response.status, response.headers, _read(response)
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read(64 << 10) if exc.fp is not None else b""
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                exc.close()
            return exc.code, exc.headers, raw
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise RemoteError(
                    redact(f"{self.label} at {self._parts.hostname}: the TLS certificate could not be verified ({reason.verify_message}). "
                           "If a company proxy re-signs TLS, point SSL_CERT_FILE at its CA bundle.")
                ) from None
            raise _Transient(f"could not reach {self._parts.hostname} ({_reason(reason)})") from None
        except (TimeoutError, socket.timeout):
            raise _Transient(f"no answer from {self._parts.hostname} within {timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise _Transient(f"connection to {self._parts.hostname} failed ({_reason(exc)})") from None

    def _decode(self, raw: bytes, status: int) -> Any:
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            head = raw[:80].decode("utf-8", "replace")
            raise self._error(f"answered HTTP {status} with a body that is not valid JSON ({len(raw)} bytes, starting {head!r})") from None

    def _detail(self, raw: bytes) -> str:
        """The server's own error message: OpenAI's ``error.message``, Voyage's ``detail``, or the text."""
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict):
            error = body.get("error")
            for candidate in (error.get("message") if isinstance(error, dict) else error, body.get("detail"), body.get("message")):
                if isinstance(candidate, str) and candidate.strip():
                    text = candidate
                    break
        text = " ".join(text.split())
        if len(text) > MAX_DETAIL_CHARS:
            text = text[: MAX_DETAIL_CHARS - 1] + "…"
        return text

    # -- messages (every one goes through redact) -----------------------------------------------

    def _redact(self, text: str) -> str:
        return redact(text, [self._key])

    def _error(self, what: str, status: int | None = None, detail: str = "") -> RemoteError:
        return RemoteError(self._redact(f"{self.label} ({self.url}, model {self.model}) {what}."), status, self._redact(detail))

    def _auth_error(self, status: int, detail: str) -> RemoteError:
        if self._key is None:
            head = f"{self.label} refused the request without an API key ({status}); set {self.key_name} or .paqad/secrets.env"
        else:
            verb = "rejected the API key" if status == 401 else "refused the API key access"
            head = f"{self.label} {verb} ({status}); set {self.key_name} or .paqad/secrets.env (the key used came from {self._key.source})"
        return RemoteError(self._redact(head + (f". The service said: {detail}" if detail else "")), status, self._redact(detail))

    def _refused(self, status: int, detail: str, headers: Any) -> RemoteError:
        if 300 <= status < 400:
            location = headers.get("Location", "?") if headers is not None else "?"
            what = f"redirected the request ({status}) to {location}; paqad does not follow redirects (the key would go along). Set the URL to the final address"
        elif status == 404:
            what = f"answered 404 (check the base URL and the model name {self.model!r})"
        else:
            what = f"refused the request (HTTP {status})"
        return self._error(what + (f": {detail}" if detail else ""), status, detail)

    def _give_up(self, when: str, last: str) -> RemoteError:
        return RemoteError(
            self._redact(f"{self.label} embeddings failed {when}; last error: {last}. Try again later, or use the offline provider: paqad rag init --provider local"),
        )


class OpenAIProvider(RemoteProvider):
    """OpenAI's embeddings API (``text-embedding-3-small`` by default, 1536 dimensions).

    ``dims`` smaller than the model's own asks text-embedding-3 models for shortened vectors
    (the ``dimensions`` request field). ``base_url`` may point at a gateway that speaks the same API.
    """

    name = "openai"
    label = "OpenAI"
    key_name = OPENAI_KEY
    DEFAULT_MODEL = "text-embedding-3-small"

    def __init__(self, model: str = "", *, base_url: str = OPENAI_BASE_URL, dims: int | None = None, **options: Any) -> None:
        model = model or self.DEFAULT_MODEL
        native = OPENAI_MODELS.get(model)
        self._ask_dims = dims if dims and native and dims != native else None
        options.setdefault("limits", OPENAI_LIMITS)
        super().__init__(model, url=endpoint_url(base_url or OPENAI_BASE_URL), dims=dims or native, **options)

    def _body(self, texts: list[str], kind: str) -> dict[str, Any]:
        body: dict[str, Any] = {"input": texts, "model": self.model}
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

    def __init__(self, model: str = "", *, base_url: str = VOYAGE_BASE_URL, dims: int | None = None, **options: Any) -> None:
        model = model or self.DEFAULT_MODEL
        native = VOYAGE_MODELS.get(model)
        self._ask_dims = dims if dims and dims != native else None
        options.setdefault(
            "limits",
            Limits(max_inputs=1000, max_request_tokens=VOYAGE_REQUEST_TOKENS.get(model, 120_000), max_input_tokens=None, per_input_overhead=16),
        )
        super().__init__(model, url=endpoint_url(base_url or VOYAGE_BASE_URL), dims=dims or native, **options)

    def _body(self, texts: list[str], kind: str) -> dict[str, Any]:
        body: dict[str, Any] = {"input": texts, "model": self.model, "input_type": kind}
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

    def __init__(self, model: str = "", *, base_url: str = "", dims: int | None = None, **options: Any) -> None:
        if not base_url:
            raise ConfigError("The openai-compatible provider needs a base URL (rag_embedding_base_url), e.g. http://localhost:11434/v1.")
        if not model:
            raise ConfigError("The openai-compatible provider needs a model name (rag_embedding_model).")
        options.setdefault("limits", OPENAI_LIMITS)
        super().__init__(model, url=endpoint_url(base_url), dims=dims, **options)


#: Provider name -> class, for ``remote_provider`` and the registry in ``paqad.embed``.
REMOTE_PROVIDERS: dict[str, type[RemoteProvider]] = {
    OpenAIProvider.name: OpenAIProvider,
    VoyageProvider.name: VoyageProvider,
    OpenAICompatibleProvider.name: OpenAICompatibleProvider,
}


def remote_provider(name: str, model: str = "", *, root: Path | None = None, base_url: str = "", dims: int | None = None, **options: Any) -> Provider:
    """The remote provider ``name`` for ``model`` ("" = its default). ``root`` is the repository whose
    ``.paqad/secrets.env`` may hold the key (None: the nearest folder above the working directory
    that has a ``.paqad``); ``base_url`` "" means the service's own. Offline: nothing is sent yet."""
    cls = REMOTE_PROVIDERS.get(name)
    if cls is None:
        raise ConfigError(f"Unknown remote embedding provider {name!r}. Choose from {', '.join(REMOTE_PROVIDERS)}.")
    if root is None:
        root = _find_root(Path.cwd())
    kwargs: dict[str, Any] = {"root": root, "dims": dims, **options}
    if base_url:
        kwargs["base_url"] = base_url
    return cls(model, **kwargs)


def _find_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".paqad").is_dir():
            return folder
    return None


def _read(response: Any) -> bytes:
    raw = response.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        raise RemoteError(f"The embedding service sent more than {MAX_RESPONSE_BYTES >> 20} MB; refusing it.")
    return raw


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _reason(reason: Any) -> str:
    if isinstance(reason, BaseException):
        text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return redact(str(text))
    return redact(str(reason))


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
