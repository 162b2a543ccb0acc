"""What the service's loop, handlers and jobs share: the ``Service`` record, its log, its memory.

Kept apart from :mod:`paqad.serve.server` (the loop) so the handlers can read it without an
import cycle.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paqad import __version__, workspace
from paqad.channel import paths as paths_mod
from paqad.channel import wire

if TYPE_CHECKING:
    from paqad.channel.wire import ServiceInfo
    from paqad.config import Config
    from paqad.repository import Repository
    from paqad.serve.jobs import Jobs

REQUEST_READ_S = 5.0  # a client that connects and sends no request line in this long is dropped
MEMORY_CHECK_S = 0.1  # the resident memory is read after a connection at most this often (the loop reads it each tick too)
LOG_NAME = "serve.log"


def log(root: Path, message: str) -> None:
    """One line in ``<per-developer folder>/logs/serve.log``; never raises."""
    try:
        path = workspace.logs_dir(root) / LOG_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid {os.getpid()} {message}\n")
    except OSError:
        pass


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    """This process's resident memory in MB (``/proc/self/statm``; elsewhere the peak, from getrusage)."""
    try:  # os.read, not open(): a text file object per call was most of this function
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            pages = int(os.read(fd, 512).split()[1])
        finally:
            os.close(fd)
        return pages * _PAGE_SIZE / 1e6
    except (OSError, ValueError, IndexError):
        import resource  # lazy: only where /proc is missing (macOS)

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


class Process(Protocol):
    """The process serving this work tree and others (:class:`paqad.serve.host.Host`)."""

    def stop_all(self, reason: str) -> None: ...

    def alive(self) -> list[str]: ...


@dataclass
class Service:
    """One running service: what the handlers and the loop share."""

    root: Path
    cfg: Config
    paths: paths_mod.ServicePaths
    env: str = field(default_factory=wire.env_fingerprint)
    build: str = field(default_factory=wire.build_fingerprint)
    started: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    requests: int = 0
    active: int = 0
    stop_reason: str | None = None
    jobs: Jobs | None = None
    _state_lock: threading.Lock = field(default_factory=threading.Lock)
    repo: Repository | None = None
    host: Process | None = None  # the per-user process serving this and other work trees (serve.host.Host)
    memory_read: float = 0.0  # when a connection's end last read the resident memory (monotonic)

    def repository(self) -> Repository:
        """The work tree's facade this service hosts (its agent sessions, its jobs)."""
        if self.repo is None:
            from paqad.repository import Repository  # lazy: the handlers import state; the facade loads the whole stack

            self.repo = Repository(self.root, jobs=self.jobs)
        return self.repo

    def stop(self, reason: str) -> None:
        """Stop serving this work tree (the first reason is the one logged)."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def stop_process(self, reason: str) -> None:
        """End the whole process, every work tree it serves (it makes way, or is over its memory cap)."""
        if self.host is not None:
            self.host.stop_all(reason)
        self.stop(reason)

    def begin(self) -> None:
        with self._state_lock:
            self.active += 1
            self.requests += 1
            self.last_active = time.monotonic()

    def end(self) -> None:
        with self._state_lock:
            self.active -= 1
            self.last_active = time.monotonic()

    def memory_due(self) -> bool:
        """True when a connection's end should read the resident memory: at most every
        ``MEMORY_CHECK_S`` (reading ``/proc/self/statm`` after each one was 2.5-4.6 % of a search)."""
        now = time.monotonic()
        if now - self.memory_read < MEMORY_CHECK_S:
            return False
        self.memory_read = now
        return True

    def idle_for(self) -> float:
        busy = self.active > 0 or (self.jobs is not None and self.jobs.busy())
        return 0.0 if busy else time.monotonic() - self.last_active

    def info(self) -> ServiceInfo:
        return {
            "pid": os.getpid(), "version": __version__, "protocol": wire.PROTOCOL, "root": str(self.root),
            "socket": str(self.paths.socket), "started": self.started, "uptime_s": round(time.time() - self.started, 3),
            "requests": self.requests, "active": self.active, "rss_mb": round(rss_mb(), 1),
            "idle_timeout_s": self.cfg.rag_serve_idle_timeout, "memory_cap_mb": self.cfg.rag_serve_memory_cap,
            "jobs": self.jobs.pending() if self.jobs is not None else [],
            # every work tree this process serves (one process per user, issue 34)
            "work_trees": self.host.alive() if self.host is not None else [str(self.root)],
        }
