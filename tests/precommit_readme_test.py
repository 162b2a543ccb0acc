"""The README's `pre-commit` setup, run exactly as shown, from a fresh clone of this repository's main.

Slow (not a quick unit test): pre-commit pip-installs paqad and its dependencies into its own
environment, a minute or more with a warm pip cache. The README's snippet is read from the clone,
so this checks what a user of main reads; ``<this repository>`` becomes the clone's path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from paqad import workspace
from testing.env import BIN, wait_for
from testing.repos import GIT_ID, Repo, make_shop

REPO = Path(__file__).resolve().parent.parent
SECTION = "### The pre-commit framework"
PLACEHOLDER = "<this repository>"


def readme_steps(readme: str) -> tuple[str, list[str]]:
    """The section's ``.pre-commit-config.yaml`` block and the shell lines of the block after it."""
    section = readme[readme.index(SECTION) :]
    section = section[: section.index("\n### ", len(SECTION))]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL)
    config = next(body for lang, body in blocks if lang == "yaml")
    commands = next(body for lang, body in blocks[blocks.index(("yaml", config)) :] if lang == "sh")
    return config, [line for line in commands.splitlines() if line.strip()]


def test_the_readmes_pre_commit_setup_works_from_a_fresh_clone_of_main(repo: Repo, tmp_path: Path) -> None:
    source = tmp_path / "paqad-main"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", "--branch", "main", str(REPO), str(source)], check=True, capture_output=True, timeout=300)
    main_sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True, check=True).stdout.strip()
    config, commands = readme_steps((source / "README.md").read_text(encoding="utf-8"))
    assert PLACEHOLDER in config and commands and all(c.startswith("pre-commit ") for c in commands)

    make_shop(repo)
    repo.write(".pre-commit-config.yaml", config.replace(PLACEHOLDER, str(source)))
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for line in commands:
        done = subprocess.run(["sh", "-c", line.replace(PLACEHOLDER, str(source))], cwd=repo.root, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    pinned = (repo.root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert re.search(rf"rev: {main_sha}\b", pinned), pinned  # a revision that exists: main's full SHA

    repo.write("shop/shipping.py", "def ship_parcel(address):\n    '''Hand the parcel to the courier.'''\n    return address\n")
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=repo.root, check=True)
    done = subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "shipping"], cwd=repo.root, capture_output=True, text=True, env=env, timeout=900)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "paqad index update" in out and "Passed" in out, out
    log = workspace.logs_dir(repo.root) / "hooks.log"
    wait_for(lambda: log.exists() and '"status": "ok"' in log.read_text(), timeout=180)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["event"] == "post-commit" and r["status"] == "ok" for r in runs), runs
