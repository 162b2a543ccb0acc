"""The operations both agent doors serve: the JSON-lines protocol and the MCP server.

Each action is a plain function ``(session, **validated params) -> JSON-able dict`` registered in
the literal ``ACTIONS`` table with its declared parameters; the table serves dispatch, the
in-band validation and the MCP tool schemas. Every failure a request can cause comes out of
``Session.call`` as an ``OpError`` with a stable ``code`` (documented in docs/protocol.md, "Error
codes"); nothing a request sends can end the session.

The session holds one :class:`~paqad.index.reader.Index` (its connection, vector matrix, graph
and query provider) and each request refreshes it: a rebuild publishes a new generation
(``CURRENT`` names a new file, so the reader reopens), an incremental update commits to the same
file (SQLite's ``PRAGMA data_version`` moves, and WAL readers see it). Both are counted in ``stats``.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import filelock

from paqad import __version__, describe, graph
from paqad import config as config_mod
from paqad.agent import research as research_mod
from paqad.agent import span as span_mod
from paqad.agent.params import Param, ParamError, schema, validate
from paqad.delivery import freshness
from paqad.errors import ConfigError, IndexCorruptError, IndexMissingError, IndexOutdatedError, LockedError, PaqadError, UsageError
from paqad.index import status as status_mod
from paqad.index.reader import Index
from paqad.index.records import SPAN_FIELDS
from paqad.search import across, pipeline
from paqad.search.request import SearchRequest

if TYPE_CHECKING:
    from paqad.jsontypes import JSON, JSONObject

#: An agent session's way to the resident service (``paqad.serve.route.agent_remote``): an
#: action's raw parameters → its result, None to answer it here, or an OpError raised.
Remote = Callable[[str, Mapping[str, "JSON"]], "JSONObject | None"]

PROTOCOL_VERSION = 1
MAX_QUERY_CHARS = 8_000
MAX_TOP_N = 200
MAX_BUDGET_CHARS = 500_000
MAX_ID_CHARS = 2_000
MAX_PATH_CHARS = 4_096
MAX_LINE = 1_000_000_000
MAX_OPEN_LINES = 2_000
MAX_OPEN_BYTES = 256 * 1024
MAX_DESCRIPTION_CHARS = 4_000  # raw; paqad.describe keeps at most 1,000 after collapsing whitespace
RESERVED = ("id", "action")


class OpError(PaqadError):
    """A request that failed in-band: ``code`` is stable, ``message`` says what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Action:
    name: str
    fn: Callable[..., JSONObject]
    params: tuple[Param, ...]
    description: str

    def input_schema(self) -> JSONObject:
        return schema(self.params)


class Session:
    """One agent session on one repository: its ``Index``, counters and a request lock (MCP may
    call from worker threads; the index's connection is shared, so requests run one at a time)."""

    def __init__(self, root: Path, overrides: dict[str, str] | None = None, shared_index: bool = False) -> None:
        self.root = root
        self.overrides = overrides or {}
        self.shared_index = shared_index  # the service's sessions read its one ``Index.shared``
        self.started = time.time()
        self.requests = 0
        self.errors = 0
        self._index: Index | None = None
        self._lock = threading.Lock()
        #: the resident service's way in (``paqad.serve.route.agent_remote``): an action's result,
        #: None to answer it here, or an OpError; set by the agent and MCP doors.
        self.remote: Remote | None = None

    def call(self, action: str, raw: Mapping[str, JSON]) -> JSONObject:
        """Run one request; any failure becomes an OpError (the session survives everything)."""
        with self._lock:
            self.requests += 1
            try:
                spec = ACTIONS.get(action) if isinstance(action, str) else None
                if spec is None:
                    raise OpError("unknown_action", f"unknown action {str(action)[:60]!r}; one of: {', '.join(ACTIONS)}")
                served = self.remote(action, raw) if self.remote is not None else None
                return served if served is not None else spec.fn(self, **validate(spec.params, raw, RESERVED))
            except Exception as exc:  # noqa: BLE001 - translated to a stable code, never raised out
                self.errors += 1
                error = translate(exc)
                if error.code == "internal":  # a bug: the traceback goes to stderr, never to the client
                    traceback.print_exc(file=sys.stderr)
                if error is exc:
                    raise
                raise error from exc

    def config(self) -> config_mod.Config:
        return config_mod.load(self.root, self.overrides)

    def index(self) -> Index:
        """The session's index, refreshed (reopened when a rebuild published a new generation;
        a commit to the same file noticed): opened on first use, so a session may start before
        the repository is indexed."""
        if self._index is None:
            self._index = Index.shared(self.root) if self.shared_index else Index(self.root)
        self._index.refresh()
        return self._index

    @property
    def index_changes(self) -> int:
        """Generations and commits the session noticed between its requests."""
        return self._index.changes if self._index is not None else 0

    def close(self) -> None:
        """Close the session's index connection (the doors call it when the client goes)."""
        if self._index is not None:
            self._index.close()


def translate(exc: BaseException) -> OpError:
    """The one place library errors become protocol error codes."""
    if isinstance(exc, OpError):
        return exc
    if isinstance(exc, span_mod.SpanError):
        return OpError(exc.code, str(exc))
    table: tuple[tuple[type[BaseException], str], ...] = (
        (ParamError, "bad_params"), (UsageError, "bad_params"), (ConfigError, "config_error"),
        (IndexMissingError, "index_missing"), (IndexCorruptError, "index_corrupt"), (IndexOutdatedError, "index_outdated"), (LockedError, "locked"),
        (PaqadError, "failed"), (sqlite3.DatabaseError, "index_corrupt"), (filelock.Timeout, "locked"),
    )
    for kind, code in table:
        if isinstance(exc, kind):
            return OpError(code, str(exc) or kind.__name__)
    if isinstance(exc, ImportError):
        return OpError("unavailable", f"this paqad has no support for that action ({exc})")
    return OpError("internal", f"unexpected {type(exc).__name__}: {str(exc)[:300]}")


# ---- actions ----------------------------------------------------------------------------------


def _request(s: Session, query: str, top_n: int | None, budget: int, source_chars: int | None, gate: bool = True) -> SearchRequest:
    if not query.strip():
        raise ParamError("query is empty")
    return SearchRequest.from_settings(s.config(), s.root, query, top_n=top_n, source_chars=source_chars, budget_chars=budget, gate=gate)


def op_search(s: Session, query: str, top_n: int | None, budget: int, source_chars: int | None, gate: bool, scope: str = "repository") -> JSONObject:
    request = _request(s, query, top_n, budget, source_chars, gate)
    if scope == "workspace":  # this repository and the members of `paqad workspace list`
        return across.search(s.root, query, top_n=top_n, gate=gate, budget_chars=budget).to_dict()
    fresh = _freshness(s)
    return _last_changed(s, {**pipeline.run(s.index(), request).to_dict(), "freshness": fresh})


def op_research(s: Session, query: str, top_n: int | None, budget: int, source_chars: int | None, hops: int, per_hop: int) -> JSONObject:
    request = _request(s, query, top_n, budget, source_chars)
    fresh = _freshness(s)
    index = s.index()
    answer = _last_changed(s, {**pipeline.run(index, request).to_dict(), "freshness": fresh})
    return research_mod.expand(index, answer, hops, per_hop)


def _last_changed(s: Session, answer: dict[str, Any]) -> dict[str, Any]:
    """``rag_last_changed`` (off by default): each result gets the last commit that touched its lines."""
    if s.config().rag_last_changed:
        from paqad.history import lastchanged  # lazy: only with the setting on

        lastchanged.annotate(s.root, answer["results"])
    return answer


def _freshness(s: Session) -> freshness.Stamped:
    """The index against the work tree, before the search (``rag_stale_policy: refresh`` updates first)."""
    return freshness.before_answer(s.root, s.config())


def op_neighbors(s: Session, unit_id: str, hops: int, direction: str, budget: int) -> JSONObject:
    return {"unit_id": unit_id, "neighbors": graph.neighbors(s.index(), unit_id, hops=hops, direction=direction, budget=budget)}


def op_open(s: Session, path: str | None, unit_id: str | None, start_line: int | None, end_line: int | None, max_lines: int, max_bytes: int) -> JSONObject:
    if (path is None) == (unit_id is None):
        raise ParamError("give exactly one of path or unit_id")
    if unit_id is not None:
        unit = s.index().unit(unit_id, SPAN_FIELDS)
        if unit is None:
            raise OpError("not_found", f"no unit {unit_id[:200]!r} in the index")
        path, start_line, end_line = unit.path, start_line or unit.start_line, end_line or unit.end_line
    start = start_line or 1
    if end_line is not None and end_line < start:
        raise ParamError(f"end_line {end_line} is before start_line {start}")
    if path is None:  # unreachable: exactly one of path and unit_id was given, and a unit has a path
        raise ParamError("give exactly one of path or unit_id")
    return asdict(span_mod.read_span(s.root, path, start, end_line, max_lines, max_bytes))


def op_describe_pending(s: Session, limit: int, offset: int) -> JSONObject:
    return _wire(describe.pending(s.index(), limit=limit, offset=offset))


def op_describe_put(s: Session, unit_id: str, text: str, content_hash: str | None) -> JSONObject:
    return _wire(describe.put(s.root, unit_id, text, content_hash=content_hash))


def _wire(typed: Mapping[str, object]) -> JSONObject:
    """A typed result (a TypedDict whose values are JSON) as the protocol's JSON object."""
    return cast("JSONObject", dict(typed))


def op_stats(s: Session) -> JSONObject:
    try:
        try:
            session_index: Index | None = s.index()  # refreshed, so index_generation / index_changes_seen are current
        except IndexMissingError:
            session_index = None
        index = status_mod.status(s.root, session_index) if session_index is not None else {"built": False}
    except PaqadError as exc:
        index = {"built": False, "error": str(exc)}
    generation = s._index.generation if s._index is not None else None
    return {
        **_hello(), "root": str(s.root), "index": index,
        "session": {
            "requests": s.requests, "errors": s.errors, "uptime_s": round(time.time() - s.started, 3),
            "index_generation": generation.name if generation else None, "index_changes_seen": s.index_changes,
        },
    }


def op_hello(s: Session) -> JSONObject:
    return {**_hello(), "root": str(s.root), "actions": {a.name: {"description": a.description, "params": a.input_schema()} for a in ACTIONS.values()}}


def _hello() -> JSONObject:
    return {"protocol_version": PROTOCOL_VERSION, "paqad_version": __version__}


# ---- the registry -----------------------------------------------------------------------------

_QUERY = Param("query", str, "The question, in words or identifiers.", required=True, max_length=MAX_QUERY_CHARS)
_TOP_N = Param("top_n", int, "How many passages at most (default: the rag_top_n setting).", minimum=1, maximum=MAX_TOP_N)
_BUDGET = Param("budget", int, "Total characters of source across results.", default=12_000, minimum=0, maximum=MAX_BUDGET_CHARS)
_SOURCE = Param("source_chars", int, "Source characters per result (default: rag_source_chars).", minimum=0, maximum=MAX_BUDGET_CHARS)
_UNIT = Param("unit_id", str, "A unit id as search returns it (path::qualified_name).", required=True, max_length=MAX_ID_CHARS)

ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action("hello", op_hello, (), "The protocol version and every action with its parameters."),
        Action(
            "search", op_search,
            (_QUERY, _TOP_N, _BUDGET, _SOURCE, Param("gate", bool, "Apply the evidence gate and confidence floor (false = probe).", default=True),
             Param("scope", str, "repository: this one; workspace: also the repositories of `paqad workspace list` (each result names its repository).",
                   default="repository", choices=("repository", "workspace"))),
            "The passages of this repository (or its workspace) that answer the query, or a diagnosis of why nothing does.",
        ),
        Action(
            "research", op_research,
            (_QUERY, _TOP_N, _BUDGET, _SOURCE, Param("hops", int, "Graph hops at most.", default=2, minimum=0, maximum=research_mod.MAX_HOPS),
             Param("per_hop", int, "Graph nodes considered per hop.", default=10, minimum=1, maximum=50)),
            "Search, then follow calls/imports/contains edges from the answer while neighbours add query terms the answer lacked.",
        ),
        Action(
            "neighbors", op_neighbors,
            (_UNIT, Param("hops", int, "Edges away at most.", default=1, minimum=1, maximum=3),
             Param("direction", str, "Follow edges out of the unit, into it, or both.", default="both", choices=("in", "out", "both")),
             Param("budget", int, "Units returned at most.", default=50, minimum=1, maximum=200)),
            "The units connected to a unit in the code graph (calls, imports, contains, inherits), with the edge path.",
        ),
        Action(
            "open", op_open,
            (Param("path", str, "A file path relative to the repository root.", max_length=MAX_PATH_CHARS),
             Param("unit_id", str, "Open a unit's span instead of a path.", max_length=MAX_ID_CHARS),
             Param("start_line", int, "First line (1-based; default 1, or the unit's first line).", minimum=1, maximum=MAX_LINE),
             Param("end_line", int, "Last line, inclusive (default: the end, or the unit's last line).", minimum=1, maximum=MAX_LINE),
             Param("max_lines", int, "Lines returned at most.", default=200, minimum=1, maximum=MAX_OPEN_LINES),
             Param("max_bytes", int, "UTF-8 bytes of text returned at most.", default=64 * 1024, minimum=1, maximum=MAX_OPEN_BYTES)),
            "A span of a repository file (live contents, not the index), bounded in lines and bytes.",
        ),
        Action(
            "describe_pending", op_describe_pending,
            (Param("limit", int, "Units returned at most.", default=20, minimum=1, maximum=200),
             Param("offset", int, "Units skipped first.", default=0, minimum=0, maximum=MAX_LINE)),
            "Units that have no agent-written description yet (or whose code changed since).",
        ),
        Action(
            "describe_put", op_describe_put,
            (_UNIT, Param("text", str, "The description: what the unit does and why (at most 1,000 characters once whitespace is collapsed).", required=True, max_length=MAX_DESCRIPTION_CHARS),
             Param("content_hash", str, "The unit's content_hash from describe_pending (refused if the code changed since).", max_length=128)),
            "Store an agent-written description of a unit (kept in the committed sidecar).",
        ),
        Action("stats", op_stats, (), "The protocol and paqad versions, the index facts and this session's counters."),
    )
}
