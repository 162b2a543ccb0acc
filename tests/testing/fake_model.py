"""A fake model endpoint for the real-host tests: a stdlib HTTP server on 127.0.0.1 (a free port)
that records every request and answers just enough of each provider's documented API for an
agent CLI to finish one turn with a short text reply and no tool call.

Why a fake and not a mock: the host CLIs are real programs (installed from npm) that speak HTTP to
their provider; pointing them at this server (``ANTHROPIC_BASE_URL``, a Codex model provider,
``COPILOT_PROVIDER_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``) is the only way to see, byte for byte,
what reached the model, which is what the tests assert on: that paqad's context for this prompt is
in it. Nothing leaves the machine.

Answered routes (anything else gets a 404 and is still recorded):

- Anthropic Messages API, ``POST /v1/messages`` (https://docs.anthropic.com/en/api/messages),
  a text reply, a ``tool_use`` block once (``FakeModel.tool_call``) or a scripted sequence of them
  after paqad's context arrived (``FakeModel.script``), streaming (``"stream": true``: the SSE events ``message_start``, ``content_block_start``,
  ``content_block_delta``, ``content_block_stop``, ``message_delta``, ``message_stop``) and not;
  ``POST /v1/messages/count_tokens``.
- OpenAI Responses API, ``POST /v1/responses`` (https://platform.openai.com/docs/api-reference/responses),
  streaming (``response.created`` … ``response.completed``) and not; Chat Completions,
  ``POST /v1/chat/completions``, streaming (``chat.completion.chunk`` lines, ``[DONE]``) and not;
  ``GET /v1/models``.
- Gemini API, ``POST /v1beta/models/<model>:generateContent``, ``:streamGenerateContent``
  (``alt=sse``: ``data:`` lines; else a JSON array) and ``:countTokens``
  (https://ai.google.dev/api/generate-content).

Paths are matched on their tail, so a provider base URL with or without ``/v1`` works.
"""

from __future__ import annotations

import gzip
import http.server
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

REPLY = "Noted."


@dataclass
class Request:
    """One request as the server received it: method, path (with query), headers, body text."""

    method: str
    path: str
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass
class FakeModel:
    """The running server: ``url`` (``http://127.0.0.1:<port>``) and every ``requests`` seen."""

    url: str = ""
    requests: list[Request] = field(default_factory=list)
    #: Anthropic only: the first request that offers a tool of this name gets one call of it with
    #: this input instead of a text reply (how a test makes Claude Code start a subagent); once.
    tool_call: tuple[str, dict[str, Any]] | None = None
    #: Anthropic only: a sequence of tool calls played in order once a request carries
    #: ``script_after`` (paqad's block): each later request that offers the next call's tool gets
    #: that call (what a test makes the agent do with the context); then text replies.
    script: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    script_after: str = "Retrieved context (paqad)"
    played: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _called: bool = False
    _armed: bool = False
    _server: http.server.ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> FakeModel:
        owner = self

        class Handler(_Handler):
            model = owner

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def take_tool_call(self, body: dict) -> tuple[str, dict[str, Any]] | None:
        """The tool call to answer ``body`` with: the script's next (see ``script``), else
        ``tool_call`` at most once per server."""
        offered = _offered(body)
        with self._lock:
            self._armed = self._armed or (bool(self.script) and self.script_after in json.dumps(body))
            if self._armed and len(self.played) < len(self.script) and self.script[len(self.played)][0] in offered:
                self.played.append(self.script[len(self.played)])
                return self.played[-1]
            if self.tool_call is None or self._called or self.tool_call[0] not in offered:
                return None
            self._called = True
            return self.tool_call

    def model_requests(self) -> list[Request]:
        """The requests that asked the model for a reply (not token counts or model lists)."""
        tails = ("/messages", "/responses", "/chat/completions", ":generateContent", ":streamGenerateContent")
        return [r for r in self.requests if r.method == "POST" and r.path.split("?", 1)[0].endswith(tails)]

    def transcript(self) -> str:
        """Every body the model was asked to reply to, joined: what reached the model."""
        return "\n".join(r.body for r in self.model_requests())

    def summary(self) -> str:
        """One line per request (method, path, body size): for assertion messages."""
        return "; ".join(f"{r.method} {r.path} ({len(r.body)} B)" for r in self.requests) or "no request at all"


class _Handler(http.server.BaseHTTPRequestHandler):
    model: FakeModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the test prints the summary
        return

    # ---- plumbing -----------------------------------------------------------------------------

    def _read(self) -> Request:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self._read_chunked()
        if self.headers.get("Content-Encoding", "").lower() in ("gzip", "deflate"):
            body = _decode(body, self.headers["Content-Encoding"].lower())
        request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items() if k.lower() not in ("authorization", "x-api-key", "x-goog-api-key")}, body.decode("utf-8", "replace"))
        self.model.record(request)
        return request

    def _read_chunked(self) -> bytes:
        out = b""
        while True:
            size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def _send_json(self, data: Any, status: int = 200) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _send_sse(self, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            chunks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        raw = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    # ---- routes -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        request = self._read()
        path = request.path.split("?", 1)[0]
        if path.endswith("/models"):
            self._send_json({"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "paqad-tests"}], "models": []})
        else:
            self._send_json({"error": {"message": f"fake model: no route {path}"}}, 404)

    def do_HEAD(self) -> None:
        self._read()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        request = self._read()
        path = request.path.split("?", 1)[0]
        body = request.json() or {}
        if path.endswith("/messages/count_tokens"):
            self._send_json({"input_tokens": max(1, len(request.body) // 4)})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif path.endswith(":countTokens"):
            self._send_json({"totalTokens": max(1, len(request.body) // 4)})
        elif path.endswith(":generateContent"):
            self._send_json(_gemini_chunk(True, self.model.take_tool_call(body)))
        elif path.endswith(":streamGenerateContent"):
            chunk = _gemini_chunk(True, self.model.take_tool_call(body))
            if "alt=sse" in request.path:
                self._send_sse([(None, chunk)])
            else:
                self._send_json([chunk])
        else:
            self._send_json({"error": {"message": f"fake model: no route {path}"}}, 404)

    def _anthropic(self, body: dict) -> None:
        model = body.get("model") or "fake-model"
        usage = {"input_tokens": 10, "output_tokens": 2, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        call = self.model.take_tool_call(body)
        if call is not None:
            self._anthropic_tool_use(message, *call, stream=bool(body.get("stream")))
            return
        if not body.get("stream"):
            self._send_json({**message, "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn"})
            return
        self._send_sse([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def _anthropic_tool_use(self, message: dict, name: str, arguments: dict[str, Any], stream: bool) -> None:
        block = {"type": "tool_use", "id": f"toolu_fake_{len(self.model.played)}", "name": name, "input": arguments}
        if not stream:
            self._send_json({**message, "content": [block], "stop_reason": "tool_use"})
            return
        self._send_sse([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 20}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def _responses(self, body: dict) -> None:
        model = body.get("model") or "fake-model"
        created = int(time.time())
        call = self.model.take_tool_call(body)
        if call is not None:
            self._responses_call(model, created, *call, stream=bool(body.get("stream")))
            return
        item = {"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 12}
        done = {"id": "resp_fake", "object": "response", "created_at": created, "status": "completed", "model": model, "output": [item], "usage": usage}
        if not body.get("stream"):
            self._send_json(done)
            return
        started = {**done, "status": "in_progress", "output": [], "usage": None}
        empty = {**item, "status": "in_progress", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        self._send_sse([
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": started}),
            ("response.in_progress", {"type": "response.in_progress", "sequence_number": 1, "response": started}),
            ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": empty}),
            ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": 3, "item_id": "msg_fake", "output_index": 0, "content_index": 0, "part": part}),
            ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_fake", "output_index": 0, "content_index": 0, "delta": REPLY}),
            ("response.output_text.done", {"type": "response.output_text.done", "sequence_number": 5, "item_id": "msg_fake", "output_index": 0, "content_index": 0, "text": REPLY}),
            ("response.content_part.done", {"type": "response.content_part.done", "sequence_number": 6, "item_id": "msg_fake", "output_index": 0, "content_index": 0, "part": {**part, "text": REPLY}}),
            ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 7, "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "sequence_number": 8, "response": done}),
        ])

    def _responses_call(self, model: str, created: int, name: str, arguments: dict[str, Any], stream: bool) -> None:
        n = len(self.model.played)
        item = {"id": f"fc_fake_{n}", "type": "function_call", "status": "completed", "call_id": f"call_fake_{n}", "name": name, "arguments": json.dumps(arguments)}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 30}
        done = {"id": f"resp_fake_{n}", "object": "response", "created_at": created, "status": "completed", "model": model, "output": [item], "usage": usage}
        if not stream:
            self._send_json(done)
            return
        started = {**done, "status": "in_progress", "output": [], "usage": None}
        self._send_sse([
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": started}),
            ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {**item, "status": "in_progress", "arguments": ""}}),
            ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": item["id"], "output_index": 0, "delta": item["arguments"]}),
            ("response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "sequence_number": 3, "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]}),
            ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "sequence_number": 5, "response": done}),
        ])

    def _chat(self, body: dict) -> None:
        model = body.get("model") or "fake-model"
        created = int(time.time())
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        call = self.model.take_tool_call(body)
        if call is not None:
            self._chat_call(model, created, usage, *call, stream=bool(body.get("stream")))
            return
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
            self._send_json({"id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": model, "choices": [choice], "usage": usage})
            return
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model}
        self._send_sse([
            (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}),
            (None, {**base, "choices": [{"index": 0, "delta": {"content": REPLY}, "finish_reason": None}]}),
            (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}),
            (None, "[DONE]"),
        ])

    def _chat_call(self, model: str, created: int, usage: dict, name: str, arguments: dict[str, Any], stream: bool) -> None:
        call_id, text = f"call_fake_{len(self.model.played)}", json.dumps(arguments)
        base = {"id": f"chatcmpl-fake-{len(self.model.played)}", "created": created, "model": model}
        if not stream:
            message = {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}]}
            self._send_json({**base, "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}], "usage": usage})
            return
        self._send_sse(_chat_call_events({**base, "object": "chat.completion.chunk"}, call_id, name, text, usage))


def _chat_call_events(base: dict, call_id: str, name: str, arguments: str, usage: dict) -> list[tuple[str | None, Any]]:
    start = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return [
        (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [start]}, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": usage}),
        (None, "[DONE]"),
    ]


def _offered(body: dict) -> set[str]:
    """The tool names a request offers, in the three APIs' shapes (Anthropic and Responses: ``name``;
    Chat Completions: ``function.name``; Gemini: ``functionDeclarations[].name``)."""
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        names.add(str(tool.get("name") or (tool.get("function") or {}).get("name") or ""))
        names.update(str(d.get("name")) for d in tool.get("functionDeclarations") or [] if isinstance(d, dict))
    return names - {""}


def _gemini_chunk(last: bool, call: tuple[str, dict[str, Any]] | None = None) -> dict:
    part: dict[str, Any] = {"functionCall": {"name": call[0], "args": call[1]}} if call else {"text": REPLY}
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}, "modelVersion": "fake-model"}


def _decode(body: bytes, encoding: str) -> bytes:
    """A compressed request body opened (gzip, deflate); anything else kept as sent."""
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error):  # keep the raw bytes: the assertion message shows them
        return body
    return body
