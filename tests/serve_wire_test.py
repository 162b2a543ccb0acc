"""The service's two lines (ack, reply) leave in one write when the reply follows within the hold,
and the ack still leaves alone, in time, when it does not (``handlers.Held``, issue 34 item 2)."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import paqad
from paqad import config
from paqad.channel import calls, client, litejson, paths, wire
from paqad.search.request import SearchRequest
from paqad.serve import handlers
from testing import serve
from testing.repos import Repo

pytestmark = pytest.mark.usefixtures("serving")


def _first_read(sock: socket.socket) -> bytes:
    """What the client's first read gets: everything queued the moment the socket is readable."""
    select.select([sock], [], [], 10.0)
    return sock.recv(1 << 20)


def test_a_search_through_the_service_gets_its_ack_and_reply_in_the_same_read(shop: Repo) -> None:
    serve.start(shop.root)
    cfg = config.load(shop.root)
    where = paths.for_root(shop.root)
    assert where is not None
    for question in ("where is a charge refunded", "how does a session expire", "payments"):
        request = client.base_request("search", **calls.Search(SearchRequest.from_settings(cfg, shop.root, question)).to_wire())
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(where.socket))
            sock.sendall(wire.encode(request))
            first = _first_read(sock)
            rest = b""
            while chunk := sock.recv(1 << 20):
                rest += chunk
        ack, _, reply = first.partition(b"\n")
        assert litejson.loads(ack) == {"ack": True, "version": paqad.__version__}
        # Before, the ack left before the search ran and the client's first read held it alone.
        assert reply, f"the first read held the ack alone: {first[:200]!r}"
        answer = litejson.loads((reply + rest).rstrip(b"\n"))
        assert answer["ok"] is True and answer["response"]["query"] == question


def test_an_ack_whose_reply_is_late_leaves_alone_within_the_hold_and_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "ACK_HOLD_S", 0.05)
    service_end, client_end = socket.socketpair()
    with service_end, client_end:
        out = handlers.Held(service_end)
        held = [out]
        out.ack({"ack": True, "version": "1", "budget": 1.5})
        assert handlers.flush_acks(held) == out.due and held == [out], "held until its hold is over"
        client_end.setblocking(False)
        with pytest.raises(BlockingIOError):
            client_end.recv(100)  # nothing sent yet
        time.sleep(0.06)
        assert handlers.flush_acks(held) is None and held == []
        client_end.setblocking(True)
        assert _first_read(client_end) == b'{"ack":true,"version":"1","budget":1.5}\n'
        out.reply({"ok": True, "stdout": "x"})
        assert _first_read(client_end) == b'{"ok":true,"stdout":"x"}\n'


def test_an_ack_given_after_its_hold_is_over_is_written_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "ACK_HOLD_S", 0.0)
    service_end, client_end = socket.socketpair()
    with service_end, client_end:
        out = handlers.Held(service_end)
        assert handlers.flush_acks([out]) is None  # nothing to send yet: the operation has not acked
        out.ack({"ack": True, "version": "1"})
        assert _first_read(client_end) == b'{"ack":true,"version":"1"}\n'
        out.done = True
        assert handlers.flush_acks([out]) is None


def test_an_answered_connection_sends_both_lines_in_one_write_and_is_forgotten() -> None:
    service_end, client_end = socket.socketpair()
    with service_end, client_end:
        out = handlers.Held(service_end)
        held = [out]
        out.ack({"ack": True, "version": "1"})
        out.reply({"ok": True, "info": {}})
        out.done = True
        assert _first_read(client_end) == b'{"ack":true,"version":"1"}\n{"ok":true,"info":{}}\n'
        assert handlers.flush_acks(held) is None and held == []


def test_the_accept_loop_never_waits_for_a_worker_writing_and_sends_the_ack_on_its_next_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "ACK_HOLD_S", 0.0)
    service_end, client_end = socket.socketpair()
    with service_end, client_end:
        out = handlers.Held(service_end)
        held = [out]
        with out.lock:  # a worker in the middle of a write (a long reply to a slow reader)
            out.line = b'{"ack":true,"version":"1"}\n'
            started = time.monotonic()
            assert handlers.flush_acks(held) is not None and held == [out], "kept for the next turn"
            assert time.monotonic() - started < 0.5
        assert handlers.flush_acks(held) is None and held == []
        assert _first_read(client_end) == b'{"ack":true,"version":"1"}\n'


def test_a_searchs_reply_carries_the_in_process_response_key_for_key_and_its_bytes(shop: Repo) -> None:
    """The service sends ``handlers.response_wire`` (no copies) where it sent ``to_dict()``: the
    same line, gated and ungated (the door rebuilds the same ``SearchResponse`` from it)."""
    from paqad.repository import Repository

    serve.start(shop.root)
    cfg = config.load(shop.root)
    repo = Repository(shop.root)
    for gate in (True, False):
        for question in ("where is a charge refunded", "how does a session expire", "payments", "zzz nothing like this"):
            request = SearchRequest.from_settings(cfg, shop.root, question, gate=gate)
            outcome = client.request(shop.root, "search", calls.Search(request).to_wire())
            assert outcome.answered and outcome.reply is not None and outcome.reply["ok"] is True, outcome
            here = repo.search(request)
            assert wire.encode(handlers.response_wire(here)) == wire.encode(here.to_dict())
            sent, expected = dict(outcome.reply["response"]), here.to_dict()  # type: ignore[call-overload]
            assert list(sent) == list(expected)
            sent.pop("elapsed_ms"), expected.pop("elapsed_ms")
            assert sent == expected


_ENV_PROBE = """
import json, os, sys
from paqad.channel import wire
print(json.dumps([wire.env_fingerprint(), wire.env_fingerprint(dict(os.environ))]))
"""


def test_the_environments_hash_read_through_its_bytes_is_the_one_read_through_os_environ(tmp_path: Path) -> None:
    """``wire.env_fingerprint`` reads ``os.environ``'s bytes and decodes only what it keeps: a real
    process's hash equals the one of its decoded environment (undecodable bytes included), leaves
    out ``PAQAD_HOOK_BUDGET`` and anything not ``PAQAD_*`` or ``ENV_KEYS``, and moves with a setting."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
    probe = tmp_path / "probe.py"
    probe.write_text(_ENV_PROBE)

    def hashes(extra: dict[bytes, bytes]) -> list[str]:
        env: dict[bytes, bytes] = {os.fsencode(k): os.fsencode(v) for k, v in base.items()}
        env.update(extra)
        done = subprocess.run([sys.executable, str(probe)], env=env, capture_output=True, check=True)
        return json.loads(done.stdout)

    settings = {b"PAQAD_RAG_TOP_N": b"7", b"PAQAD_ODD": b"caf\xc3\xa9 \xff\xfe", b"HOME": b"/somewhere"}
    fast, slow = hashes(settings)
    assert fast == slow
    assert hashes({**settings, b"PAQAD_HOOK_BUDGET": b"9", b"UNRELATED": b"x"})[0] == fast
    assert hashes({**settings, b"PAQAD_RAG_TOP_N": b"8"})[0] != fast
