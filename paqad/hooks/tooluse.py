"""Uptake from tool events: what the agent did, as hosts without a transcript report it.

GitHub Copilot CLI and Cursor name no session transcript, but paqad's ``postToolUse`` hook already
runs after each of the agent's tool calls (to hand over a context the prompt could not carry) and
gets the tool's name, arguments and result. This module reduces one such event to the same
actions a transcript gives (:func:`paqad.hooks.transcript.actions_of`) and appends them to the
uptake record (:mod:`paqad.hooks.uptake`) under the session's latest delivery, for ``paqad
report`` to count (:func:`paqad.hooks.usage.measure_moves`).

Only what the counts need is kept: the kind, the file (relative to the work tree; a file outside
it is dropped), the lines read, and for a search the delivered passages its pattern names and the
delivered or ranked files its result names. Never the pattern, the result or any code. A tool
event with no delivery before it in its session writes nothing. Best effort: never raises.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from paqad.hooks import transcript, uptake

if TYPE_CHECKING:
    from pathlib import Path

    from paqad.hooks.hosts.base import Event
    from paqad.jsontypes import JSONObject

MAX_ACTIONS = 20  # actions kept from one tool call (a long shell line)


def record(root: Path, host: str, event: Event) -> None:
    """Append the moves of one tool event under its session's latest delivery; nothing when none."""
    try:
        actions = transcript.actions_of(event.tool, event.tool_args) if event.tool else []
        session = event.session_id[: uptake.ID_MAX]
        row = uptake.last_delivery(root, host, session) if actions else None
        if row is None:
            return
        moves = reduce(os.path.realpath(root), row, actions[:MAX_ACTIONS], event.tool_result)
        if moves:
            uptake.record(root, {"kind": uptake.TOOL, "host": host, "session": session, "delivery_t": row.get("t"), "actions": moves})
    except Exception:  # noqa: BLE001 - a tool event's answer must never fail on the record
        pass


def reduce(real_root: str, row: JSONObject, actions: list[transcript.Action], result: str) -> list[JSONObject]:
    """The record's form of ``actions`` against the delivery ``row``: paths and span keys only."""
    delivered = [s for s in _list(row.get("delivered")) if isinstance(s, dict) and s.get("path")]
    candidates = {str(s.get("path")) for s in [*delivered, *_list(row.get("ranked"))] if isinstance(s, dict) and s.get("path")}
    text = result.replace(real_root + "/", "")
    out: list[JSONObject] = []
    for action in actions:
        rel = transcript.relative(real_root, action.path)
        if action.kind == "search":
            named = [f"{s['path']}:{s.get('start')}" for s in delivered if transcript.names(action.pattern, s)]
            found = sorted(p for p in candidates if p in text or p == rel)
            out.append({"kind": "search", "path": rel or "", "names": named, "found": found})
        elif rel is not None:
            out.append({"kind": action.kind, "path": rel, "start": action.start, "end": action.end})
    return out


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
