"""ruff and mypy are part of the suite, so the README's one test command (and CI) fails on them.

Both read their settings from ``pyproject.toml`` (``[tool.ruff]``, ``[tool.mypy]``:
``disallow_untyped_defs`` for ``paqad/``) and run on the source checkout; their caches go to a
temporary folder so the checkout stays untouched.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = run("ruff", "check", "--no-cache", "paqad", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    done = run("mypy", "--cache-dir", str(tmp_path / "mypy-cache"), "--config-file", str(REPO / "pyproject.toml"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
