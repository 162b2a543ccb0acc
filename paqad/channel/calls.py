"""The typed requests every door builds: a search, an agent host's hook, an agent action, a git event.

A door builds one of these and hands it to :func:`paqad.serve.route.run`, which answers it
through the resident service or in this process (:class:`paqad.repository.Repository`); the
service turns the wire dict back into the same object. Each converts to the wire dict of
protocol 1 only at the edge (:meth:`to_wire`, :meth:`from_wire`): the same keys as before issue 33.

Plain slotted classes, not dataclasses: the prompt hook's thin client builds a :class:`Hook`,
and ``import dataclasses`` alone (``inspect``, ``re`` ...) costs 17 ms of its 30 ms CPU budget
(``python -X importtime -c "import dataclasses"``, 2026-12-07).
"""

from __future__ import annotations

TYPE_CHECKING = False  # no ``typing`` import at run time (the hook client imports this)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from paqad.channel.wire import Message
    from paqad.jsontypes import JSON
    from paqad.search.request import SearchRequest

MAX_STDIN = 1_000_000  # a host's hook input over this is refused (cut JSON would parse as something vaguer)


class Call:
    """What every request has: its operation's name on the wire."""

    __slots__: tuple[str, ...] = ()
    op = ""

    def to_wire(self) -> Message:
        raise NotImplementedError

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and type(other) is type(self) and other._fields() == self._fields()

    def __hash__(self) -> int:
        return hash((self.op, repr(self._fields())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class Search(Call):
    """``rag search``/``probe``: a ``SearchRequest`` the door built from its settings."""

    __slots__ = ("request",)
    op = "search"

    def __init__(self, request: SearchRequest) -> None:
        self.request = request

    def to_wire(self) -> Message:
        return {"request": self.request.to_wire()}

    @classmethod
    def from_wire(cls, fields: Message) -> Search:
        """Raises KeyError, TypeError or ValueError on a malformed request."""
        from paqad.search.request import SearchRequest  # lazy: the hook's thin client imports calls; search is not for it

        request = fields["request"]
        if not isinstance(request, dict):
            raise TypeError("request must be an object")
        return cls(SearchRequest.from_wire(request))


class Hook(Call):
    """An agent host's hook event: the host's JSON as read from stdin, and where it ran.

    ``budget_env``: the caller's ``PAQAD_HOOK_BUDGET`` (per call, not part of the settings);
    ``client_age``: seconds the hook's own process had run when it asked (its budget runs from
    there); ``spent``: seconds already waited on the service before answering in-process
    (never sent); ``overrides``: the command line's ``-c`` settings (never sent: a call with
    overrides is answered in-process, the service answers with the work tree's settings)."""

    __slots__ = ("event", "host", "stdin", "cwd", "budget_env", "client_age", "spent", "overrides")
    op = "hook"

    def __init__(
        self, event: str, host: str, stdin: str, cwd: str, budget_env: str | None = None, client_age: float = 0.0,
        spent: float = 0.0, overrides: dict[str, str] | None = None,
    ) -> None:
        self.event, self.host, self.stdin, self.cwd = event, host, stdin, cwd
        self.budget_env, self.client_age, self.spent = budget_env, client_age, spent
        self.overrides = dict(overrides or {})

    def to_wire(self) -> Message:
        return {"event": self.event, "host": self.host, "stdin": self.stdin, "cwd": self.cwd, "budget_env": self.budget_env, "client_age": self.client_age}

    @classmethod
    def from_wire(cls, fields: Message) -> Hook:
        raw_age = fields.get("client_age")
        age = float(raw_age) if isinstance(raw_age, (int, float)) and not isinstance(raw_age, bool) else 0.0
        budget = fields.get("budget_env")
        cwd = fields.get("cwd")
        return cls(
            str(fields.get("event") or "prompt-submit"), str(fields.get("host")), str(fields.get("stdin") or ""), str(cwd) if cwd else ".",
            budget if isinstance(budget, str) else None, max(age, 0.0),
        )


class Agent(Call):
    """One agent-protocol action (``paqad agent``, ``paqad mcp``): its raw parameters and ``-c`` overrides."""

    __slots__ = ("action", "params", "overrides")
    op = "agent"

    def __init__(self, action: str, params: Mapping[str, JSON], overrides: dict[str, str] | None = None) -> None:
        self.action, self.params, self.overrides = action, dict(params), dict(overrides or {})

    def to_wire(self) -> Message:
        return {"action": self.action, "params": self.params, "overrides": self.overrides}

    @classmethod
    def from_wire(cls, fields: Message) -> Agent:
        """Raises TypeError on parameters or overrides that are not objects."""
        overrides, params = fields.get("overrides") or {}, fields.get("params") or {}
        if not isinstance(overrides, dict) or not isinstance(params, dict):
            raise TypeError("params and overrides must be objects")
        return cls(str(fields.get("action")), params, {str(k): str(v) for k, v in overrides.items()})


#: The git hooks paqad installs, named once (the runner, the shims and the thin client read them here).
GIT_EVENTS = ("post-commit", "post-merge", "post-checkout", "post-rewrite")


class GitEvent(Call):
    """A git hook's event (one of ``GIT_EVENTS``)."""

    __slots__ = ("event",)
    op = "git-event"

    def __init__(self, event: str) -> None:
        self.event = event

    def to_wire(self) -> Message:
        return {"event": self.event}

    @classmethod
    def from_wire(cls, fields: Message) -> GitEvent:
        return cls(str(fields.get("event")))
