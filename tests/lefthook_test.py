"""lefthook owns the hooks: paqad installs through `lefthook-local.yml`, tested with the real
lefthook binary from the npm registry, and a real `git commit` runs paqad's update."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import workspace
from paqad.hooks import gitshims as githooks
from paqad.hooks import lefthook
from testing.env import wait_for
from testing.repos import GIT_ID, make_shop

TEAM = "pre-commit:\n  commands:\n    lint:\n      run: echo lint  # the team's own hook\n"


@pytest.fixture(scope="module")
def lefthook_bin(tmp_path_factory) -> Path:
    npm = shutil.which("npm")
    assert npm, "npm is needed to bring the real lefthook"
    folder = tmp_path_factory.mktemp("lefthook")
    subprocess.run([npm, "install", "--silent", "--no-audit", "--no-fund", "lefthook@1"], cwd=folder, check=True, timeout=300, capture_output=True)
    return folder / "node_modules" / ".bin"


def test_install_writes_only_lefthook_local_and_uninstall_restores(repo):
    make_shop(repo)
    repo.write("lefthook.yml", TEAM)
    local_before = "# my local tweaks\npre-push:\n  commands:\n    slow:\n      run: echo slow\n"
    repo.write("lefthook-local.yml", local_before)
    states = githooks.install(repo.root)
    assert {s.action for s in states} == {"installed"} and githooks.status(repo.root)["manager"] == "lefthook"
    text = (repo.root / "lefthook-local.yml").read_text()
    assert text.startswith(local_before) and "paqad hook run post-commit" in text
    assert (repo.root / "lefthook.yml").read_text() == TEAM
    assert {s.action for s in githooks.install(repo.root)} == {"unchanged"}
    githooks.uninstall(repo.root)
    assert (repo.root / "lefthook-local.yml").read_text() == local_before


def test_a_local_file_that_already_configures_our_event_is_refused(repo):
    repo.write("lefthook.yml", TEAM)
    repo.write("lefthook-local.yml", "post-commit:\n  commands:\n    mine:\n      run: echo mine\n")
    with pytest.raises(Exception, match="already configures post-commit"):
        githooks.install(repo.root)
    assert "paqad" not in (repo.root / "lefthook-local.yml").read_text()


def test_real_lefthook_runs_paqad_after_commit(repo, lefthook_bin, paqad_cli):
    make_shop(repo)
    repo.write("lefthook.yml", TEAM)
    venv_bin = Path(sys.executable).parent  # where the paqad console script is installed
    env = {**os.environ, "PATH": f"{lefthook_bin}:{venv_bin}:{os.environ['PATH']}"}
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    proc = paqad_cli("hooks", "install", "--agents", "none", cwd=repo.root, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "lefthook" in (repo.root / ".git" / "hooks" / "post-commit").read_text()  # lefthook's own hook
    repo.write("shop/shipping.py", "def ship_parcel(address):\n    '''Hand the parcel to the courier for this address.'''\n    return address\n")
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=repo.root, check=True)
    done = subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "shipping"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    log = workspace.logs_dir(repo.root) / "hooks.log"
    wait_for(lambda: log.exists() and '"status": "ok"' in log.read_text(), timeout=60)
    assert any(json.loads(line)["status"] == "ok" for line in log.read_text().splitlines())
    found = paqad_cli("rag", "search", "hand the parcel to the courier", "--json", cwd=repo.root)
    assert json.loads(found.stdout)["results"][0]["name"] == "ship_parcel"
    # lefthook regenerating the hooks keeps paqad: the block lives in its own configuration
    subprocess.run([str(lefthook_bin / "lefthook"), "install"], cwd=repo.root, env=env, check=True, capture_output=True)
    assert lefthook.installed(repo.root)
