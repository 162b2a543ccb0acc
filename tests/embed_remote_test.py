"""Remote embedding providers (OpenAI, Voyage AI, OpenAI-compatible) against local stub servers.

The real services cannot be reached from here (no network but loopback), so every test runs
against a server on 127.0.0.1 (``http.server`` in a thread) that speaks each provider's documented
API: OpenAI's ``POST /v1/embeddings`` (``{"input": [...], "model": ...}`` -> ``{"object": "list",
"data": [{"object": "embedding", "index": i, "embedding": [...]}], "model", "usage"}``, errors as
``{"error": {"message", "type", "code"}}``, at most 2048 inputs, no empty strings) and Voyage's
(same answer; ``input_type`` null/"query"/"document"; at most 1,000 inputs; errors as
``{"detail": ...}``). The stub answers ``data`` in reverse order, so ordering by ``index`` is
tested on every call. What it cannot show: TLS to the real hosts, real rate limits and real
vectors.
"""

from __future__ import annotations

import json
import socket
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from paqad import workspace
from paqad.embed import Provider
from paqad.embed.remote import (
    OPENAI_LIMITS,
    Limits,
    OpenAICompatibleProvider,
    OpenAIProvider,
    RemoteError,
    RetryPolicy,
    VoyageProvider,
    check_url,
    endpoint_url,
    is_loopback,
    remote_provider,
)
from paqad.errors import ConfigError
from paqad.secrets import set_secret
from testing.stubs import Reply, Request, serve

OPENAI_KEY = "sk-test-OpenAIkey0123456789abcdefXYZ"
VOYAGE_KEY = "pa-test-VoyageKey0123456789abcdefXYZ"
#: Fast retries for tests: real sleeps, but tiny.
FAST = RetryPolicy(max_attempts=4, max_total_s=10, timeout_s=5, backoff_base_s=0.01, backoff_cap_s=0.05)



def vector_for(text: str, dims: int) -> list[float]:
    """The stub's embedding of ``text``: deterministic, different per text, not normalised."""
    rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
    return [float(x) for x in rng.normal(size=dims) * 3.0]


def expected(texts: list[str], dims: int) -> np.ndarray:
    m = np.array([vector_for(t, dims) for t in texts])
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Stub:
    """A local embeddings service. ``script`` holds replies (or functions of the request giving
    one) used first, in order; then every request gets the documented success answer."""

    flavour: str  # "openai" or "voyage"
    key: str | None
    dims: int = 8
    script: list[Reply | Callable[[Seen], Reply]] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""

    def error(self, status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
        if self.flavour == "voyage":
            body = {"detail": message}
        else:
            body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
        return status, headers or {}, json.dumps(body).encode()

    def answer(self, seen: Seen) -> Reply:
        if self.key is not None and seen.headers.get("authorization") != f"Bearer {self.key}":
            sent = seen.headers.get("authorization", "").removeprefix("Bearer ")
            # Worst case for redaction: the service echoes the whole key it was sent.
            return self.error(401, f"Incorrect API key provided: {sent}. You can find your API key at the dashboard.")
        body = seen.body
        if not isinstance(body, dict) or not isinstance(body.get("model"), str) or "input" not in body:
            return self.error(400, "'input' and 'model' are required")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if self.flavour == "openai":
            if len(texts) > 2048 or any(not isinstance(t, str) or t == "" for t in texts):
                return self.error(400, "'$.input' is invalid: at most 2048 non-empty strings")
            if "input_type" in body:
                return self.error(400, "Unrecognized request argument supplied: input_type")
        else:
            if len(texts) > 1000:
                return self.error(400, "The maximum length of the list is 1,000")
            if body.get("input_type") not in (None, "query", "document"):
                return self.error(400, "input_type must be query or document")
        dims = body.get("dimensions") or body.get("output_dimension") or self.dims
        data = [{"object": "embedding", "index": i, "embedding": vector_for(t, dims)} for i, t in enumerate(texts)]
        data.reverse()  # the documents promise ``index``, not order
        usage = {"prompt_tokens": 5, "total_tokens": 5} if self.flavour == "openai" else {"total_tokens": 5}
        return 200, {}, json.dumps({"object": "list", "data": data, "model": body["model"], "usage": usage}).encode()

    def inputs(self) -> list[list[str]]:
        return [s.body["input"] for s in self.seen]


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "VOYAGE_API_KEY", "PAQAD_EMBEDDING_API_KEY", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _serve(stub: Stub) -> Any:
    """The stub on 127.0.0.1 (testing.stubs); ``stub.url`` is set while the block runs."""

    def handle(request: Request) -> Reply:
        seen = Seen(request.path, request.headers, request.body)
        stub.seen.append(seen)
        reply = stub.script.pop(0) if stub.script else stub.answer
        return reply(seen) if callable(reply) else reply

    return serve(handle)


@pytest.fixture
def openai_stub():
    stub = Stub("openai", OPENAI_KEY)
    with _serve(stub) as server:
        stub.url = server.url
        yield stub


@pytest.fixture
def voyage_stub():
    stub = Stub("voyage", VOYAGE_KEY, dims=6)
    with _serve(stub) as server:
        stub.url = server.url
        yield stub


def openai(stub: Stub, **options: Any) -> OpenAIProvider:
    options.setdefault("api_key", OPENAI_KEY)
    options.setdefault("retry", FAST)
    options.setdefault("dims", stub.dims)
    return OpenAIProvider(base_url=stub.url, **options)


def voyage(stub: Stub, **options: Any) -> VoyageProvider:
    options.setdefault("api_key", VOYAGE_KEY)
    options.setdefault("retry", FAST)
    return VoyageProvider(base_url=stub.url, **options)


def leaked(key: str, exc: BaseException) -> bool:
    return key in "".join(traceback.format_exception(exc)) or key in repr(exc)


# -- contract and request shapes -------------------------------------------------------------


def test_contracts_and_fingerprints_without_network() -> None:
    o, v = OpenAIProvider(), VoyageProvider()
    c = OpenAICompatibleProvider("nomic-embed-text", base_url="http://localhost:11434/v1", dims=768)
    for p in (o, v, c):
        assert isinstance(p, Provider)
        assert isinstance(p.text_prep_version, int)
    assert (o.name, o.model, o.dims, o.fingerprint) == ("openai", "text-embedding-3-small", 1536, "openai:text-embedding-3-small:1536")
    assert o.url == "https://api.openai.com/v1/embeddings"
    assert (v.name, v.model, v.dims, v.fingerprint) == ("voyageai", "voyage-code-3", 1024, "voyageai:voyage-code-3:1024")
    assert v.url == "https://api.voyageai.com/v1/embeddings"
    assert c.fingerprint == "openai-compatible:nomic-embed-text:768"
    assert c.url == "http://localhost:11434/v1/embeddings"


def test_openai_request_shape_auth_and_index_order(openai_stub: Stub) -> None:
    p = openai(openai_stub)
    texts = ["def retry_charge(payment)", "class Invoice", "render settings page"]
    out = p.embed_documents(texts)
    assert out.dtype == np.float32 and out.shape == (3, 8)
    np.testing.assert_allclose(out, expected(texts, 8), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    (seen,) = openai_stub.seen
    assert seen.path == "/v1/embeddings"
    assert seen.body == {"input": texts, "model": "text-embedding-3-small", "dimensions": 8}
    assert seen.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert seen.headers["content-type"] == "application/json"
    q = p.embed_query("resend a payment")
    assert q.shape == (8,) and q.dtype == np.float32
    np.testing.assert_allclose(q, expected(["resend a payment"], 8)[0], atol=1e-6)
    assert openai_stub.seen[-1].body["input"] == ["resend a payment"]
    assert p.embed_documents([]).shape == (0, 8)
    assert len(openai_stub.seen) == 2  # the empty list sent nothing


def test_openai_native_dims_sends_no_dimensions_field(openai_stub: Stub) -> None:
    p = openai(openai_stub, dims=None, model="text-embedding-3-small")
    openai_stub.dims = 1536
    assert p.embed_query("x").shape == (1536,)
    assert openai_stub.seen[0].body == {"input": ["x"], "model": "text-embedding-3-small"}


def test_voyage_input_type_model_and_auth(voyage_stub: Stub) -> None:
    p = voyage(voyage_stub, dims=6)
    docs = p.embed_documents(["a", "b"])
    np.testing.assert_allclose(docs, expected(["a", "b"], 6), atol=1e-6)
    p.embed_query("find the retry loop")
    first, second = voyage_stub.seen
    assert first.path == "/v1/embeddings"
    assert first.body == {"input": ["a", "b"], "model": "voyage-code-3", "input_type": "document", "output_dimension": 6}
    assert second.body["input_type"] == "query" and second.body["input"] == ["find the retry loop"]
    assert first.headers["authorization"] == f"Bearer {VOYAGE_KEY}"


def test_voyage_default_dims_send_no_output_dimension(voyage_stub: Stub) -> None:
    voyage_stub.dims = 1024
    p = voyage(voyage_stub)
    assert p.embed_query("q").shape == (1024,)
    assert voyage_stub.seen[0].body == {"input": ["q"], "model": "voyage-code-3", "input_type": "query"}


def test_compatible_discovers_dims_and_sends_no_key_when_none(openai_stub: Stub) -> None:
    openai_stub.key = None
    p = OpenAICompatibleProvider("nomic-embed-text", base_url=openai_stub.url + "/v1", retry=FAST)
    assert p.dims == 0  # unknown, and reading it sent nothing
    assert isinstance(p, Provider) and openai_stub.seen == []
    out = p.embed_documents(["one", "two"])
    assert out.shape == (2, 8) and p.dims == 8
    assert "authorization" not in openai_stub.seen[0].headers
    assert openai_stub.seen[0].body == {"input": ["one", "two"], "model": "nomic-embed-text"}
    assert p.fingerprint == "openai-compatible:nomic-embed-text:8"


def test_compatible_fingerprint_probes_once_and_uses_key_from_env(openai_stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAQAD_EMBEDDING_API_KEY", OPENAI_KEY)
    p = OpenAICompatibleProvider("m", base_url=openai_stub.url, retry=FAST)
    assert p.fingerprint == "openai-compatible:m:8"
    assert p.fingerprint == "openai-compatible:m:8"
    assert len(openai_stub.seen) == 1
    assert openai_stub.seen[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"


def test_key_from_secrets_env(openai_stub: Stub, tmp_path: Path) -> None:
    set_secret(tmp_path, "OPENAI_API_KEY", OPENAI_KEY)
    p = openai(openai_stub, api_key=None, root=tmp_path)
    p.embed_query("x")
    assert openai_stub.seen[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"


def test_missing_key_is_a_config_error_before_any_request(openai_stub: Stub, tmp_path: Path) -> None:
    p = openai(openai_stub, api_key=None, root=tmp_path)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY.*secrets.env"):
        p.embed_query("x")
    with pytest.raises(ConfigError, match="VOYAGE_API_KEY"):
        VoyageProvider(base_url=openai_stub.url, root=tmp_path).embed_query("x")
    assert openai_stub.seen == []


def test_remote_provider_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert remote_provider("openai").fingerprint == "openai:text-embedding-3-small:1536"
    assert remote_provider("voyageai", "voyage-3-lite").dims == 512
    assert remote_provider("openai-compatible", "m", base_url="https://llm.example.com/v1", dims=4).url == "https://llm.example.com/v1/embeddings"
    with pytest.raises(ConfigError, match="base URL"):
        remote_provider("openai-compatible", "m")
    with pytest.raises(ConfigError, match="model"):
        remote_provider("openai-compatible", "", base_url="https://llm.example.com")
    with pytest.raises(ConfigError, match="Choose from"):
        remote_provider("cohere")
    workspace.ensure(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert remote_provider("openai").root == tmp_path


# -- batching --------------------------------------------------------------------------------


def test_batches_split_by_count_and_keep_order(openai_stub: Stub) -> None:
    p = openai(openai_stub, limits=Limits(max_inputs=3, max_request_tokens=300_000, max_input_tokens=8192))
    texts = [f"text {i}" for i in range(7)]
    np.testing.assert_allclose(p.embed_documents(texts), expected(texts, 8), atol=1e-6)
    assert openai_stub.inputs() == [texts[0:3], texts[3:6], texts[6:7]]


def test_batches_split_by_token_budget(openai_stub: Stub) -> None:
    p = openai(openai_stub, limits=Limits(max_inputs=100, max_request_tokens=50, max_input_tokens=50))
    texts = ["x" * 20, "y" * 20, "z" * 20, "é" * 10]  # "é" is 2 bytes: 20 tokens at most
    p.embed_documents(texts)
    assert openai_stub.inputs() == [texts[0:2], texts[2:4]]


def test_openai_default_limit_of_2048_inputs(openai_stub: Stub) -> None:
    texts = [f"t{i}" for i in range(2050)]
    out = openai(openai_stub).embed_documents(texts)
    assert out.shape == (2050, 8)
    assert [len(batch) for batch in openai_stub.inputs()] == [2048, 2]
    np.testing.assert_allclose(out[2049], expected([texts[2049]], 8)[0], atol=1e-6)


def test_openai_inputs_cut_to_the_token_limit_and_empty_text_sent_as_space(openai_stub: Stub) -> None:
    long = "é" * 10_000  # 20,000 bytes
    openai(openai_stub).embed_documents([long, ""])
    sent = openai_stub.inputs()[0]
    assert len(sent[0].encode("utf-8")) <= OPENAI_LIMITS.max_input_tokens and sent[0] == "é" * 4096
    assert sent[1] == " "


def test_voyage_default_limit_of_1000_inputs(voyage_stub: Stub) -> None:
    texts = [f"t{i}" for i in range(1001)]
    assert voyage(voyage_stub, dims=6).embed_documents(texts).shape == (1001, 6)
    assert [len(b) for b in voyage_stub.inputs()] == [1000, 1]


def test_batch_too_large_is_halved_and_remembered(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(413, "batch size 8 > maximum allowed batch size 4")]
    p = openai(openai_stub)
    texts = [f"t{i}" for i in range(8)]
    np.testing.assert_allclose(p.embed_documents(texts), expected(texts, 8), atol=1e-6)
    assert [len(b) for b in openai_stub.inputs()] == [8, 4, 4]
    p.embed_documents(texts)
    assert [len(b) for b in openai_stub.inputs()[3:]] == [4, 4]


# -- errors, retries ---------------------------------------------------------------------------


def test_401_is_a_clear_error_with_the_key_redacted(openai_stub: Stub) -> None:
    wrong = "sk-wrong-KEYwhichTheServerEchoes12345"
    p = openai(openai_stub, api_key=wrong)
    with pytest.raises(RemoteError) as caught:
        p.embed_query("x")
    message = str(caught.value)
    assert message.startswith("OpenAI rejected the API key (401); set OPENAI_API_KEY, or put it in paqad's secrets.env")
    assert "Incorrect API key provided: ***" in message
    assert caught.value.status == 401
    assert not leaked(wrong, caught.value)
    assert wrong not in repr(p) and wrong not in str(vars(p))
    assert len(openai_stub.seen) == 1  # not retried


def test_voyage_403_and_key_redacted(voyage_stub: Stub) -> None:
    voyage_stub.script = [voyage_stub.error(403, f"key {VOYAGE_KEY} may not use voyage-code-3")]
    with pytest.raises(RemoteError, match=r"Voyage AI refused the API key access \(403\); set VOYAGE_API_KEY") as caught:
        voyage(voyage_stub).embed_query("x")
    assert not leaked(VOYAGE_KEY, caught.value)


def test_compatible_401_without_key_says_what_to_set(openai_stub: Stub) -> None:
    p = OpenAICompatibleProvider("m", base_url=openai_stub.url, retry=FAST)
    with pytest.raises(RemoteError, match="without an API key.*PAQAD_EMBEDDING_API_KEY"):
        p.embed_query("x")


def test_429_with_retry_after_zero_then_success(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(429, "Rate limit reached", {"Retry-After": "0"})]
    waits: list[float] = []
    p = openai(openai_stub, sleep=waits.append)
    np.testing.assert_allclose(p.embed_query("x"), expected(["x"], 8)[0], atol=1e-6)
    assert waits == [0.0]
    assert len(openai_stub.seen) == 2


def test_retry_after_seconds_and_ms_are_honoured(openai_stub: Stub) -> None:
    openai_stub.script = [
        openai_stub.error(429, "slow down", {"Retry-After": "3"}),
        openai_stub.error(503, "overloaded", {"retry-after-ms": "250"}),
    ]
    waits: list[float] = []
    openai(openai_stub, sleep=waits.append).embed_query("x")
    assert waits == [3.0, 0.25]


def test_retry_after_longer_than_paqad_waits_gives_up_at_once(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(429, "quota", {"Retry-After": "3600"})]
    waits: list[float] = []
    with pytest.raises(RemoteError, match="retry after 3600 s.*HTTP 429: quota"):
        openai(openai_stub, sleep=waits.append).embed_query("x")
    assert waits == [] and len(openai_stub.seen) == 1


def test_500_then_success_backs_off_with_jitter(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(500, "The server had an error"), openai_stub.error(502, "bad gateway")]
    waits: list[float] = []
    policy = RetryPolicy(backoff_base_s=1.0, backoff_cap_s=8.0)
    openai(openai_stub, sleep=waits.append, retry=policy).embed_query("x")
    assert len(openai_stub.seen) == 3
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0


def test_500_forever_gives_up_within_bounds(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(500, "The server had an error")] * 50
    started = time.monotonic()
    with pytest.raises(RemoteError, match=r"failed after 4 attempts .*HTTP 500: The server had an error.*--provider local") as caught:
        openai(openai_stub).embed_query("x")
    assert time.monotonic() - started < 3
    assert len(openai_stub.seen) == 4
    assert not leaked(OPENAI_KEY, caught.value)


def test_total_time_budget_bounds_retries(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(500, "down")] * 50
    now = [0.0]
    policy = RetryPolicy(max_attempts=100, max_total_s=30, backoff_base_s=4, backoff_cap_s=8)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with pytest.raises(RemoteError, match="would pass the 30 s budget"):
        openai(openai_stub, retry=policy, sleep=sleep, clock=lambda: now[0]).embed_query("x")
    assert now[0] <= 30 and 3 <= len(openai_stub.seen) <= 8


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    p = OpenAIProvider(base_url=f"http://127.0.0.1:{port}", api_key=OPENAI_KEY, retry=FAST)
    with pytest.raises(RemoteError, match="after 4 attempts.*could not reach 127.0.0.1"):
        p.embed_query("x")


def test_timeout_is_retried_then_reported(openai_stub: Stub) -> None:
    def slow(seen: Seen) -> Reply:
        time.sleep(1.5)
        return openai_stub.answer(seen)

    openai_stub.script = [slow, slow]
    policy = RetryPolicy(max_attempts=2, timeout_s=0.5, backoff_base_s=0.01, backoff_cap_s=0.01)
    started = time.monotonic()
    with pytest.raises(RemoteError, match="after 2 attempts.*(no answer from 127.0.0.1 within 0.5 s|timed out)"):
        openai(openai_stub, retry=policy).embed_query("x")
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    "reply, match",
    [
        ((200, {}, b'{"object": "list", "data": [{"index": 0, "embedd'), "not valid JSON"),
        ((200, {}, b"<html>502 Bad Gateway</html>"), "not valid JSON"),
        ((200, {}, b'{"object": "list"}'), "without a 'data' list"),
        ((200, {}, json.dumps({"data": [{"index": 0, "embedding": [1.0] * 8}] * 2}).encode()), "returned 2 embeddings for 3 inputs"),
        ((200, {}, json.dumps({"data": [{"index": i % 2, "embedding": [1.0] * 8} for i in range(3)]}).encode()), "repeated"),
        ((200, {}, json.dumps({"data": [{"index": i, "embedding": [1.0] * (8 + i)} for i in range(3)]}).encode()), "different lengths"),
        ((200, {}, json.dumps({"data": [{"index": i, "embedding": [1.0] * 4} for i in range(3)]}).encode()), "4 dimensions"),
        ((200, {}, json.dumps({"data": [{"index": i, "embedding": None} for i in range(3)]}).encode()), "without an 'embedding'"),
    ],
)
def test_malformed_answers_are_clear_errors_and_not_retried(openai_stub: Stub, reply: Reply, match: str) -> None:
    openai_stub.script = [reply]
    with pytest.raises(RemoteError, match=match):
        openai(openai_stub).embed_documents(["a", "b", "c"])
    assert len(openai_stub.seen) == 1


def test_other_4xx_is_reported_with_the_service_message(openai_stub: Stub) -> None:
    openai_stub.script = [openai_stub.error(400, f"Invalid model for key {OPENAI_KEY}")]
    with pytest.raises(RemoteError, match=r"refused the request \(HTTP 400\): Invalid model for key \*\*\*") as caught:
        openai(openai_stub).embed_query("x")
    assert caught.value.status == 400 and not leaked(OPENAI_KEY, caught.value)
    openai_stub.script = [openai_stub.error(404, "The model `nope` does not exist")]
    with pytest.raises(RemoteError, match="404 .*check the base URL and the model name"):
        openai(openai_stub, model="nope", dims=8).embed_query("x")


def test_redirects_are_not_followed(openai_stub: Stub) -> None:
    openai_stub.script = [(307, {"Location": "http://127.0.0.1:9/elsewhere"}, b"")]
    with pytest.raises(RemoteError, match=r"redirected the request \(307\) to http://127.0.0.1:9/elsewhere"):
        openai(openai_stub).embed_query("x")
    assert len(openai_stub.seen) == 1


def test_loopback_bypasses_environment_proxies(openai_stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens on the discard port
    openai(openai_stub).embed_query("x")
    assert len(openai_stub.seen) == 1


# -- transport rules -------------------------------------------------------------------------


def test_plain_http_to_another_machine_is_refused_before_any_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a network call was attempted")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(ConfigError, match="plain http:// to another machine"):
        OpenAICompatibleProvider("m", base_url="http://example.invalid", api_key=OPENAI_KEY)
    with pytest.raises(ConfigError, match="plain http://"):
        OpenAIProvider(base_url="http://api.openai.com", api_key=OPENAI_KEY)
    with pytest.raises(ConfigError, match="plain http://"):
        remote_provider("voyageai", base_url="http://10.0.0.5:8080")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://127.1.2.3", "http://localhost:11434/v1", "http://[::1]:8000", "https://example.com", "http://LOCALHOST."])
def test_allowed_urls(url: str) -> None:
    check_url(url)


@pytest.mark.parametrize(
    "url, match",
    [
        ("http://127.0.0.1.evil.example", "plain http"),
        ("http://localhost.example.com", "plain http"),
        ("http://192.168.1.10", "plain http"),
        ("http://[::ffff:10.0.0.1]", "plain http"),
        ("ftp://127.0.0.1/x", "must be an https"),
        ("file:///etc/passwd", "must be an https"),
        ("https://user:sk-secretpassword12345@example.com", "credentials"),
        ("https://example.com/v1?api_key=abc", "query string"),
        ("https://example.com:99999", "not a valid URL"),
    ],
)
def test_refused_urls(url: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as caught:
        check_url(url)
    assert "sk-secretpassword12345" not in str(caught.value)


def test_is_loopback_and_endpoint_url() -> None:
    assert is_loopback("::ffff:127.0.0.1") and not is_loopback("127.0.0.1.nip.io")
    assert endpoint_url("https://api.openai.com") == "https://api.openai.com/v1/embeddings"
    assert endpoint_url("https://api.openai.com/v1/") == "https://api.openai.com/v1/embeddings"
    assert endpoint_url("http://localhost:8080/custom/embeddings") == "http://localhost:8080/custom/embeddings"


def test_key_with_characters_a_header_cannot_carry_is_refused_without_showing_it(openai_stub: Stub) -> None:
    bad = "sk-bad-key-with\nnewline-1234567890"
    with pytest.raises(ConfigError) as caught:
        openai(openai_stub, api_key=bad).embed_query("x")
    assert "newline-1234567890" not in str(caught.value) and openai_stub.seen == []


def test_retry_after_as_an_http_date(openai_stub: Stub) -> None:
    import email.utils

    when = email.utils.formatdate(time.time() + 5, usegmt=True)
    openai_stub.script = [openai_stub.error(503, "busy", {"Retry-After": when})]
    waits: list[float] = []
    openai(openai_stub, sleep=waits.append).embed_query("x")
    assert len(waits) == 1 and 3.0 <= waits[0] <= 5.0
