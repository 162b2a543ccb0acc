"""Issue 31, finding 9, end to end: a repository with the 15 common secret shapes in
``app/settings.py`` and the usual secrets files next to it (``config/production.env``,
``terraform.tfstate``, ``.docker/config.json``, ``.git-credentials``, a nested repository's
``vendor/x/.git/config``). After ``paqad rag init`` no secret value is in ``rag search --json``,
in the index database's bytes, or in what the agent's ``open`` hands over.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from paqad.index import store
from testing import secret_samples
from testing.agents import Agent
from testing.repos import Repo, make_shop

QUERIES = [
    "database url password for the shop connection pool",
    "smtp password mail relay settings",
    "aws secret key google maps key stripe secret key",
    "sendgrid api key azure storage account key",
    "gcp service account private key id",
    "github token gitlab token slack bot token",
]


def _pieces(value: str) -> list[str]:
    """The parts of a value that must not appear (the PEM armour lines are not secret)."""
    return [p for p in value.split("\n") if len(p) >= 8 and "PRIVATE KEY" not in p]


def _assert_clean(blob: str, where: str) -> None:
    low = blob.lower()
    for value in secret_samples.all_values():
        for piece in _pieces(value):
            assert piece not in blob and piece.lower() not in low, f"{where} carries a secret piece {piece[:10]}…"


@pytest.fixture
def leaky(repo: Repo, paqad_cli: Any) -> Repo:
    make_shop(repo, commit=False)
    repo.write("app/__init__.py", "")
    repo.write("app/settings.py", secret_samples.settings_py())
    for path, (template, value) in secret_samples.FILES.items():
        repo.write(path, template.format(v=value))
    nested = repo.root / "vendor" / "x"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    with (nested / ".git" / "config").open("a") as handle:
        handle.write(f'[remote "origin"]\n\turl = https://bot:{secret_samples.NESTED_GIT_SECRET}@git.internal/x.git\n')
    (nested / "lib.py").write_text('"""Vendored helper."""\n')
    git = ["git", "-C", str(nested), "-c", "user.name=t", "-c", "user.email=t@x.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "add", "lib.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "vendored"], check=True)  # the outer add records it as an embedded repository
    repo.commit("shop with settings")
    done = paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return repo


def test_search_output_holds_no_secret(leaky: Repo, paqad_cli: Any) -> None:
    paths: set[str] = set()
    for query in QUERIES:
        found = paqad_cli("rag", "search", query, "--json", cwd=leaky.root)
        assert found.returncode == 0, found.stderr
        paths |= {r["path"] for r in json.loads(found.stdout)["results"]}
        _assert_clean(found.stdout, f"rag search {query!r}")
    assert "app/settings.py" in paths, paths  # the searches do return the settings module


def test_the_index_database_holds_no_secret(leaky: Repo) -> None:
    path = store.current_path(leaky.root)
    assert path is not None and path.exists()
    for file in sorted(path.parent.glob(path.name + "*")):  # the database and any -wal / -shm beside it
        _assert_clean(file.read_bytes().decode("latin-1"), f"the index file {file.name}")
    status = subprocess.run(["git", "ls-files"], cwd=leaky.root, capture_output=True, text=True, check=True).stdout
    assert "app/settings.py" in status and "config/production.env" in status  # they were in git, so the indexer saw them


def test_open_masks_the_settings_and_refuses_the_secrets_files(leaky: Repo) -> None:
    agent = Agent(leaky.root)
    try:
        span = agent.call("open", path="app/settings.py", max_lines=500)
        refused = {path: agent.call("open", path=path) for path in [*secret_samples.FILES, "vendor/x/.git/config", "vendor/x/.git/HEAD", "vendor/x/lib.py/../.git/config"]}
    finally:
        assert agent.close() == 0
    text = span["result"]["text"]
    _assert_clean(text, "open app/settings.py")
    assert text.count("\n") == secret_samples.settings_py().count("\n") and text.count("[REDACTED:") == len(secret_samples.SHAPES)
    for path, reply in refused.items():
        assert reply.get("error", {}).get("code") == "forbidden", (path, reply)
        _assert_clean(json.dumps(reply), f"open {path}")


@pytest.mark.parametrize("path", [*secret_samples.FILES, "config/.env.example", "deploy/app.env", "infra/prod.tfstate.backup", "home/.kube/config", ".pgpass"])
def test_secrets_files_are_never_indexed(leaky: Repo, paqad_cli: Any, path: str) -> None:
    if not (leaky.root / path).exists():
        leaky.write(path, "PASSWORD=" + "Zq7" * 8 + "\n")
    explained = paqad_cli("rag", "explain", path, "--json", cwd=leaky.root)
    assert json.loads(explained.stdout)["kept"] is False, explained.stdout
