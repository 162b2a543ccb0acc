"""A prompt hook's time is the host's time (issue 31, finding 12): counted from process start,
bounded by the budget plus ``hookclock.MARGIN_S`` whatever the service or the input does, and
logged as such. Real services (frozen with SIGSTOP, then SIGKILLed), the real Claude hook command
with its JSON, a host that never closes the hook's stdin."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from paqad import hookclock
from paqad.hooks import runner
from testing import serve
from testing.env import BIN
from testing.hosts import configured_command, host_json, run_host
from testing.repos import Repo

QUESTION = "where is the session cookie signed with hmac"
BUDGET_S = 1.5  # rag_prompt_budget's default
SLACK_S = 0.6  # sh, the launcher and the interpreter before /proc's start time is taken, and exit


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs."""
    return "claude"


def _last(root: Path) -> dict:
    return [e for e in runner.read_log(root) if e.get("action") == "context:claude"][-1]


@pytest.mark.usefixtures("serving")
def test_a_service_frozen_mid_request_then_killed_costs_the_budget_and_the_log_says_the_hosts_time(shop: Repo) -> None:
    pid = serve.start(shop.root)
    os.kill(pid, signal.SIGSTOP)  # accepts (the kernel's backlog), never acknowledges
    try:
        done = run_host(shop.root, "claude", prompt=QUESTION)
    finally:
        os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0 and "shop/sessions.py:L" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert done.seconds <= BUDGET_S + hookclock.MARGIN_S + SLACK_S, done.seconds
    entry = _last(shop.root)
    assert entry["mode"] == "foreground" and "seconds from process start" in entry["detail"] and entry["detail"].endswith("service: hung")
    # The process start is known to one clock tick (1/CLK_TCK s, /proc/self/stat): the log may run past the host's clock by that much.
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert done.seconds - 0.35 <= entry["seconds"] <= done.seconds + tick, (entry["seconds"], done.seconds)


def test_a_host_that_never_closes_stdin_waits_at_most_the_budget_and_the_margin(shop: Repo) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    started = time.monotonic()
    proc = subprocess.Popen(["sh", "-c", configured_command(shop.root, "claude")], cwd=shop.root, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(host_json("claude", "prompt", cwd=shop.root, prompt=QUESTION)).encode())
    proc.stdin.flush()  # and never closed, as a host that waits for the hook before closing it
    try:
        proc.wait(timeout=BUDGET_S + hookclock.MARGIN_S + 8)  # not communicate(): it would close stdin
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the hook was still running past the host's timeout")
    finally:
        wall = time.monotonic() - started
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert wall <= BUDGET_S + hookclock.MARGIN_S + SLACK_S, wall
    assert proc.returncode == 0 and out == b"" and err == b""  # no input to answer: silent



@pytest.mark.usefixtures("serving")
def test_a_prompt_the_service_answers_is_logged_from_the_hooks_process_start(shop: Repo) -> None:
    serve.start(shop.root)
    run_host(shop.root, "claude", prompt="how is a card charge refunded", session_id="warm")  # the service's first search
    done = run_host(shop.root, "claude", prompt=QUESTION, session_id="timed")
    assert done.returncode == 0 and "shop/sessions.py:L" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    entry = _last(shop.root)
    assert entry["mode"] == "service" and "seconds from process start" in entry["detail"], entry
    assert done.seconds - 0.25 <= entry["seconds"] <= done.seconds + 1 / os.sysconf("SC_CLK_TCK"), (entry["seconds"], done.seconds)  # one clock tick, as above
