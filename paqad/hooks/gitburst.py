"""A burst of git events with no service running: one Python for the burst, not one per commit.

Without a resident service, each commit's shim used to start a Python process (the hook client,
which then runs the runner: a detached, debounced update). 50 commits in a tight loop were 50 of
them, 6.5x git's own time on two cores (benchmarks/README.md). Now the shim starts that Python in
the background with :func:`run` as its body and writes its pid to ``gitevents.BURST_PID_FILE`` in the
per-developer state folder; while it is alive the next commits' shims only append their event to
``gitevents.EVENTS_FILE`` (the file a service reads too; :mod:`paqad.channel.gitevents` owns the names) and start nothing, as they do for a running service. This process
runs the event's actions as before (``runner.run_event``: the detached, single-flight update), then
waits ``QUIET_S``; if events arrived meanwhile it runs the actions of each (the runner coalesces
them into its rerun), and waits again, until a quiet window passes. Its own session (``setsid``):
a terminal closing does not take it down halfway.

An event appended in the instant between the last look and the pid file's removal is taken by a
last look after the removal; one still later starts a new process (the shim finds no live pid).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from paqad.channel import gitevents
from paqad.hooks import runner

QUIET_S = 1.0  # a commit loop's commits come well inside this; a human's next commit well outside
LAST_LOOK_S = 0.2  # after removing the pid file: a shim that had read it has appended by then
MAX_S = 600.0  # a burst that never ends (a script committing forever) still ends this process


def _claim(root: Path) -> None:
    gitevents.claim(root, gitevents.BURST_PID_FILE)


def _release(root: Path) -> None:
    gitevents.release(root, gitevents.BURST_PID_FILE)


def run(root: Path, event: str, quiet: float = QUIET_S) -> None:
    """Run ``event``'s actions, then those of every event the shims leave until ``quiet`` seconds
    pass without one; never raises (the runner logs each run)."""
    try:
        os.setsid()
    except OSError:  # already a session leader
        pass
    _claim(root)
    started = time.monotonic()
    pending = [event]
    try:
        while True:
            for name in dict.fromkeys(reversed(pending)):  # each event once, the latest first
                if name in runner.GIT_EVENTS:
                    runner.run_event(root, name)
            if time.monotonic() - started > MAX_S:
                break
            time.sleep(quiet)
            pending = gitevents.take(root)
            if pending:
                continue
            _release(root)
            time.sleep(LAST_LOOK_S)
            pending = gitevents.take(root)
            if not pending:
                break
            _claim(root)
    finally:
        _release(root)
