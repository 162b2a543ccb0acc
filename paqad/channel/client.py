"""Asking a work tree's service, and starting one: what every door calls. Stdlib only.

:func:`request` never raises: it returns an :class:`Outcome` whose ``why`` says what happened
(``answered``, or why the door must answer in-process: ``absent``, ``stale`` (a socket left by a
dead process), ``hung`` (connected, but no acknowledgement within ``ACK_TIMEOUT_S``), ``timeout``
(acknowledged, no reply within its budget), ``crashed`` (closed mid-request), ``refused:<reason>``,
``no-runtime-dir``). Each door logs that word beside its in-process answer.

:func:`start` starts a service detached when no process holds the work tree's lock; it is called
by the doors' in-process fallback, which has the settings loaded (``rag_serve``).

Light on purpose (see :mod:`paqad.channel.paths`): ``_socket``, no ``pathlib``, ``dataclasses`` or
``typing`` at run time; paths may be ``str`` or ``Path``.
"""

from __future__ import annotations

import os
import time
from _socket import SOCK_STREAM, socket

try:
    import fcntl
    from _socket import AF_UNIX
except ImportError:  # no Unix sockets or flock here (Windows): no service; every door answers in-process
    fcntl = None  # type: ignore[assignment]
    AF_UNIX = None  # type: ignore[assignment,misc]

from paqad import __version__, localstate
from paqad.channel import paths as paths_mod
from paqad.channel import wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from paqad.channel.wire import Message
    from paqad.jsontypes import JSON

    Root = str | os.PathLike[str]

CONNECT_TIMEOUT_S = 0.2
REPLY_GRACE_S = 0.3  # past the budget the service acknowledged: rendering, the socket, a busy machine
DEFAULT_REPLY_TIMEOUT_S = 120.0  # a search or an agent operation without a budget of its own
STOP_WAIT_S = 10.0


class Outcome:
    """What asking the service gave: its reply, or why there is none."""

    def __init__(self, why: str, reply: Message | None = None, ack: Message | None = None) -> None:
        self.why = why
        self.reply = reply
        self.ack = ack

    def __repr__(self) -> str:
        return f"Outcome(why={self.why!r}, reply={self.reply!r})"

    @property
    def answered(self) -> bool:
        return self.reply is not None


def base_request(op: str, **fields: JSON) -> Message:
    """A request with the identity every request carries: version, protocol, environment hash."""
    return {"op": op, "version": __version__, "build": wire.build_fingerprint(), "protocol": wire.PROTOCOL, "env": wire.env_fingerprint(), **fields}


def request(
    root: Root, op: str, fields: Message | None = None, *, reply_timeout: float | None = None, ack_timeout: float = wire.ACK_TIMEOUT_S,
    until: Callable[[], float] | None = None, on_ack: Callable[[Message], None] | None = None,
) -> Outcome:
    """Send one request to ``root``'s service and read its ack and reply; never raises.

    ``reply_timeout`` (seconds after the ack): by default the ack's ``budget`` plus a grace, else
    ``DEFAULT_REPLY_TIMEOUT_S``. ``until`` (a prompt hook: its hard stop less a reserve, as
    ``time.monotonic()``) caps every wait, the connect, the ack and the reply, whatever the
    service does: it is asked again before each wait, after ``on_ack`` has seen the ack (which
    may move it: the ack carries the service's budget). Past it the outcome is ``timeout``.
    """
    paths = paths_mod.for_root(root) if AF_UNIX is not None else None
    if paths is None:
        return Outcome("no-runtime-dir" if AF_UNIX is not None else "unsupported")
    left = _left(until)
    if left is not None and left <= 0:
        return Outcome("timeout")
    sock, why = _connect(paths.socket, CONNECT_TIMEOUT_S if left is None else min(CONNECT_TIMEOUT_S, left))
    if sock is None:
        return Outcome(why)
    try:
        return _exchange(sock, base_request(op, **(fields or {})), reply_timeout, ack_timeout, until, on_ack)
    finally:
        sock.close()


def _left(until: Callable[[], float] | None) -> float | None:
    return None if until is None else until() - time.monotonic()


def _connect(path: str, timeout: float = CONNECT_TIMEOUT_S) -> tuple[socket | None, str]:
    sock = socket(AF_UNIX, SOCK_STREAM)
    sock.settimeout(max(0.001, timeout))
    try:
        sock.connect(os.fsencode(path))
    except ConnectionRefusedError:
        sock.close()
        return None, "stale"
    except OSError:
        sock.close()
        return None, "absent"
    return sock, ""


def _exchange(
    sock: socket, req: Message, reply_timeout: float | None, ack_timeout: float,
    until: Callable[[], float] | None = None, on_ack: Callable[[Message], None] | None = None,
) -> Outcome:
    reader = wire.LineReader(sock)
    try:
        wire.send(sock, req)  # bounded by the connect timeout still set on the socket
        left = _left(until)
        ack = reader.read(time.monotonic() + (ack_timeout if left is None else min(ack_timeout, left)))
    except wire.WireError as exc:
        return Outcome("hung" if str(exc) == "timed out" else "crashed")
    except OSError:
        return Outcome("crashed")
    if not ack.get("ack"):
        return Outcome(f"refused:{ack.get('refused', 'unknown')}", ack=ack)
    if on_ack is not None:
        on_ack(ack)
    if reply_timeout is None:
        budget = ack.get("budget")
        reply_timeout = float(budget) + REPLY_GRACE_S if isinstance(budget, (int, float)) else DEFAULT_REPLY_TIMEOUT_S
    left = _left(until)
    if left is not None:
        reply_timeout = min(reply_timeout, left)
    try:
        return Outcome("answered", reader.read(time.monotonic() + reply_timeout), ack)
    except wire.WireError as exc:
        return Outcome("timeout" if str(exc) == "timed out" else "crashed", ack=ack)
    except OSError:
        return Outcome("crashed", ack=ack)


# ---- the lock: is a service running (or starting)? ------------------------------------------


def lock_held(lock_path: str) -> bool:
    """True when a process holds the service lock (a service running, or one starting up)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock we took
    return False


def running(root: Root) -> bool:
    paths = paths_mod.for_root(root)
    return paths is not None and lock_held(paths.lock)


def serve_argv(root: Root, python: str | None = None) -> list[str]:
    """The service's command line: this interpreter, this paqad, the repository off ``sys.path``."""
    return localstate.python_argv("--root", os.fspath(root), "serve", python=python)


#: Refusals after which the refusing service exits (it made way for this client): the lock it
#: still holds for a moment is no reason not to start its successor.
MAKING_WAY = ("refused:outdated", "refused:environment")


def start(root: Root, env: dict[str, str] | None = None, why: str = "") -> int | None:
    """Start ``root``'s service detached unless one holds the lock; its pid, or None. Never raises.

    ``why`` is why the service did not answer the caller (:class:`Outcome`'s word). After a
    refusal in ``MAKING_WAY`` the old service is on its way out but may hold the lock for up to
    a loop tick more (its accept loop notices the stop at the next tick); the successor is then
    started anyway and waits for the lock (``server.LOCK_WAIT_S``). Without that, a door quicker
    than the old service's exit started nothing, and the next prompt paid the in-process path again.

    The child gets its own session and no terminal; its stderr (a crash before its own log opens)
    goes to ``serve.log`` in the work tree's per-developer logs folder; its working directory is
    that folder, not the repository (:func:`paqad.localstate.child_cwd`).
    """
    import subprocess  # lazy: 8 modules the hook's thin client loads only when it starts a service

    if not os.path.isdir(localstate.tree_dir(root)):
        return None  # not set up here: a door that fails before `rag init` starts nothing and writes nothing
    env = dict(os.environ if env is None else env)
    localstate.one_blas_thread(env)  # a library caller's process may not have it
    try:
        paths = paths_mod.for_root(root, create=True) if fcntl is not None else None
        if paths is None or (why not in MAKING_WAY and lock_held(paths.lock)):
            return None
        log = os.path.join(localstate.tree_dir(root), "logs", "serve.log")
        os.makedirs(os.path.dirname(log), mode=0o700, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with open(fd, "ab") as err:
            proc = subprocess.Popen(
                serve_argv(root), cwd=localstate.child_cwd(root), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=err, close_fds=True, start_new_session=True,
            )
        return proc.pid
    except Exception:  # noqa: BLE001 - starting a service is an optimisation; a door never fails for it
        return None


def stop(root: Root, wait: float = STOP_WAIT_S) -> bool:
    """Ask ``root``'s service to exit and wait until its lock is free; True if one was running."""
    paths = paths_mod.for_root(root)
    if paths is None or not lock_held(paths.lock):
        return False
    request(root, "stop", reply_timeout=2.0)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and lock_held(paths.lock):
        time.sleep(0.05)
    return True


def wait_ready(root: Root, timeout: float = 30.0) -> bool:
    """Poll until ``root``'s service answers ``status`` (tests, ``paqad serve`` scripts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if request(root, "status", reply_timeout=2.0).answered:
            return True
        time.sleep(0.05)
    return False
