"""Fuzzing ``paqad agent`` (hypothesis): one long-running agent over real pipes, on a real index.

Whatever a line holds (arbitrary bytes, arbitrary JSON, real actions with random parameters),
the session never dies and every input line gets exactly one reply line that parses as JSON
and has the documented shape.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing.env import paqad_exe
from testing.repos import Repo, make_shop

EXE = paqad_exe()
ACTIONS = ["hello", "search", "research", "neighbors", "open", "describe_pending", "describe_put", "stats"]
PARAMS = ["query", "top_n", "budget", "source_chars", "gate", "hops", "per_hop", "unit_id", "direction",
          "path", "start_line", "end_line", "max_lines", "max_bytes", "limit", "offset", "text", "content_hash"]
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Session:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([EXE, "agent", "--root", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def exchange(self, lines: list[bytes]) -> list[dict]:
        """Send every line, then read one reply per line."""
        self.proc.stdin.write(b"".join(line + b"\n" for line in lines))
        self.proc.stdin.flush()
        replies = []
        for _ in lines:
            raw = self.lines.get(timeout=60)
            assert raw.endswith(b"\n"), f"the agent died (exit {self.proc.poll()})"
            replies.append(json.loads(raw))
        assert self.lines.empty(), "more replies than requests"
        return replies


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("fuzz")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
    env.update(HOME=str(base), GIT_CONFIG_NOSYSTEM="1", GIT_TEMPLATE_DIR="")
    repo = make_shop(Repo.init(base / "repo"))
    done = subprocess.run([EXE, "rag", "init", "--provider", "none"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    session = Session(repo.root, env)
    yield session
    session.proc.stdin.close()
    assert session.proc.wait(timeout=60) == 0


def check_shape(reply: dict) -> None:
    assert set(reply) == {"id", "ok", "result"} or set(reply) == {"id", "ok", "error"}, reply
    if reply["ok"]:
        assert isinstance(reply["result"], dict)
    else:
        assert reply["ok"] is False
        assert isinstance(reply["error"]["code"], str) and isinstance(reply["error"]["message"], str)
        assert reply["error"]["code"] != "internal", reply


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
param_values = (
    st.integers(min_value=-(10**30), max_value=10**30) | st.integers(min_value=-3, max_value=300) | st.booleans() | st.none()
    | st.text(max_size=60) | st.sampled_from(["shop/payments.py", "../etc/passwd", "/etc/passwd", ".git/config", "shop",
                                              "shop/payments.py::retry_charge", "both", "in", "retry charge"])
    | st.floats(allow_nan=False, allow_infinity=False) | json_values
)
requests = st.builds(
    lambda rid, action, params: {"id": rid, "action": action, **params},
    json_values,
    st.sampled_from(ACTIONS) | st.text(max_size=12),
    st.dictionaries(st.sampled_from(PARAMS) | st.text(max_size=8), param_values, max_size=5),
)


@FUZZ
@given(st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")), min_size=1, max_size=4))
def test_arbitrary_bytes(agent: Session, lines: list[bytes]) -> None:
    for reply in agent.exchange(lines):
        check_shape(reply)
    assert agent.proc.poll() is None


@FUZZ
@given(st.lists(json_values, min_size=1, max_size=4))
def test_arbitrary_json(agent: Session, values: list) -> None:
    replies = agent.exchange([json.dumps(v).encode() for v in values])
    for value, reply in zip(values, replies):
        check_shape(reply)
        if not isinstance(value, dict):
            assert reply["error"]["code"] == "bad_request"
        elif not isinstance(value.get("action"), str):
            assert reply["error"]["code"] == "bad_request" and reply["id"] == value.get("id")
    assert agent.proc.poll() is None


@FUZZ
@given(st.lists(requests, min_size=1, max_size=3))
def test_real_actions_with_random_params(agent: Session, batch: list[dict]) -> None:
    replies = agent.exchange([json.dumps(r).encode() for r in batch])
    for request, reply in zip(batch, replies):
        check_shape(reply)
        assert reply["id"] == request["id"]
        if request["action"] not in ACTIONS:
            assert reply["error"]["code"] == "unknown_action"
    assert agent.proc.poll() is None
