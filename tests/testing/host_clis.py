"""The real agent-host CLIs the end-to-end tests drive, installed from npm at the versions pinned
in ``tests/hosts-e2e/package-lock.json`` by ``tests/hosts-e2e/install.sh``.

The install lives outside the checkout, in a per-user cache folder named after the lockfile's
hash (a gigabyte, reused between runs). This module computes the same folder as the script, from
the environment this process started with: the suite's fixtures give every test a fresh HOME and
XDG_CACHE_HOME, which must not move the install.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

E2E = Path(__file__).resolve().parent.parent / "hosts-e2e"
LOCKFILE = E2E / "package-lock.json"
INSTALL = "bash tests/hosts-e2e/install.sh"
#: host name -> (npm package, its command)
PACKAGES = {
    "claude": ("@anthropic-ai/claude-code", "claude"),
    "codex": ("@openai/codex", "codex"),
    "gemini": ("@google/gemini-cli", "gemini"),
    "copilot": ("@github/copilot", "copilot"),
    "qwen": ("@qwen-code/qwen-code", "qwen"),
    "cline": ("cline", "cline"),
    "opencode": ("opencode-ai", "opencode"),
    # The 0.225.1 launcher finds its platform binary as a package; npm has no
    # @factory/cli-linux-x64@0.225.1 (E404; 0.215.0 and 0.225.2 around it), so the lockfile adds the
    # 0.225.2 binary as an optional dependency (linux x64 only), and that is the Droid that runs.
    "droid": ("@factory/cli", "droid"),
}

_ENV = dict(os.environ)  # as the run started, before any fixture moved HOME


def install_dir() -> Path:
    """Where install.sh puts (or put) the CLIs for this lockfile."""
    base = _ENV.get("PAQAD_HOSTS_E2E_CACHE") or str(Path(_ENV.get("XDG_CACHE_HOME") or Path(_ENV.get("HOME", "~")).expanduser() / ".cache") / "paqad" / "hosts-e2e")
    digest = hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()[:16]
    return Path(base) / digest


def version(host: str) -> str:
    """The pinned version of ``host``'s CLI (from the lockfile)."""
    data = json.loads(LOCKFILE.read_text(encoding="utf-8"))
    version = str(data["packages"][f"node_modules/{PACKAGES[host][0]}"]["version"])
    binary = data["packages"].get("node_modules/@factory/cli-linux-x64") if host == "droid" else None
    return f"{version} (binary {binary['version']})" if binary else version


def cli(host: str) -> Path:
    """The installed command of ``host``; fails the test (one line) when the install step has not run."""
    folder = install_dir()
    exe = folder / "node_modules" / ".bin" / PACKAGES[host][1]
    if not (folder / ".installed").is_file() or not exe.exists():
        pytest.fail(f"{PACKAGES[host][0]} {version(host)} is not installed: run `{INSTALL}` first (npm ci of {LOCKFILE.name} into {folder})", pytrace=False)
    return exe
