"""``paqad report``: what the agent did with each delivery, per host, over the last turns.

Each line of the uptake record (:mod:`paqad.hooks.uptake`) is a delivery: the passages paqad handed
over, the units it had ranked, and where the turn starts in the host's transcript. This module
reads that turn (:mod:`paqad.hooks.transcript`) and counts, for the delivery:

- **used** passages: the agent *opened* one (read its file, the whole of it or lines overlapping
  the passage), *searched* for it (a grep or glob whose pattern names the unit or the file), or
  *edited* its file within the turn;
- **candidate misses**, counted apart: files the agent found by its own search (a search's result
  named the file, or its path argument was the file) and then opened, that paqad had ranked in its
  top 10 but did not deliver (*ranked*); and files the agent opened that paqad did not rank at all
  (*unranked*). A delivery handed over from an earlier prompt has no ranking of its own: its misses
  are not counted.

The turn ends where the next delivery in the same transcript starts. A turn whose transcript is
missing or not understood is counted as a delivery but not as measured, with a one-line note.
Everything runs when the report is asked for, never on a prompt's path.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks import tally, transcript, uptake
from paqad.search.uptake_prior import FileUptake

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

DEFAULT_LAST = tally.DEFAULT_WINDOW


@dataclass
class TurnUse:
    """One delivery and what the agent did with it."""

    delivered: int = 0
    opened: int = 0
    searched: int = 0
    edited: int = 0
    used: int = 0
    missed_ranked: list[str] = field(default_factory=list)
    missed_unranked: list[str] = field(default_factory=list)
    used_files: list[str] = field(default_factory=list)  # files of the delivered passages used
    ignored_files: list[str] = field(default_factory=list)  # files of the delivered passages left alone
    measured: bool = False
    note: str = ""


@dataclass
class HostReport:
    """One host's deliveries in the window, summed."""

    host: str
    deliveries: int = 0
    measured: int = 0
    passages: int = 0
    passages_measured: int = 0
    used: int = 0
    opened: int = 0
    searched: int = 0
    edited: int = 0
    missed_ranked: int = 0
    missed_unranked: int = 0
    tokens: int = 0
    prompts: JSONObject = field(default_factory=dict)  # tally.HostTally.to_dict(): live, stale, nothing, ...
    notes: list[str] = field(default_factory=list)

    @property
    def share_used(self) -> float | None:
        """Used passages over the passages of measured turns; None when no turn was measured."""
        return round(self.used / self.passages_measured, 3) if self.passages_measured else None

    def add(self, row: JSONObject, use: TurnUse) -> None:
        self.deliveries += 1
        self.passages += use.delivered
        self.tokens += _int(row.get("tokens"))
        if not use.measured:
            if use.note and use.note not in self.notes:
                self.notes.append(use.note)
            return
        self.measured += 1
        self.passages_measured += use.delivered
        self.used, self.opened, self.searched, self.edited = self.used + use.used, self.opened + use.opened, self.searched + use.searched, self.edited + use.edited
        self.missed_ranked += len(use.missed_ranked)
        self.missed_unranked += len(use.missed_unranked)

    def to_dict(self) -> JSONObject:
        return {**asdict(self), "share_used": self.share_used}


def report(root: Path, last: int = DEFAULT_LAST) -> JSONObject:
    """The report over the last ``last`` deliveries of ``root``'s uptake record, and the prompt
    tally (:mod:`paqad.hooks.tally`) over the last ``last`` prompt-hook lines, per host."""
    rows, uses, note = _measured(root, last)
    hosts: dict[str, HostReport] = {}
    for row, use in zip(rows, uses, strict=True):
        name = str(row.get("host") or "?")
        hosts.setdefault(name, HostReport(name)).add(row, use)
    prompts = tally.count(root, last)
    for name, counts in prompts.hosts.items():
        hosts.setdefault(name, HostReport(name)).prompts = counts.to_dict()
    return {
        "last": last, "deliveries": len(rows), "record": str(uptake.path(root)), "note": note,
        "hosts": {n: h.to_dict() for n, h in sorted(hosts.items())},
    }


def _measured(root: Path, last: int) -> tuple[list[JSONObject], list[TurnUse], str]:
    """The last ``last`` deliveries of the record, what the agent did with each, and the record's note."""
    every, note = uptake.read(root)
    rows = [r for r in every if r.get("kind") != uptake.TOOL]
    rows = rows[-last:] if last > 0 else []
    moves = _tool_moves([r for r in every if r.get("kind") == uptake.TOOL])
    real = os.path.realpath(root)
    uses = []
    for index, row in enumerate(rows):
        told = moves.get((str(row.get("host") or "?"), str(row.get("session") or ""), row.get("t")))
        uses.append(measure(real, row, *_turn_end(rows, index)) if told is None or row.get("transcript") else measure_moves(row, told))
    return rows, uses, note


def file_uptake(root: Path, last: int = DEFAULT_LAST) -> dict[str, FileUptake]:
    """Per file, over the measured deliveries of the last ``last``: delivered and used, delivered
    and left alone, opened without being delivered. What the file prior learns from
    (:mod:`paqad.search.uptake_prior`, ``rag_uptake_prior``)."""
    counts: dict[str, list[int]] = {}
    for use in _measured(root, last)[1]:
        if not use.measured:
            continue
        for path in set(use.used_files):
            counts.setdefault(path, [0, 0, 0])[0] += 1
        for path in set(use.ignored_files) - set(use.used_files):
            counts.setdefault(path, [0, 0, 0])[1] += 1
        for path in set(use.missed_ranked) | set(use.missed_unranked):
            counts.setdefault(path, [0, 0, 0])[2] += 1
    return {path: FileUptake(*c) for path, c in counts.items()}


def _tool_moves(rows: list[JSONObject]) -> dict[tuple[str, str, object], list[transcript.Action]]:
    """The actions hosts' tool events recorded (:mod:`paqad.hooks.tooluse`), by the delivery they follow."""
    out: dict[tuple[str, str, object], list[transcript.Action]] = {}
    for row in rows:
        key = (str(row.get("host") or ""), str(row.get("session") or ""), row.get("delivery_t"))
        items = row.get("actions")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("kind") in ("read", "search", "edit"):
                found, named = item.get("found"), item.get("names")
                found = found if isinstance(found, list) else []
                named = named if isinstance(named, list) else []
                start, end = item.get("start"), item.get("end")
                out.setdefault(key, []).append(transcript.Action(
                    str(item["kind"]), str(item.get("path") or ""), start if isinstance(start, int) else None, end if isinstance(end, int) else None,
                    result="\n".join(str(f) for f in found), named=[str(n) for n in named],
                ))
    return out


def measure_moves(row: JSONObject, actions: list[transcript.Action]) -> TurnUse:
    """What the agent did with one delivery, from the tool events the host sent after it."""
    delivered = [s for s in _spans(row.get("delivered")) if s["path"]]
    return _count(TurnUse(delivered=len(delivered), measured=True), delivered, actions, row.get("ranked"))


def _turn_end(rows: list[JSONObject], index: int) -> tuple[int | None, float | None]:
    """Where the delivery's turn ends: the next delivery's offset in the same transcript, and its time."""
    path = rows[index].get("transcript")
    for later in rows[index + 1 :]:
        if later.get("transcript") == path and _int(later.get("offset"), -1) >= 0:
            when = later.get("t")
            return _int(later.get("offset")), float(when) if isinstance(when, (int, float)) else None
    return None, None


def measure(real_root: str, row: JSONObject, end: int | None, until: float | None = None) -> TurnUse:
    """What the agent did with one delivery (``row``) in its turn."""
    delivered = [s for s in _spans(row.get("delivered")) if s["path"]]
    use = TurnUse(delivered=len(delivered))
    offset = _int(row.get("offset"), -1)
    if offset < 0:
        use.note = "no transcript from this host" if not row.get("transcript") else "the transcript could not be read at the delivery"
        return use
    turn = transcript.read_turn(str(row.get("transcript")), offset, end)
    if turn.note:
        use.note = turn.note
        return use
    use.measured = True
    since = row.get("t")
    if isinstance(since, (int, float)):  # Claude Code's subagents write transcripts of their own
        turn.actions += transcript.subagent_actions(str(row.get("transcript")), float(since), until)
    actions = [a for a in (_local(real_root, a) for a in turn.actions) if a is not None]
    return _count(use, delivered, actions, row.get("ranked"))


def _count(use: TurnUse, delivered: list[JSONObject], actions: list[transcript.Action], ranked: object) -> TurnUse:
    for span in delivered:
        how = _how_used(span, actions)
        (use.used_files if how else use.ignored_files).append(str(span["path"]))
        use.opened, use.searched, use.edited = use.opened + ("opened" in how), use.searched + ("searched" in how), use.edited + ("edited" in how)
        use.used += bool(how)
    if isinstance(ranked, list):
        _misses(use, actions, {str(s["path"]) for s in delivered}, {str(s["path"]) for s in _spans(ranked)})
    return use


def _how_used(span: JSONObject, actions: list[transcript.Action]) -> set[str]:
    how: set[str] = set()
    for action in actions:
        if action.kind == "read" and action.path == span["path"] and _overlaps(action, span):
            how.add("opened")
        elif action.kind == "edit" and action.path == span["path"]:
            how.add("edited")
        elif action.kind == "search" and (f"{span['path']}:{span['start']}" in action.named or transcript.names(action.pattern, span)):
            how.add("searched")
    return how


def _overlaps(action: transcript.Action, span: JSONObject) -> bool:
    if action.start is None:
        return True
    end = action.end if action.end is not None else 1 << 30
    return action.start <= _int(span["end"]) and end >= _int(span["start"])


def _misses(use: TurnUse, actions: list[transcript.Action], delivered: set[str], ranked: set[str]) -> None:
    """Files opened that paqad ranked but did not deliver (found by the agent's own search), and
    files opened that paqad did not rank; each file once."""
    searched: list[transcript.Action] = []
    for action in actions:
        if action.kind == "search":
            searched.append(action)
            continue
        if action.kind != "read" or action.path in delivered:
            continue
        found = any(action.path == s.path or action.path in s.result for s in searched)
        if action.path in ranked and found and action.path not in use.missed_ranked:
            use.missed_ranked.append(action.path)
        elif action.path not in ranked and action.path not in use.missed_unranked:
            use.missed_unranked.append(action.path)


def _local(real_root: str, action: transcript.Action) -> transcript.Action | None:
    """The action with its path relative to the work tree; a search keeps its own; None: outside."""
    if action.kind == "search":
        action.path = transcript.relative(real_root, action.path) or action.path
        action.result = action.result.replace(real_root + "/", "")
        return action
    rel = transcript.relative(real_root, action.path)
    if rel is None:
        return None
    action.path = rel
    return action


def _spans(value: object) -> list[JSONObject]:
    if not isinstance(value, list):
        return []
    return [{"path": str(s.get("path") or ""), "start": _int(s.get("start")), "end": _int(s.get("end")), "name": str(s.get("name") or "")} for s in value if isinstance(s, dict)]


def _int(value: object, default: int = 0) -> int:
    try:
        return int(value) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else default
    except ValueError:
        return default
