"""The freshness stamp on every delivered answer, and the ``rag_stale_policy`` that acts on it.

Each answer (the prompt hook's text and ``session-context.md``, ``rag search --json``, the agent
protocol's and MCP's ``search`` and ``research``) carries ``freshness``: the index's sync stamp
compared with the work tree now (:mod:`paqad.index.writing.syncstamp` defines every field and "stale"),
plus ``policy`` and ``refreshed`` (whether this answer updated the index first). What a model
reads gets it as one short line (:func:`line`), e.g.::

    Index: a1b2c3d (HEAD), uncommitted edits: covered, 12s old.
    Index STALE: 3 commits behind HEAD d4e5f6a (indexed a1b2c3d), uncommitted edits: covered, 4 min old.

The policy: ``warn`` (default) delivers and says so; ``refresh`` updates the index first (lexical
part only, as the prompt hook does) when that finishes within ``rag_prompt_budget`` seconds, else
warns; ``silent`` leaves the line out of hook text and MCP replies (the JSON fields stay). The
prompt hook syncs before every answer whatever the policy, so there the line says stale only when
that sync could not run (another writer busy, over budget).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict

from paqad import deadline as deadline_mod
from paqad import git
from paqad.index import store
from paqad.index.writing import syncstamp

if TYPE_CHECKING:
    from paqad.config import Config

SHORT = 7  # characters of a commit shown


class Stamped(TypedDict, total=False):
    """The ``freshness`` object of an answer: the fields of :class:`syncstamp.Freshness` (the
    index against the work tree now), the ``policy``, whether this answer ``refreshed`` the index
    first, and why a refresh did not (``refresh_note``). MCP's compact object has the six
    required fields (and ``refreshed`` when true); :func:`line` reads either."""

    indexed_commit: Required[str | None]
    head: Required[str | None]
    behind: Required[int | None]
    uncommitted_covered: Required[bool | None]
    age_seconds: Required[float | int | None]
    stale: Required[bool]
    synced_at: float | None
    reason: str
    policy: str
    refreshed: bool
    refresh_note: str


def describe(root: Path, cfg: Config, status: git.Status | None = None, refreshed: bool = False) -> Stamped:
    """The ``freshness`` object of an answer (``status``: the caller's ``git status``, if it has one)."""
    f = syncstamp.check(root, status)
    return {
        "indexed_commit": f.indexed_commit, "head": f.head, "behind": f.behind, "uncommitted_covered": f.uncommitted_covered,
        "age_seconds": f.age_seconds, "stale": f.stale, "synced_at": f.synced_at, "reason": f.reason,
        "policy": cfg.rag_stale_policy, "refreshed": refreshed,
    }


def before_answer(root: Path, cfg: Config) -> Stamped:
    """For a door that does not sync by itself (``rag search``, the agent protocol, MCP): the
    freshness now, after updating a stale index first when the policy is ``refresh`` and the update
    finishes within ``rag_prompt_budget`` (a writer that holds the lock longer, or a slow update:
    the answer comes from the index as it is, marked stale; the update may finish behind it)."""
    found = describe(root, cfg)
    if not found["stale"] or cfg.rag_stale_policy != "refresh" or not store.current_pointer(root).exists():
        return found  # no index: a first build never fits a budget (the search says how to build one)

    from paqad.index.writing import build  # lazy: the index writer and its embedding stack, only to refresh a stale index first

    budget = cfg.rag_prompt_budget
    started = time.monotonic()
    outcome = deadline_mod.run_within(
        lambda: build.update(root, cfg, lock_timeout=budget, embed=False, repair=False), budget, name="paqad-stale-refresh"
    )
    if outcome.value is None:
        return {**found, "refresh_note": _why_not(outcome.error, time.monotonic() - started)}
    return describe(root, cfg, refreshed=True)


def _why_not(error: BaseException | None, spent: float) -> str:
    if error is None:
        return f"the update did not finish within {spent:.1f}s"
    return f"the update failed: {type(error).__name__}: {str(error)[:200]}"


def shown(fresh: Mapping[str, object] | None) -> bool:
    """Whether the line goes into what a model reads (not under ``silent``, not without a stamp)."""
    return fresh is not None and fresh.get("policy") != "silent"


def line(fresh: Mapping[str, object], now: float | None = None) -> str:
    """One short line: the indexed commit against HEAD, the uncommitted edits, the age (from
    ``synced_at`` when there, so a context handed over later shows its index's true age; else
    ``age_seconds``, as MCP's compact object has it). ``fresh``: a :class:`Stamped`, or one read
    back from JSON (a handed-over context, the service's reply, MCP's compact object)."""
    synced, seconds = fresh.get("synced_at"), fresh.get("age_seconds")
    if isinstance(synced, (int, float)):
        seconds = (now if now is not None else time.time()) - float(synced)
    if not isinstance(seconds, (int, float)):
        return "Index freshness unknown: no sync of this index recorded (`paqad rag update` records one)."
    age = age_text(max(0.0, float(seconds)))
    indexed, head = _short(fresh.get("indexed_commit")), _short(fresh.get("head"))
    covered = fresh.get("uncommitted_covered")
    edits = "" if covered is None else f", uncommitted edits: {'covered' if covered else 'NOT covered'}"
    if not fresh.get("stale"):
        return f"Index: {indexed or 'no commit'} (HEAD){edits}, {age} old."
    behind = fresh.get("behind")
    if indexed == head:
        where = f"{indexed or 'no commit'} (HEAD)"
    elif behind:
        where = f"{behind} commit{'s' if behind != 1 else ''} behind HEAD {head} (indexed {indexed or 'none'})"
    else:
        where = f"indexed at {indexed or 'no commit'}, HEAD is {head or 'unknown'}"
    return f"Index STALE: {where}{edits}, {age} old; check the live files."


def _short(commit: object) -> str:
    return str(commit)[:SHORT] if commit else ""


def age_text(seconds: float) -> str:
    """An age for people: seconds, minutes or hours (this line and the context's stale note)."""
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
