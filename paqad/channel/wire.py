"""The service's exchange: one JSON object per line each way, and who may talk to whom.

Stdlib only, and light (the thin clients import it): ``_socket`` rather than ``socket`` (which
pulls in ``enum`` and ``selectors``), :mod:`paqad.channel.litejson` rather than ``json`` (which pulls
in ``re``), no ``typing`` or ``hashlib`` at run time.

A request is ``{"op": ..., "version": ..., "protocol": ..., "env": ..., ...}``. The service first
answers an *ack* line (``{"ack": true, ...}`` or a refusal), then the *reply* line. The ack lets a
client tell a hung service (no ack within ``ACK_TIMEOUT_S``) from a busy one, and carries the
budget the service will answer within, so the client knows how long to wait. The service holds
the ack for up to a fifth of ``ACK_TIMEOUT_S`` (``serve.handlers.ACK_HOLD_S``): a reply ready by
then leaves with its ack in one write; otherwise the ack leaves alone. The bytes are the same
either way; a client reads two lines. A refusal (``{"ack": false, "refused": reason}``) sends the client to its in-process path:

- ``outdated``: the client's paqad is newer than the service's, or, in a source checkout, its
  code differs from the code the service started with (``build_fingerprint``); the service exits
  after saying so, and the next door starts a current one;
- ``environment``: the client's ``PAQAD_*`` settings (or provider keys) differ from those the
  service was started with; the service exits too (the newest caller's settings win), so a
  service never answers with settings its caller does not have;
- ``stopping``, ``disabled`` (``rag_serve`` is off now), ``wrong_root``, ``bad_request``.
"""

from __future__ import annotations

import os
import time
from _socket import socket

from paqad.channel import litejson as json
from paqad.channel.paths import digest

TYPE_CHECKING = False
if TYPE_CHECKING:  # the service's messages, for the type checker only (no ``typing`` at run time)
    from collections.abc import Mapping
    from typing import Required, TypedDict

    from paqad.jsontypes import JSONObject

    #: A JSON object as it crosses the socket: a request, or a reply as the client reads it (its
    #: values are checked where they are read).
    Message = JSONObject

    class Ack(TypedDict, total=False):
        """The service's first line: taken (with the budget it will answer within) or refused."""

        ack: Required[bool]
        version: Required[str]
        refused: str
        budget: float

    class ErrorInfo(TypedDict):
        """A request's failure after its ack: what the in-process door would have raised."""

        type: str
        message: str
        exit_code: int
        paqad: bool

    class ServiceInfo(TypedDict):
        """``status``'s answer: the service serving one work tree (``paqad serve status --json``)."""

        pid: int
        version: str
        protocol: int
        root: str
        socket: str
        started: float
        uptime_s: float
        requests: int
        active: int
        rss_mb: float
        idle_timeout_s: float
        memory_cap_mb: int
        jobs: list[str]
        work_trees: list[str]

    class Reply(TypedDict, total=False):
        """The service's second line: ``ok`` and the operation's answer, or its ``error``."""

        ok: Required[bool]
        info: ServiceInfo  # status
        stdout: str  # hook
        response: Mapping[str, object]  # search: SearchResponse.to_dict()
        result: JSONObject  # agent: the action's result
        queued: list[str]  # git-event
        error: ErrorInfo | dict[str, str]  # dict[str, str]: an agent action's OpError (code, message)
        refused: str  # the per-user host's control socket: why it will not adopt a work tree
        pid: int  # the host's status: its process, the work trees it serves, why it is stopping
        trees: list[str]
        stop_reason: str | None

PROTOCOL = 1
MAX_LINE = 64 * 1024 * 1024  # a reply carries passages and sources; far above any real one
ACK_TIMEOUT_S = 0.5  # a service that cannot even acknowledge in this long is treated as hung
#: Environment variables that change what the service would answer besides ``PAQAD_*``: the keys
#: of the remote providers (only their hash is compared; the values never cross the socket).
ENV_KEYS = ("OPENAI_API_KEY", "VOYAGE_API_KEY", "CO_API_KEY", "COHERE_API_KEY", "XDG_CACHE_HOME", "XDG_DATA_HOME", "HOME")
#: PAQAD_* variables that describe one call, not the settings (never part of the fingerprint).
ENV_PER_CALL = ("PAQAD_HOOK_BUDGET",)


class WireError(OSError):
    """The other side closed, sent garbage, or did not answer in time."""


_ENV_KEYS_B = frozenset(os.fsencode(k) for k in ENV_KEYS)
_ENV_PER_CALL_B = frozenset(os.fsencode(k) for k in ENV_PER_CALL)


def env_fingerprint(environ: dict[str, str] | None = None) -> str:
    """A hash of the environment that shapes the answers (``PAQAD_*`` and ``ENV_KEYS``).

    Every request carries it. ``os.environ`` itself is read through its bytes (``_data``, on
    POSIX): ``os.environ.items()`` decodes every variable, and that was most of the 27-45 µs
    a request spent here; only the variables kept are decoded (``os.fsdecode``, as ``os.environ``
    decodes them), so the hash is the same."""
    data = getattr(os.environ, "_data", None) if environ is None and os.name == "posix" else None
    if isinstance(data, dict):
        items = sorted(
            (os.fsdecode(k), os.fsdecode(v)) for k, v in data.items()
            if (k[:6] == b"PAQAD_" and k not in _ENV_PER_CALL_B) or k in _ENV_KEYS_B
        )
    else:
        env = os.environ if environ is None else environ
        items = sorted((k, v) for k, v in env.items() if (k.startswith("PAQAD_") and k not in ENV_PER_CALL) or k in ENV_KEYS)
    return digest(json.dumps(items).encode("utf-8"), 12)


_BUILD: list[str] = []


def build_fingerprint() -> str:
    """In a source checkout (an editable install: ``pyproject.toml`` beside the package), a hash
    of the package's files (path, size, modification time); "" for an installed release, whose
    version says it all. A service started before an edit of the checkout would otherwise answer
    with the code it started with until its idle timeout (seen in a benchmark: a re-run scored the
    previous code). Computed once per process; a stat of a few hundred files, no reads."""
    if not _BUILD:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not os.path.isfile(os.path.join(os.path.dirname(package), "pyproject.toml")):
            _BUILD.append("")
        else:
            items = []
            for folder, dirs, files in os.walk(package):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if not name.endswith(".pyc"):
                        st = os.stat(os.path.join(folder, name))
                        items.append(f"{os.path.relpath(os.path.join(folder, name), package)}:{st.st_size}:{st.st_mtime_ns}")
            _BUILD.append(digest("\n".join(items).encode("utf-8"), 12))
    return _BUILD[0]


def version_tuple(text: str) -> tuple[int, ...]:
    """``"1.2.3"`` → ``(1, 2, 3)``; a part that is not all digits ends the tuple (``"1.2rc1"`` → (1, 2))."""
    out = []
    for part in text.split("."):
        digits = part[: len(part) - len(part.lstrip("0123456789"))]
        if not digits:
            break
        out.append(int(digits))
        if digits != part:
            break
    return tuple(out)


def is_newer(client: str, service: str) -> bool:
    """True when the client's version is newer than the service's (the service must make way)."""
    return version_tuple(client) > version_tuple(service)


def encode(obj: Message | Ack | Reply) -> bytes:
    """One line of the exchange: compact JSON, UTF-8, a newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def send(sock: socket, obj: Message | Ack | Reply) -> None:
    sock.sendall(encode(obj))


class LineReader:
    """Reads newline-terminated JSON objects from a socket against absolute deadlines."""

    def __init__(self, sock: socket) -> None:
        self.sock = sock
        self.buffer = b""

    def read(self, deadline: float | None) -> Message:
        """The next object; raises WireError on EOF, a timeout (``deadline``, monotonic) or garbage."""
        while b"\n" not in self.buffer:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WireError("timed out")
                self.sock.settimeout(left)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                raise WireError("timed out") from None
            if not chunk:
                raise WireError("connection closed")
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE:
                raise WireError("line too long")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise WireError(f"not JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise WireError("not a JSON object")
        return obj
