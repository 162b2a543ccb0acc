"""Local HTTP stub servers on 127.0.0.1 (``http.server`` in a thread) for the remote services
paqad speaks to (embeddings, Cohere rerank): no network but loopback at test time. A test gives
the reply logic (``Handle``: the request in, status + headers + body out); this module owns the
server plumbing the embed, rerank and remote-init tests used to copy."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    """One request the stub received: path, headers (names lowercased), the JSON body (None when
    it is not JSON) and the raw bytes."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


Reply = tuple[int, dict[str, str], bytes]
Handle = Callable[[Request], Reply]


def json_reply(status: int, data: Any, headers: dict[str, str] | None = None) -> Reply:
    """A JSON answer for ``Handle`` to return."""
    return status, headers or {}, json.dumps(data).encode()


@dataclass
class Server:
    """A running stub: its base URL, and the requests it has seen (in order)."""

    url: str
    requests: list[Request]
    delay: float = 0.0  # seconds to sleep before answering (a slow service; settable mid-test)


@contextmanager
def serve(handle: Handle) -> Iterator[Server]:
    """Serve POSTs with ``handle`` on a free port of 127.0.0.1 until the block ends. A client that
    gives up mid-answer (a timeout test) is not an error of the stub."""
    seen: list[Request] = []
    server_info = Server("", seen)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
            seen.append(request)
            if server_info.delay:
                time.sleep(server_info.delay)
            status, headers, payload = handle(request)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    server_info.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield server_info
    finally:
        server.shutdown()
        server.server_close()
