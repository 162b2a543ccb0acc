"""The one channel for git events: the files the git shims and whoever takes their events share.

A git shim (``hooks/git-hook.tmpl``, POSIX sh) tests ``SERVE_PID_FILE`` and ``BURST_PID_FILE`` in
the work tree's ``state/`` folder (per developer, :func:`paqad.workspace.state_dir`) with ``kill -0``;
when either names a live process it appends its event to ``EVENTS_FILE`` and starts nothing. The
resident service and the burst process (:mod:`paqad.hooks.gitburst`) take the events with
:func:`take`. The sh spells none of these names: the template has a mark for each
(``SH_MARKS``), replaced when the hooks are installed (:func:`paqad.hooks.gitshims.render_shim`);
``tests/githooks_test.py`` runs a rendered shim against :func:`path`.
"""

from __future__ import annotations

import os
from pathlib import Path

from paqad import workspace

SERVE_PID_FILE = "serve.pid"  # written by a running service for its whole life
BURST_PID_FILE = "git-burst.pid"  # written by the burst process while it takes events
EVENTS_FILE = "git-events"  # one git event per line, appended by the shims
#: The shim template's marks and the names they become: every file name the sh uses.
SH_MARKS = {"@STATE_DIR@": workspace.STATE_DIR, "@SERVE_PID_FILE@": SERVE_PID_FILE, "@BURST_PID_FILE@": BURST_PID_FILE, "@EVENTS_FILE@": EVENTS_FILE}


def path(root: Path, name: str) -> Path:
    """``name`` (one of the three above) in ``root``'s per-developer state folder."""
    return workspace.state_dir(root) / name


def take(root: Path) -> list[str]:
    """The events the shims appended since the last look (the file is renamed away first, so an
    append racing with us lands in a fresh file, read at the next look)."""
    events = path(root, EVENTS_FILE)
    taken = events.with_name(f"{EVENTS_FILE}.{os.getpid()}")
    try:
        os.replace(events, taken)
    except FileNotFoundError:
        return []
    try:
        return [line.strip() for line in taken.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    finally:
        taken.unlink(missing_ok=True)


def claim(root: Path, name: str, durable: bool = False) -> None:
    """Write this process's pid to ``name`` (the shims then leave their events); never raises."""
    try:
        workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
        workspace.atomic_write_text(path(root, name), f"{os.getpid()}\n", durable=durable, mode=0o644)
    except OSError:
        pass


def release(root: Path, name: str) -> None:
    """Remove ``name`` when it still names this process; never raises."""
    try:
        if path(root, name).read_text(encoding="ascii").strip() == str(os.getpid()):
            path(root, name).unlink()
    except (OSError, ValueError):
        pass
