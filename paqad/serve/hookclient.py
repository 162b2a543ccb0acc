"""The entry point hosts and git hooks run: hand the event to the service, else answer in-process.

Stdlib only until it falls back (``python -X importtime`` on ``paqad hook run prompt-submit
--host claude`` shows it; benchmarks/hook_latency.py measures it). Two command lines come here
(:func:`handles`), exactly as the installed hooks write them; anything else, options included,
goes to the full CLI unchanged:

- ``paqad hook run EVENT --host NAME`` (agent hosts): read the host's JSON from stdin, find the
  work tree (the JSON's ``cwd`` or workspace root, else the current folder, up to the folder
  holding ``.git``; the developer must have set paqad up there: its per-developer folder exists,
  :mod:`paqad.localstate`; a committed ``.paqad/`` is not enough), build a ``calls.Hook`` and hand
  it to :func:`paqad.serve.route.hook`, which asks the service and, when the service is absent,
  stale, hung, crashed, outdated, refuses, or does not answer within its budget, answers it in
  this process (the budget left is what the service did not use) and starts a service for the
  next prompt. A ``NOTIFY_ONLY`` event (``file-changed``) has no in-process path.
- ``paqad hook run GIT-EVENT [git's args]`` (the git shims call :func:`git_burst_main`, older
  shims :func:`hook_main`): a ``calls.GitEvent`` to :func:`paqad.serve.route.git_event`: the
  service coalesces a burst of commits into one update; without one, the runner starts its
  detached, debounced update, and (from the shims) this process stays for the rest of the burst
  (:mod:`paqad.hooks.gitburst`).
"""

from __future__ import annotations

import os
import sys
import time

from paqad import hookclock, localstate
from paqad.channel import calls
from paqad.channel import litejson as json
from paqad.serve import route

GIT_EVENTS = calls.GIT_EVENTS
MAX_STDIN = calls.MAX_STDIN
NOTIFY_ONLY = route.NOTIFY_ONLY
#: Seconds before the hard stop (:func:`paqad.hookclock.stop_at`) the wait for the service ends, so
#: the in-process fallback (the full CLI's import, the settings, a stale answer: 0.3-0.6 s idle)
#: still fits when a service died holding the connection open.
FALLBACK_RESERVE_S = 1.0


def handles(args: list[str]) -> bool:
    """True for the two hook command lines this module serves (see the module docstring)."""
    if len(args) < 3 or args[:2] != ["hook", "run"] or args[2].startswith("-"):
        return False
    return _host_of(args[3:]) is not None or (args[2] in GIT_EVENTS and not any(a.startswith("-") for a in args[3:]))


def _host_of(rest: list[str]) -> str | None:
    if len(rest) == 2 and rest[0] == "--host" and rest[1] and not rest[1].startswith("-"):
        return rest[1]
    if len(rest) == 1 and rest[0].startswith("--host=") and len(rest[0]) > len("--host="):
        return rest[0][len("--host=") :]
    return None


def main(args: list[str]) -> int:
    """Serve one of :func:`handles`' command lines; returns 0 (agent hooks end the process)."""
    host = _host_of(args[3:])
    if host is not None:
        agent_hook(args[2], host)
    return git_hook(args[2], args[3:])


def hook_main(argv: list[str] | None = None) -> int:
    """What the git shims run (``python -c ... run EVENT ARGS``); always 0."""
    args = ["hook", *(sys.argv[1:] if argv is None else argv)]
    if handles(args):
        return main(args)
    if len(args) >= 3 and args[1] == "run" and args[2] in GIT_EVENTS:  # git's args with options: the event all the same
        return git_hook(args[2], [])
    return 0  # nothing a shim sends: a hook never fails git


def git_burst_main(argv: list[str] | None = None) -> int:
    """What the git shims start in the background (``python -c ... run EVENT ARGS``): the event to
    the service when one runs; else this process stays for the burst (:mod:`paqad.hooks.gitburst`:
    the runner's detached update now, and again for the events later shims leave while it lives).
    Anything else goes to :func:`hook_main`. Always 0."""
    args = ["hook", *(sys.argv[1:] if argv is None else argv)]
    if not (handles(args) and args[2] in GIT_EVENTS and _host_of(args[3:]) is None):
        return hook_main(argv)
    root = find_root(os.getcwd())
    if root is None:
        return hook_main(argv)
    if route.git_event(root, calls.GitEvent(args[2]), here=False):
        return 0
    try:
        from pathlib import Path  # lazy: the thin client: pathlib is 26 modules, for the fallback only

        from paqad import git  # lazy: the thin client: 60 modules, for the burst fallback only
        from paqad.hooks import gitburst  # lazy: the thin client: 108 modules, for the burst fallback only

        clean = git.no_git_env()  # GIT_DIR, GIT_INDEX_FILE ... from the hook would point git elsewhere
        os.environ.clear()
        os.environ.update(clean)
        gitburst.run(Path(root), args[2])
    except Exception:  # noqa: BLE001 - in the background, after git returned: nobody to tell but the runner's log
        pass
    return 0


def find_root(start: str) -> str | None:
    """The work tree around ``start`` (the nearest folder up holding ``.git``) if the developer set
    paqad up in it (its per-developer folder exists; a committed ``.paqad/`` says nothing)."""
    folder = os.path.abspath(start)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder if os.path.isdir(localstate.tree_dir(folder)) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _start_dir(raw: str) -> str:
    """Where the host says it runs (``cwd``, or the first workspace root), else the current folder."""
    try:
        data = json.loads(raw or "{}")
    except ValueError:
        data = None
    if isinstance(data, dict):
        roots = data.get("workspaceRoots")
        for value in (data.get("cwd"), roots[0] if isinstance(roots, list) and roots else None):
            if isinstance(value, str) and os.path.isdir(value):
                return value
    return os.getcwd()


def _read_stdin() -> str:
    try:
        return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read(MAX_STDIN + 1)  # +1: over the cap shows
    except (OSError, ValueError):
        return ""


def agent_hook(event: str, host: str) -> None:
    """An agent host's hook through the service, else in-process; ends the process (exit 0).

    The clock runs from process start and a watchdog ends the process at the budget plus
    ``hookclock.MARGIN_S`` (:mod:`paqad.hookclock`); the waits for the service end
    ``FALLBACK_RESERVE_S`` before that, so a service killed mid-request costs the host a fallback
    or silence, never more."""
    hookclock.arm()
    raw = _read_stdin()
    root = find_root(_start_dir(raw))
    if root is not None:
        hookclock.on_stop(lambda: _log_stop(str(root), event, host))
    call = calls.Hook(
        event, host, raw, os.getcwd(), os.environ.get("PAQAD_HOOK_BUDGET"),
        round(hookclock.elapsed(), 3),  # the service's log and budget count from this process's start too
    )
    _finish(route.hook(root, call, until=_wait_until, on_ack=_budget_from_ack, clock=hookclock.elapsed, emit=write))


def _wait_until() -> float:
    """The latest moment to wait for the service: the hard stop less the fallback's reserve."""
    return (hookclock.stop_at() or time.monotonic()) - FALLBACK_RESERVE_S


def _budget_from_ack(ack: dict) -> None:
    budget = ack.get("budget")
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        hookclock.set_budget(float(budget))  # the settings' budget, which this thin client does not read


def _log_stop(root: str, event: str, host: str) -> None:
    """The watchdog's ``hooks.log`` line (it runs in the watchdog's bounded side thread)."""
    from pathlib import Path  # lazy: the thin client: pathlib is 26 modules, for the fallback only

    from paqad.hooks import runner  # lazy: the thin client: 145 modules, for the watchdog's log line only

    detail = f"stopped at the hard limit (budget + {hookclock.MARGIN_S:g} s, from process start); nothing more printed"
    runner.log_result(Path(root), runner.RunResult(event, f"context:{host}", "foreground", runner.RunStatus.TIMEOUT, 0, round(hookclock.elapsed(), 3), detail=detail))


def write(out: str) -> None:
    """The answer on stdout, whole (the watchdog does not end the process halfway through it)."""
    with hookclock.OUTPUT:
        try:
            if out:
                sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass


def _finish(out: str) -> None:
    write(out)
    os._exit(0)


def git_hook(event: str, git_args: list[str]) -> int:
    """Tell the service about a git event; without one, the runner's detached update. Returns 0."""
    root = find_root(os.getcwd())
    if root is not None:
        route.git_event(root, calls.GitEvent(event))
    return 0
