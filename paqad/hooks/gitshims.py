"""Install, remove and describe paqad's git hook shims, in the hooks folder git really uses.

The folder comes from ``git rev-parse --git-path hooks``, so ``core.hooksPath`` and linked
worktrees are honoured. A shim is recognised by its ``# paqad-hook-id:`` line. A hook that was
there before is renamed ``<hook>.paqad-legacy``, run first by the shim with the same arguments and
stdin, and renamed back on uninstall: after ``uninstall`` the folder is byte for byte what it was.

husky (``core.hooksPath`` is ``.husky/_`` for husky 9, ``.husky`` for husky 4 to 8): its hook files
are committed, so paqad appends one marked line to ``.husky/<hook>`` (creating the file if needed)
that calls ``paqad`` from PATH, and removes exactly that line again on uninstall. A hook file
reached through a symlink is left alone: rewriting it would copy the link's target (a file of the
committer's choosing on this machine) into the repository.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from paqad import git, localstate, resources, workspace
from paqad.channel import gitevents
from paqad.errors import NotARepositoryError, PaqadError
from paqad.hooks import lefthook
from paqad.hooks.runner import GIT_EVENTS

HOOKS = GIT_EVENTS
ID_MARK = "# paqad-hook-id:"
LEGACY_SUFFIX = ".paqad-legacy"
TEMPLATE = "git-hook.tmpl"

HUSKY_MARK = "# paqad-hook-id: husky-line-v1"
HUSKY_CREATED = "# paqad-hook-id: husky-created-v1 (paqad made this file; uninstall deletes it)"
HUSKY_NEWLINE = "# paqad-hook-id: husky-newline-v1"  # we added the final newline the file lacked


@dataclass
class HookState:
    """One hook: where it is, what is there, and what install/uninstall just did to it."""

    hook: str
    path: str
    state: str  # installed | absent | foreign (another tool's hook, not chained yet)
    legacy: str | None = None  # the chained earlier hook, when there is one
    action: str | None = None  # installed | updated | unchanged | removed | restored | left alone

    def to_dict(self) -> dict:
        return asdict(self)


def hooks_dir(root: Path) -> Path:
    """The folder git runs hooks from (``core.hooksPath`` and worktrees honoured)."""
    try:
        return git.hooks_path(root)
    except git.GitError as exc:
        reason = exc.stderr.strip() or exc.reason or f"git exited {exc.returncode}"
        raise NotARepositoryError(f"{root} is not inside a git work tree; git hooks need one ({reason})") from None


def husky_dir(root: Path, hdir: Path) -> Path | None:
    """The ``.husky`` folder when husky owns the hooks (``.husky/_`` or ``.husky``), else None."""
    try:
        rel = hdir.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    if rel.parts[:1] == (".husky",) and len(rel.parts) <= 2:
        return root / ".husky"
    return None


def template_text() -> str:
    """The shim template, from the shipped ``hooks/`` folder (see :mod:`paqad.resources`)."""
    return (resources.data_dir("hooks") / TEMPLATE).read_text(encoding="utf-8")


def render_shim(hook: str, python: str | None = None) -> str:
    text = template_text()
    text = text.replace("@TREE_DIR_SH@", localstate.SH_TREE_DIR.rstrip())
    for mark, name in gitevents.SH_MARKS.items():
        text = text.replace(mark, name)  # the file names are gitevents' (one channel, one owner)
    return text.replace("@HOOK@", shlex.quote(hook)).replace("@PYTHON@", shlex.quote(python or sys.executable))


def is_ours(path: Path) -> bool:
    """True when ``path`` is a paqad shim (any version): a regular file carrying the ID line.

    A symlink is never ours (paqad writes files), even when it points at one of our shims.
    """
    if path.is_symlink():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return ID_MARK.encode() in head


def _legacy(path: Path) -> Path:
    return path.with_name(path.name + LEGACY_SUFFIX)


def _describe(hook: str, path: Path) -> HookState:
    legacy = _legacy(path)
    if os.path.lexists(path):
        state = "installed" if is_ours(path) else "foreign"
    else:
        state = "absent"
    return HookState(hook, str(path), state, str(legacy) if os.path.lexists(legacy) else None)


def install(root: Path) -> list[HookState]:
    """Install (or refresh) the shims; idempotent. Earlier hooks are kept and chained."""
    hdir = hooks_dir(root)
    if lefthook.config_path(root) is not None:
        action = lefthook.install(root, HOOKS)
        return [_lefthook_state(root, hook, action) for hook in HOOKS]
    husky = husky_dir(root, hdir)
    if husky is not None:
        return [_husky_install(husky / hook, hook) if workspace.linked_part(root, husky / hook) is None else _husky_state(husky / hook, hook, "left alone") for hook in HOOKS]
    hdir.mkdir(parents=True, exist_ok=True)
    return [_install_one(hdir / hook, hook) for hook in HOOKS]


def _install_one(path: Path, hook: str) -> HookState:
    legacy = _legacy(path)
    shim = render_shim(hook)
    if os.path.lexists(path) and not is_ours(path):
        if os.path.lexists(legacy):
            raise PaqadError(
                f"{path} is not paqad's and {legacy.name} exists too; move one of them aside, then run `paqad hooks install` again"
            )
        os.rename(path, legacy)  # a symlink stays a symlink; restored as is
        action = "installed"
    elif os.path.lexists(path):
        action = "unchanged" if path.read_text(encoding="utf-8", errors="replace") == shim else "updated"
    else:
        action = "installed"
    if action != "unchanged":
        workspace.atomic_write_text(path, shim, mode=0o755)
    state = _describe(hook, path)
    state.action = action
    return state


def _lefthook_state(root: Path, hook: str, action: str | None = None) -> HookState:
    path = root / lefthook.LOCAL_NAME
    return HookState(hook, str(path), "installed" if lefthook.installed(root) else "absent", action=action)


def uninstall(root: Path) -> list[HookState]:
    """Remove the shims and put back what was there before; other tools' hooks are left alone."""
    hdir = hooks_dir(root)
    if lefthook.installed(root):
        action = lefthook.uninstall(root)
        return [_lefthook_state(root, hook, action) for hook in HOOKS]
    husky = husky_dir(root, hdir)
    if husky is not None:
        return [_husky_uninstall(husky / hook, hook) if workspace.linked_part(root, husky / hook) is None else _husky_state(husky / hook, hook, "left alone") for hook in HOOKS]
    return [_uninstall_one(hdir / hook, hook) for hook in HOOKS]


def _uninstall_one(path: Path, hook: str) -> HookState:
    legacy = _legacy(path)
    if not os.path.lexists(path) or not is_ours(path):
        state = _describe(hook, path)
        state.action = "left alone" if os.path.lexists(path) else "unchanged"
        return state
    path.unlink()
    action = "removed"
    if os.path.lexists(legacy):
        os.rename(legacy, path)
        action = "restored"
    state = _describe(hook, path)
    state.action = action
    return state


def refresh(root: Path) -> bool:
    """Rewrite paqad's own shims that an older version wrote (in git's plain hooks folder); True
    when one was rewritten. Older shims looked for state inside the work tree, where a pull can
    plant files, so an upgrade must not leave them in place until the next ``hooks install``."""
    try:
        hdir = hooks_dir(root)
    except PaqadError:
        return False
    if lefthook.config_path(root) is not None or husky_dir(root, hdir) is not None:
        return False
    stale = [hook for hook in HOOKS if is_ours(hdir / hook) and (hdir / hook).read_text(encoding="utf-8", errors="replace") != render_shim(hook)]
    for hook in stale:
        _install_one(hdir / hook, hook)
    return bool(stale)


def status(root: Path) -> dict:
    """Where hooks go, and for each event hook what is installed there."""
    hdir = hooks_dir(root)
    husky = husky_dir(root, hdir)
    lefty = lefthook.config_path(root) is not None
    if lefty:
        hooks = [_lefthook_state(root, hook) for hook in HOOKS]
    elif husky is not None:
        hooks = [_husky_describe(husky / hook, hook) for hook in HOOKS]
    else:
        hooks = [_describe(hook, hdir / hook) for hook in HOOKS]
    return {
        "hooks_dir": str(hdir),
        "manager": "lefthook" if lefty else ("husky" if husky is not None else "git"),
        "core_hooks_path": git.config_get(root, "core.hooksPath"),
        "hooks": [h.to_dict() for h in hooks],
        "paqad_on_path": shutil.which("paqad"),
    }


# ---- husky: one marked line in the committed .husky/<hook> -----------------------------------


def husky_line(hook: str) -> str:
    """Calls paqad from PATH (never a developer's interpreter path: this file is committed)."""
    return f'command -v paqad >/dev/null 2>&1 && paqad hook run {hook} "$@" </dev/null || true  {HUSKY_MARK}'


def _husky_install(path: Path, hook: str) -> HookState:
    line = husky_line(hook)
    if path.exists():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if line in lines:
            return _husky_state(path, hook, "unchanged")
        if any(HUSKY_MARK in item for item in lines):  # an older line of ours: replace it
            text = "".join(f"{line}\n" if HUSKY_MARK in item else item for item in text.splitlines(keepends=True))
            workspace.atomic_write_text(path, text, mode=path.stat().st_mode & 0o7777)
            return _husky_state(path, hook, "updated")
        prefix = text if text.endswith("\n") or not text else f"{text}\n{HUSKY_NEWLINE}\n"
        workspace.atomic_write_text(path, f"{prefix}{line}\n", mode=path.stat().st_mode & 0o7777)
    else:
        workspace.atomic_write_text(path, f"#!/usr/bin/env sh\n{HUSKY_CREATED}\n{line}\n", mode=0o755)
    return _husky_state(path, hook, "installed")


def _husky_uninstall(path: Path, hook: str) -> HookState:
    if not path.exists():
        return _husky_state(path, hook, "unchanged")
    text = path.read_text(encoding="utf-8")
    if HUSKY_CREATED in text.splitlines():
        path.unlink()
        return _husky_state(path, hook, "removed")
    kept = [item for item in text.splitlines(keepends=True) if HUSKY_MARK not in item]
    if len(kept) == len(text.splitlines(keepends=True)):
        return _husky_state(path, hook, "unchanged")
    if kept and kept[-1].rstrip("\n") == HUSKY_NEWLINE:
        kept.pop()
        kept[-1] = kept[-1].rstrip("\n") if kept else ""
    workspace.atomic_write_text(path, "".join(kept), mode=path.stat().st_mode & 0o7777)
    return _husky_state(path, hook, "removed")


def _husky_describe(path: Path, hook: str) -> HookState:
    installed = path.exists() and HUSKY_MARK in path.read_text(encoding="utf-8", errors="replace")
    return HookState(hook, str(path), "installed" if installed else ("foreign" if path.exists() else "absent"))


def _husky_state(path: Path, hook: str, action: str) -> HookState:
    state = _husky_describe(path, hook)
    state.action = action
    return state
