"""What paqad found in the repository's ``.paqad/`` that it will not use, and the move of an
older setup's per-developer files out of the work tree.

Since per-developer state lives outside the work tree (:mod:`paqad.localstate`), the only files
paqad reads from ``.paqad/`` are the team's (:data:`TEAM_FILES`), and those never through a
symlink. Anything else there that git tracks (a force-committed ``.config``, ``bin/paqad``,
``vectors/``, a ``logs/hooks.log`` symlink) is a sign that someone tried to reach a developer's
machine through a commit: :func:`findings` lists it for ``paqad doctor``, and nothing else
reads it.

:func:`migrate` moves an older setup's own files (``.config``, ``secrets.env``, ``audit.log``) into
the per-developer folder on the next ``paqad hooks install``, ``rag init`` or ``rag update``, and
removes the old index, launcher, logs and state. The index is rebuilt rather than moved: a pull
may have replaced it unseen (git overwrites ignored files), and the user-level embedding cache
makes the rebuild cheap. A file git tracks or that is a symlink is never moved (a pull may have
written it): it is reported instead.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from paqad import git, workspace

#: What the team may commit under ``.paqad/``: paqad reads these (never through a symlink).
TEAM_FILES = ("configs/", "rag.ignore.yaml", "hooks.yaml", "stackpacks/", "eval.yaml", "README.md", ".gitignore")
#: An older setup's per-developer files: (name under .paqad/, name in the per-developer folder).
MOVED = ((".config", "config.yaml"), ("secrets.env", "secrets.env"), ("audit.log", "audit.log"))
#: An older setup's regenerable folders, removed once the rest moved (the index is rebuilt).
DROPPED = ("vectors", "bin", "logs", "state", "context")


@dataclass(frozen=True)
class Finding:
    """One path under ``.paqad/`` that paqad does not use, and why."""

    path: str  # repository-relative
    why: str  # tracked | symlink


def _is_team(rel: str) -> bool:
    inner = rel.split("/", 1)[1] if "/" in rel else ""
    return any(inner == name or (name.endswith("/") and inner.startswith(name)) for name in TEAM_FILES)


def findings(root: Path) -> list[Finding]:
    """Tracked files under ``.paqad/`` that are not team files, and every symlink there."""
    out = [Finding(rel, "tracked") for rel in git.tracked_under(root, workspace.DIRNAME) if not _is_team(rel)]
    folder = workspace.paqad_dir(root)
    if folder.is_symlink():
        return [*out, Finding(workspace.DIRNAME, "symlink")]
    seen = {f.path for f in out}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink() and rel not in seen:
                out.append(Finding(rel, "symlink"))
    return out


def migrate(root: Path) -> list[str]:
    """Move an older setup's per-developer files out of ``.paqad/``; one line per thing done or refused."""
    old = workspace.paqad_dir(root)
    if old.is_symlink() or not old.is_dir():
        return []
    tracked = set(git.tracked_under(root, workspace.DIRNAME))
    said: list[str] = []
    local = workspace.local_dir(root)
    for name, new_name in MOVED:
        src, dst = old / name, local / new_name
        if not os.path.lexists(src):
            continue
        rel = f"{workspace.DIRNAME}/{name}"
        if src.is_symlink() or rel in tracked or any(t.startswith(rel + "/") for t in tracked):
            said.append(f"left {rel} where it is and never read it: it is {'a symlink' if src.is_symlink() else 'tracked by git'} (a pull may have written it)")
            continue
        if os.path.lexists(dst):
            continue
        local.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            shutil.move(os.fspath(src), os.fspath(dst))
        except OSError as exc:
            said.append(f"could not move {rel} to {dst} ({exc.strerror or exc}); paqad no longer reads it there")
            continue
        said.append(f"moved {rel} to {dst}")
    for name in DROPPED:
        path = old / name
        rel = f"{workspace.DIRNAME}/{name}"
        if path.is_dir() and not path.is_symlink() and not any(t.startswith(rel + "/") for t in tracked):
            shutil.rmtree(path, ignore_errors=True)
            said.append(f"removed {rel}/ (paqad keeps it in {local} now)")
    return said
