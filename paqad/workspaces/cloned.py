"""Workspace members given by URL: clones of paqad's own in the user cache, fetched on demand.

Why: the shared library or the other service an agent needs is often not checked out on this
machine. ``paqad workspace add URL`` (any URL git clones: https, ssh, ``file://``, or the path of a
bare repository) clones it into ``<user cache>/workspace/<sha256(url)[:12]>/<name>`` and indexes
it there with its own settings, so it answers like any member.

The network is used only when the user runs a command that says so: ``workspace add URL`` (the
clone) and ``workspace fetch`` (fetch, then the checked-out branch reset to its upstream and the
index updated). Searching never fetches: a member answers from its last fetched commit. git runs
in batch mode (no prompt, stored credentials only) with a timeout, the URL after ``--``.

A clone is written into a temporary folder beside its place and renamed there once complete, so a
member folder is never a half clone. Removing a member does not delete its clone (another
repository's workspace may use it); deleting the cache folder is always safe (``workspace fetch``
clones again).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import config, git, workspace
from paqad.errors import UsageError
from paqad.index.writing import build

if TYPE_CHECKING:
    from paqad.index.writing.build import BuildReport

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^[^/\s:@]+@[^/\s:]+:")  # user@host:path, git's scp-like ssh syntax


def is_remote(member: str) -> bool:
    """A URL (``scheme://``, ``user@host:path``) or the path of a bare repository: cloned, not used in place."""
    if _SCHEME.match(member) or _SCP.match(member):
        return True
    path = Path(member).expanduser()
    return path.is_dir() and git.toplevel(path.resolve()) is None and git.is_bare(path.resolve())


def _normal(member: str) -> str:
    """The URL as recorded: a bare repository's path made absolute (a relative one means nothing elsewhere)."""
    if _SCHEME.match(member) or _SCP.match(member):
        return member
    return str(Path(member).expanduser().resolve())


def _name(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    return re.sub(r"[^A-Za-z0-9._-]", "-", tail).strip(".-") or "repository"


def clone_dir(url: str) -> Path:
    """Where ``url`` is cloned: the user cache (``PAQAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/paqad``)."""
    return workspace.cache_dir() / "workspace" / hashlib.sha256(url.encode()).hexdigest()[:12] / _name(url)


def add(member: str) -> tuple[Path, str]:
    """Clone ``member`` (or bring an existing clone of it up to date) and index it: (clone, URL)."""
    url = _normal(member)
    dest = clone_dir(url)
    if (dest / ".git").is_dir():
        try:
            refresh(dest)
        except git.GitError as exc:
            raise UsageError(f"{member}: git could not fetch it{_fatal(exc)}") from None
        return dest, url
    if dest.exists():  # not a clone (a copy interrupted before paqad renamed clones into place): ours to replace
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=dest.parent))
    try:
        try:
            git.clone(url, tmp / "tree")
        except git.GitError as exc:
            raise UsageError(f"{member}: git could not clone it{_fatal(exc)}") from None
        (tmp / "tree").rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _index(dest)
    return dest, url


def _fatal(exc: git.GitError) -> str:
    """`` (fatal: ...)``: git's own reason, one line, for the error that says it could not."""
    said = next((line.strip() for line in reversed(str(exc).splitlines()) if line.strip().startswith("fatal:")), "")
    return f" ({said[:300]})" if said else ""


@dataclass
class Fetched:
    """One member's ``workspace fetch``: its commit before and after, and what the update did."""

    repository: str
    url: str
    old: str | None
    new: str | None
    changed_files: int
    error: str | None = None


def refresh(dest: Path) -> Fetched:
    """Fetch the clone's remote, reset to its upstream, update its index."""
    old, new = git.fetch_and_reset(dest)
    report = _index(dest)
    return Fetched(dest.name, git.remote_url(dest, "origin") or "", old, new, report.files_changed + report.files_removed)


def fetch(urls: dict[Path, str], only: str | None = None) -> list[Fetched]:
    """``workspace fetch [NAME]``: every member given by URL (or the one named), cloned again when
    its clone was deleted. A member git cannot reach is reported, and the others are fetched."""
    chosen = {p: u for p, u in urls.items() if only is None or only in (p.name, u, str(p))}
    if only is not None and not chosen:
        raise UsageError(f"{only}: no member given by URL has that name (see `paqad workspace list`)")
    out = []
    for path, url in chosen.items():
        try:
            if (path / ".git").is_dir():
                out.append(refresh(path))
            else:
                dest, _ = add(url)
                out.append(Fetched(dest.name, url, None, git.head_commit(dest), -1))
        except git.GitError as exc:
            out.append(Fetched(path.name, url, None, None, 0, f"git could not fetch it{_fatal(exc)}"))
        except UsageError as exc:
            out.append(Fetched(path.name, url, None, None, 0, str(exc)[:300]))
    return out


def _index(dest: Path) -> BuildReport:
    """Index (or update) the clone with its own settings: its committed team config and the user's
    environment, as for any repository."""
    return build.update(dest, config.load(dest))
