"""How a host's hook command finds paqad: the git-ignored ``.paqad/bin/paqad`` shim first, then PATH.

A host config is committed (``.claude/settings.json``, ``.gemini/settings.json``, ...), so the
command written there names no machine path. ``paqad hooks install`` writes a per-machine shim,
``.paqad/bin/paqad``, that runs the interpreter which installed the hooks (the git shim records
it the same way, like pre-commit's hook template) and falls back to ``paqad`` on PATH when that
interpreter is gone. The folder carries its own ``.gitignore`` (``*``), so the shim is never
committed even in a repository whose ``.paqad/.gitignore`` predates it. The hook command looks
for the shim at the top of the repository the host runs in (a host may start the hook from a
subfolder), then for ``paqad`` on PATH, and does nothing (exit 0) when neither is there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import paqad
from paqad import workspace

SHIM_REL = ".paqad/bin/paqad"
SHIM_ID = "# paqad-hook-id: paqad-host-shim-v1"
#: The shell prefix every host command starts with: ``$p`` is the paqad to run, or the hook exits 0.
FIND = 'r=$(git rev-parse --show-toplevel 2>/dev/null); p="$r/' + SHIM_REL + '"; [ -x "$p" ] || p=$(command -v paqad) || exit 0; '
#: Marks of hook commands written by older paqad versions (PATH only); ``doctor`` flags them.
OLD_PREFIX = "command -v paqad >/dev/null 2>&1 && paqad hook run"


def command(event: str, host: str) -> str:
    """The hook command written into a host's config (contains ``paqad hook run``, paqad's mark)."""
    return f'{FIND}"$p" hook run {event} --host {host} || true'


#: What an MCP entry that cannot name a machine path runs (the Claude Code plugin's ``.mcp.json``):
#: the same search as ``FIND``, but a server that cannot start says why on stderr (the host shows it).
SERVE = (
    'r=$(git rev-parse --show-toplevel 2>/dev/null); p="$r/' + SHIM_REL + '"; [ -x "$p" ] || p=$(command -v paqad) || '
    "{ echo \"paqad: not found (no " + SHIM_REL + " in this repository, no paqad on PATH): pip install 'paqad[mcp]'\" >&2; exit 1; }; "
    'exec "$p" mcp'
)
#: What the shim runs: the CLI's entry point, as ``python -m paqad`` would, minus ``runpy`` (its
#: imports cost a prompt hook ~4 ms of CPU; benchmarks/shim_cost.py). ``-P`` keeps the hook's
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
        check = '"$PY" -c "import paqad" >/dev/null 2>&1'
    return (
        f"#!/bin/sh\n{SHIM_ID}\n"
        "# Written by `paqad hooks install` for this machine (git-ignored): the paqad that installed\n"
        "# the agent hooks, else paqad on PATH. `paqad doctor` checks it; `paqad hooks install` rewrites it.\n"
        f"PY={shlex.quote(py)}\n"
        f'if [ -x "$PY" ] && {check}; then exec "$PY" -P -c {shlex.quote(ENTRY)} "$@"; fi\n'
        'command -v paqad >/dev/null 2>&1 && exec paqad "$@"\n'
        "exit 0\n"
    )


def write_shim(root: Path, python: str | None = None) -> str:
    """Write (or refresh) the shim and its ``.gitignore``; installed | updated | unchanged."""
    path = root / SHIM_REL
    text = shim_text(python)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        workspace.atomic_write_text(ignore, "# Written by paqad: per-machine launchers, never committed.\n*\n", mode=0o644)
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text and os.access(path, os.X_OK):
        return "unchanged"
    workspace.atomic_write_text(path, text, mode=0o755)
    return "updated" if old is not None else "installed"


def shim_python(root: Path) -> str | None:
    """The interpreter the shim runs (its ``PY=`` line), None without a paqad shim."""
    try:
        text = (root / SHIM_REL).read_text(encoding="utf-8")
    except OSError:
        return None
    if SHIM_ID not in text:
        return None
    for line in text.splitlines():
        if line.startswith("PY="):
            parts = shlex.split(line[3:])
            return parts[0] if parts else None
    return None


def resolve(root: Path, path_env: str | None = None) -> tuple[str | None, str]:
    """Which paqad a hook command started in ``root`` runs, and how it was found (shim | PATH | none)."""
    shim = root / SHIM_REL
    if shim.is_file() and os.access(shim, os.X_OK):
        python = shim_python(root)
        if python and os.access(python, os.X_OK) and _imports_paqad(python):
            return python, "shim"
        found = shutil.which("paqad", path=path_env)
        return found, "shim → PATH" if found else "none"
    found = shutil.which("paqad", path=path_env)
    return found, "PATH" if found else "none"


def _imports_paqad(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "import paqad"], capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
