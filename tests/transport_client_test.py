"""paqad.transport: the one HTTP client, against real ``http.server`` instances on 127.0.0.1.

Each server answers from a script (status, headers, body) and records what it was sent, so a test
can say both what the client did (retried, waited, refused) and what reached the wire (how many
requests, which headers). What these cannot show: TLS and proxies to real hosts; the URL policy
that guards those is tested on the URL text, which is all it reads.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from paqad.errors import ConfigError, PaqadError, RemoteError
from paqad.transport import ApiKey, JsonClient, RetryPolicy, error_detail, retry_after

KEY = "sk-test-transport-0123456789abcdefXYZ"
FAST = RetryPolicy(max_attempts=4, max_total_s=10, timeout_s=5, backoff_base_s=0.01, backoff_cap_s=0.05)
Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Server:
    """A scripted JSON service: replies in ``script`` order, then ``{"ok": true}``."""

    script: list[Reply] = field(default_factory=list)
    seen: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


def _serve(server: Server) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            server.seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": json.loads(raw or b"null")})
            status, headers, payload = server.script.pop(0) if server.script else (200, {}, b'{"ok": true}')
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1/thing"
    return httpd


@pytest.fixture
def service() -> Iterator[Server]:
    server = Server()
    httpd = _serve(server)
    yield server
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def elsewhere() -> Iterator[Server]:
    """A second server, the target of redirects: it must never be asked anything."""
    server = Server()
    httpd = _serve(server)
    yield server
    httpd.shutdown()
    httpd.server_close()


def client(url: str, key: str | None = KEY, **options: Any) -> JsonClient:
    options.setdefault("retry", FAST)
    api_key = ApiKey(["PAQAD_TEST_TRANSPORT_KEY"], label="The test service", required=key is not None, environ={}, given=key)
    return JsonClient(url, label="The test service", key=api_key, model="m-1", operation="Test calls", advice=". Try later", **options)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, headers or {}, json.dumps({"error": {"message": message}}).encode()


def test_posts_json_with_the_bearer_key_and_returns_the_answer(service: Server) -> None:
    assert client(service.url).post({"input": ["a"], "n": 1}) == {"ok": True}
    (seen,) = service.seen
    assert seen["path"] == "/v1/thing" and seen["body"] == {"input": ["a"], "n": 1}
    assert seen["headers"]["authorization"] == f"Bearer {KEY}"
    assert seen["headers"]["content-type"] == "application/json" and seen["headers"]["user-agent"].startswith("paqad/")


def test_no_key_sends_no_authorization_header(service: Server) -> None:
    client(service.url, key=None).post({})
    assert "authorization" not in service.seen[0]["headers"]


def test_429_with_retry_after_waits_as_told_then_succeeds(service: Server) -> None:
    service.script = [error(429, "Rate limit reached", {"Retry-After": "2"})]
    waits: list[float] = []
    assert client(service.url, sleep=waits.append).post({}) == {"ok": True}
    assert waits == [2.0] and len(service.seen) == 2


def test_500_then_200_backs_off_within_the_policy_step(service: Server) -> None:
    service.script = [error(500, "boom")]
    waits: list[float] = []
    policy = RetryPolicy(backoff_base_s=1.0, backoff_cap_s=8.0)
    assert client(service.url, retry=policy, sleep=waits.append).post({}) == {"ok": True}
    assert len(service.seen) == 2 and len(waits) == 1 and 0.5 <= waits[0] <= 1.0


def test_5xx_forever_gives_up_with_operation_advice_and_last_error(service: Server) -> None:
    service.script = [error(503, "overloaded")] * 10
    with pytest.raises(RemoteError, match=r"^Test calls failed after 4 attempts in .* s; last error: HTTP 503: overloaded\. Try later$"):
        client(service.url).post({})
    assert len(service.seen) == 4


def test_a_retry_after_past_the_budget_is_not_slept_on(service: Server) -> None:
    service.script = [error(429, "quota", {"Retry-After": "3600"})]
    waits: list[float] = []
    with pytest.raises(RemoteError, match="asked to retry after 3600 s"):
        client(service.url, sleep=waits.append).post({})
    assert waits == [] and len(service.seen) == 1


def test_redirect_is_refused_and_the_key_never_reaches_the_target(service: Server, elsewhere: Server) -> None:
    service.script = [(307, {"Location": elsewhere.url}, b"")]
    with pytest.raises(RemoteError, match=r"redirected the request \(307\) to http://127\.0\.0\.1:\d+/v1/thing; paqad does not follow redirects") as caught:
        client(service.url).post({})
    assert caught.value.status == 307
    assert len(service.seen) == 1 and elsewhere.seen == []


def test_key_echoed_by_the_server_is_redacted_in_every_message(service: Server) -> None:
    service.script = [error(400, f"bad request for key {KEY}")]
    with pytest.raises(RemoteError) as refused:
        client(service.url).post({})
    assert KEY not in str(refused.value) and KEY not in refused.value.detail
    assert "bad request for key ***" in str(refused.value) and refused.value.status == 400
    service.script = [error(500, f"internal error, key={KEY}")] * 4
    with pytest.raises(RemoteError) as gave_up:
        client(service.url).post({})
    assert KEY not in str(gave_up.value) and "key=***" in str(gave_up.value)
    service.script = [error(401, f"Incorrect API key provided: {KEY}")]
    with pytest.raises(RemoteError) as auth:
        client(service.url).post({})
    assert str(auth.value).startswith("The test service rejected the API key (401); set PAQAD_TEST_TRANSPORT_KEY")
    assert KEY not in str(auth.value) and len(service.seen) == 6  # 401 is not retried


def test_answer_that_is_not_json_is_an_error_naming_url_and_model(service: Server) -> None:
    service.script = [(200, {}, b"<html>hi</html>")]
    with pytest.raises(RemoteError, match=r"The test service \(http://127.0.0.1:\d+/v1/thing, model m-1\) answered HTTP 200 with a body that is not valid JSON"):
        client(service.url).post({})


def test_key_a_header_cannot_carry_is_refused_before_sending(service: Server) -> None:
    with pytest.raises(ConfigError, match="characters a header cannot carry") as caught:
        client(service.url, key="sk-bad key with spaces 1234567890").post({})
    assert "spaces 1234567890" not in str(caught.value) and service.seen == []


def test_missing_required_key_names_every_place_to_put_it() -> None:
    key = ApiKey(["FIRST_KEY", "SECOND_KEY"], label="Svc", environ={})
    with pytest.raises(ConfigError, match=r"Svc needs an API key: set FIRST_KEY in the environment, or put FIRST_KEY=\.\.\. in paqad's secrets\.env \(outside the repository"):
        key.get()


def test_api_key_takes_the_first_name_that_is_set_and_hides_it() -> None:
    key = ApiKey(["FIRST_KEY", "SECOND_KEY"], label="Svc", environ={"SECOND_KEY": KEY})
    secret = key.get()
    assert secret is not None and secret.reveal() == KEY
    assert KEY not in repr(key) and KEY not in repr(secret)
    assert ApiKey(["FIRST_KEY", "SECOND_KEY"], label="Svc", environ={"FIRST_KEY": KEY + "1", "SECOND_KEY": KEY}).get().reveal() == KEY + "1"  # type: ignore[union-attr]


def test_plain_http_to_another_machine_is_refused_when_the_client_is_made() -> None:
    with pytest.raises(ConfigError, match="Rerank endpoint 'http://example.invalid/x' uses plain http://"):
        client("http://example.invalid/x", what="Rerank endpoint")


def test_retry_after_forms() -> None:
    assert retry_after({"Retry-After": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert retry_after({"Retry-After": "-4"}) == 0.0
    assert retry_after({"Retry-After": "soon"}) is None and retry_after({}) is None and retry_after(None) is None
    later = retry_after({"Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)})
    assert later is not None and 28 <= later <= 30


def test_error_detail_reads_each_services_shape() -> None:
    assert error_detail(b'{"error": {"message": "openai says"}}') == "openai says"
    assert error_detail(b'{"detail": "voyage says"}') == "voyage says"
    assert error_detail(b'{"message": "cohere says"}') == "cohere says"
    assert error_detail(b"plain\n  text   body") == "plain text body"
    long = error_detail(json.dumps({"detail": "x" * 1000}).encode())
    assert len(long) == 300 and long.endswith("…")


def test_remote_error_is_a_paqad_error_and_still_importable_from_embed_remote() -> None:
    from paqad.embed import remote

    assert issubclass(RemoteError, PaqadError) and remote.RemoteError is RemoteError
    assert RemoteError("x", 418, "teapot").status == 418 and RemoteError("x").exit_code == 1
