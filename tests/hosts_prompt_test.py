"""The prompt hook, driven the way each host drives it: its configured command, its JSON on stdin.

Proves it records the prompt first, answers this prompt within the budget, and never blocks or
fails: corrupt index, held lock, no paqad on PATH, no git, garbage input all give exit 0 and
(where the host allows) nothing on stdout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paqad import config
from paqad.delivery import context, prompt, refresh
from paqad.errors import IndexMissingError
from paqad.index import build, store
from testing.env import wait_for
from testing.hosts import host_json, run_host
from testing.repos import Repo, make_shop

QUESTION = "where is the session cookie signed with hmac"


@pytest.fixture
def shop(repo: Repo, paqad_cli) -> Repo:
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    proc = paqad_cli("hooks", "install", "--agents", "all", "--json", cwd=repo.root)
    assert proc.returncode == 0, proc.stderr
    return repo


# ---- hosts that inject on prompt --------------------------------------------------------------


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_prompt_hook_answers_this_prompt_as_hook_specific_output(shop, name):
    proc = run_host(shop.root, name, prompt=QUESTION)
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)  # JSON only (Gemini requires it)
    expected = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}[name]
    assert set(out) == {"hookSpecificOutput"} and out["hookSpecificOutput"]["hookEventName"] == expected
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10_000 and QUESTION in text and "shop/sessions.py:L" in text and "verify" in text
    assert refresh.recorded_prompt(shop.root) == QUESTION
    assert "STALE" not in text


def test_cline_gets_context_modification(shop):
    proc = run_host(shop.root, "cline", prompt=QUESTION)
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["cancel"] is False and "shop/sessions.py:L" in out["contextModification"]


def test_session_start_hands_over_the_last_context(shop):
    run_host(shop.root, "claude", prompt=QUESTION)
    proc = run_host(shop.root, "claude", "session-start")
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "shop/sessions.py:L" in out["additionalContext"]


def test_a_trivial_prompt_prints_nothing_and_keeps_the_recorded_request(shop):
    run_host(shop.root, "claude", prompt=QUESTION)
    proc = run_host(shop.root, "claude", prompt="thanks!")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert refresh.recorded_prompt(shop.root) == QUESTION


def test_code_committed_just_now_is_in_the_next_prompts_context(shop):
    shop.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier service.'''\n    return address\n")
    shop.commit("shipping")
    proc = run_host(shop.root, "claude", prompt="how do we hand the parcel to the courier")
    assert "shop/shipping.py:L1-3" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


# ---- hosts that record on prompt and deliver later -------------------------------------------


@pytest.mark.parametrize(("name", "prompt_out", "key"), [("cursor", {"continue": True}, "additional_context"), ("copilot", None, "additionalContext")])
def test_record_on_prompt_then_deliver_on_tool_use_once(shop, name, prompt_out, key):
    proc = run_host(shop.root, name, prompt=QUESTION)
    assert proc.returncode == 0
    assert (json.loads(proc.stdout) if proc.stdout else None) == prompt_out
    assert refresh.recorded_prompt(shop.root) == QUESTION  # recorded at once
    assert wait_for(lambda: (context.last_delivery(shop.root) or context.Delivery("x", "")).query == QUESTION)  # background refresh
    proc = run_host(shop.root, name, "tool")
    assert "shop/sessions.py:L" in json.loads(proc.stdout)[key]
    proc = run_host(shop.root, name, "tool")
    assert proc.stdout.strip() in ("", "{}")  # each refresh is handed over once, not on every tool call
    proc = run_host(shop.root, name, "session-start")
    assert "shop/sessions.py:L" in json.loads(proc.stdout)[key]


# ---- never blocks, never fails ------------------------------------------------------------------


def test_corrupt_index_prints_nothing_and_exits_0(shop):
    current = store.current_path(shop.root)
    current.write_bytes(b"this is not sqlite" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(current) + suffix).unlink(missing_ok=True)
    proc = run_host(shop.root, "claude", prompt=QUESTION)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "") and proc.seconds < 5


def test_held_writer_lock_does_not_block_the_prompt(shop):
    # A roomier budget than the default keeps this test about the lock, not about a loaded CI box.
    config.set_value(shop.root, "rag_prompt_budget", "4")
    lock = build.writer_lock(shop.root, timeout=5)
    lock.acquire()
    try:
        proc = run_host(shop.root, "claude", prompt=QUESTION)
    finally:
        lock.release()
    assert proc.returncode == 0 and proc.seconds < 8
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]  # the index as it is


def test_without_paqad_on_path_the_hook_is_silent(shop, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(shutil.which(tool))
    for name in ("claude", "codex", "gemini", "cursor", "copilot"):
        proc = run_host(shop.root, name, prompt=QUESTION, path=str(bare))
        assert (proc.returncode, proc.stdout) == (0, ""), name
    proc = run_host(shop.root, "cline", prompt=QUESTION, path=str(bare))
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"cancel": False}


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", '{"prompt": 5}'])
def test_garbage_input_is_silent(shop, payload):
    proc = run_host(shop.root, "claude", stdin=payload)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_outside_git_or_without_paqad_set_up_it_is_silent(tmp_path, repo, paqad_cli):
    for cwd in (tmp_path, repo.root):
        payload = json.dumps(host_json("claude", cwd=cwd, prompt=QUESTION))
        proc = paqad_cli("hook", "run", "prompt-submit", "--host", "claude", cwd=cwd, input=payload)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (tmp_path / ".paqad").exists() and not (repo.root / ".paqad").exists()


def test_an_unknown_host_name_is_silent(shop, paqad_cli):
    proc = paqad_cli("hook", "run", "prompt-submit", "--host", "vim", cwd=shop.root, input="{}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# ---- the budget: in-process, with a slow or cold worker ----------------------------------------


def test_over_budget_hands_over_the_last_context_marked_stale_and_refreshes(shop, monkeypatch):
    cfg = config.load(shop.root)
    refresh.refresh(shop.root, cfg, prompt="retry a charge with backoff")
    monkeypatch.setattr(prompt, "refresh", lambda *a, **k: time.sleep(5))
    spawned = []
    started = time.perf_counter()
    answer = prompt.answer_prompt(shop.root, cfg, QUESTION, 10_000, spawned.append, budget=0.5)
    assert time.perf_counter() - started < 0.6
    assert answer.status == "stale" and spawned == [shop.root]
    assert "STALE" in answer.text and '"retry a charge with backoff"' in answer.text and "ago" in answer.text
    assert refresh.recorded_prompt(shop.root) == QUESTION  # recorded before anything else


def test_cold_index_hands_over_what_there_is_and_refreshes(shop, monkeypatch):
    def cold(*a, **k):
        raise IndexMissingError("no index yet")

    monkeypatch.setattr(prompt, "refresh", cold)
    spawned = []
    answer = prompt.answer_prompt(shop.root, config.load(shop.root), QUESTION, 10_000, spawned.append)
    assert (answer.text, answer.status, spawned) == (None, "stale", [shop.root])


def test_the_hook_log_says_which_path_each_prompt_took(shop, paqad_cli):
    run_host(shop.root, "claude", prompt=QUESTION)
    status = json.loads(paqad_cli("hooks", "status", "--json", cwd=shop.root).stdout)
    run = status["last_prompt_hooks"]["context:claude"]
    assert run["status"] == "live" and run["seconds"] < 1.5


def test_a_killed_background_worker_never_blocks_the_next_prompt_or_commit(shop):
    """Kill the refresh worker at random points (mid-sync, mid-write): the OS lock dies with it, the
    index is the old or the new one, and the next prompt and commit go through."""
    import random
    import signal

    rnd = random.Random(5)
    for i in range(3):
        shop.write(f"shop/extra_{i}.py", f"def parcel_label_{i}(order):\n    '''Print the parcel label number {i} for an order.'''\n    return order\n")
        worker = subprocess.Popen(
            [sys.executable, "-m", "paqad", "--root", str(shop.root), "hook", "run-action", "refresh-context"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        time.sleep(rnd.uniform(0.05, 0.6))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        proc = run_host(shop.root, "claude", prompt=QUESTION)
        assert proc.returncode == 0 and proc.seconds < 10
        assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        started = time.perf_counter()
        shop.commit(f"extra {i}")
        assert time.perf_counter() - started < 10


@pytest.mark.usefixtures("default_provider")
def test_with_the_default_model_the_prompt_hook_answers_within_its_budget(repo, paqad_cli):
    """The shipped default (local vectors): the hook still exits 0 with this prompt's answer, and
    the log says whether the vectors took part or the model was over budget (then: lexical)."""
    make_shop(repo)
    init = json.loads(paqad_cli("rag", "init", "--json", cwd=repo.root).stdout)
    assert init["vectors"]["provider"] == "local" and init["vectors"]["pending"] == 0
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    proc = run_host(repo.root, "claude", prompt=QUESTION)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "sign_cookie" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    run = json.loads(paqad_cli("hooks", "status", "--json", cwd=repo.root).stdout)["last_prompt_hooks"]["context:claude"]
    assert run["status"] == "live" and ("(hybrid" in run["detail"] or "model over budget" in run["detail"])
