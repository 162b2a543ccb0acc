"""What the service does with each request: the same library calls as the in-process doors.

- ``hook``: an agent host's hook event, exactly as ``paqad hook run EVENT --host NAME`` would
  handle it in-process (``paqad.hooks.hosts.handle``: record the prompt, sync the index, search
  with the warm ``Index`` and model, deliver), except that the refresh behind a prompt is a
  service job instead of a detached process;
- ``search``: a ``SearchRequest`` the client built from its settings, run with
  ``pipeline.run(Index.shared(root), request)`` like every other door;
- ``agent``: one JSON-lines/MCP action through an ``agent.ops.Session`` that reads the
  service's shared ``Index``;
- ``git-event``: the actions ``.paqad/hooks.yaml`` lists for the event, queued as coalesced jobs;
- ``status`` and ``stop`` (answered for any client version and environment).

A request is refused before any work (the client then answers in-process) when it is from
another protocol or a newer paqad, carries other settings, targets another work tree, meets a
broken configuration, or ``rag_serve`` is now off. Refusals that mean "this service should not
exist" (newer client, other settings, serving switched off) also make the service exit.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import paqad.delivery.prompt  # noqa: F401 - imported with the service, so no request pays for it
import paqad.hooks.hosts  # noqa: F401 - as above
from paqad import __version__, config, git
from paqad.agent.ops import OpError
from paqad.channel import calls, wire
from paqad.errors import PaqadError
from paqad.hooks import runner
from paqad.index.reader import Index
from paqad.search import vector
from paqad.search.pipeline import RESULT_SCHEMA_VERSION, Result, SearchResponse
from paqad.serve.state import REQUEST_READ_S, Service, log, rss_mb

if TYPE_CHECKING:
    from paqad.channel.wire import ErrorInfo, Message, Reply
    from paqad.config import Config

Ack = Callable[[float | None], None]  # the ack line, with the budget the service will answer within
ANYONE = ("status", "stop")  # answered whatever the client's version or environment


class Refused(Exception):
    """Refuse the request before acknowledging it: the client answers in-process."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ---- warming up --------------------------------------------------------------------------------


def warm(svc: Service) -> None:
    """Open the index, load its vectors and the query model (the stacks the requests use are
    imported with this module)."""
    try:
        index = Index.shared(svc.root)
        index.refresh()
        where = vector.space(index)
        if where is not None:
            vector.embed_query(where, "warm up")
    except Exception as exc:  # noqa: BLE001 - no index yet, a damaged one: the requests will say so
        log(svc.root, f"warm-up incomplete: {type(exc).__name__}: {str(exc)[:200]}")


# ---- one connection ----------------------------------------------------------------------------


def peer_is_us(conn: socket.socket) -> bool:
    """The connecting process runs as this user (``SO_PEERCRED``, where the system has it). The
    0700 folder already keeps others out; this holds even if someone loosened its mode."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1] == os.getuid()


#: How long a connection's ack waits for its reply, so the two lines leave in one write (a warm
#: search or status answers within a few ms; each write was a system call here and a wake-up and a
#: read in the client). Past it the accept loop sends the ack alone (:func:`flush_acks`; it wakes
#: every ``ACK_HOLD_S`` while an ack is held, so the ack leaves within twice that), well inside the
#: client's ``wire.ACK_TIMEOUT_S``: a busy service is still told from a hung one.
ACK_HOLD_S = wire.ACK_TIMEOUT_S / 5


class Held:
    """One connection's way out: its ack line held until the reply (both sent in one write), or
    sent alone once ``ACK_HOLD_S`` has passed since the accept. The lock keeps the ack first."""

    __slots__ = ("conn", "due", "line", "sent", "done", "lock")

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.due = time.monotonic() + ACK_HOLD_S
        self.line = b""  # the ack, once the operation has given it
        self.sent = False  # the ack has been written
        self.done = False  # the connection is answered (the accept loop forgets it)
        self.lock = threading.Lock()

    def ack(self, obj: Message) -> None:
        """The ack line: held, or written at once when its hold is already over."""
        with self.lock:
            self.line = wire.encode(obj)
            if not self.sent and time.monotonic() >= self.due:
                self.sent = True
                self.conn.sendall(self.line)

    def reply(self, obj: Reply | Message) -> None:
        """The last line, with the ack before it when that is still held: one write."""
        with self.lock:
            out = wire.encode(obj) if self.sent or not self.line else self.line + wire.encode(obj)
            self.sent = True
            self.conn.sendall(out)

    def overdue(self) -> bool:
        """The accept loop's part: past the hold, the ack alone (if the operation gave it yet;
        if not, :meth:`ack` writes it when it comes). False when the worker holds the lock (it
        may be writing a long reply to a slow reader: the accept loop never waits for that)."""
        if not self.lock.acquire(blocking=False):
            return False
        try:
            if self.line and not self.sent:
                self.sent = True
                self.conn.sendall(self.line)
        finally:
            self.lock.release()
        return True


def flush_acks(held: list[Held]) -> float | None:
    """Send the acks whose hold is over, forget the answered connections; the next hold's end
    (``time.monotonic()``), or None when no ack is held (called by the accept loop)."""
    now, due, keep = time.monotonic(), None, []
    for h in held:
        if h.done:
            continue
        if h.due <= now:
            try:
                if h.overdue():
                    continue
            except OSError:
                continue  # the client went away; its worker sees it too
        keep.append(h)
        due = h.due if due is None else min(due, h.due)
    held[:] = keep
    return due


def connection(svc: Service, out: Held) -> None:
    """Read one request, gate it, acknowledge, do it, reply; close. Never raises."""
    conn = out.conn
    svc.begin()
    try:
        if not peer_is_us(conn):
            return
        reader = wire.LineReader(conn)
        try:
            req = reader.read(time.monotonic() + REQUEST_READ_S)
        except wire.WireError:
            return
        _answer(svc, out, req)
    except OSError:
        pass  # the client went away (it gave up waiting): nothing to tell it
    finally:
        out.done = True
        svc.end()
        conn.close()
        if svc.memory_due() and rss_mb() > svc.cfg.rag_serve_memory_cap:
            svc.stop_process(f"memory cap: {rss_mb():.0f} MB > {svc.cfg.rag_serve_memory_cap} MB")


def _answer(svc: Service, out: Held, req: Message) -> None:
    op = str(req.get("op"))
    refusal = _gate(svc, req, op) or (None if op in OPS else "bad_request")
    if refusal is not None:
        out.reply({"ack": False, "refused": refusal, "version": __version__})
        return
    acked = False

    def ack(budget: float | None = None) -> None:
        nonlocal acked
        out.ack({"ack": True, "version": __version__} if budget is None else {"ack": True, "version": __version__, "budget": budget})
        acked = True

    try:
        reply = OPS[op](svc, req, ack)
    except Exception as exc:  # noqa: BLE001 - one request's failure never ends the service
        if not acked:
            reason = exc.reason if isinstance(exc, Refused) else f"error: {type(exc).__name__}"
            out.reply({"ack": False, "refused": reason, "version": __version__})
            return
        reply = {"ok": False, "error": _error(exc)}
    if not acked:
        ack(None)
    out.reply(reply)


def _error(exc: BaseException) -> ErrorInfo:
    return {"type": type(exc).__name__, "message": str(exc), "exit_code": getattr(exc, "exit_code", 1), "paqad": isinstance(exc, PaqadError)}


def _gate(svc: Service, req: Message, op: str) -> str | None:
    """Why this request must not be served here (None: serve it); makes way for newer clients."""
    if op in ANYONE:
        return None
    protocol, version = req.get("protocol"), str(req.get("version", ""))
    if isinstance(protocol, int) and protocol > wire.PROTOCOL or wire.is_newer(version, __version__):
        svc.stop_process(f"a newer paqad asked (version {version[:40]}, protocol {protocol})")
        return "outdated"
    if protocol != wire.PROTOCOL:
        return "protocol"
    if str(req.get("build", "")) != svc.build and version == __version__:
        svc.stop_process("a client of another build of this paqad version asked (the checkout changed)")
        return "outdated"
    if svc.stop_reason is not None:
        return "stopping"
    if req.get("env") != svc.env:
        if op != "git-event":  # a commit from a shell with other PAQAD_* must not evict the agents' service
            svc.stop_process("a client with other settings asked")
        return "environment"
    return None


def _settings(svc: Service) -> Config:
    """The work tree's settings now (a broken file: refused, so the in-process door reports it);
    kept while their files and the environment are unchanged (``config.load_kept``)."""
    try:
        cfg = config.load_kept(svc.root)
    except PaqadError:
        raise Refused("config") from None
    if not cfg.rag_serve:
        svc.stop("rag_serve is off")
        raise Refused("disabled")
    svc.cfg = cfg
    return cfg


# ---- the operations ----------------------------------------------------------------------------


def op_status(svc: Service, req: Message, ack: Ack) -> Reply:
    return {"ok": True, "info": svc.info()}


def op_stop(svc: Service, req: Message, ack: Ack) -> Reply:
    svc.stop("paqad serve stop")
    return {"ok": True}


def op_hook(svc: Service, req: Message, ack: Ack) -> Reply:
    """An agent host's hook event, answered as ``paqad hook run EVENT --host NAME`` would."""
    call = calls.Hook.from_wire(req)
    repo = svc.repository()
    try:
        parsed = repo.hook_event(call)
    except Exception:  # noqa: BLE001 - unreadable input: the in-process door logs why
        raise Refused("bad_request") from None
    if _event_root(parsed[1].cwd, call.cwd) != svc.root.resolve():
        raise Refused("wrong_root")
    cfg = _settings(svc)
    return {"ok": True, "stdout": repo.hook(call, cfg=cfg, door="service", on_budget=ack, parsed=parsed)}


_ROOTS: dict[str, Path] = {}  # folder -> its work tree, found once per service (a git process per prompt saved)


def _event_root(event_cwd: str | None, client_cwd: str) -> Path | None:
    """The work tree the event belongs to: the event's ``cwd``, else the client's folder, up to git's top level.

    A folder's answer is kept while its work tree still has ``.git`` (the host asks from the same
    folder on every prompt; ``benchmarks/prompt_git_calls.py`` counts the git processes)."""
    start = Path(event_cwd) if event_cwd and Path(event_cwd).is_dir() else Path(str(client_cwd or "."))
    known = _ROOTS.get(str(start))
    if known is not None and (known / ".git").exists():
        return known
    top = git.toplevel(start) if start.is_dir() else None
    if top is None:
        return None
    _ROOTS[str(start)] = top.resolve()
    return top.resolve()


def op_search(svc: Service, req: Message, ack: Ack) -> Reply:
    """A search the client built (``SearchRequest.from_settings``), on the warm shared ``Index``."""
    try:
        call = calls.Search.from_wire(req)
    except (KeyError, TypeError, ValueError):
        raise Refused("bad_request") from None
    _settings(svc)
    ack(None)
    return {"ok": True, "response": response_wire(svc.repository().search(call.request))}


_RESPONSE_FIELDS = tuple(f.name for f in fields(SearchResponse))
_RESULT_FIELDS = tuple(f.name for f in fields(Result))


def response_wire(response: SearchResponse) -> dict[str, object]:
    """``response.to_dict()`` as the reply encodes it, without its copies: the same keys in the
    same order, the same values (the line is encoded at once, in this thread, so nothing can
    change them in between). ``to_dict`` copies every nested dict and list (``asdict``'s
    contract): 56 µs of a warm search's ~0.8 ms over in-process, this 10 (flask, 49 questions)."""
    data: dict[str, object] = {name: getattr(response, name) for name in _RESPONSE_FIELDS}
    data["results"] = [{name: getattr(r, name) for name in _RESULT_FIELDS} for r in response.results]
    data["schema_version"] = RESULT_SCHEMA_VERSION
    return data


def op_agent(svc: Service, req: Message, ack: Ack) -> Reply:
    """One agent-protocol action through the work tree's session for the call's ``-c`` overrides."""
    try:
        call = calls.Agent.from_wire(req)
    except TypeError:
        raise Refused("bad_request") from None
    _settings(svc)
    ack(None)
    try:
        return {"ok": True, "result": svc.repository().agent(call)}
    except OpError as exc:
        return {"ok": False, "error": exc.to_dict()}


def op_git_event(svc: Service, req: Message, ack: Ack) -> Reply:
    """Queue the event's actions (coalesced with the burst they arrive in)."""
    call = calls.GitEvent.from_wire(req)
    if call.event not in runner.GIT_EVENTS:
        raise Refused("bad_request")
    _settings(svc)
    try:
        queued = svc.repository().git_event(call)
    except PaqadError:
        raise Refused("config") from None
    return {"ok": True, "queued": queued}


OPS: dict[str, Callable[[Service, Message, Ack], Reply]] = {
    "status": op_status,
    "stop": op_stop,
    "hook": op_hook,
    "search": op_search,
    "agent": op_agent,
    "git-event": op_git_event,
}
