"""All git access, one small function per question, through the git CLI with a timeout.

File lists use ``-z``. Children started inside git hooks must not inherit ``GIT_DIR`` and
friends (they would point a nested git at the wrong repository), so every call gets
``no_git_env()``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from paqad.errors import PaqadError

TIMEOUT_S = 30


class GitError(PaqadError):
    """A git command failed; the message carries the command, return code and stderr."""


# Variables git exports into hooks that would point a nested git at another repository or index
# (pre-commit strips the same set: pre-commit/pre-commit issues #300, #1849, #2295).
_REPO_VARS = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_QUARANTINE_PATH",
        "GIT_EDITOR", "GIT_REFLOG_ACTION",
    }
)


def no_git_env() -> dict[str, str]:
    """The environment minus the repository-redirecting variables git sets in hooks; no prompts."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run(args: list[str], cwd: Path, timeout: float = TIMEOUT_S) -> bytes:
    """Run ``git ARGS`` in ``cwd`` and return stdout; raise GitError on failure or timeout."""
    cmd = ["git", *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=no_git_env(), capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"{' '.join(cmd)} timed out after {timeout:g}s") from exc
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"{' '.join(cmd)} exited {proc.returncode}: {err}")
    return proc.stdout


def zsplit(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def toplevel(path: Path) -> Path | None:
    """The work tree root containing ``path``, or None outside a git work tree."""
    try:
        out = run(["rev-parse", "--show-toplevel"], cwd=path, timeout=10)
    except GitError:
        return None
    return Path(out.decode().strip())


def listed_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files: exactly git's ignore semantics, nested .gitignore included."""
    return zsplit(run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root))


def ignored_files(root: Path) -> list[str]:
    """Untracked files git ignores (only asked for when ``include`` overrides exist)."""
    return zsplit(run(["ls-files", "-z", "--others", "--ignored", "--exclude-standard"], cwd=root))


def check_ignore(root: Path, path: str) -> str | None:
    """Which ignore rule drops ``path`` (``source:line:pattern``), or None if git does not ignore it."""
    try:
        out = run(["check-ignore", "-v", "--no-index", "--", path], cwd=root, timeout=10)
    except GitError:
        return None
    line = out.decode("utf-8", "replace").strip()
    return line.split("\t")[0] if line else None


def head_commit(root: Path) -> str | None:
    """The commit HEAD points at, or None in a repository with no commits."""
    try:
        return run(["rev-parse", "--verify", "-q", "HEAD"], cwd=root, timeout=10).decode().strip() or None
    except GitError:
        return None
