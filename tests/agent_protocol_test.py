"""``paqad agent``: the real CLI over pipes, on a real git repository with a real index."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from testing.agents import Agent
from testing.env import paqad_exe
from testing.repos import Repo, make_shop

EXE = paqad_exe()


@pytest.fixture
def agent(shop: Repo):
    running = Agent(shop.root)
    yield running
    if running.proc.poll() is None:
        running.close()


def ok(reply: dict) -> dict:
    assert reply["ok"] is True, reply
    return reply["result"]


def error(reply: dict, code: str) -> str:
    assert reply["ok"] is False, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]["message"]


def test_hello_search_and_stats(agent: Agent) -> None:
    hello = ok(agent.call("hello"))
    assert hello["protocol_version"] == 1
    assert set(hello["actions"]) == {"hello", "search", "research", "neighbors", "open", "describe_pending", "describe_put", "stats"}
    assert hello["actions"]["search"]["params"]["properties"]["top_n"]["maximum"] == 200

    found = ok(agent.call("search", query="retry a card charge with exponential backoff", top_n=3))
    assert found["answered"] is True
    assert found["results"][0]["id"] == "shop/payments.py::retry_charge"
    assert "def retry_charge" in found["results"][0]["source"]

    silent = ok(agent.call("search", query="kubernetes helm chart ingress"))
    assert silent["answered"] is False and silent["results"] == []
    assert silent["diagnosis"]["reason"]

    stats = ok(agent.call("stats"))
    assert stats["protocol_version"] == 1
    assert stats["index"]["built"] is True and stats["index"]["units"] > 5
    assert stats["session"]["requests"] == 4 and stats["session"]["errors"] == 0


BAD_LINES = [
    (b"not json", None, "bad_json"),
    (b"", None, "bad_json"),
    (b"   ", None, "bad_json"),
    (b"\xff\xfe{}", None, "bad_json"),
    (b'{"id": 1, "action": "search", "query": NaN}', None, "bad_json"),
    (b'{"id": 1, "action": "search", "top_n": 1e999, "query": "x"}', None, "bad_json"),
    (b'{"id": 1, "action": "search", "top_n": ' + b"9" * 5000 + b', "query": "x"}', None, "bad_json"),
    (b"[" * 100_000 + b"]" * 100_000, None, "bad_json"),
    (b"[1, 2]", None, "bad_request"),
    (b'"search"', None, "bad_request"),
    (b'{"id": 7}', 7, "bad_request"),
    (b'{"id": "a", "action": 5}', "a", "bad_request"),
    (b'{"id": [1, {"x": null}], "action": "launch"}', [1, {"x": None}], "unknown_action"),
    (b'{"id": 2, "action": "search"}', 2, "bad_params"),
    (b'{"id": 3, "action": "search", "query": 42}', 3, "bad_params"),
    (b'{"id": 4, "action": "search", "query": "   "}', 4, "bad_params"),
    (b'{"id": 5, "action": "search", "query": "x", "top_n": true}', 5, "bad_params"),
    (b'{"id": 6, "action": "search", "query": "x", "top_n": 2.0}', 6, "bad_params"),
    (b'{"id": 8, "action": "search", "query": "x", "top_n": 100000000000000000000000000000}', 8, "bad_params"),
    (b'{"id": 9, "action": "search", "query": "x", "top_n": -1}', 9, "bad_params"),
    (b'{"id": 10, "action": "search", "query": "x", "top-n": 3}', 10, "bad_params"),
    (b'{"id": 11, "action": "search", "query": "' + b"a" * 9000 + b'"}', 11, "bad_params"),
    (b'{"id": 12, "action": "neighbors", "unit_id": "x", "direction": "sideways"}', 12, "bad_params"),
    (b'{"id": 13, "action": "hello", "extra": 1}', 13, "bad_params"),
    (b'{"id": 14, "action": "search", "query": "a\\u0000b"}', 14, "bad_params"),
]


def test_every_bad_line_gets_one_in_band_error_and_the_session_lives(agent: Agent) -> None:
    for line, rid, code in BAD_LINES:
        reply = agent.ask(line)
        error(reply, code)
        assert reply["id"] == rid, line[:80]
    assert error(agent.ask(b'{"id": 1, "action": "search", "query": "x", "top-n": 3}'), "bad_params").startswith("unknown parameter 'top-n'")
    assert ok(agent.call("search", query="sign the session cookie"))["results"][0]["id"] == "shop/sessions.py::sign_cookie"
    reached = sum(1 for _, _, code in BAD_LINES if code not in ("bad_json", "bad_request")) + 1  # unreadable lines never reach an action
    assert ok(agent.call("stats"))["session"]["errors"] == reached
    assert agent.close() == 0


def test_a_line_over_the_cap_is_skipped_in_band(agent: Agent) -> None:
    agent.send(b'{"id": 1, "action": "search", "query": "' + b"x" * (1024 * 1024 + 10) + b'"}')
    assert error(agent.reply(), "line_too_long")
    assert ok(agent.call("search", query="refund an earlier charge"))["results"][0]["id"] == "shop/payments.py::PaymentGateway.refund"


def test_lone_surrogate_id_still_gives_a_valid_json_line(agent: Agent) -> None:
    reply = agent.ask(b'{"id": "\\ud800x", "action": "stats"}')
    assert reply["ok"] is True and reply["id"] == "\ud800x"


def test_end_of_input_ends_the_session_cleanly(shop: Repo) -> None:
    done = subprocess.run([EXE, "agent", "--root", str(shop.root)], input=b'{"id": 1, "action": "stats"}', capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()  # the last request had no newline; it still got its reply
    assert json.loads(line)["result"]["protocol_version"] == 1


def test_without_an_index_search_says_so_in_band(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    running = Agent(repo.root)
    assert "paqad rag init" in error(running.call("search", query="retry charge"), "index_missing")
    assert ok(running.call("stats"))["index"]["built"] is False
    assert running.close() == 0


def test_bad_root_is_a_usage_error(tmp_path: Path, paqad_cli) -> None:
    done = paqad_cli("agent", "--root", str(tmp_path / "missing"), cwd=tmp_path)
    assert done.returncode == 2
    assert "not a directory" in done.stderr


# ---- open ------------------------------------------------------------------------------------


def test_open_returns_bounded_spans(agent: Agent, shop: Repo) -> None:
    span = ok(agent.call("open", path="shop/payments.py", start_line=21, max_lines=2))
    assert span["text"].startswith("def retry_charge(") and span["text"].count("\n") == 2
    assert (span["start_line"], span["end_line"], span["truncated_by"], span["next_start_line"]) == (21, 22, "lines", 23)
    assert span["total_lines"] == len((shop.root / "shop/payments.py").read_text().splitlines())

    tail = ok(agent.call("open", path="shop/payments.py", start_line=27))
    assert tail["truncated"] is False and tail["next_start_line"] is None and tail["end_line"] == tail["total_lines"]

    cut = ok(agent.call("open", path="shop/payments.py", start_line=21, end_line=28, max_bytes=120))
    assert len(cut["text"].encode()) <= 120 and cut["truncated_by"] == "bytes"
    assert cut["next_start_line"] == cut["end_line"] + 1

    tiny = ok(agent.call("open", path="shop/payments.py", start_line=21, max_bytes=10))
    assert tiny["text"] == "def retry_" and tiny["truncated_by"] == "bytes"

    unit = ok(agent.call("open", unit_id="shop/sessions.py::verify_cookie"))
    assert unit["text"].startswith("def verify_cookie(") and unit["truncated"] is False

    error(agent.call("open", path="shop/payments.py", start_line=10_000), "out_of_range")
    error(agent.call("open", path="shop/payments.py", start_line=10**9), "out_of_range")
    error(agent.call("open", path="shop/payments.py", start_line=10**12), "bad_params")
    error(agent.call("open", path="shop/payments.py", start_line=5, end_line=4), "bad_params")
    error(agent.call("open", path="shop/payments.py", max_bytes=10**7), "bad_params")
    error(agent.call("open"), "bad_params")
    error(agent.call("open", path="shop/payments.py", unit_id="shop/payments.py::retry_charge"), "bad_params")
    error(agent.call("open", unit_id="shop/nothing.py::nope"), "not_found")
    error(agent.call("open", path="shop/missing.py"), "not_found")
    error(agent.call("open", path="shop"), "not_a_file")


def test_open_is_confined_to_the_repository(agent: Agent, shop: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP SECRET\n")
    os.symlink(secret, shop.root / "shop" / "link_out.py")
    os.symlink(shop.root / "shop" / "sessions.py", shop.root / "shop" / "link_in.py")
    shop.write("binary.dat", b"\x00\x01\x02" * 10)
    shop.write(".env", "API_KEY=abc\n")
    shop.write("config/id_rsa", "-----BEGIN\n")

    refused = [
        ("../outside.txt", "forbidden"), (str(secret), "forbidden"), ("/etc/passwd", "forbidden"),
        ("shop/../../outside.txt", "forbidden"), ("shop/link_out.py", "forbidden"),
        (".git/config", "forbidden"), ("shop/../.git/HEAD", "forbidden"), (".paqad/vectors/CURRENT", "forbidden"),
        (".env", "forbidden"), ("config/id_rsa", "forbidden"), ("binary.dat", "binary"),
    ]
    for path, code in refused:
        message = error(agent.call("open", path=path), code)
        assert "TOP SECRET" not in message
    assert ok(agent.call("open", path="shop/link_in.py"))["path"] == "shop/sessions.py"


# ---- the index changes under a running session --------------------------------------------


def test_a_running_session_sees_updates_and_rebuilds(agent: Agent, shop: Repo, paqad_cli) -> None:
    before = ok(agent.call("search", query="reconcile the ledger balances"))
    assert before["answered"] is False
    generation = ok(agent.call("stats"))["session"]["index_generation"]

    shop.write("shop/ledger.py", 'def reconcile_ledger(entries: list) -> int:\n    """Reconcile the ledger balances at the end of the day."""\n    return sum(entries)\n')
    shop.commit("ledger")
    assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0

    after = ok(agent.call("search", query="reconcile the ledger balances"))
    assert after["results"][0]["id"] == "shop/ledger.py::reconcile_ledger"
    stats = ok(agent.call("stats"))["session"]
    assert stats["index_changes_seen"] >= 1 and stats["index_generation"] == generation

    assert paqad_cli("rag", "rebuild", cwd=shop.root).returncode == 0
    again = ok(agent.call("search", query="reconcile the ledger balances"))
    assert again["results"][0]["id"] == "shop/ledger.py::reconcile_ledger"
    assert ok(agent.call("stats"))["session"]["index_generation"] != generation


# ---- graph and descriptions ----------------------------------------------------------------


def test_neighbors_follow_the_code_graph(agent: Agent) -> None:
    near = ok(agent.call("neighbors", unit_id="shop/payments.py::retry_charge", direction="out"))
    ids = {n["id"] for n in near["neighbors"]}
    assert "shop/payments.py::PaymentGateway.charge" in ids
    charge = next(n for n in near["neighbors"] if n["id"] == "shop/payments.py::PaymentGateway.charge")
    assert charge["edges"] == [{"src": "shop/payments.py::retry_charge", "type": "calls", "dst": "shop/payments.py::PaymentGateway.charge"}]
    assert "no unit" in error(agent.call("neighbors", unit_id="shop/nothing.py::nope"), "bad_params")
    error(agent.call("neighbors", unit_id="shop/payments.py::retry_charge", hops=4), "bad_params")


def test_research_expands_while_neighbours_add_query_terms(agent: Agent) -> None:
    # top_n=1 answers with PaymentGateway.charge; "retry" is only in its caller retry_charge.
    found = ok(agent.call("research", query="retry charge card processor transaction id", top_n=1))
    assert [r["id"] for r in found["results"]] == ["shop/payments.py::PaymentGateway.charge"]
    caller = next(r for r in found["related"] if r["id"] == "shop/payments.py::retry_charge")
    assert caller["adds_evidence"] is True and "retri" in caller["new_terms"]
    assert caller["edges"][0]["type"] == "calls" and caller["hops"] == 1
    assert found["expansion"]["stopped"] in ("all_terms_covered", "no_new_evidence", "hops")
    assert "retri" not in found["expansion"]["missing_terms"]
    assert all(r["query_terms"] for r in found["related"])  # a neighbour without a query term is never kept

    flat = ok(agent.call("research", query="retry charge card processor transaction id", top_n=1, hops=0))
    assert flat["related"] == [] and flat["expansion"]["stopped"] == "hops"
    silent = ok(agent.call("research", query="kubernetes helm chart ingress"))
    assert silent["related"] == [] and silent["expansion"]["stopped"] == "not_answered"


def test_describe_pending_and_put(agent: Agent, shop: Repo) -> None:
    pending = ok(agent.call("describe_pending", limit=50))
    unit = next(u for u in pending["units"] if u["id"] == "shop/payments.py::PaymentGateway._post")
    stored = ok(agent.call("describe_put", unit_id=unit["id"], text="Sends a request to the card processor.", content_hash=unit["content_hash"]))
    assert stored["stored"] is True
    assert ok(agent.call("describe_pending", limit=50))["total"] == pending["total"] - 1
    assert "stale" in error(agent.call("describe_put", unit_id="shop/sessions.py::sign_cookie", text="Signs.", content_hash="0" * 16), "bad_params")
    error(agent.call("describe_put", unit_id=unit["id"], text=""), "bad_params")
    error(agent.call("describe_pending", limit=0), "bad_params")
