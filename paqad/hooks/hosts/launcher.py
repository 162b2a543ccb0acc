"""How a host's hook command finds paqad: the per-user launcher ``<data>/bin/paqad`` first, then PATH.

A host config is committed (``.claude/settings.json``, ``.gemini/settings.json``, ...), so the
command written there names no machine path, and it never runs a path inside the repository:
anything there can come from a pull (an attacker's force-committed ``.paqad/bin/paqad`` ran on
every prompt when commands preferred it). ``paqad hooks install`` writes a per-user launcher in
paqad's data folder (:func:`paqad.localstate.launcher`, ``~/.local/share/paqad/bin/paqad`` by
default) that runs the interpreter which installed the hooks with ``-P`` (the git shim records it
the same way, like pre-commit's hook template) and falls back to ``paqad`` on PATH when that
interpreter is gone. The hook command finds it with shell builtins alone, then ``paqad`` on PATH,
and does nothing (exit 0) when neither is there. Commands written by older versions, which looked
for ``.paqad/bin/paqad`` in the repository first, are recognised (:data:`OLD_MARKS`) and rewritten
by the next ``paqad hooks install``; ``paqad doctor`` flags them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import paqad
from paqad import localstate, workspace

SHIM_ID = "# paqad-hook-id: paqad-host-shim-v2"
#: Marks of paqad's own launchers, current and older (``doctor`` tells ours from a planted one).
SHIM_IDS = (SHIM_ID, "# paqad-hook-id: paqad-host-shim-v1")
#: Where the launcher is, for messages (the real path: :func:`shim_path`).
SHIM_DISPLAY = "~/.local/share/paqad/bin/paqad"
#: The shell prefix every host command starts with: ``$paqad_exe`` is the paqad to run, or the hook exits 0.
FIND = localstate.SH_DATA_HOME + 'paqad_exe="$paqad_data/bin/paqad"; [ -x "$paqad_exe" ] || paqad_exe=$(command -v paqad) || exit 0; '
#: What marks a command as paqad's (it survives JSON escaping): the launcher's path in ``FIND``.
COMMAND_MARK = "$paqad_data/bin/paqad"
#: The repository-relative launcher of older versions; a command naming it runs repository content.
OLD_SHIM_REL = ".paqad/bin/paqad"
#: Marks of hook commands written by older paqad versions (PATH only, or the repository's shim
#: first); ``doctor`` flags them and ``hooks install`` rewrites them.
OLD_PREFIX = "command -v paqad >/dev/null 2>&1 && paqad hook run"
OLD_MARKS = (OLD_PREFIX, OLD_SHIM_REL)


def shim_path() -> Path:
    """The per-user launcher the hook commands run first."""
    return Path(localstate.launcher())


def command(event: str, host: str) -> str:
    """The hook command written into a host's config (contains ``paqad hook run``, paqad's mark)."""
    return f'{FIND}"$paqad_exe" hook run {event} --host {host} || true'


#: What an MCP entry that cannot name a machine path runs (the Claude Code plugin's ``.mcp.json``):
#: the same search as ``FIND``, but a server that cannot start says why on stderr (the host shows it).
SERVE = (
    localstate.SH_DATA_HOME + 'paqad_exe="$paqad_data/bin/paqad"; [ -x "$paqad_exe" ] || paqad_exe=$(command -v paqad) || '
    "{ echo \"paqad: not found (no launcher at $paqad_data/bin/paqad, no paqad on PATH): install paqad with its mcp extra from its repository (paqad is not on PyPI), then paqad hooks install\" >&2; exit 1; }; "
    'exec "$paqad_exe" mcp'
)
#: What the shim runs: the CLI's entry point, as ``python -m paqad`` would, minus ``runpy`` (its
#: imports cost a prompt hook ~4 ms of CPU; benchmarks/README.md, "The hook shim"). ``-P`` keeps the hook's
#: folder (the repository) off ``sys.path``, so a ``paqad/`` or ``json.py`` in it shadows nothing.
ENTRY = 'import sys; sys.argv[0] = "paqad"; from paqad.cli.main import main; sys.exit(main())'


def shim_text(python: str | None = None) -> str:
    """The shim for ``python`` (default: this interpreter). For this interpreter the shim checks
    that paqad's package file is still where it was installed, a ``test -f`` instead of a second
    Python start (``python -c "import paqad"`` cost every hook ~20-40 ms of CPU before the real
    run); for another interpreter, whose package path this process cannot know, it imports."""
    py = python or sys.executable
    if py == sys.executable:
        check = f"[ -f {shlex.quote(str(Path(paqad.__file__).resolve()))} ]"
    else:
        check = '"$PY" -P -c "import paqad" >/dev/null 2>&1'
    return (
        f"#!/bin/sh\n{SHIM_ID}\n"
        "# Written by `paqad hooks install` for this user: the paqad that installed the agent hooks,\n"
        "# else paqad on PATH. `paqad doctor` checks it; `paqad hooks install` rewrites it.\n"
        f"PY={shlex.quote(py)}\n"
        f'if [ -x "$PY" ] && {check}; then exec "$PY" -P -c {shlex.quote(ENTRY)} "$@"; fi\n'
        'command -v paqad >/dev/null 2>&1 && exec paqad "$@"\n'
        "exit 0\n"
    )


def write_shim(python: str | None = None) -> str:
    """Write (or refresh) the per-user launcher; installed | updated | unchanged.

    The folder is the user's own (0700); a launcher that is a symlink or not paqad's is replaced."""
    path = shim_path()
    text = shim_text(python)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    old = None if path.is_symlink() else _read(path)
    if old == text and os.access(path, os.X_OK):
        return "unchanged"
    if path.is_symlink():
        path.unlink()
    workspace.atomic_write_text(path, text, mode=0o755)
    return "updated" if old is not None else "installed"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def is_our_shim(path: Path) -> bool:
    """True when ``path`` is a regular file carrying one of paqad's launcher marks."""
    text = None if path.is_symlink() else _read(path)
    return text is not None and any(mark in text for mark in SHIM_IDS)


def shim_python(path: Path | None = None) -> str | None:
    """The interpreter a paqad launcher runs (its ``PY=`` line), None without one of ours."""
    path = path or shim_path()
    if not is_our_shim(path):
        return None
    for line in (_read(path) or "").splitlines():
        if line.startswith("PY="):
            parts = shlex.split(line[3:])
            return parts[0] if parts else None
    return None


def resolve(path_env: str | None = None) -> tuple[str | None, str]:
    """Which paqad a hook command runs, and how it was found (shim | shim → PATH | PATH | none)."""
    shim = shim_path()
    if shim.is_file() and os.access(shim, os.X_OK):
        python = shim_python(shim)
        if python and os.access(python, os.X_OK) and _imports_paqad(python):
            return python, "shim"
        found = shutil.which("paqad", path=path_env)
        return found, "shim → PATH" if found else "none"
    found = shutil.which("paqad", path=path_env)
    return found, "PATH" if found else "none"


def _imports_paqad(python: str) -> bool:
    try:
        # -P and a neutral folder: a repository's paqad.py must not answer for the installed one
        done = subprocess.run([python, "-P", "-c", "import paqad"], cwd=os.sep, capture_output=True, timeout=20, check=False)
        return done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
