"""The ``.paqad/`` folder: where each file lives, what is committed and what is not, atomic writes.

The folder explains itself (a README and a ``.gitignore``), the way pytest's cache does, so a
developer who finds it in ``git status`` knows what to commit: ``configs/``, ``rag.ignore.yaml``,
``hooks.yaml`` and ``stackpacks/`` are shared with the team; everything else is per developer.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import filelock

from paqad.errors import LockedError

DIRNAME = ".paqad"

GITIGNORE = """\
# Written by paqad. Per-developer files; commit configs/, rag.ignore.yaml, hooks.yaml, stackpacks/.
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
Never commit (per developer, listed in `.gitignore` here): `.config`, `vectors/`, `context/`,
`logs/`, `state/`, locks, `audit.log`, `secrets.env`.

`paqad rag clear --yes` deletes the index; deleting this whole folder is also safe.
"""


def paqad_dir(root: Path) -> Path:
    return root / DIRNAME


def team_config_dir(root: Path) -> Path:
    return paqad_dir(root) / "configs"


def local_config_path(root: Path) -> Path:
    return paqad_dir(root) / ".config"


def vectors_dir(root: Path) -> Path:
    return paqad_dir(root) / "vectors"


def state_dir(root: Path) -> Path:
    return paqad_dir(root) / "state"


def logs_dir(root: Path) -> Path:
    return paqad_dir(root) / "logs"


def ignore_file(root: Path) -> Path:
    return paqad_dir(root) / "rag.ignore.yaml"


def ensure(root: Path) -> Path:
    """Create ``.paqad/`` with its README and ``.gitignore`` if missing; return it."""
    folder = paqad_dir(root)
    folder.mkdir(exist_ok=True)
    for name, text in ((".gitignore", GITIGNORE), ("README.md", README)):
        target = folder / name
        if not target.exists():
            atomic_write_text(target, text, mode=0o644)
    return folder


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
