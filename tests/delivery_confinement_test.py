"""Delivery reads live files under the same rule as ``open`` (``paqad.confinement``).

The index is untrusted input: a crafted or copied index can hold a row whose path names ``.env``,
``.git/config``, a file under ``.paqad/`` or an in-repository symlink to one of them. The prompt
hook reads the live file for each result it delivers, so before this rule such a row put the
file's content into the agent's context and into ``session-context.md``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from paqad import workspace
from paqad.index import store
from testing.hosts import run_host
from testing.repos import Repo, make_shop

QUESTION = "retry a card charge with exponential backoff"
SECRET = "sk-live-0123456789abcdef"
TARGETS = [".env", ".git/config", ".paqad/secrets.env", "shop/settings_link.py"]


@pytest.fixture
def crafted(repo: Repo, paqad_cli) -> Repo:
    make_shop(repo)
    (repo.root / ".env").write_text(f"STRIPE_KEY={SECRET}\n" * 40)
    (repo.root / "shop" / "settings_link.py").symlink_to(repo.root / ".env")
    assert paqad_cli("rag", "init", "--provider", "none", cwd=repo.root).returncode == 0
    (workspace.local_dir(repo.root) / "secrets.env").write_text(f"OPENAI_API_KEY={SECRET}\n" * 40)
    with (repo.root / ".git" / "config").open("a") as handle:
        handle.write(f'[remote "leak"]\n\turl = https://user:{SECRET}@example.com/x.git\n')
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    return repo


def point_top_units_at(root: Path, targets: list[str], paqad_cli: Any) -> None:
    """Rewrite the rows the question ranks first so they name the forbidden files, spanning lines 1-30."""
    probe = paqad_cli("rag", "probe", QUESTION, "--json", "--top-n", str(len(targets)), cwd=root)
    ids = [r["id"] for r in json.loads(probe.stdout)["results"]]
    assert len(ids) == len(targets), probe.stdout
    path = store.current_path(root)
    assert path is not None
    con = sqlite3.connect(path)
    with con:
        for unit_id, target in zip(ids, targets):
            con.execute("UPDATE units SET path = ?, start_line = 1, end_line = 30 WHERE id = ?", (target, unit_id))
    con.close()
    found = json.loads(paqad_cli("rag", "search", QUESTION, "--json", cwd=root).stdout)["results"]
    assert {r["path"] for r in found} & set(targets), "the crafted rows must be what search ranks"


def test_the_prompt_hook_never_delivers_files_open_refuses(crafted: Repo, paqad_cli: Any) -> None:
    point_top_units_at(crafted.root, TARGETS, paqad_cli)
    proc = run_host(crafted.root, "claude", prompt=QUESTION)
    assert proc.returncode == 0
    delivered = proc.stdout
    state = workspace.state_dir(crafted.root) / "context.json"
    context_md = workspace.context_dir(crafted.root) / "session-context.md"
    for text in (delivered, state.read_text() if state.exists() else "", context_md.read_text() if context_md.exists() else ""):
        assert SECRET not in text
    if state.exists():
        paths = {p["path"] for p in json.loads(state.read_text())["passages"]}
        assert not paths & set(TARGETS), paths


def test_a_plain_source_file_is_still_delivered(crafted: Repo) -> None:
    """The rule refuses what it must and nothing more: the untouched index still delivers source."""
    proc = run_host(crafted.root, "claude", prompt=QUESTION)
    assert proc.returncode == 0 and "shop/payments.py:L" in proc.stdout and SECRET not in proc.stdout


# ---- issue 31: .git anywhere in the path, and secrets files by common name or path -------------------


@pytest.mark.parametrize(
    "path",
    [
        "vendor/x/.git/config", "vendor/x/.git/HEAD", "shop/../vendor/x/.git/config", "vendor/x/.git", ".git-credentials",
        "config/production.env", "terraform.tfstate", ".docker/config.json", "deploy/.docker/config.json",
    ],
)
def test_open_refuses_git_folders_anywhere_and_secrets_files(repo: Repo, path: str) -> None:
    from paqad import confinement

    make_shop(repo, commit=False)
    nested = repo.root / "vendor" / "x" / ".git"
    nested.mkdir(parents=True)
    (nested / "config").write_text(f"[remote \"origin\"]\n\turl = https://bot:{SECRET}@example.com/x.git\n")
    (nested / "HEAD").write_text("ref: refs/heads/main\n")
    for rel in (".git-credentials", "config/production.env", "terraform.tfstate", ".docker/config.json", "deploy/.docker/config.json"):
        repo.write(rel, f"https://bot:{SECRET}@example.com\n")
    with pytest.raises(confinement.ConfinementError) as refused:
        confinement.readable(repo.root, path)
    assert refused.value.code == "forbidden" and SECRET not in str(refused.value)


def test_open_still_reads_files_named_like_git_or_env_that_are_code(repo: Repo) -> None:
    from paqad import confinement

    make_shop(repo, commit=False)
    for rel in ("tools/gitconfig.py", "app/env.py", "docker/config.json", "shop/.github/workflow.yml"):
        repo.write(rel, "x = 1\n")
        assert confinement.readable(repo.root, rel)[1] == rel
