"""Working-set git helpers: what the developer is changing right now, one git call per function.

Built on ``paqad.git.run`` (timeout, clean environment, ``GIT_TERMINAL_PROMPT=0``). Every function
here answers "nothing" rather than raising when git cannot answer (no commits yet, no base branch,
not a repository): the working set feeds a hook, and a hook never fails.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from paqad import git

AUTO_BASES = ("main", "master")
MAX_SUBJECTS = 20
HOT_TIMEOUT_S = 5.0


@dataclass
class WorkingSet:
    """Files being changed (staged, unstaged, untracked, committed since the merge-base) and the commits."""

    base: str | None = None
    merge_base: str | None = None
    staged: list[str] = field(default_factory=list)
    unstaged: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return sorted(set(self.staged) | set(self.unstaged) | set(self.untracked) | set(self.committed))

    def to_dict(self) -> dict:
        return {**asdict(self), "files": self.files}


def _lines(args: list[str], root: Path) -> list[str]:
    try:
        return git.zsplit(git.run(args, cwd=root, timeout=HOT_TIMEOUT_S))
    except git.GitError:
        return []


def _one(args: list[str], root: Path) -> str | None:
    try:
        return git.run(args, cwd=root, timeout=HOT_TIMEOUT_S).decode("utf-8", "replace").strip() or None
    except git.GitError:
        return None


def staged_files(root: Path) -> list[str]:
    return _lines(["diff", "--cached", "--name-only", "-z", "--no-renames"], root)


def unstaged_files(root: Path) -> list[str]:
    return _lines(["diff", "--name-only", "-z", "--no-renames"], root)


def untracked_files(root: Path) -> list[str]:
    return _lines(["ls-files", "-z", "--others", "--exclude-standard"], root)


def resolve_base(root: Path, setting: str = "auto") -> str | None:
    """The base branch as a revision git knows: the setting as given, or (auto) main, then master,
    local first, then ``origin/``."""
    candidates = AUTO_BASES if setting in ("", "auto") else (setting,)
    for name in candidates:
        for ref in (name, f"origin/{name}"):
            if _one(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], root):
                return ref
    return None


def merge_base(root: Path, base: str) -> str | None:
    return _one(["merge-base", "HEAD", base], root)


def files_since(root: Path, commit: str) -> list[str]:
    return _lines(["diff", "--name-only", "-z", "--no-renames", commit, "HEAD"], root)


def subjects_since(root: Path, commit: str) -> list[str]:
    out = _one(["log", f"--max-count={MAX_SUBJECTS}", "--format=%s", f"{commit}..HEAD"], root)
    return out.splitlines() if out else []


def working_set(root: Path, base_setting: str = "auto") -> WorkingSet:
    """Everything being changed relative to the base branch; empty parts where git cannot say."""
    ws = WorkingSet(staged=staged_files(root), unstaged=unstaged_files(root), untracked=untracked_files(root))
    ws.base = resolve_base(root, base_setting)
    if ws.base:
        ws.merge_base = merge_base(root, ws.base)
    if ws.merge_base:
        ws.committed = files_since(root, ws.merge_base)
        ws.subjects = subjects_since(root, ws.merge_base)
    return ws
