"""The resident process of one work tree: the lock, the socket, the loop, and when it exits.

``paqad serve`` (started on demand by a door's in-process fallback, or by hand) runs
:func:`serve`. In order:

1. take the work tree's lock (``flock`` on ``<key>.lock`` in the runtime folder, held for life: a
   killed service releases it, so a lock is never stale) or exit at once (one service per work
   tree; a successor waits a moment for a predecessor that was just asked to exit);
2. warm up: import the search and indexing stack, open the ``Index``, load the vector matrix and
   the query model (so the first request is answered warm);
3. remove a socket file left by a dead process (safe: we hold the lock), bind the Unix socket
   (0600, in the 0700 runtime folder; never a TCP port), write the info file;
4. serve: one thread per connection (:mod:`paqad.serve.handlers` does the work), until
   - no request for ``rag_serve_idle_timeout`` seconds and no background job running (``idle``),
   - the resident memory passes ``rag_serve_memory_cap`` MB (``memory cap``: the next door
     starts a fresh one),
   - ``paqad serve stop``, a newer client, a client with other settings, ``rag_serve`` turned off,
     the work tree or its per-developer folder removed, or SIGTERM/SIGINT;
5. remove its socket and info file and release the lock.

Each start and exit is one line in ``serve.log`` of the per-developer logs folder.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paqad import __version__, workspace
from paqad.channel import gitevents
from paqad.channel import paths as paths_mod
from paqad.serve.state import Service, log, rss_mb

if TYPE_CHECKING:
    from paqad.config import Config

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
    """Queue the actions ``hooks.yaml`` lists for each event the shims left (one job per action)."""
    from paqad.hooks import runner

    events = [e for e in gitevents.take(svc.root) if e in runner.GIT_EVENTS]
    if not events or svc.jobs is None:
        return
    svc.last_active = time.monotonic()
    try:
        config = runner.load_config(svc.root)
    except Exception as exc:  # noqa: BLE001 - a broken hooks.yaml: logged, as the runner would
        runner.log_result(svc.root, runner.RunResult(events[-1], "-", "service", runner.RunStatus.ERROR, 2, error=str(exc)[:500]))
        return
    for event in events:
        for spec in config.get(event, ()):
            svc.jobs.request(spec, event)


def _check(svc: Service) -> None:
    """Take the shims' git events; decide whether to exit: idle, over the memory cap, or the work tree gone."""
    _git_events(svc)
    if svc.idle_for() > svc.cfg.rag_serve_idle_timeout:
        svc.stop(f"idle for {svc.cfg.rag_serve_idle_timeout:g}s")
    elif rss_mb() > svc.cfg.rag_serve_memory_cap:
        svc.stop(f"memory cap: {rss_mb():.0f} MB > {svc.cfg.rag_serve_memory_cap} MB")
    elif not svc.root.is_dir() or not workspace.is_set_up(svc.root):
        svc.stop("work tree or its paqad folder removed")
    elif not os.path.exists(svc.paths.socket):
        svc.stop("socket file removed (nobody can reach this service)")


def _loop(svc: Service, sock: socket.socket) -> None:
    from paqad.serve import handlers

    checked = time.monotonic()
    while svc.stop_reason is None:
        try:
            conn, _ = sock.accept()
            threading.Thread(target=handlers.connection, args=(svc, conn), name="paqad-serve-conn", daemon=True).start()
        except TimeoutError:
            pass
        except OSError:
            if svc.stop_reason is None:
                svc.stop("socket closed")
            break
        if time.monotonic() - checked >= LOOP_TICK_S:  # a steady stream of requests must not starve the checks
            checked = time.monotonic()
            _check(svc)


def serve(root: Path, cfg: Config) -> int:
    """Run the service for ``root`` until it has a reason to exit; returns the exit code (0)."""
    paths = paths_mod.for_root(root, create=True)
    if paths is None:
        log(root, "not started: no private runtime folder with a short enough socket path")
        return 0
    fd = take_lock(paths.lock)
    if fd is None:
        return 0  # another service has this work tree
    from paqad.serve import handlers
    from paqad.serve.jobs import Jobs

    svc = Service(root, cfg, paths)
    svc.jobs = Jobs(root)
    handlers.warm(svc)
    sock = listen(paths)
    try:
        workspace.atomic_write_text(Path(paths.info), json.dumps(svc.info()), mode=0o600)
        _install_signals(svc, sock)
        _write_pid_file(root)
        log(root, f"started (paqad {__version__}, socket {paths.socket}, {rss_mb():.0f} MB)")
        _loop(svc, sock)
    finally:
        _remove_pid_file(root)
        _remove_ours(paths)
        sock.close()
        log(root, f"exited: {svc.stop_reason or 'error'} after {svc.requests} requests")
        os.close(fd)
    return 0


def _install_signals(svc: Service, sock: socket.socket) -> None:
    def on_signal(signum: int, frame: Any) -> None:
        svc.stop(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
