"""A refused runtime folder is said once (issue 31, finding 12): another user (or a mistake)
leaving ``<tmp>/paqad-<uid>`` open to others, as a symlink, or as someone else's folder turns the
resident service off. It stays refused, and now ``paqad serve status`` and ``paqad doctor`` say
so with the fix, while the prompt hook stays silent and logs it once. Real repository, real CLI,
the real Claude hook with its JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from paqad.hooks import runner
from testing.hosts import run_host
from testing.repos import Repo

QUESTION = "where is the session cookie signed with hmac"
CASES = ["open-to-others", "symlink"] + (["another-user"] if os.getuid() == 0 else [])


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs."""
    return "claude"


def _plant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> Path:
    """No XDG_RUNTIME_DIR, a temp folder of the test's own, and ``paqad-<uid>`` in it refused."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", "")
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setenv("PAQAD_RAG_SERVE", "true")
    folder = shared / f"paqad-{os.getuid()}"
    if case == "symlink":
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        folder.symlink_to(target)
    else:
        folder.mkdir()
        folder.chmod(0o755 if case == "open-to-others" else 0o700)
        if case == "another-user":
            os.chown(folder, 4242, 4242)
    return folder


@pytest.mark.parametrize("case", CASES)
def test_serve_status_and_doctor_say_the_runtime_folder_is_refused(shop: Repo, paqad_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    folder = _plant(tmp_path, monkeypatch, case)
    status = paqad_cli("serve", "status", cwd=shop.root)
    assert status.returncode == 0 and f"runtime folder refused: {folder}" in status.stdout and "the resident service is off" in status.stdout, status.stdout
    fix = {"open-to-others": f"chmod 700 {folder}", "symlink": f"remove {folder}", "another-user": "have its owner or an administrator remove"}[case]
    assert fix in status.stdout
    data = json.loads(paqad_cli("serve", "status", "--json", cwd=shop.root).stdout)
    assert data["running"] is False and fix in data["runtime_refused"]["fix"] and str(folder) in data["runtime_refused"]["what"]
    doctor = paqad_cli("doctor", cwd=shop.root)
    [line] = [x for x in doctor.stdout.splitlines() if "runtime folder refused" in x]
    assert line.startswith("warn") and fix in line
    assert os.path.islink(folder) == (case == "symlink") and not (folder / "x").exists()  # still refused, never used


def test_the_prompt_hook_stays_silent_and_logs_the_refusal_once(shop: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _plant(tmp_path, monkeypatch, "open-to-others")
    for n in range(3):
        proc = run_host(shop.root, "claude", prompt=f"{QUESTION} ({n})", session_id=f"s{n}")
        assert proc.returncode == 0 and proc.stderr == ""
        text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "shop/sessions.py:L" in text and "runtime" not in text
    lines = [e for e in runner.read_log(shop.root) if "runtime folder refused" in str(e.get("error"))]
    assert len(lines) == 1 and f"chmod 700 {folder}" in lines[0]["error"], lines
    assert list(folder.iterdir()) == []  # no socket was made in it
