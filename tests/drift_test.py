"""Base-branch drift: throttled ls-remote, fetch only on a moved tip, never a prompt, never a hang."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from pathlib import Path

import pytest

from paqad import config, workspace
from paqad.config import Config
from paqad.delivery import context, drift
from testing.repos import Repo, make_shop

CFG = Config(rag_base_branch="auto", rag_drift_check=True, rag_drift_interval=10.0)


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Repo, Repo]:
    """A bare 'remote', the developer's clone on a feature branch, and a teammate's clone."""
    seed = make_shop(Repo.init(tmp_path / "seed"))
    subprocess.run(["git", "clone", "-q", "--bare", str(seed.root), str(tmp_path / "remote.git")], check=True)
    mine, theirs = Repo(tmp_path / "mine"), Repo(tmp_path / "theirs")
    for clone in (mine, theirs):
        subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(clone.root)], check=True)
    workspace.ensure(mine.root)
    mine.git("checkout", "-q", "-b", "feature")
    mine.write("shop/payments.py", (mine.root / "shop/payments.py").read_text() + "\n# my change\n")
    return mine, theirs


def push_change(theirs: Repo, rel: str, n: int = 1) -> None:
    for i in range(n):
        theirs.write(rel, f"changed {i} {time.time()}\n")
        theirs.commit(f"their change {i}")
    theirs.git("push", "-q", "origin", "main")


def test_a_moved_base_is_fetched_and_reported_with_the_files_you_share(clones):
    mine, theirs = clones
    push_change(theirs, "shop/payments.py", 2)
    push_change(theirs, "docs/other.md")
    result = drift.check(mine.root, CFG)
    assert (result.status, result.behind, result.fetched, result.touched) == ("moved", 3, True, ["shop/payments.py"])
    text = context.context_path(mine.root).read_text()
    assert "## Base drift" in text and "origin/main gained 3 commits" in text and "shop/payments.py" in text


def test_the_check_is_throttled_and_fetch_only_runs_when_the_tip_moved(clones):
    mine, theirs = clones
    first = drift.check(mine.root, CFG)
    assert (first.status, first.fetched) == ("current", False)  # the clone already has the tip
    assert drift.check(mine.root, CFG).status == "throttled"
    push_change(theirs, "README.md")
    assert drift.check(mine.root, CFG).status == "throttled"  # not before the interval is over
    later = drift.check(mine.root, CFG, force=True)
    assert (later.status, later.fetched, later.touched) == ("moved", True, [])
    assert "None of them touch" in context.context_path(mine.root).read_text()


def test_drift_keeps_the_retrieved_context_section(clones):
    mine, _ = clones
    context.write_section(mine.root, context.SECTION, "passages here")
    drift.check(mine.root, CFG)
    text = context.context_path(mine.root).read_text()
    assert "passages here" in text and "## Base drift" in text


def test_no_remote_is_skipped_quietly_and_recorded(repo):
    make_shop(repo)
    workspace.ensure(repo.root)
    result = drift.check(repo.root, CFG)
    assert result.status == "skipped" and "no remote 'origin'" in result.reason
    assert drift.last_check(repo.root)["status"] == "skipped"


def test_the_setting_switches_it_off(clones):
    mine, _ = clones
    assert drift.check(mine.root, dataclasses.replace(CFG, rag_drift_check=False)).status == "off"
    assert not drift.state_path(mine.root).exists()


def fake_ssh(tmp_path: Path, body: str) -> dict[str, str]:
    folder = tmp_path / "fakebin"
    folder.mkdir(exist_ok=True)
    ssh = folder / "ssh"
    ssh.write_text(f"#!/bin/sh\necho \"$@\" > {folder}/args\n{body}\n")
    ssh.chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


def test_a_remote_that_wants_credentials_is_skipped_without_a_prompt(clones, tmp_path, monkeypatch):
    mine, _ = clones
    mine.git("remote", "set-url", "origin", "ssh://git@example.invalid/shop.git")
    for key, value in fake_ssh(tmp_path, 'echo "git@example.invalid: Permission denied (publickey)." >&2\nexit 255').items():
        monkeypatch.setenv(key, value)
    result = drift.check(mine.root, CFG)
    assert result.status == "skipped" and "wants credentials" in result.reason
    assert "BatchMode=yes" in (tmp_path / "fakebin" / "args").read_text()


def test_an_https_remote_that_wants_a_password_is_skipped_fast_without_asking(clones, private_remote, tmp_path, monkeypatch):
    mine, _ = clones
    mine.git("remote", "set-url", "origin", private_remote)
    marker = tmp_path / "asked"
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 30\n")
    askpass.chmod(0o755)
    monkeypatch.setenv("GIT_ASKPASS", str(askpass))
    started = time.perf_counter()
    result = drift.check(mine.root, CFG)
    assert time.perf_counter() - started < 10 and not marker.exists()
    assert result.status == "skipped" and "wants credentials" in result.reason
    assert drift.last_check(mine.root)["status"] == "skipped"


def test_a_hanging_remote_costs_only_the_timeout(clones, tmp_path, monkeypatch):
    mine, _ = clones
    mine.git("remote", "set-url", "origin", "ssh://git@example.invalid/shop.git")
    for key, value in fake_ssh(tmp_path, "sleep 30").items():
        monkeypatch.setenv(key, value)
    started = time.perf_counter()
    result = drift.check(mine.root, CFG, timeout=1.0)
    assert time.perf_counter() - started < 5 and result.status == "skipped" and "timed out" in result.reason


def test_refresh_context_cli_reports_drift(clones, paqad_cli, monkeypatch):
    mine, theirs = clones
    from paqad.cli import main as cli_main

    config.set_value(mine.root, "rag_enabled", "true")
    push_change(theirs, "shop/payments.py")
    assert cli_main.main(["--root", str(mine.root), "rag", "refresh-context", "--prompt", "retry a charge"]) == 0
    assert drift.last_check(mine.root)["status"] == "moved"
