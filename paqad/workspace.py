"""Where each of paqad's files lives, what is shared and what is not, and atomic writes.

Two folders. The repository's ``.paqad/`` holds what the team shares and commits: ``configs/``,
``rag.ignore.yaml``, ``hooks.yaml``, ``stackpacks/``, ``eval.yaml``. It is untrusted input (any
commit can change it), and it explains itself (a README and a ``.gitignore``), the way pytest's
cache does. Everything per developer (local settings, API keys, the index, logs, state, the
delivered context, the audit log) lives in the work tree's folder under the user's data folder
(:mod:`paqad.localstate`), where no pull can write: :func:`local_dir`. That folder existing is
what "paqad is set up in this work tree" means to the hooks (:func:`is_set_up`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import filelock

from paqad import localstate
from paqad.errors import LockedError

DIRNAME = ".paqad"

GITIGNORE = """\
# Written by paqad. Commit configs/, rag.ignore.yaml, hooks.yaml, stackpacks/. paqad keeps no
# per-developer file here any more (it lives in the user's data folder); these names stay ignored
# for work trees set up by older versions.
bin/
.config
vectors/
context/
logs/
state/
*.lock
audit.log
secrets.env
"""

README = """\
# .paqad

Written by [paqad](https://pypi.org/project/paqad/): a local search index of this repository
for AI coding agents.

Commit (shared by the team): `configs/`, `rag.ignore.yaml`, `hooks.yaml`, `stackpacks/`.
Per-developer files (local settings, keys, the index, logs) are not here: they live in the
user's data folder (`paqad doctor` prints where), out of reach of `git pull`.

`paqad rag clear --yes` deletes the index; deleting this whole folder is also safe.
"""


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """The user's paqad cache folder: ``PAQAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/paqad``, else
    ``~/.cache/paqad`` (the XDG base-directory default; a relative XDG_CACHE_HOME is ignored, as
    the specification says)."""
    env = os.environ if environ is None else environ
    if env.get("PAQAD_CACHE_DIR"):
        return Path(env["PAQAD_CACHE_DIR"]).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "paqad"


def paqad_dir(root: Path) -> Path:
    return root / DIRNAME


def team_config_dir(root: Path) -> Path:
    return paqad_dir(root) / "configs"


def local_dir(root: Path) -> Path:
    """The work tree's per-developer folder, outside the work tree (:mod:`paqad.localstate`)."""
    return Path(localstate.tree_dir(root))


def is_set_up(root: Path) -> bool:
    """True once the developer set paqad up in this work tree (``rag init``, ``hooks install``, ...).

    A committed ``.paqad/`` says nothing about this developer: a teammate's commit creates it."""
    return local_dir(root).is_dir()


def local_config_path(root: Path) -> Path:
    return local_dir(root) / "config.yaml"


def vectors_dir(root: Path) -> Path:
    return local_dir(root) / "vectors"


#: The per-developer folder's ``state/`` (the git shims spell it too: :mod:`paqad.channel.gitevents`).
STATE_DIR = "state"


def state_dir(root: Path) -> Path:
    return local_dir(root) / STATE_DIR


def logs_dir(root: Path) -> Path:
    return local_dir(root) / "logs"


def context_dir(root: Path) -> Path:
    return local_dir(root) / "context"


def ignore_file(root: Path) -> Path:
    return paqad_dir(root) / "rag.ignore.yaml"


def ensure(root: Path) -> Path:
    """Create the work tree's per-developer folder (0700) and ``.paqad/`` with its README and
    ``.gitignore`` if missing; return the per-developer folder.

    A ``.paqad`` that is a symlink or not a folder is left alone (it is repository content, and
    nothing paqad writes goes there but these two explanatory files)."""
    local = local_dir(root)
    local.mkdir(parents=True, exist_ok=True, mode=0o700)
    (local / "state").mkdir(exist_ok=True, mode=0o700)
    folder = paqad_dir(root)
    if not folder.is_symlink() and not (folder.exists() and not folder.is_dir()):
        folder.mkdir(exist_ok=True)
        for name, text in ((".gitignore", GITIGNORE), ("README.md", README)):
            target = folder / name
            if not target.exists() and not target.is_symlink():
                atomic_write_text(target, text, mode=0o644)
    return local


INDEX_LOCK = "index.lock"
INDEX_LOCK_TIMEOUT_S = 60.0


def index_lock(root: Path, timeout: float = INDEX_LOCK_TIMEOUT_S) -> filelock.FileLock:
    """The index's single-writer lock. An OS-level lock: a killed holder releases it, so it is never stale."""
    path = state_dir(root) / INDEX_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(path), timeout=timeout)


def clear_index(root: Path, lock_timeout: float = INDEX_LOCK_TIMEOUT_S) -> bool:
    """Delete the index (``vectors/``: every generation and its vectors); True if there was one.

    Under the writer lock, so a build or an update running meanwhile finishes first and its
    result is what gets deleted, never a half-written generation that it then publishes.
    Settings, ignore rules and descriptions are not touched.
    """
    lock = index_lock(root, lock_timeout)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise LockedError(f"another paqad process is writing the index (lock {lock.lock_file}); try again shortly") from exc
    try:
        folder = vectors_dir(root)
        existed = folder.exists()
        shutil.rmtree(folder, ignore_errors=True)
        return existed
    finally:
        lock.release()


def atomic_write_text(path: Path, text: str, mode: int | None = None, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder and ``os.replace``: readers see old or new, never half.

    ``mode`` defaults to the mode of the file being replaced, else 0644 (``mkstemp`` creates 0600).
    ``durable=False`` skips the ``fsync`` before the rename, for state a prompt rewrites every time
    and regenerates when it is lost (the delivered context, the recorded prompt): four of them cost
    a warm prompt ~120 ms of wall on this machine's disk (benchmarks/README.md). A crash can then
    leave such a file empty, which its readers take as absent; readers never see half of one.
    """
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def join_within(root: Path, relative: str) -> Path:
    """Resolve ``relative`` under ``root``, refusing anything that escapes it (``..``, absolute, symlinks out).

    Every path read from a request or from the index goes through here: the index is untrusted input.
    """
    if not relative or "\x00" in relative or os.path.isabs(relative):
        raise ValueError(f"path {relative!r} is not a relative path inside the repository")
    root_real = root.resolve()
    target = (root_real / relative).resolve()
    if target != root_real and root_real not in target.parents:
        raise ValueError(f"path {relative!r} points outside the repository")
    return target


class SymlinkRefused(ValueError):
    """A repository path paqad would write through a symlink (one line: which and why)."""


def repo_file(root: Path, relative: str) -> Path:
    """``root/relative`` for paqad to write, refusing a symlink at the file or at any folder
    between: a committed ``.claude/settings.json`` linked to ``~/.claude/settings.json`` must not
    make paqad copy the user's own file (API key included) into the repository, nor a linked
    ``.claude/`` redirect the write out of it. Missing parts are fine (they are created later)."""
    path = root / relative
    current = root
    for part in Path(relative).parts:
        current = current / part
        if current.is_symlink():
            raise SymlinkRefused(
                f"{current.relative_to(root).as_posix()} is a symlink (to {os.readlink(current)}); paqad does not write through a "
                "symlink in the repository: replace it with a regular file, or leave this host out (--agents)"
            )
    return path


def linked_part(root: Path, path: Path) -> Path | None:
    """The first symlink on the way from ``root`` down to ``path`` (``path`` included), or None.

    The team's files under ``.paqad/`` (``configs/``, ``rag.ignore.yaml``, ``hooks.yaml``,
    ``stackpacks/``, ``eval.yaml``) are read only when this is None: a committed symlink there
    would make paqad read (and quote in its errors) a file of the attacker's choosing on this
    machine. The loaders treat such a file as absent; ``paqad doctor`` reports it."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return path
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def team_file(root: Path, path: Path) -> Path | None:
    """``path`` when it is a regular team file reached without a symlink, else None."""
    return path if linked_part(root, path) is None and path.is_file() else None
