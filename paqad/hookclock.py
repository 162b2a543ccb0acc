"""A prompt hook's wall clock: counted from process start, stopped hard at budget plus a margin.

The host times a hook from the moment it starts the process until the process has exited and
closed its output; paqad used to time it from somewhere inside (``hosts._handle``), so with the
service SIGKILLed mid-request ``hooks.log`` said 0.1-0.4 s for hooks the host waited 11-12 s on,
and nothing bounded the parts before and after that measure (issue 31, finding 12).

:func:`arm` (called first thing by :func:`paqad.serve.hookclient.agent_hook`) takes the process
start from ``/proc/self/stat`` (field 22, clock ticks since boot, against ``/proc/uptime``; else
the moment of the call) and starts a watchdog thread. The hook must be done by
``start + budget + MARGIN_S``: past it the watchdog ends the process, exit 0 with nothing more on
stdout (a host treats that as "no context"), after at most ``STOP_LOG_WAIT_S`` for the
:func:`on_stop` callback to log why. Whatever blocks the hook, a service that died holding the
connection open, a slow import on a loaded machine, a lock or git, the host waits at most that
long. ``MARGIN_S`` is what the fallback path needs beyond the budget: importing the full CLI and
loading the settings (0.3-0.6 s on an idle 2-core machine), the answer's rendering and logging,
and starting a service for the next prompt; 2 s keeps the default (1.5 s budget) at 3.5 s, far
under a host's 10 s hook timeout. The budget is first ``PAQAD_HOOK_BUDGET`` or the default and
is replaced (:func:`set_budget`) once the service's ack or the settings say what it is.

The socket waits of the service client are derived from :func:`stop_at` (what is left), and the
in-process answer's budget from :func:`left`; ``hooks.log`` gets :func:`elapsed` as the run's
seconds. Imports only ``os``, ``time`` and ``_thread``: the thin client runs this before anything.
"""

from __future__ import annotations

import _thread
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MARGIN_S = 2.0
DEFAULT_BUDGET_S = 1.5  # paqad.delivery.prompt.DEFAULT_BUDGET_S (not imported: it pulls in the search stack)
BUDGET_ENV = "PAQAD_HOOK_BUDGET"
STOP_LOG_WAIT_S = 0.3
_TICK_S = 0.25  # the watchdog re-reads the deadline this often (a budget may be raised meanwhile)

_clock: dict[str, float] = {}
_stop_logger: list[Callable[[], None]] = []
#: Held while the hook writes its answer: the watchdog never ends the process halfway through it.
OUTPUT = _thread.allocate_lock()


def process_started() -> float:
    """When this process started, in ``time.monotonic()`` seconds (now, where /proc cannot say)."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
        ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])  # field 22; the fields after ``comm`` start at 3
        age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - age if 0.0 <= age < 600.0 else now


def _env_budget() -> float:
    try:
        return max(0.0, float(os.environ[BUDGET_ENV]))
    except (KeyError, ValueError):
        return DEFAULT_BUDGET_S


def arm(budget: float | None = None) -> None:
    """Start the clock (from process start) and the watchdog; a second call changes nothing."""
    if _clock:
        return
    _clock["started"] = process_started()
    _clock["budget"] = _env_budget() if budget is None else budget
    _thread.start_new_thread(_watch, ())


def armed() -> bool:
    return bool(_clock)


def set_budget(budget: float) -> None:
    """The budget as the service's ack or the settings give it (the hard stop moves with it)."""
    if _clock:
        _clock["budget"] = max(0.0, budget)


def elapsed() -> float:
    """Seconds since the process started (since now, when the clock is not armed)."""
    return time.monotonic() - _clock["started"] if _clock else 0.0


def left(budget: float | None = None) -> float:
    """Seconds before ``start + budget`` (the armed budget by default); never negative."""
    if not _clock:
        return budget if budget is not None else DEFAULT_BUDGET_S
    return max(0.0, _clock["started"] + (_clock["budget"] if budget is None else budget) - time.monotonic())


def stop_at() -> float | None:
    """The hard stop, in ``time.monotonic()`` seconds: start + budget + MARGIN_S (None unarmed)."""
    return _clock["started"] + _clock["budget"] + MARGIN_S if _clock else None


def on_stop(callback: Callable[[], None]) -> None:
    """What the watchdog runs (bounded by ``STOP_LOG_WAIT_S``) before it ends the process: a log line."""
    _stop_logger[:] = [callback]


def _watch() -> None:
    while True:
        end = stop_at()
        wait = (end if end is not None else time.monotonic()) - time.monotonic()
        if wait <= 0:
            break
        time.sleep(min(wait, _TICK_S))
    if _stop_logger:
        done = _thread.allocate_lock()
        done.acquire()

        def log() -> None:
            try:
                _stop_logger[0]()
            except BaseException:  # noqa: BLE001 - a log line must not keep the process alive
                pass
            done.release()

        _thread.start_new_thread(log, ())
        done.acquire(True, STOP_LOG_WAIT_S)
    OUTPUT.acquire(True, 1.0)  # an answer being written finishes first (a pipe write, milliseconds)
    os._exit(0)
