"""The prompt hook's body: answer this prompt within its budget, or hand over the last context.

Record the prompt first (so a background refresh answers *this* prompt), then run
:func:`paqad.delivery.refresh.refresh` through :func:`paqad.deadline.run_within`, the executor
every hook action uses, joined with the budget. If it finishes, the context matches this prompt.
If it cannot (no index yet, too slow), the last delivery goes out marked with its age and the
prompt it answered, and ``spawn_refresh`` starts the background refresh (the caller passes the
runner's detached, single-flight ``refresh-context`` action, so this package never imports the
hook runner). With no index at all the refresh does not build (a first build takes far longer
than a budget): the answer goes out at once and the background refresh builds. An index built by
an older paqad is handed over the same way while the background refresh upgrades it.
Whatever happens, it returns within the budget and never raises.
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import deadline as deadline_mod
from paqad.delivery import context
from paqad.delivery import depth as depth_mod
from paqad.delivery.refresh import Report, record_prompt, refresh
from paqad.errors import IndexMissingError, IndexOutdatedError, LockedError
from paqad.index import store

if TYPE_CHECKING:
    from paqad.config import Config

DEFAULT_BUDGET_S = 1.5
BUDGET_MARGIN_S = 0.15  # kept back for rendering, printing and exiting
SEARCH_RESERVE_S = 0.4  # a busy index writer is waited for until this much budget is left for the search
BUDGET_ENV = "PAQAD_HOOK_BUDGET"  # seconds; overrides the setting (benchmarks force the stale path with 0)


class AnswerStatus(enum.StrEnum):
    """How the prompt hook's text came about (logged as the hook run's status)."""

    LIVE = "live"  # this prompt's own context
    STALE = "stale"  # the last delivery, marked with its age and the prompt it answered
    SKIPPED = "skipped"  # nothing to look up (a trivial prompt, depth none)
    SILENT = "silent"  # a failure: nothing said, the background run logs why


@dataclass
class Answer:
    """What the prompt hook hands the host: the text (None = print nothing) and how it got it."""

    text: str | None
    status: AnswerStatus
    detail: str = ""
    ranked: list[dict] | None = None  # a live answer's top ranked results (the uptake record); None: not searched now


def answer_prompt(
    root: Path,
    cfg: Config,
    prompt: str,
    limit: int,
    spawn_refresh: Callable[[Path], None],
    budget: float = DEFAULT_BUDGET_S,
    host: str = "",
    session_id: str = "",
) -> Answer:
    """Record the prompt, then answer it within ``budget`` seconds, or hand over the last delivery."""
    deadline = time.monotonic() + max(0.0, budget - BUDGET_MARGIN_S)
    if depth_mod.is_trivial(prompt):  # an acknowledgement must not replace the request it acknowledges
        return Answer(None, AnswerStatus.SKIPPED, "trivial prompt")
    record_prompt(root, prompt, host, session_id)  # first: a background refresh answers *this* prompt
    if not store.current_pointer(root).exists():  # no index: nothing to search, a build never fits the budget
        spawn_refresh(root)
        return _stale_answer(root, limit, "no index yet")

    def work() -> Report:
        lock_wait = deadline_mod.remaining(deadline, SEARCH_RESERVE_S)
        return refresh(root, cfg, prompt, sync=True, lock_wait=lock_wait, deadline=deadline)

    outcome = deadline_mod.run_within(work, deadline_mod.remaining(deadline), name="paqad-prompt")
    if outcome.value is not None:
        return _live_answer(root, outcome.value, limit, spawn_refresh)
    error = outcome.error
    spawn_refresh(root)  # too slow, no index, or a failure: the logged background run catches up, repairs or says why
    if isinstance(error, IndexOutdatedError):
        return _stale_answer(root, limit, "index upgrade (built by an older paqad) running in the background")
    if error is not None and not isinstance(error, (IndexMissingError, LockedError)):
        return Answer(None, AnswerStatus.SILENT, f"{type(error).__name__}: {error}")
    why = "no index yet" if isinstance(error, IndexMissingError) else "index locked" if error is not None else "over budget"
    return _stale_answer(root, limit, why)


def _live_answer(root: Path, report: Report, limit: int, spawn: Callable[[Path], None]) -> Answer:
    if report.delivery is None:
        return Answer(None, AnswerStatus.SKIPPED, report.depth.get("reason", ""))
    if report.synced and (report.synced.startswith("skipped") or report.synced.endswith("(vectors pending)")):
        spawn(root)  # answered from the index as it is; bring it (and its vectors) up to date behind the prompt
    model_note = "; model over budget" if report.vector_note else ""
    detail = f"{report.case} ({report.search_mode}{model_note})" if report.search_mode else report.case
    return Answer(context.render_for_hook(context.Delivery.from_dict(report.delivery), limit), AnswerStatus.LIVE, detail, report.ranked)


def _stale_answer(root: Path, limit: int, why: str) -> Answer:
    last = context.last_delivery(root)
    if last is None:
        return Answer(None, AnswerStatus.STALE, f"{why}; no earlier context to hand over")
    return Answer(context.render_for_hook(last, limit, context.stale_note(last)), AnswerStatus.STALE, why)


def budget_of(cfg: Config, environ: dict[str, str] | None = None) -> float:
    """The prompt-hook budget in seconds: ``PAQAD_HOOK_BUDGET``, else ``rag_prompt_budget``, else 1.5."""
    raw = (os.environ if environ is None else environ).get(BUDGET_ENV)
    try:
        return max(0.0, float(raw)) if raw is not None else cfg.rag_prompt_budget
    except ValueError:
        return DEFAULT_BUDGET_S
