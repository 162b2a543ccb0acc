"""paqad as a hook repository of the real `pre-commit` framework (`.pre-commit-hooks.yaml`).

pre-commit installs this repository into its own virtualenv with pip (from the package
registry), so this is the slowest test in the suite: about half a minute with a warm pip cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.env import wait_for
from testing.repos import GIT_ID, make_shop

REPO = Path(__file__).resolve().parent.parent
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}


def test_try_repo_runs_the_hook(repo, env):
    make_shop(repo)
    proc = subprocess.run([*PRE_COMMIT, "try-repo", str(REPO), "paqad-update", "--hook-stage", "post-commit"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "paqad index update" in proc.stdout and "Passed" in proc.stdout


def test_installed_post_commit_hook_updates_the_index(repo, env, paqad_cli):
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    config = f"repos:\n  - repo: {REPO}\n    rev: {_head(REPO)}\n    hooks:\n      - id: paqad-update\n"
    repo.write(".pre-commit-config.yaml", config)
    proc = subprocess.run([*PRE_COMMIT, "install", "--hook-type", "post-commit"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    repo.write("shop/shipping.py", "def ship_parcel(address):\n    '''Hand the parcel to the courier for this address.'''\n    return address\n")
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=repo.root, check=True)
    done = subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "shipping"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    log = repo.root / ".paqad" / "logs" / "hooks.log"
    wait_for(lambda: log.exists() and '"status": "ok"' in log.read_text(), timeout=60)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["event"] == "post-commit" and r["status"] == "ok" for r in runs), runs
    found = paqad_cli("rag", "search", "hand the parcel to the courier", "--json", cwd=repo.root)
    assert json.loads(found.stdout)["results"][0]["name"] == "ship_parcel"
