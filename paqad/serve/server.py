"""A work tree's service: the lock, the socket, the loop, when it stops; served by the user's one process.

``paqad serve`` (started on demand by a door's in-process fallback, or by hand) runs
:func:`serve`: when no process of this user runs, it becomes that process (:mod:`paqad.serve.host`:
the user's lock and control socket) and serves the work tree; otherwise it asks the running one to
adopt the work tree and exits. Each work tree served, in order (:func:`run_tree`):

1. take the work tree's lock (``flock`` on ``<key>.lock`` in the runtime folder, held while it is
   served: a killed process releases it, so a lock is never stale);
2. warm up: import the search and indexing stack (once per process), open the ``Index``, load the
   vector matrix and the query model (loaded once per process, shared by every work tree);
3. remove a socket file left by a dead process (safe: we hold the lock), bind the Unix socket
   (0600, in the 0700 runtime folder; never a TCP port), write the info and pid files;
4. serve on a thread of its own, each connection on a thread of its own (:mod:`paqad.serve.handlers`;
   threads are reused, ``_Workers``), until
   - no request for ``rag_serve_idle_timeout`` seconds and no background job running (``idle``),
   - ``paqad serve stop``, ``rag_serve`` turned off, the work tree or its per-developer folder
     removed (nothing is written where it was);
   or, for every work tree of the process at once: the resident memory past
   ``rag_serve_memory_cap`` MB, a newer client, a client with other settings, SIGTERM/SIGINT;
5. remove its socket, info and pid files, release the lock, drop its index and caches. The
   process ends when no work tree is left.

Each start and exit is one line in the work tree's ``serve.log`` (per-developer logs folder).
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from paqad import __version__, config, workspace
from paqad.channel import calls, client, gitevents
from paqad.channel import paths as paths_mod
from paqad.hooks import runner
from paqad.serve import host as host_mod
from paqad.serve.state import Service, log, rss_mb

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.serve.handlers import Held

LOCK_WAIT_S = 5.0  # a successor waits this long for a predecessor that is exiting
LOOP_TICK_S = 0.5  # how often the accept loop checks idleness, memory and the stop flag


# ---- the lock and the socket ------------------------------------------------------------------


def take_lock(path: str, wait: float = LOCK_WAIT_S) -> int | None:
    """The service lock's fd (held until closed), or None when another service holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for `paqad serve status` and test teardown
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


def listen(paths: paths_mod.ServicePaths) -> socket.socket:
    """Bind the Unix socket (a file left by a dead service is removed first: we hold the lock)."""
    try:
        os.unlink(paths.socket)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(os.fsencode(str(paths.socket)))
    finally:
        os.umask(old)
    sock.listen(64)
    sock.settimeout(LOOP_TICK_S)
    return sock


def _remove_ours(paths: paths_mod.ServicePaths) -> None:
    """Remove the socket and the info file: ours, since nobody else can bind while we hold the lock."""
    for path in (paths.socket, paths.info):
        try:
            os.unlink(path)
        except OSError:
            pass


# ---- the loop ----------------------------------------------------------------------------------


def _write_pid_file(root: Path) -> None:
    """``gitevents.SERVE_PID_FILE``: the git shims test it with ``kill -0`` before starting Python."""
    gitevents.claim(root, gitevents.SERVE_PID_FILE, durable=True)


def _remove_pid_file(root: Path) -> None:
    gitevents.release(root, gitevents.SERVE_PID_FILE)


def _git_events(svc: Service) -> None:
    """The events the shims left, each queued as the ``git-event`` op queues one
    (``Repository.git_event``: a coalesced job per action ``hooks.yaml`` lists)."""
    events = [e for e in gitevents.take(svc.root) if e in calls.GIT_EVENTS]
    if not events or svc.jobs is None:
        return
    svc.last_active = time.monotonic()
    repo = svc.repository()
    try:
        for event in events:
            repo.git_event(calls.GitEvent(event))
    except Exception as exc:  # noqa: BLE001 - a broken hooks.yaml: logged, as the runner would
        runner.log_result(svc.root, runner.RunResult(events[-1], "-", "service", runner.RunStatus.ERROR, 2, error=str(exc)[:500]))


def _check(svc: Service) -> None:
    """Take the shims' git events; decide whether to exit: idle, over the memory cap, or the work tree gone."""
    _git_events(svc)
    if svc.idle_for() > svc.cfg.rag_serve_idle_timeout:
        svc.stop(f"idle for {svc.cfg.rag_serve_idle_timeout:g}s")
    elif rss_mb() > svc.cfg.rag_serve_memory_cap:
        svc.stop_process(f"memory cap: {rss_mb():.0f} MB > {svc.cfg.rag_serve_memory_cap} MB")
    elif not svc.root.is_dir() or not workspace.is_set_up(svc.root):
        svc.stop("work tree or its paqad folder removed")
    elif not os.path.exists(svc.paths.socket):
        svc.stop("socket file removed (nobody can reach this service)")


class _Workers:
    """The threads answering one work tree's connections: a connection goes to an idle one, or to a
    new thread when none is idle (so no request waits for another, as with a thread per
    connection), and up to ``KEEP_IDLE`` wait for the next. Starting a thread per connection (its
    locks, its start handshake) was a tenth of a warm search's CPU in the service."""

    KEEP_IDLE = 4

    def __init__(self, answer: Callable[[Held], None]) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting on the queue, not yet promised a connection
        self._closed = False
        self._queue: queue.SimpleQueue[Held | None] = queue.SimpleQueue()

    def submit(self, conn: Held) -> None:
        with self._lock:
            spare = self._idle > 0
            if spare:
                self._idle -= 1
        self._queue.put(conn)
        if not spare:
            threading.Thread(target=self._work, name="paqad-serve-conn", daemon=True).start()

    def close(self) -> None:
        """Let the idle threads end (a busy one ends after its connection)."""
        with self._lock:
            self._closed, idle, self._idle = True, self._idle, 0
        for _ in range(idle):
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            conn = self._queue.get()
            if conn is None:
                return
            self._answer(conn)
            with self._lock:
                if self._closed or self._idle >= self.KEEP_IDLE:
                    return
                self._idle += 1


def _loop(svc: Service, sock: socket.socket) -> None:
    from paqad.serve import handlers  # lazy: the search stack; a `paqad serve` that hands its tree to the host never loads it

    checked = time.monotonic()
    workers = _Workers(lambda out: handlers.connection(svc, out))
    held: list[Held] = []  # connections whose ack may be held for their reply (handlers.ACK_HOLD_S)
    try:
        while svc.stop_reason is None:
            try:
                conn, _ = sock.accept()
                out = handlers.Held(conn)
                held.append(out)
                workers.submit(out)
            except TimeoutError:
                pass
            except OSError:
                if svc.stop_reason is None:
                    svc.stop("socket closed")
                break
            wait = LOOP_TICK_S if handlers.flush_acks(held) is None else handlers.ACK_HOLD_S  # a held ack past its hold goes alone
            if wait != sock.gettimeout():  # each settimeout is a system call: two values, set on a change
                sock.settimeout(wait)
            if time.monotonic() - checked >= LOOP_TICK_S:  # a steady stream of requests must not starve the checks
                checked = time.monotonic()
                _check(svc)
    finally:
        workers.close()


def serve(root: Path, cfg: Config) -> int:
    """Serve ``root``: as the user's host process (:mod:`paqad.serve.host`) when none runs, else
    by asking the running host to adopt it; returns the exit code (0)."""
    paths = paths_mod.for_root(root, create=True)
    user = paths_mod.for_user(create=True)
    if paths is None or user is None:
        log(root, "not started: no private runtime folder with a short enough socket path")
        return 0
    deadline = time.monotonic() + LOCK_WAIT_S
    while client.lock_held(paths.lock):  # served already, or by a process on its way out (making way)
        if time.monotonic() > deadline:
            return 0
        time.sleep(0.05)
    deadline = time.monotonic() + host_mod.ADOPT_TIMEOUT_S  # a host busy warming another work tree answers late
    while True:
        fd = take_lock(user.lock, wait=0)
        if fd is not None:
            return _host(fd, user, root, cfg)
        why = host_mod.ask_adopt(user, root)
        if why == "ok":
            return 0
        if why.startswith("refused:") and why not in (*client.MAKING_WAY, "refused:stopping") or time.monotonic() > deadline:
            log(root, f"not started: the user's paqad service did not take this work tree ({why})")
            return 0
        time.sleep(0.1)  # the host is starting, or exiting (making way): its lock is free in a moment


def _host(fd: int, user: paths_mod.ServicePaths, first: Path, cfg: Config) -> int:
    """Be the user's host: serve ``first``, adopt the work trees later doors ask for, until none is left."""
    host = host_mod.Host()
    pending = [0]

    def adopt(root: Path, cfg: Config | None = None) -> str | None:
        pending[0] += 1
        try:
            return run_tree(host, root, cfg or config.load(root))
        except Exception as exc:  # noqa: BLE001 - a tree that cannot be served is refused; the others go on
            return f"error: {type(exc).__name__}"
        finally:
            pending[0] -= 1

    ctl = listen(user)
    try:
        _install_signals(host)
        why = adopt(first, cfg)
        if why is not None:
            log(first, f"not started: {why}")
        workspace.atomic_write_text(Path(user.info), json.dumps({"pid": os.getpid(), "version": __version__}), mode=0o600)
        while host.alive() or pending[0]:
            try:
                conn, _ = ctl.accept()
                threading.Thread(target=host_mod.answer, args=(host, conn, adopt), name="paqad-serve-adopt", daemon=True).start()
            except TimeoutError:
                pass
            except OSError:
                host.stop_all("control socket closed")
                break
    finally:
        _remove_ours(user)
        ctl.close()
        os.close(fd)
    return 0


def run_tree(host: host_mod.Host, root: Path, cfg: Config) -> str | None:
    """Serve ``root`` on a thread of its own (its lock, socket, info and pid files, log); None, or why not."""
    from paqad.serve import handlers  # lazy: the search stack; a `paqad serve` that hands its tree to the host never loads it
    from paqad.serve.jobs import Jobs  # lazy: as above (the job queue only the host runs)

    key = host_mod.key_of(root)
    with host.lock:
        if key in host.threads and host.threads[key].is_alive():
            return None
    if not workspace.is_set_up(root):
        return "not_set_up"
    paths = paths_mod.for_root(root, create=True)
    if paths is None:
        return "no-runtime-dir"
    fd = take_lock(paths.lock)
    if fd is None:
        return "locked"
    svc = Service(root, cfg, paths, host=host)
    svc.jobs = Jobs(root)
    handlers.warm(svc)
    sock = listen(paths)
    workspace.atomic_write_text(Path(paths.info), json.dumps(svc.info()), mode=0o600)
    _write_pid_file(root)
    log(root, f"started (paqad {__version__}, socket {paths.socket}, {rss_mb():.0f} MB, {len(host.alive()) + 1} work trees in this process)")
    thread = threading.Thread(target=_tree_loop, args=(svc, sock, fd), name="paqad-serve-tree", daemon=True)
    with host.lock:
        host.trees[key], host.threads[key] = svc, thread
    thread.start()
    return None


def _tree_loop(svc: Service, sock: socket.socket, fd: int) -> None:
    """One work tree's accept loop; then its files removed, its lock released, its index dropped."""
    from paqad.index.reader import Index  # lazy: as handlers above (the host's thread only)

    try:
        _loop(svc, sock)
    finally:
        _remove_pid_file(svc.root)
        _remove_ours(svc.paths)
        sock.close()
        log(svc.root, f"exited: {svc.stop_reason or 'error'} after {svc.requests} requests")
        os.close(fd)
        if svc.jobs is not None:
            svc.jobs.close()
        Index.forget(svc.root)  # its index and caches go with it; the model stays for the others


def _install_signals(host: host_mod.Host) -> None:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        host.stop_all(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
