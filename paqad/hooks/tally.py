"""How the last prompts were answered, per agent host, counted from ``hooks.log``.

A prompt hook that hands over an old context, or nothing, exits 0 like one that answered: the host
shows nothing and ``paqad doctor``'s single replay cannot say how often it happens under real load
(issue 34: a Copilot turn got ``STALE: … from 33s ago`` and nothing counted it). Every prompt hook
writes one ``hooks.log`` line (:func:`paqad.hooks.hosts._log` and friends); this module reads the
last ``window`` of them and counts, per host, what each prompt got. ``paqad doctor`` and
``paqad hooks status`` show these counts; the uptake report reuses them.

The lines counted have ``action`` ``context:<host>`` and an ``event`` that carries a prompt
(``prompt-submit``; ``session-start`` when the session starts with one; ``prompt``, the event kind
an ``error`` line names). Their ``status``, as the code writes it, and the bucket it falls in:

==============================  ============  ==================================================
status (detail)                  bucket        written by
==============================  ============  ==================================================
live (passages, pointers)        ``live``      ``delivery.prompt``: this prompt's own context
live (low-confidence, dark)      ``weak``      the same, marked low-confidence or "nothing found"
stale (with an earlier context)  ``stale``     the last delivery, marked ``STALE: … ago``
stale ("no earlier context")     ``nothing``   over budget with nothing to hand over
silent                           ``nothing``   a failure; the background refresh logs why
timeout                          ``failed``    ``serve.hookclient``: stopped at the hard limit
error                            ``failed``    ``hosts._log_failure``: the answer raised
skipped                          ``skipped``   trivial prompt, a turn already answered, a machine
recorded                         ``recorded``  a host that cannot take context on its prompt
==============================  ============  ==================================================

``orientation`` and ``subagent`` lines answer a session or a subagent starting, not a prompt, and a
failure before the host was known (``action`` ``-``) names no host: neither is counted (the doctor's
replay reports the second). Only ``live``, ``weak``, ``stale``, ``nothing`` and ``failed`` are
prompts the hook tried to answer (:attr:`HostTally.answered`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks import runner

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

DEFAULT_WINDOW = 50  # prompt-hook lines: about a day of one developer's prompts
PROMPT_EVENTS = ("prompt-submit", "session-start", "prompt")
NOT_PROMPTS = ("orientation", "subagent")
BUCKETS = ("live", "weak", "stale", "nothing", "failed", "skipped", "recorded")
ANSWERED = ("live", "weak", "stale", "nothing", "failed")
MISSED = ("stale", "nothing", "failed")  # the prompt did not get its own context
WEAK_CASES = ("low-confidence", "dark")
NO_EARLIER = "no earlier context to hand over"


def bucket(entry: Mapping[str, object]) -> str | None:
    """The bucket of one ``hooks.log`` line (see the module docstring); None when it is no prompt's."""
    action, status = str(entry.get("action") or ""), str(entry.get("status") or "")
    if not action.startswith("context:") or entry.get("event") not in PROMPT_EVENTS or status in NOT_PROMPTS:
        return None
    detail = str(entry.get("detail") or "")
    if status == "live":
        return "weak" if detail.startswith(WEAK_CASES) else "live"
    if status == "stale":
        return "nothing" if NO_EARLIER in detail else "stale"
    if status == "silent":
        return "nothing"
    if status in ("timeout", "error"):
        return "failed"
    return status if status in ("skipped", "recorded") else None


@dataclass
class HostTally:
    """One host's prompts in the window, by bucket, and the time span they cover (UTC)."""

    host: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0))
    first: str = ""
    last: str = ""

    @property
    def answered(self) -> int:
        """Prompts the hook tried to answer (skipped and recorded ones left out)."""
        return sum(self.counts[b] for b in ANSWERED)

    @property
    def missed(self) -> int:
        """Prompts that did not get their own context: stale, nothing, failed."""
        return sum(self.counts[b] for b in MISSED)

    def summary(self) -> str:
        return summary(self.to_dict())

    def to_dict(self) -> JSONObject:
        return {"host": self.host, **self.counts, "answered": self.answered, "missed": self.missed, "first": self.first, "last": self.last}


@dataclass
class Tally:
    """The last ``window`` prompt-hook lines of ``hooks.log`` (``lines`` of them found), per host."""

    window: int
    lines: int
    hosts: dict[str, HostTally]
    log: str

    def to_dict(self) -> JSONObject:
        return {"window": self.window, "lines": self.lines, "log": self.log, "hosts": {n: t.to_dict() for n, t in self.hosts.items()}}


def count(root: Path, window: int = DEFAULT_WINDOW) -> Tally:
    """Count the last ``window`` prompt-hook lines of ``root``'s ``hooks.log`` per host."""
    rows = [(entry, found) for entry in runner.read_log(root) for found in [bucket(entry)] if found is not None]
    rows = rows[-window:] if window > 0 else []
    hosts: dict[str, HostTally] = {}
    for entry, found in rows:
        name = str(entry["action"]).removeprefix("context:")
        tally = hosts.setdefault(name, HostTally(name))
        tally.counts[found] += 1
        ts = str(entry.get("ts") or "")
        tally.first = tally.first or ts
        tally.last = ts or tally.last
    return Tally(window, len(rows), dict(sorted(hosts.items())), str(runner.log_path(root)))


def summary(counts: Mapping[str, object]) -> str:
    """One host's line from its :meth:`HostTally.to_dict`: ``12 live, 1 weak, 3 stale, 0 nothing,
    0 failed, 2 skipped (FIRST to LAST)``; skipped and recorded only when there are any."""
    shown = ", ".join(f"{counts[b]} {b}" for b in ANSWERED)
    extra = "".join(f", {counts[b]} {b}" for b in ("skipped", "recorded") if counts[b])
    return f"{shown}{extra} ({counts['first']} to {counts['last']})"
