"""Where a work tree's service lives: a Unix socket, a lock and an info file in the runtime folder.

Imports only what a bare interpreter already has (``os``, and the C ``_blake2``): every thin
client imports this before deciding whether to load anything else, so no ``pathlib``,
``tempfile`` or ``hashlib`` here (together ~20 ms of a hook's CPU budget of 30).

The folder is ``$XDG_RUNTIME_DIR/paqad`` (per user, 0700, cleared at logout) when that is set,
else ``<tmp>/paqad-<uid>``, created 0700 and refused unless this user owns it and nobody else can
enter it (a shared ``/tmp`` must not let another user plant a socket that answers our prompts).
The file names are a hash of the work tree's resolved path (not of its ``.paqad``, which a commit
can make a symlink into another work tree), so two work trees (clones, git worktrees) get two
services and a moved repository a new one. A Unix socket path is limited to
108 bytes (``sun_path``; 104 on macOS): a runtime folder too deep for it is skipped for the next
one, and when none fits there is no service (every door answers in-process).

The service takes the first folder it can create; a client the first that exists. They agree:
a folder the service could not create does not exist for the client either.
"""

from __future__ import annotations

import os

from paqad import localstate

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
    """The service key of the work tree at ``root``: a hash of its resolved path."""
    return digest(os.fsencode(localstate.real_path(root)))


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
    return _for_key(key_of(root), create)


def for_user(create: bool = False) -> ServicePaths | None:
    """The files of the user's one process that hosts every work tree's service
    (:mod:`paqad.serve.host`): its lock and control socket, keyed by paqad's per-user data folder."""
    return _for_key("user-" + digest(os.fsencode(localstate.data_home()), 6), create)


def _for_key(key: str, create: bool) -> ServicePaths | None:
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


# ---- a refused folder, said once (issue 31): the service is off and nothing else would say why ----


def refusal(folder: str) -> str | None:
    """Why ``folder`` is refused as a runtime folder, or None when it is absent or usable."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    kind = info.st_mode & 0o170000
    if kind == 0o120000:
        return "it is a symlink"
    if kind != 0o040000:
        return "it is not a folder"
    if info.st_uid != os.getuid():
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o077:
        return f"others can enter it (mode {info.st_mode & 0o777:04o}, must be 0700)"
    return None


def refused_problem(root: str | os.PathLike[str]) -> tuple[str, str] | None:
    """``(what, fix)`` when a runtime folder for ``root`` is refused, else None.

    ``what`` says which folder, why, and what follows (the service off, or another folder used);
    ``fix`` the command or setting that mends it."""
    bad = [(f, why) for f in candidate_folders() if (why := refusal(f)) is not None]
    if not bad:
        return None
    found = for_root(root)
    effect = (
        "the resident service is off (every prompt hook answers in-process, slower)" if found is None
        else f"the service uses {found.folder} instead"
    )
    what = "runtime folder refused: " + "; ".join(f"{f} ({why})" for f, why in bad) + f"; {effect}"
    fixes = []
    for f, why in bad:
        if why.startswith("others can enter"):
            fixes.append(f"chmod 700 {f}")
        elif why.startswith("it belongs to another user"):
            fixes.append(f"have its owner or an administrator remove {f}, or set XDG_RUNTIME_DIR to a folder of yours (mode 0700)")
        else:
            fixes.append(f"remove {f} (it is recreated as a private folder), or set XDG_RUNTIME_DIR to a folder of yours (mode 0700)")
    return what, "; ".join(fixes)
