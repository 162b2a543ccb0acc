"""What the index's writers do when the repository or the disk is not what they expect.

Three kinds of trouble that used to end in a traceback, and what each does now:

* A file whose name is not UTF-8 (``caf\\xe9.py``: git lists the bytes, Python decodes them with
  ``surrogateescape``). SQLite text must be valid UTF-8 and every door hands paths on as UTF-8
  JSON, so such a name cannot be stored faithfully; storing a lossy or escaped form would name a
  file that does not exist (and ``open``, delivery and confinement would all need the reverse
  mapping). It is skipped, counted, and named once (escaped) in the build report and the audit
  log; the rest of the commit is indexed. :func:`split_names`.
* A full disk (``ENOSPC``, ``EDQUOT``, SQLite's ``database or disk is full``): one line naming the
  folder, and the half-written ``.building`` generation is removed. It is not damage: an update
  that hits it must not "repair" by rebuilding (which needs more space still). :func:`disk_full`.
* The index folder taken by a plain file: one line saying so and what to do, from the builder
  and from every reader (which would otherwise advise ``rag init``, the command that fails).
  :func:`check_folder`.

A build or an adoption killed midway leaves its scratch file (``index-N.sqlite.building``,
``.fetched-<pid>.sqlite``, ``.publish-<pid>.sqlite``); :func:`sweep` removes those of processes
that are gone, under the writer lock.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from paqad import audit, workspace
from paqad.errors import StorageError

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_SCRATCH = re.compile(r"^\.(?:fetched|publish)-(\d{1,10})\.sqlite(?:-journal|-wal|-shm)?$")
LOW_SPACE = 1 << 20  # free bytes below which SQLite's I/O errors are taken for a full disk
SHOWN_NAMES = 3  # skipped names shown in the one line (the count says how many more)


def split_names(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """(paths SQLite can store, paths that are not valid UTF-8), each in the given order."""
    ok, bad = [], []
    for path in paths:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            bad.append(path)
        else:
            ok.append(path)
    return ok, bad


def named(root: Path, listed: list[str]) -> tuple[list[str], list[str]]:
    """The listed paths SQLite can store, and the others shown escaped (logged once per build)."""
    ok, bad = split_names(listed)
    shown = [shown_name(p) for p in bad]
    if shown:
        audit.log(root, "WARN", "names-not-utf8", files=len(shown), first=shown[0][:200])
    return ok, shown


def shown_name(path: str) -> str:
    """A non-UTF-8 name as one printable line: its raw bytes escaped (``caf\\xe9.py``)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def skipped_line(names: list[str]) -> str:
    """The one line a build prints about names it skipped (empty when none)."""
    if not names:
        return ""
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    return (
        f"warning: {len(names)} file(s) not indexed: the name is not valid UTF-8 "
        f"({', '.join(names[:SHOWN_NAMES])}{more}); rename them to index them"
    )


def disk_full(exc: BaseException) -> bool:
    """True when ``exc`` says the disk (or the user's quota) is full."""
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return True
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        return code == getattr(sqlite3, "SQLITE_FULL", 13) or "disk is full" in str(exc)
    return False


def full_error(folder: Path) -> StorageError:
    """The one line for a full disk, naming the index folder and what is free there."""
    try:
        free = f"{shutil.disk_usage(folder if folder.is_dir() else folder.parent).free / 1e6:.1f} MB free"
    except OSError:
        free = "free space unknown"
    return StorageError(f"the disk holding {folder} is full ({free}); free some space, then run `paqad rag update`")


def out_of_space(exc: BaseException, folder: Path) -> bool:
    """True when ``exc`` comes from a full disk: said so, or SQLite's "disk I/O error" (opening a WAL
    index creates its ``-shm`` file) while less than ``LOW_SPACE`` is free where ``folder`` is."""
    if disk_full(exc):
        return True
    if not isinstance(exc, sqlite3.OperationalError) or "disk i/o error" not in str(exc).lower():
        return False
    try:
        return shutil.disk_usage(folder).free < LOW_SPACE
    except OSError:
        return False


def check_folder(root: Path) -> None:
    """Raise ``StorageError`` when the index folder (or a folder above it, up to the per-developer
    one) is a plain file: nothing can be built there until it is moved."""
    folder = workspace.vectors_dir(root)
    for place in (folder, *folder.parents):
        if place.is_dir():
            return
        if place.exists() or place.is_symlink():
            raise StorageError(
                f"{place} is a file, not a folder: paqad keeps its index in {folder}; "
                "move or delete that file, then run `paqad rag init`"
            )


def sweep(root: Path, building: bool = True) -> int:
    """Remove scratch files left by killed builds, adoptions and publishes: those of processes that
    are gone, and (``building``: only under the writer lock, where no other build runs) every
    ``.building`` generation. How many were removed."""
    folder = workspace.vectors_dir(root)
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        match = _SCRATCH.match(name)
        stale = (building and name.endswith(".building")) or (match is not None and not _alive(int(match.group(1))))
        if stale:
            try:
                (folder / name).unlink()
                removed += 1
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True
