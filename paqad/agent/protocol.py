"""The JSON-lines agent protocol: one JSON request per line in, exactly one JSON reply per line out.

Request: ``{"id": <any JSON>, "action": "<name>", ...params}``. Reply, flushed at once:
``{"id": <echoed>, "ok": true, "result": {...}}`` or
``{"id": <echoed>, "ok": false, "error": {"code": "...", "message": "..."}}``.
``hello`` and ``stats`` report ``protocol_version``.

Nothing a client sends ends the session: a line that is not UTF-8, not JSON, not an object, too
long (``MAX_LINE_BYTES``; the rest of that line is skipped), nested too deep, carrying ``NaN`` or
an out-of-range number, naming an unknown action or wrong parameters gets an in-band error reply
(``id`` is ``null`` when the line could not be read). A blank line is a request too (``bad_json``),
so a client can always count replies. End of input ends the session cleanly (exit 0).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, BinaryIO

from paqad.agent.ops import OpError, Session

if TYPE_CHECKING:
    from paqad.jsontypes import JSON, JSONObject

MAX_LINE_BYTES = 1024 * 1024
_DISCARD_CHUNK = 64 * 1024


def serve(session: Session, stdin: BinaryIO, stdout: BinaryIO, max_line: int = MAX_LINE_BYTES) -> int:
    """Answer requests until end of input (or the client closes our output); returns the exit code."""
    while True:
        line, too_long = read_line(stdin, max_line)
        if line is None:
            return 0
        reply = _error(None, "line_too_long", f"request line is over {max_line} bytes; it was skipped") if too_long else handle(session, line)
        try:
            stdout.write(encode(reply))
            stdout.flush()
        except (BrokenPipeError, ValueError):  # the client went away (ValueError: stream closed)
            return 0


def read_line(stream: BinaryIO, max_line: int) -> tuple[bytes | None, bool]:
    """The next line without reading more than ``max_line`` bytes of it into memory;
    (None, False) at end of input, (b"", True) for a line that was too long (skipped to its end)."""
    data = stream.readline(max_line + 1)
    if not data:
        return None, False
    if len(data) > max_line and not data.endswith(b"\n"):
        while True:
            rest = stream.readline(_DISCARD_CHUNK)
            if not rest or rest.endswith(b"\n"):
                return b"", True
    return data, False


def handle(session: Session, line: bytes) -> JSONObject:
    """One request line → one reply object (never raises for anything the line contains)."""
    try:
        request = parse(line)
    except ValueError as exc:
        return _error(None, "bad_json", str(exc))
    if not isinstance(request, dict):
        return _error(None, "bad_request", f"a request is a JSON object with an \"action\"; got a JSON {type(request).__name__}")
    rid = request.get("id")
    action = request.get("action")
    if not isinstance(action, str):
        return _error(rid, "bad_request", "\"action\" is missing or not a string; send {\"id\": 1, \"action\": \"hello\"} to list the actions")
    try:
        return {"id": rid, "ok": True, "result": session.call(action, request)}
    except OpError as exc:
        return {"id": rid, "ok": False, "error": exc.to_dict()}


def parse(line: bytes) -> JSON:
    """Strict JSON: UTF-8, no NaN/Infinity, no number that overflows to infinity, bounded depth."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"request line is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ValueError("empty line; send one JSON object per line")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("request nests too deeply") from None
    except ValueError as exc:
        raise ValueError(f"request line is not valid JSON ({str(exc)[:200]})") from None


def encode(reply: JSONObject) -> bytes:
    """One reply line. Falls back to ASCII escapes (a lone surrogate in an echoed id) and, if the
    echoed id cannot be written at all, to ``id: null``: a reply line is always valid JSON."""
    for attempt in (reply, {**reply, "id": None}):
        for ascii_only in (False, True):
            try:
                text = json.dumps(attempt, ensure_ascii=ascii_only, allow_nan=False, separators=(",", ":"), default=str)
                return (text + "\n").encode("utf-8")
            except UnicodeEncodeError:
                continue
            except (ValueError, TypeError, RecursionError):
                break
    return encode(_error(None, "internal", "the reply could not be written as JSON"))


def _error(rid: JSON, code: str, message: str) -> JSONObject:
    return {"id": rid, "ok": False, "error": {"code": code, "message": message}}


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:24]} is out of range")
    return value
