"""The hook runner: config validation, foreground/background runs, single-flight, debounce, logs."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from paqad import hooklog, workspace
from paqad.errors import ConfigError
from paqad.hooks import runner


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace.ensure(tmp_path)
    return tmp_path


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Register test actions: ``record`` appends to the list, ``boom`` raises, ``slow`` sleeps."""
    seen: list[str] = []

    def record(root: Path) -> str:
        seen.append(str(root))
        return "recorded"

    def boom(root: Path) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    def slow(root: Path) -> None:
        time.sleep(3)

    monkeypatch.setitem(runner.ACTIONS, "record", record)
    monkeypatch.setitem(runner.ACTIONS, "boom", boom)
    monkeypatch.setitem(runner.ACTIONS, "slow", slow)
    return seen


def write_hooks(root: Path, text: str) -> None:
    (root / ".paqad" / "hooks.yaml").write_text(text, encoding="utf-8")


# ---- configuration ------------------------------------------------------------------------------


def test_defaults_without_a_file(root):
    cfg = runner.load_config(root)
    assert cfg["post-commit"] == (runner.ActionSpec("rag-update", timeout=300, background=True, debounce=2),)
    assert set(cfg) == set(runner.EVENTS) and cfg["prompt-submit"] == ()


def test_default_yaml_round_trips_to_the_defaults(root):
    assert runner.write_default_config(root) is True
    assert runner.write_default_config(root) is False  # never overwritten
    assert runner.load_config(root) == runner.DEFAULTS
    assert oct(runner.hooks_path(root).stat().st_mode & 0o777) == "0o644"  # committed, readable by all


def test_file_overrides_per_event_and_can_switch_one_off(root, calls):
    write_hooks(root, "post-commit:\n  - action: record\n    background: false\n    timeout: 5\n    debounce: 0\npost-checkout: []\n")
    cfg = runner.load_config(root)
    assert cfg["post-commit"] == (runner.ActionSpec("record", timeout=5.0, background=False, debounce=0.0),)
    assert cfg["post-checkout"] == () and cfg["post-merge"] == runner.DEFAULTS["post-merge"]


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("post-comit: [rag-update]\n", ["unknown event 'post-comit'", "post-commit"]),
        ("post-commit: [rag-updat]\n", ["event 'post-commit'", "key 'action'", "unknown action 'rag-updat'", "rag-update"]),
        ("post-commit:\n  - action: rag-update\n    timeout: soon\n", ["event 'post-commit'", "action 'rag-update'", "key 'timeout'", "'soon'"]),
        ("post-commit:\n  - action: rag-update\n    timeout: 0\n", ["key 'timeout'", "more than 0"]),
        ("post-commit:\n  - action: rag-update\n    debounce: -1\n", ["key 'debounce'", "-1"]),
        ("post-commit:\n  - action: rag-update\n    background: yes please\n", ["key 'background'", "true or false"]),
        ("post-commit:\n  - action: rag-update\n    timeout: true\n", ["key 'timeout'", "True"]),
        ("post-commit:\n  - action: rag-update\n    retries: 3\n", ["action 'rag-update'", "unknown key 'retries'"]),
        ("post-commit: [rag-update, rag-update]\n", ["listed twice"]),
        ("post-commit: rag-update\n", ["event 'post-commit'", "expected a list"]),
        ("- post-commit\n", ["expected a mapping"]),
        ("post-commit: [\n", ["cannot read it"]),
    ],
)
def test_invalid_files_name_file_event_action_and_key(root, text, needles):
    write_hooks(root, text)
    with pytest.raises(ConfigError) as info:
        runner.load_config(root)
    message = str(info.value)
    assert str(runner.hooks_path(root)) in message
    for needle in needles:
        assert needle in message, message


def test_a_broken_file_is_logged_and_run_event_still_returns(root):
    write_hooks(root, "post-commit: [nope]\n")
    results = runner.run_event(root, "post-commit")
    assert [(r.status, r.exit) for r in results] == [("error", 2)]
    assert "unknown action 'nope'" in runner.read_log(root)[-1]["error"]


def test_unknown_event_is_an_error_result_not_an_exception(root):
    assert runner.run_event(root, "pre-push")[0].status == "error"


def test_nothing_runs_or_is_written_where_paqad_is_not_set_up(tmp_path, calls):
    assert runner.run_event(tmp_path, "post-commit") == []
    assert not (tmp_path / ".paqad").exists()


# ---- foreground runs ----------------------------------------------------------------------------


def test_foreground_run_is_logged_with_duration_and_exit(root, calls):
    write_hooks(root, "post-commit:\n  - {action: record, background: false, debounce: 0}\n")
    [result] = runner.run_event(root, "post-commit")
    assert (result.status, result.exit, result.detail) == ("ok", 0, "recorded") and calls == [str(root)]
    [line] = runner.read_log(root)
    assert {k: line[k] for k in ("event", "action", "mode", "status", "exit", "error")} == {
        "event": "post-commit", "action": "record", "mode": "foreground", "status": "ok", "exit": 0, "error": None,
    }
    assert line["seconds"] >= 0 and line["ts"].endswith("Z")


def test_a_failing_action_never_raises_and_the_next_one_still_runs(root, calls):
    write_hooks(root, "post-merge:\n  - {action: boom, background: false}\n  - {action: record, background: false}\n")
    results = runner.run_event(root, "post-merge")
    assert [r.status for r in results] == ["failed", "ok"]
    assert results[0].exit == 1 and results[0].error == "RuntimeError: disk on fire second line"
    assert runner.last_runs(root)["boom"]["error"].startswith("RuntimeError")


def test_foreground_timeout_returns_within_budget(root, calls):
    write_hooks(root, "prompt-submit:\n  - {action: slow, background: false, timeout: 0.3}\n")
    started = time.monotonic()
    [result] = runner.run_event(root, "prompt-submit")
    assert time.monotonic() - started < 2
    assert result.status == "timeout" and result.exit is None and "0.3s" in result.error


def test_foreground_debounce_skips_a_second_run_inside_the_window(root, calls):
    write_hooks(root, "post-commit:\n  - {action: record, background: false, debounce: 30}\n")
    first, second = runner.run_event(root, "post-commit") + runner.run_event(root, "post-commit")
    assert (first.status, second.status) == ("ok", "debounced") and len(calls) == 1
    assert runner.last_start(root, "record") == pytest.approx(time.time(), abs=5)


def test_single_flight_a_second_run_coalesces_and_the_holder_reruns_once(root, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def blocking(root: Path) -> None:
        runs.append(1)
        entered.set()
        release.wait(5)

    monkeypatch.setitem(runner.ACTIONS, "blocking", blocking)
    write_hooks(root, "post-commit:\n  - {action: blocking, background: false, debounce: 0}\n")
    holder = threading.Thread(target=runner.run_event, args=(root, "post-commit"))
    holder.start()
    assert entered.wait(5)
    second = runner.run_event(root, "post-commit")
    third = runner.run_event(root, "post-commit")
    assert [r.status for r in second + third] == ["coalesced", "coalesced"]
    release.set()
    holder.join(10)
    assert len(runs) == 2  # the holder ran once more for both requests, not twice more
    statuses = [e["status"] for e in runner.read_log(root)]
    assert statuses.count("coalesced") == 2 and statuses.count("ok") == 2


def test_claim_leaves_a_rerun_request_when_held(root):
    lock = runner.claim(root, "rag-update")
    assert lock is not None
    assert runner.claim(root, "rag-update") is None
    assert (workspace.state_dir(root) / "hook-rag-update.rerun").exists()
    lock.release()
    again = runner.claim(root, "rag-update")
    assert again is not None
    again.release()


# ---- background runs ----------------------------------------------------------------------------


def test_background_spawns_a_detached_child_with_a_clean_environment(root, tmp_path, monkeypatch):
    """The child gets no GIT_DIR / GIT_INDEX_FILE (they would point its git at the wrong repository)."""
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/.git/index")
    monkeypatch.setenv("GIT_WORK_TREE", "/elsewhere")
    dump = tmp_path / "env.json"
    code = "import json, os, sys; json.dump({'env': dict(os.environ), 'sid': os.getsid(0), 'cwd': os.getcwd()}, open(sys.argv[1], 'w'))"
    runner.spawn([sys.executable, "-c", code, str(dump)], root)
    deadline = time.monotonic() + 20
    while not (dump.exists() and dump.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)
    data = json.loads(dump.read_text())
    assert not {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"} & set(data["env"])
    assert data["env"]["GIT_TERMINAL_PROMPT"] == "0"
    assert data["sid"] != os.getsid(0)  # its own session: a terminal's ^C or hang-up does not reach it
    assert Path(data["cwd"]) == workspace.local_dir(root)  # never the repository: nothing there can be picked up as code


def test_background_event_starts_the_child_with_this_interpreter(root, monkeypatch):
    started: list[list[str]] = []
    monkeypatch.setattr(runner, "spawn", lambda argv, where: started.append(argv) or 4242)
    [result] = runner.run_event(root, "post-commit")
    assert (result.status, result.mode, result.detail) == ("started", "background", "pid 4242")
    assert started == [[sys.executable, "-P", "-m", "paqad", "--root", str(root), "hook", "run-action", "rag-update", "--event", "post-commit"]]


def test_background_event_coalesces_while_the_action_runs(root, monkeypatch):
    monkeypatch.setattr(runner, "spawn", lambda argv, where: pytest.fail("must not start a second child"))
    lock = runner.claim(root, "rag-update")
    try:
        [result] = runner.run_event(root, "post-rewrite")
    finally:
        lock.release()
    assert result.status == "coalesced"
    assert (workspace.state_dir(root) / "hook-rag-update.rerun").exists()


def test_spawn_failure_is_logged_not_raised(root, monkeypatch):
    def broken(argv, where):
        raise OSError("fork failed")

    monkeypatch.setattr(runner, "spawn", broken)
    [result] = runner.run_event(root, "post-commit")
    assert (result.status, result.exit) == ("error", 1) and "fork failed" in result.error


def test_run_action_holds_the_lock_for_the_debounce_window_then_reruns(root, calls, monkeypatch):
    """The child body: a request arriving inside the window is served by one trailing run."""
    write_hooks(root, "post-commit:\n  - {action: record, debounce: 0.6}\n")
    timer = threading.Timer(0.2, lambda: runner.claim(root, "record"))  # another event, mid-window
    timer.start()
    results = runner.run_action(root, "post-commit", "record")
    timer.join()
    assert [r.status for r in results] == ["ok", "ok"] and len(calls) == 2
    assert all(r.mode == "background" for r in results)


def test_run_action_with_an_unknown_action_is_logged(root):
    [result] = runner.run_action(root, "post-commit", "nope")
    assert result.status == "error" and "unknown action 'nope'" in result.error


def test_rag_update_is_a_no_op_while_retrieval_is_off(root):
    assert runner.ACTIONS["rag-update"](root).startswith("skipped: retrieval is off")


def test_log_rotates_past_its_size_limit(root, monkeypatch):
    monkeypatch.setattr(hooklog, "LOG_MAX_BYTES", 200)
    for _ in range(5):
        runner.log_result(root, runner.RunResult("post-commit", "rag-update", "background", "ok", 0))
    assert (workspace.logs_dir(root) / "hooks.log.1").exists()
    assert len(runner.read_log(root)) < 5
