"""Where a work tree's per-developer state lives: a per-user folder that no ``git pull`` can write.

git treats ignored files as expendable: a commit that force-adds ``.paqad/.config`` (or a
``.paqad/bin/paqad``, or a symlink at ``.paqad/logs/hooks.log``) silently replaces the developer's
own ignored file on the next pull, before any paqad code runs. Refusing such a file afterwards
cannot bring the developer's settings back, so nothing per developer lives in the work tree any
more. The local settings, API keys, index, logs, state, delivered context and audit log of the
work tree at ``/home/ann/src/shop`` live in::

    <data>/trees/home/ann/src/shop.paqad/

where ``<data>`` is ``$PAQAD_DATA_DIR``, else ``$XDG_DATA_HOME/paqad``, else
``~/.local/share/paqad`` (the XDG base-directory default; relative values are ignored, as the
specification says). The folder mirrors the work tree's real path rather than hashing it, so the
git hook shim (a ``sh`` script on every commit) finds it with shell builtins alone (``pwd -P``)
and a person finds it by looking. The ``.paqad`` suffix on the last part keeps a nested work tree
(``shop/vendor/lib``, a submodule) out of its parent's folder. The launcher that hosts' hook
commands run, ``<data>/bin/paqad``, is per user: a committed hook command names no machine path
and never a path inside the repository.

Imports only ``os`` and ``sys``: the thin hook clients import this before deciding whether to load anything.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # no ``typing`` or ``collections.abc`` at run time: 8 modules for an annotation (a hook's budget)
if TYPE_CHECKING:
    from collections.abc import Mapping

TREES = "trees"
SUFFIX = ".paqad"
BIN = "bin"
LAUNCHER = "paqad"


def data_home(environ: Mapping[str, str] | None = None) -> str:
    """paqad's per-user data folder (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    own = env.get("PAQAD_DATA_DIR", "")
    if own and os.path.isabs(own):
        return own
    xdg = env.get("XDG_DATA_HOME", "")
    home = env.get("HOME") or os.path.expanduser("~")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(home, ".local", "share")
    return os.path.join(base, "paqad")


def tree_dir(root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> str:
    """The per-developer folder of the work tree at ``root`` (keyed by its real path)."""
    return os.path.join(data_home(environ), TREES + real_path(root)) + SUFFIX


_REAL: dict[str, tuple[str, tuple[int, int]]] = {}  # absolute path -> (its real path, the folder's device and inode)


def real_path(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath(path)``, kept for an absolute path while it and its real path both reach
    the same file (two ``stat`` calls instead of an ``lstat`` per part of the path: a warm process
    asks for its work tree's folder several times a query). Anything else is resolved afresh."""
    text = os.fspath(path)
    ident = _identity(text) if os.path.isabs(text) else None
    if ident is None:
        return os.path.realpath(text)
    kept = _REAL.get(text)
    if kept is not None and kept[1] == ident and _identity(kept[0]) == ident:
        return kept[0]
    real = os.path.realpath(text)
    if len(_REAL) > 256:
        _REAL.clear()
    _REAL[text] = (real, ident)
    return real


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` reaches, or None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def launcher(environ: Mapping[str, str] | None = None) -> str:
    """The per-user launcher hosts' hook commands run: ``<data>/bin/paqad``."""
    return os.path.join(data_home(environ), BIN, LAUNCHER)


#: The same two lookups in POSIX sh, for the shims and the hook commands written into host configs
#: (kept beside the Python so the two cannot drift; ``tests/localstate_test.py`` runs both). Every
#: expansion is quoted and the variables have names no environment sets: some hosts (Gemini CLI)
#: substitute ``$NAME`` and ``${NAME:-default}`` from their own environment into the command
#: before the shell sees it, which left ``case  in`` (a syntax error) for an unset variable.
SH_DATA_HOME = (
    'paqad_data="${XDG_DATA_HOME:-}"; case "$paqad_data" in /*) ;; *) paqad_data="$HOME/.local/share" ;; esac; '
    'paqad_data="$paqad_data/paqad"; case "${PAQAD_DATA_DIR:-}" in /*) paqad_data="$PAQAD_DATA_DIR" ;; esac; '
)
SH_TREE_DIR = SH_DATA_HOME + 'paqad_tree="$paqad_data/' + TREES + '$(pwd -P)' + SUFFIX + '"; '


#: numpy's BLAS (OpenBLAS in its wheels) runs a matrix product on a thread per core and keeps them
#: spinning after it: the one product a query makes (the query against every unit's vector) then
#: cost about six times its CPU on a shared two-core machine, and the service's warm prompt a third
#: more (benchmarks/README.md, "Query cost"). Read once, when numpy loads; a value the user set wins.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def one_blas_thread(environ: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Set ``BLAS_THREADS`` to 1 in ``environ`` (default: this process's, before numpy is imported)
    unless set already: every paqad process and the services it starts."""
    env = os.environ if environ is None else environ
    for var in BLAS_THREADS:
        env.setdefault(var, "1")


def python_argv(*args: str, python: str | None = None) -> list[str]:
    """How paqad starts itself in a new Python: ``-P``, so neither the working directory nor a
    script's folder goes on ``sys.path`` (a repository's ``yaml.py`` or ``paqad/`` shadows
    nothing), but unlike ``-I`` the user's site-packages and ``PYTHON*`` variables still apply.
    Every process paqad starts runs through here or through the shims' ``-P`` (tests/hostile_repo_test.py
    finds each one)."""
    return [python or sys.executable, "-P", "-m", "paqad", *args]


def child_cwd(root: str | os.PathLike[str]) -> str:
    """A working directory for a child that no repository content can be in: the work tree's
    per-developer folder when it exists, else the filesystem root. Children get ``--root``."""
    folder = tree_dir(root)
    return folder if os.path.isdir(folder) else os.sep
