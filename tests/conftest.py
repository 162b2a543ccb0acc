"""Fixtures that build real git repositories in temp folders and keep the developer's home out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_factory import LEXICAL, Repo

BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config, no templates, no PAQAD_* from the developer's shell."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    for key in list(os.environ):
        if key.startswith("PAQAD_"):
            monkeypatch.delenv(key)
    # Lexical only unless a test asks for the model: embedding every test repository with the
    # real model would take the suite from ~3 to ~10 minutes. The tests of the default itself
    # (and of every provider) say which provider they use, or drop this with `default_provider`.
    for key, value in LEXICAL.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def default_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run with the shipped default embedding provider (the local model), as a user would."""
    for key in LEXICAL:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty real git repository (no commits yet)."""
    return Repo.init(tmp_path / "repo")


@pytest.fixture
def paqad_cli():
    """Run the installed ``paqad`` console script; returns the CompletedProcess."""
    exe = shutil.which("paqad", path=str(BIN)) or shutil.which("paqad")
    assert exe, "the paqad console script is not installed"

    def run(*args: str, cwd: Path, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, input=input, env=full_env, timeout=120)

    return run
