"""Run a call against a deadline: the one executor behind every hook action and the prompt path.

A hook must return on time whatever the work does, so the work runs in a daemon worker thread
joined until the deadline. Past it the caller moves on and the worker is abandoned: it finishes,
or dies with the process, on its own. Nothing is ever killed mid-write: the index and the
context files are written atomically, so an abandoned worker cannot leave half a file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Outcome(Generic[T]):
    """What a deadline-bound call did: its value, the exception it raised, or neither (too late)."""

    value: T | None = None
    error: BaseException | None = None
    finished: bool = False

    @property
    def timed_out(self) -> bool:
        return not self.finished


def remaining(deadline: float, reserve: float = 0.0) -> float:
    """Seconds left before ``deadline`` (``time.monotonic()``) keeping ``reserve`` back; never negative."""
    return max(0.0, deadline - time.monotonic() - reserve)


def run_within(fn: Callable[[], T], seconds: float | None, name: str = "paqad-worker") -> Outcome[T]:
    """Call ``fn`` in a worker thread and wait at most ``seconds`` (None: as long as it takes).

    Every exception, ``BaseException`` included, is captured in the outcome rather than raised:
    the callers are hooks, which report failures and never raise.
    """
    outcome: Outcome[T] = Outcome()

    def work() -> None:
        try:
            outcome.value = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller in the outcome
            outcome.error = exc
        outcome.finished = True

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(None if seconds is None else max(0.0, seconds))
    if worker.is_alive():
        return Outcome()  # a fresh one: the abandoned worker may still fill the other in later
    return outcome
