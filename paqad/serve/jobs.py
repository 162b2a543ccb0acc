"""The service's background work: hook actions run in-process, a burst of requests coalesced.

A git hook (post-commit, post-rewrite ...) or a prompt that answered from an index behind the
working tree asks for an action (``rag-update``, ``refresh-context``). Without a service each
request starts a detached process; here it only marks the action pending. One worker thread runs
a pending action once no new request for it came for ``QUIET_S`` (or ``debounce`` seconds after the
first, so a long burst still makes progress): 50 commits in a tight loop become a few updates,
run with the model and the index already warm.

The runner's single-flight lock is still taken (``paqad.hooks.runner.claim``), so a detached
update started by a door that could not reach the service never runs beside this one: whoever
holds the lock runs once more for the other's request. Each run is logged to
``<per-developer folder>/logs/hooks.log`` with mode ``service``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from paqad.hooks import runner

QUIET_S = 0.3
MODE = "service"
FILE_EVENT = "file-changed"  # the event a host's file-change hook names in the log
SKIPPED_DIRS = (".git", ".paqad")


def _in_work_tree(root: Path, name: str) -> bool:
    """True when ``name`` lies in ``root`` and outside the folders paqad never indexes."""
    base = os.path.realpath(root)
    path = os.path.realpath(os.path.join(base, name))
    rel = os.path.relpath(path, base)
    return rel != "." and not rel.startswith(os.pardir) and rel.split(os.sep, 1)[0] not in SKIPPED_DIRS


@dataclass
class Pending:
    spec: runner.ActionSpec
    event: str
    first: float
    last: float

    def due(self, now: float) -> float:
        """Seconds until this action should run (0 or less: now)."""
        return min(self.last + QUIET_S, self.first + max(self.spec.debounce, QUIET_S)) - now


class Jobs:
    """The pending actions of one work tree and the thread that runs them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._pending: dict[str, Pending] = {}
        self._running: str | None = None
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="paqad-serve-jobs", daemon=True)
        self._thread.start()

    def request(self, spec: runner.ActionSpec, event: str) -> None:
        """Mark ``spec.action`` pending for ``event`` (the latest event names the run)."""
        now = time.monotonic()
        with self._cond:
            old = self._pending.get(spec.action)
            self._pending[spec.action] = Pending(spec, event, old.first if old else now, now)
            self._cond.notify()

    def refresh(self, root: Path) -> None:
        """The prompt hook's background refresh, as a pending ``refresh-context``."""
        self.request(runner.ActionSpec("refresh-context"), "prompt-submit")

    def files_changed(self, root: Path, files: list[str]) -> None:
        """A host wrote ``files`` (absolute, or relative to ``root``): a pending ``rag-update``
        (the burst of edits of one agent turn becomes one), unless none is in the work tree
        outside ``.git/`` and ``.paqad/``. The update finds what changed by size and mtime, so
        a file renamed or deleted since is handled too, and embeds the new units with the warm model."""
        if any(_in_work_tree(root, f) for f in files):
            self.request(runner.ActionSpec("rag-update"), FILE_EVENT)

    def busy(self) -> bool:
        with self._cond:
            return bool(self._pending) or self._running is not None

    def pending(self) -> list[str]:
        with self._cond:
            return sorted(self._pending) + ([f"{self._running} (running)"] if self._running else [])

    def close(self) -> None:
        """End the worker once it is between jobs (the work tree is released); pending ones are dropped."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify()

    def _next(self) -> Pending | None:
        with self._cond:
            while True:
                if self._closed:
                    return None
                now = time.monotonic()
                due = [(p.due(now), name) for name, p in self._pending.items()]
                if due and min(due)[0] <= 0:
                    name = min(due)[1]
                    self._running = name
                    return self._pending.pop(name)
                self._cond.wait(min(due)[0] if due else None)

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            try:
                lock = runner.claim(self.root, job.spec.action, job.event)
                if lock is not None:  # else its holder runs once more for this request
                    runner.run_held(self.root, job.event, job.spec, lock, MODE)
            except Exception as exc:  # noqa: BLE001 - a failed job is logged; the service goes on
                runner.log_result(self.root, runner.RunResult(job.event, job.spec.action, MODE, runner.RunStatus.ERROR, 1, error=str(exc)[:500]))
            finally:
                with self._cond:
                    self._running = None
