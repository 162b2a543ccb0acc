"""paqad as a hook repository of the real `pre-commit` framework (`.pre-commit-hooks.yaml`).

pre-commit installs this repository into its own virtualenv with pip (from the package
registry), so these are the slowest tests in the suite: about a minute each with a warm pip cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import workspace
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


def _tagged_clone(dest: Path, tag: str = "v0.1.0") -> Path:
    """A local clone of this repository with ``tag`` on its HEAD (a lightweight tag made here: what
    a release tag will offer; the README's own setup, ``rev: main`` then ``autoupdate``, is
    tests/precommit_readme_test.py)."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(dest)], check=True, capture_output=True, timeout=300)
    # -f: the checkout under test may carry the tag already (a release clone); the clone's HEAD is what is tested
    subprocess.run(["git", *GIT_ID, "tag", "-f", tag], cwd=dest, check=True, capture_output=True)
    return dest


SHIPPING = "def ship_parcel(address):\n    '''Hand the parcel to the courier for this address.'''\n    return address\n"


def test_a_tagged_rev_works_with_no_separate_install(repo, env, tmp_path, paqad_cli):
    """A release tag as `rev`, `pre-commit install`, commit. No `paqad rag
    init` first (pre-commit's own environment is the only paqad): the first commit switches
    retrieval on and builds the index in the background."""
    make_shop(repo)
    source = _tagged_clone(tmp_path / "paqad-src")
    repo.write(".pre-commit-config.yaml", f"repos:\n  - repo: {source}\n    rev: v0.1.0\n    hooks:\n      - id: paqad-update\n")
    proc = subprocess.run([*PRE_COMMIT, "install", "--hook-type", "post-commit"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not (repo.root / ".paqad").exists()
    repo.write("shop/shipping.py", SHIPPING)
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=repo.root, check=True)
    done = subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "shipping"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "paqad index update" in done.stdout + done.stderr and "Passed" in done.stdout + done.stderr
    log = workspace.logs_dir(repo.root) / "hooks.log"
    wait_for(lambda: log.exists() and '"status": "ok"' in log.read_text(), timeout=120)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["event"] == "post-commit" and r["status"] == "ok" and r["detail"].startswith("full") for r in runs), runs
    assert "retrieval-on-from-pre-commit" in (workspace.local_dir(repo.root) / "audit.log").read_text()
    found = paqad_cli("rag", "search", "hand the parcel to the courier", "--json", cwd=repo.root)
    assert json.loads(found.stdout)["results"][0]["name"] == "ship_parcel"


def test_first_use_switches_retrieval_on_once_and_respects_rag_clear(repo, paqad_cli):
    from paqad import config
    from paqad.hooks import precommit

    make_shop(repo)
    assert precommit.switch_on_first_use(repo.root) is True
    assert config.load(repo.root).rag_enabled is True and config.load(repo.root).source("rag_enabled") != "default"
    assert precommit.switch_on_first_use(repo.root) is False
    assert paqad_cli("rag", "clear", "--yes", cwd=repo.root).returncode == 0
    assert precommit.switch_on_first_use(repo.root) is False and config.load(repo.root).rag_enabled is False
