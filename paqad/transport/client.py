"""One JSON-over-HTTPS client for every remote service paqad talks to (embeddings, reranking).

Standard library only (``urllib.request``); no SDK. What it guarantees, whoever calls it:

- **URL policy** (:mod:`paqad.transport.urls`) checked when the client is made.
- **Certificates verified** (``ssl.create_default_context``; it honours ``SSL_CERT_FILE``, which is
  what a company proxy that re-signs TLS needs).
- **Proxies** from the environment, except for loopback: a local server must not be sent through
  a proxy that cannot reach it.
- **No redirects**: urllib would resend the ``Authorization`` header to wherever a redirect
  points, so a 3xx is reported with its ``Location`` instead of followed.
- **Retries** by :mod:`paqad.transport.retry`; 401/403 and other 4xx are not retried.
- **Bounded answers**: a body over ``MAX_RESPONSE_BYTES`` is refused rather than read into memory.
- **Redaction**: every message raised goes through :func:`paqad.secrets.redact` with this client's
  key, so a server that echoes the key back does not put it on the terminal or in a log.

Errors are :class:`~paqad.errors.RemoteError` (status and the server's own message kept apart) or
``ConfigError`` for a bad URL or key.
"""

from __future__ import annotations

import http.client
import json
import random
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from email.message import Message
from typing import IO, TYPE_CHECKING, BinaryIO

from paqad import __version__
from paqad.errors import RemoteError
from paqad.secrets import redact
from paqad.transport.keys import ApiKey
from paqad.transport.retry import RETRY_STATUS, RetryPolicy, retry_after
from paqad.transport.urls import check_url, is_loopback

if TYPE_CHECKING:
    from paqad.jsontypes import JSON

#: A response body larger than this is refused (2048 vectors of 3072 floats as JSON is ~130 MB).
MAX_RESPONSE_BYTES = 256 << 20
#: Bytes of an error response read for its message.
MAX_ERROR_BYTES = 64 << 10
#: Characters of a server's error message kept in our message.
MAX_DETAIL_CHARS = 300


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: the request (and its key) goes to the configured URL or nowhere."""

    def redirect_request(
        self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: http.client.HTTPMessage, newurl: str
    ) -> urllib.request.Request | None:
        return None  # urllib then raises HTTPError with the 3xx status, which is reported


class _Transient(Exception):
    """A failure worth retrying that produced no HTTP status (connection refused, reset, timeout)."""


class JsonClient:
    """POSTs JSON to one ``url`` and returns the decoded JSON answer.

    ``label`` names the service in messages ("OpenAI"); ``model`` is said in them too, since a
    wrong model name is the usual cause of a 404. ``operation`` names what failed when the retries
    run out ("OpenAI embeddings") and ``advice`` is appended to that message. ``what`` names the
    URL setting when it is refused. ``sleep``, ``clock`` and ``rng`` are injectable so the retry
    timing can be tested without waiting.
    """

    def __init__(
        self,
        url: str,
        *,
        label: str,
        key: ApiKey,
        model: str = "",
        retry: RetryPolicy | None = None,
        operation: str = "",
        advice: str = "",
        what: str = "Embedding endpoint",
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.url = url
        self.label = label
        self.key = key
        self.model = model
        self.retry = retry or RetryPolicy()
        self.operation = operation or label
        self.advice = advice
        self._parts = check_url(url, what)
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._opener = self._make_opener()

    def __repr__(self) -> str:
        return f"JsonClient(url={self.url!r}, label={self.label!r}, model={self.model!r})"

    @property
    def host(self) -> str:
        return self._parts.hostname or ""

    # -- requests -------------------------------------------------------------------------------

    def post(self, body: Mapping[str, object]) -> JSON:
        """Send ``body`` as JSON, retrying as the policy allows; the decoded answer of a 2xx (unchecked:
        the caller reads it as the service's answer format)."""
        key = self.key.get()
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
            wait_asked: float | None = None
            try:
                status, response_headers, raw = self._send(data, headers, max(0.5, min(policy.timeout_s, deadline - self._clock())))
            except _Transient as exc:
                last = str(exc)
            else:
                if 200 <= status < 300:
                    return self._decode(raw, status)
                detail = error_detail(raw)
                if status in (401, 403):
                    raise self._auth_error(status, detail)
                if status not in RETRY_STATUS:
                    raise self._refused(status, detail, response_headers)
                last = f"HTTP {status}" + (f": {detail}" if detail else "")
                wait_asked = retry_after(response_headers)
            elapsed = self._clock() - started
            tries = f"after {attempt} attempt{'s' if attempt > 1 else ''} in {elapsed:.1f} s"
            if attempt >= policy.max_attempts:
                raise self._give_up(tries, last)
            if wait_asked is not None and wait_asked > policy.max_retry_after_s:
                raise self._give_up(f"{tries}: the service asked to retry after {wait_asked:g} s, more than the {policy.max_retry_after_s:g} s paqad waits", last)
            wait = wait_asked if wait_asked is not None else policy.backoff(attempt, self._rng)
            if self._clock() + wait > deadline:
                raise self._give_up(f"{tries}: the next wait, {wait:.1f} s, would pass the {policy.max_total_s:g} s budget", last)
            self._sleep(wait)

    def _make_opener(self) -> urllib.request.OpenerDirector:
        proxies = urllib.request.ProxyHandler({}) if is_loopback(self.host) else urllib.request.ProxyHandler()
        https = urllib.request.HTTPSHandler(context=ssl.create_default_context())
        return urllib.request.build_opener(proxies, https, _NoRedirect())

    def _send(self, data: bytes, headers: dict[str, str], timeout: float) -> tuple[int, Message | None, bytes]:
        """One try: (status, headers, body), or ``_Transient`` when no status came back."""
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return response.status, response.headers, self._read(response)
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read(MAX_ERROR_BYTES) if exc.fp is not None else b""
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                exc.close()
            return exc.code, exc.headers, raw
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise RemoteError(
                    self.redact(f"{self.label} at {self.host}: the TLS certificate could not be verified ({reason.verify_message}). "
                                "If a company proxy re-signs TLS, point SSL_CERT_FILE at its CA bundle.")
                ) from None
            raise _Transient(f"could not reach {self.host} ({_reason(reason)})") from None
        except TimeoutError:
            raise _Transient(f"no answer from {self.host} within {timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise _Transient(f"connection to {self.host} failed ({_reason(exc)})") from None

    def _read(self, response: BinaryIO) -> bytes:
        raw: bytes = response.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise RemoteError(f"{self.label} sent more than {MAX_RESPONSE_BYTES >> 20} MB; refusing it.")
        return raw

    def _decode(self, raw: bytes, status: int) -> JSON:
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            head = raw[:80].decode("utf-8", "replace")
            raise self.error(f"answered HTTP {status} with a body that is not valid JSON ({len(raw)} bytes, starting {head!r})") from None

    # -- messages (every one goes through redact) -----------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with this client's key (and every other known key) masked."""
        return redact(text, [self.key.secret])

    def error(self, what: str, status: int | None = None, detail: str = "") -> RemoteError:
        """``RemoteError`` "<label> (<url>, model <model>) <what>."; for callers' answer checks too."""
        return RemoteError(self.redact(f"{self.label} ({self.url}, model {self.model}) {what}."), status, self.redact(detail))

    def _auth_error(self, status: int, detail: str) -> RemoteError:
        secret, name = self.key.secret, self.key.name
        if secret is None:
            head = f"{self.label} refused the request without an API key ({status}); set {name}, or put it in paqad's secrets.env"
        else:
            verb = "rejected the API key" if status == 401 else "refused the API key access"
            head = f"{self.label} {verb} ({status}); set {name}, or put it in paqad's secrets.env (the key used came from {secret.source})"
        return RemoteError(self.redact(head + (f". The service said: {detail}" if detail else "")), status, self.redact(detail))

    def _refused(self, status: int, detail: str, headers: Message | None) -> RemoteError:
        if 300 <= status < 400:
            location = headers.get("Location", "?") if headers is not None else "?"
            what = f"redirected the request ({status}) to {location}; paqad does not follow redirects (the key would go along). Set the URL to the final address"
        elif status == 404:
            what = f"answered 404 (check the base URL and the model name {self.model!r})"
        else:
            what = f"refused the request (HTTP {status})"
        return self.error(what + (f": {detail}" if detail else ""), status, detail)

    def _give_up(self, when: str, last: str) -> RemoteError:
        return RemoteError(self.redact(f"{self.operation} failed {when}; last error: {last}{self.advice}"))


def error_detail(raw: bytes) -> str:
    """The server's own error message, one line, at most ``MAX_DETAIL_CHARS``: OpenAI's and
    Cohere's ``error.message`` / ``message``, Voyage's ``detail``, or else the body's text."""
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


def _reason(reason: object) -> str:
    if isinstance(reason, BaseException):
        text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return redact(str(text))
    return redact(str(reason))
