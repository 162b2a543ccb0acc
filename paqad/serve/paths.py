"""Where a work tree's service lives: a Unix socket, a lock and an info file in the runtime folder.

Imports only what a bare interpreter already has (``os``, and the C ``_blake2``): every thin
client imports this before deciding whether to load anything else, so no ``pathlib``,
``tempfile`` or ``hashlib`` here (together ~20 ms of a hook's CPU budget of 30).

The folder is ``$XDG_RUNTIME_DIR/paqad`` (per user, 0700, cleared at logout) when that is set,
else ``<tmp>/paqad-<uid>``, created 0700 and refused unless this user owns it and nobody else can
enter it (a shared ``/tmp`` must not let another user plant a socket that answers our prompts).
The file names are a hash of the resolved ``.paqad`` path, so two work trees (clones, git
worktrees) get two services and a moved repository a new one. A Unix socket path is limited to
108 bytes (``sun_path``; 104 on macOS): a runtime folder too deep for it is skipped for the next
one, and when none fits there is no service (every door answers in-process).

The service takes the first folder it can create; a client the first that exists. They agree:
a folder the service could not create does not exist for the client either.
"""

from __future__ import annotations

import os

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

SUN_PATH_MAX = 100  # bytes: under Linux's 108 and macOS's 104, with room for the NUL
KEY_BYTES = 10
DIRNAME = "paqad"


class ServicePaths:
    """The files of one work tree's service (plain strings: see the module docstring)."""

    def __init__(self, folder: str, key: str) -> None:
        self.folder = folder
        self.key = key
        self.socket = os.path.join(folder, f"{key}.sock")
        #: held (``flock``) by the running service for its whole life: a dead one releases it
        self.lock = os.path.join(folder, f"{key}.lock")
        #: JSON written by the service once it listens: pid, version, root, started
        self.info = os.path.join(folder, f"{key}.json")


def digest(data: bytes, size: int = KEY_BYTES) -> str:
    return blake2b(data, digest_size=size).hexdigest()


def key_of(root: str | os.PathLike[str]) -> str:
    """The service key of the work tree at ``root``: a hash of its resolved ``.paqad`` path."""
    return digest(os.fsencode(os.path.realpath(os.path.join(root, ".paqad"))))


def temp_dir() -> str:
    """The temp folder as ``tempfile.gettempdir`` finds it in the usual cases (TMPDIR, TEMP, TMP, /tmp)."""
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if value and os.path.isabs(value) and os.path.isdir(value):
            return value
    return "/tmp"


def candidate_folders() -> list[str]:
    """The runtime folders to try, best first."""
    out = []
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        out.append(os.path.join(xdg, DIRNAME))
    out.append(os.path.join(temp_dir(), f"{DIRNAME}-{os.getuid()}"))
    return out


def for_root(root: str | os.PathLike[str], create: bool = False) -> ServicePaths | None:
    """The service files for ``root``, or None when no private folder with a short enough path exists.

    ``create`` (the service) makes the folder, 0700, when it is missing; a client only finds one.
    """
    key = key_of(root)
    short = [p for p in (ServicePaths(f, key) for f in candidate_folders()) if len(os.fsencode(p.socket)) <= SUN_PATH_MAX]
    for paths in short:
        if _usable(paths.folder, create):
            return paths
    # a client before any service made a folder: the first one a service would make (nothing there yet)
    return next((p for p in short if not create and not os.path.lexists(p.folder)), None)


def _usable(folder: str, create: bool) -> bool:
    """True when ``folder`` exists (or was just made) as a directory owned by us, closed to others."""
    try:
        if create and not os.path.lexists(folder):
            os.mkdir(folder, 0o700)
        info = os.lstat(folder)
    except OSError:
        return False
    return (info.st_mode & 0o170000) == 0o040000 and info.st_uid == os.getuid() and not info.st_mode & 0o077
