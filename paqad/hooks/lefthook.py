"""lefthook: install through its own configuration, so its next ``lefthook install`` keeps paqad.

lefthook regenerates ``.git/hooks`` from ``lefthook.yml`` merged with ``lefthook-local.yml`` (the
per-developer file lefthook documents for local additions). paqad writes one marked block into
``lefthook-local.yml``, never the team's committed ``lefthook.yml``, and removes exactly that
block on uninstall. The block is text, appended and cut out between marker comments, so the
user's own comments and formatting survive; when the local file already configures one of our
events, paqad refuses with a hint rather than rewrite the user's mapping.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from paqad import git, workspace
from paqad.errors import PaqadError

CONFIG_NAMES = ("lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml")
LOCAL_NAME = "lefthook-local.yml"
BEGIN = "# >>> paqad-hook-id: lefthook-local-v1 (added by `paqad hooks install`; uninstall removes it)"
END = "# <<< paqad-hook-id: lefthook-local-v1"


def config_path(root: Path) -> Path | None:
    """The repository's lefthook configuration, when lefthook manages its hooks."""
    return next((root / name for name in CONFIG_NAMES if (root / name).is_file()), None)


def block(hooks: tuple[str, ...]) -> str:
    lines = [BEGIN]
    for hook in hooks:
        lines += [
            f"{hook}:",
            "  commands:",
            "    paqad-update:",
            f"      run: command -v paqad >/dev/null 2>&1 && paqad hook run {hook} || true",
        ]
    return "\n".join(lines + [END]) + "\n"


def install(root: Path, hooks: tuple[str, ...]) -> str:
    """Add paqad's block to ``lefthook-local.yml``; returns installed / updated / unchanged. A
    symlinked file is refused (:func:`paqad.workspace.repo_file`), one line."""
    try:
        path = workspace.repo_file(root, LOCAL_NAME)
    except workspace.SymlinkRefused as exc:
        raise PaqadError(str(exc)) from None
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    wanted = block(hooks)
    action = "installed"
    if BEGIN in text:
        if wanted in text:
            return "unchanged"
        text, action = _cut(text), "updated"
    taken = [hook for hook in hooks if re.search(rf"^{re.escape(hook)}\s*:", text, re.M)]
    if taken:
        raise PaqadError(
            f"{path} already configures {', '.join(taken)}; add `paqad hook run <event>` as a command there yourself, "
            "or move those entries to lefthook.yml, then run `paqad hooks install` again"
        )
    sep = "" if not text or text.endswith("\n") else "\n"
    workspace.atomic_write_text(path, text + sep + wanted)
    _sync(root)
    return action


def uninstall(root: Path) -> str:
    """Remove paqad's block (and the file, when nothing else is left in it); a symlinked file is left alone."""
    path = root / LOCAL_NAME
    if workspace.linked_part(root, path) is not None or not path.exists() or BEGIN not in path.read_text(encoding="utf-8"):
        return "unchanged"
    rest = _cut(path.read_text(encoding="utf-8"))
    if rest.strip():
        workspace.atomic_write_text(path, rest)
    else:
        path.unlink()
    _sync(root)
    return "removed"


def installed(root: Path) -> bool:
    path = root / LOCAL_NAME
    return path.exists() and BEGIN in path.read_text(encoding="utf-8")


def _cut(text: str) -> str:
    start = text.index(BEGIN)
    end = text.index(END, start) + len(END)
    if end < len(text) and text[end] == "\n":
        end += 1
    return text[:start] + text[end:]


def _sync(root: Path) -> None:
    """Ask lefthook to regenerate the git hooks, when it is on PATH (else the user's next
    `lefthook install` does it, so a lefthook that fails or hangs here is not an error).

    lefthook's own binary, not git: the one process outside :mod:`paqad.git` that may run git
    (lefthook does, itself), so it gets the same hook-safe environment and no stdin."""
    exe = shutil.which("lefthook")
    if exe:
        try:
            subprocess.run([exe, "install"], cwd=root, env=git.no_git_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass
