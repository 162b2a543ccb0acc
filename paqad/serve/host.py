"""One warm process per user: it hosts the service of every work tree the user has open.

A work tree's service keeps its own socket, lock, info file, pid file and log (the doors, the git
shims and ``paqad serve status`` see what they saw before), but they are all held by one process
per user, so the query model, the imports and the interpreter are paid once: a further
flask-sized work tree costs its index and caches, 4.8 MB against 150 MB for a process of its own
(``benchmarks/serve_trees.py``).

The first ``paqad serve`` takes the user's lock (``channel.paths.for_user``) and becomes the host;
a later one, started by a door for another work tree, asks the host over the user's control
socket to *adopt* its work tree (``{"op": "adopt", "root": ...}``) and exits. The host serves each
work tree on a thread of its own (:func:`paqad.serve.server.run_tree`) and releases it on that
tree's own reasons (idle for ``rag_serve_idle_timeout``, the work tree or its per-developer
folder removed, ``rag_serve`` off, ``paqad serve stop``): its socket closed, its lock released,
its index and caches dropped. The process ends when no work tree is left, or at once for every
tree when a newer paqad or a client with other settings asks (it makes way), past the memory cap,
or on SIGTERM.

A work tree is adopted only when the developer set paqad up in it (its per-developer folder
exists), and never for a client of another version, build or environment.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import __version__, localstate
from paqad.channel import client, wire
from paqad.channel import paths as paths_mod

if TYPE_CHECKING:
    from paqad.channel.wire import Message
    from paqad.serve.state import Service

ADOPT_TIMEOUT_S = 30.0  # the host opens the index and warms it before it answers
ADOPT_ACK_S = 5.0  # a background process asks, not a hook: a host busy warming another tree is not hung


class Host:
    """The per-user process: the work trees it serves and the reason it stops, if any."""

    def __init__(self) -> None:
        self.trees: dict[str, Service] = {}
        self.threads: dict[str, threading.Thread] = {}
        self.stop_reason: str | None = None
        self.env = wire.env_fingerprint()
        self.build = wire.build_fingerprint()
        self.lock = threading.Lock()

    def stop_all(self, reason: str) -> None:
        """End the process: every work tree stops with ``reason``."""
        if self.stop_reason is None:
            self.stop_reason = reason
        with self.lock:
            for svc in self.trees.values():
                svc.stop(reason)

    def alive(self) -> list[str]:
        """The work trees still served (their threads running); forgets the others."""
        with self.lock:
            for key in [k for k, t in self.threads.items() if not t.is_alive()]:
                self.threads.pop(key)
                self.trees.pop(key, None)
            return sorted(self.threads)


def key_of(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(root))


def refusal(host: Host, req: Message) -> str | None:
    """Why the host will not adopt this work tree (None: adopt it); makes way for a newer paqad."""
    version, protocol = str(req.get("version", "")), req.get("protocol")
    if isinstance(protocol, int) and protocol > wire.PROTOCOL or wire.is_newer(version, __version__):
        host.stop_all(f"a newer paqad asked (version {version[:40]}, protocol {protocol})")
        return "outdated"
    if protocol != wire.PROTOCOL:
        return "protocol"
    if str(req.get("build", "")) != host.build and version == __version__:
        host.stop_all("a client of another build of this paqad version asked (the checkout changed)")
        return "outdated"
    if req.get("env") != host.env:
        host.stop_all("a client with other settings asked")
        return "environment"
    if host.stop_reason is not None:
        return "stopping"
    root = req.get("root")
    if not isinstance(root, str) or not os.path.isabs(root) or not os.path.isdir(root):
        return "bad_request"
    if not os.path.isdir(localstate.tree_dir(root)):
        return "not_set_up"  # a work tree this user never set up is never served (nor written to)
    return None


def ask_adopt(user: paths_mod.ServicePaths, root: Path) -> str:
    """Ask the host holding ``user``'s lock to serve ``root``: ``ok``, or why not (``absent``,
    ``stale``, ``refused:<reason>``, ``crashed``, ``hung``)."""
    sock, why = client._connect(user.socket)
    if sock is None:
        return why
    try:
        outcome = client._exchange(sock, client.base_request("adopt", root=str(root)), ADOPT_TIMEOUT_S, ADOPT_ACK_S)
    finally:
        sock.close()
    if outcome.why != "answered":
        return outcome.why
    return "ok" if (outcome.reply or {}).get("ok") else f"refused:{(outcome.reply or {}).get('refused', 'unknown')}"


def answer(host: Host, conn: socket.socket, adopt: Callable[[Path], str | None]) -> None:
    """One request on the control socket: ``adopt`` (its tree served from now on) or ``status``."""
    try:
        req = wire.LineReader(conn).read(time.monotonic() + 5.0)
        op = req.get("op")
        if op == "status":
            wire.send(conn, {"ack": True, "version": __version__})
            wire.send(conn, {"ok": True, "pid": os.getpid(), "trees": host.alive(), "stop_reason": host.stop_reason})
            return
        why = refusal(host, req) if op == "adopt" else "bad_request"
        if why is not None:
            wire.send(conn, {"ack": False, "refused": why, "version": __version__})
            return
        wire.send(conn, {"ack": True, "version": __version__})
        why = adopt(Path(str(req["root"])))
        wire.send(conn, {"ok": why is None, **({"refused": why} if why else {})})
    except (OSError, wire.WireError):
        pass
    finally:
        conn.close()
