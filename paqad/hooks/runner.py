"""The hook runner: ``.paqad/hooks.yaml`` maps events to actions; ``run_event`` runs them safely.

Every door that reacts to an event (git hook shims, pre-commit, agent prompt hooks) calls
``run_event(root, event)``. For each action configured for the event it either

- runs it in the foreground, in a worker thread joined with the action's ``timeout`` (an
  overrun is logged as ``timeout`` and abandoned, never waited for), or
- starts a detached child (``python -m paqad hook run-action ...``: new session, no stdio, a clean
  environment from ``paqad.git.no_git_env``) and returns at once, so ``git commit`` never waits.

Single-flight, coalescing: one run of an action at a time per repository, through a non-blocking
OS lock ``<per-developer folder>/state/hook-<action>.lock``. An event that finds the action running does not start
a second copy; it leaves ``hook-<action>.rerun`` and the running holder runs once more when it
finishes, so the last event is never lost (skipping would leave the index behind the commit that
arrived mid-update).

Debounce: a background holder keeps the lock for at least ``debounce`` seconds after it started,
so a burst of events (a rebase fires post-commit per pick, then post-rewrite) becomes one run now
plus at most one trailing run. A foreground action started less than ``debounce`` seconds ago
(start time in ``<per-developer folder>/state/hook-<action>.json``) is skipped.

One JSON line per run goes to ``<per-developer folder>/logs/hooks.log``: time, event, action, mode, status, exit,
seconds, error. Nothing here raises out of ``run_event``: a hook must never fail git or a prompt.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import filelock
import yaml

from paqad import deadline, localstate, workspace, yamlio
from paqad.channel import calls
from paqad.errors import ConfigError
from paqad.git import no_git_env
from paqad.hooklog import ERROR_MAX_CHARS as ERROR_MAX_CHARS  # re-exported: the log moved to paqad.hooklog
from paqad.hooklog import LOG_NAME as LOG_NAME
from paqad.hooklog import RunResult as RunResult
from paqad.hooklog import RunStatus as RunStatus
from paqad.hooklog import log_path as log_path
from paqad.hooklog import log_result as log_result
from paqad.hooklog import read_log as read_log
from paqad.hooks.actions import ACTIONS
from paqad.textsafe import quote

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

GIT_EVENTS = calls.GIT_EVENTS  # named in the channel: the thin hook client reads them without this module
AGENT_EVENTS = ("prompt-submit", "session-start")
EVENTS = GIT_EVENTS + AGENT_EVENTS

HOOKS_FILE = "hooks.yaml"
TIMEOUT_MAX_S = 86_400.0
DEBOUNCE_MAX_S = 3_600.0



@dataclass(frozen=True)
class ActionSpec:
    """One action bound to an event, with how to run it."""

    action: str
    timeout: float = 300.0
    background: bool = True
    debounce: float = 2.0


DEFAULT_SPEC = ActionSpec("rag-update")
DEFAULTS: dict[str, tuple[ActionSpec, ...]] = {**{e: (DEFAULT_SPEC,) for e in GIT_EVENTS}, **{e: () for e in AGENT_EVENTS}}

DEFAULT_YAML = """\
# paqad hook runner: which actions run on which event. Committed and shared with the team.
# Events: post-commit, post-merge, post-checkout, post-rewrite (git), prompt-submit,
# session-start (agents). An event not listed here keeps its built-in default; `event: []`
# switches it off. Each action: a name, or a mapping with
#   action: rag-update    what to run (actions: rag-update, refresh-context, history-update)
#   background: true      detached child (true) or foreground with the timeout (false)
#   timeout: 300          seconds before the run is abandoned and logged as a timeout
#   debounce: 2           seconds: a burst of events inside this window becomes one run
post-commit: [rag-update]
post-merge: [rag-update]
post-checkout: [rag-update]
post-rewrite: [rag-update]
"""


# ---- configuration --------------------------------------------------------------------------


def hooks_path(root: Path) -> Path:
    return workspace.paqad_dir(root) / HOOKS_FILE


def load_config(root: Path) -> dict[str, tuple[ActionSpec, ...]]:
    """Built-in defaults overlaid with ``.paqad/hooks.yaml``; ConfigError names file, event, action, key."""
    path = hooks_path(root)
    if workspace.team_file(root, path) is None:  # absent, or reached through a symlink (never read)
        return dict(DEFAULTS)
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read it: {quote(str(exc), ERROR_MAX_CHARS // 2)}") from None
    return {**DEFAULTS, **parse_config(data, str(path))}


def parse_config(data: object, origin: str) -> dict[str, tuple[ActionSpec, ...]]:
    """Validate the parsed YAML of a hooks file; unknown keys and bad values are errors, never defaults.

    The file is committed, so untrusted: a name or value from it reaches an error message (and so
    ``hooks.log``, ``paqad doctor``) only through :func:`paqad.textsafe.quote`: quoted, control
    characters escaped, ``$`` and backticks inert, length-capped (issue 31)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: expected a mapping of event to actions, got {type(data).__name__}")
    out = {}
    for event, items in data.items():
        if event not in EVENTS:
            raise ConfigError(f"{origin}: unknown event {quote(event)}; choose from {', '.join(EVENTS)}")
        out[event] = _parse_event(event, items, origin)
    return out


def _parse_event(event: str, items: object, origin: str) -> tuple[ActionSpec, ...]:
    where = f"{origin}: event {quote(event)}"
    if items is None:
        return ()
    if not isinstance(items, list):
        raise ConfigError(f"{where}: expected a list of actions, got {type(items).__name__}")
    specs = tuple(_parse_action(item, where) for item in items)
    names = [s.action for s in specs]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{where}: action {quote(name)} is listed twice")
    return specs


def _parse_action(item: object, where: str) -> ActionSpec:
    if isinstance(item, str):
        item = {"action": item}
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: each action is a name or a mapping, got {quote(item)}")
    name = item.get("action")
    if not isinstance(name, str) or name not in ACTIONS:  # a list or a mapping is no name (and unhashable)
        raise ConfigError(f"{where}: key 'action': unknown action {quote(name)}; choose from {', '.join(sorted(ACTIONS))}")
    where = f"{where}, action {quote(name)}"
    unknown = sorted((k for k in item if k not in ("action", "timeout", "background", "debounce")), key=repr)
    if unknown:
        raise ConfigError(f"{where}: unknown key {quote(unknown[0])}; keys are action, background, timeout, debounce")
    background = item.get("background", DEFAULT_SPEC.background)
    if not isinstance(background, bool):
        raise ConfigError(f"{where}: key 'background': expected true or false, got {quote(background)}")
    timeout = _number(item, "timeout", DEFAULT_SPEC.timeout, 0.0, TIMEOUT_MAX_S, where)
    debounce = _number(item, "debounce", DEFAULT_SPEC.debounce, 0.0, DEBOUNCE_MAX_S, where)
    if timeout == 0:
        raise ConfigError(f"{where}: key 'timeout': must be more than 0 seconds")
    return ActionSpec(name, timeout=timeout, background=background, debounce=debounce)


def _number(item: dict, key: str, default: float, low: float, high: float, where: str) -> float:
    value = item.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"{where}: key {key!r}: expected a number of seconds from {low:g} to {high:g}, got {quote(value)}")
    return float(value)


def write_default_config(root: Path) -> bool:
    """Write ``.paqad/hooks.yaml`` with the defaults if it is absent; True when written."""
    path = hooks_path(root)
    if path.exists() or path.is_symlink() or workspace.linked_part(root, path) is not None:
        return False
    workspace.atomic_write_text(path, DEFAULT_YAML, mode=0o644)
    return True


FINISHED = (RunStatus.OK, RunStatus.FAILED, RunStatus.TIMEOUT)


def last_runs(root: Path) -> dict[str, JSONObject]:
    """The last finished run (ok, failed or timeout) of each action, from the log."""
    return {str(e["action"]): e for e in read_log(root) if e.get("status") in FINISHED and "action" in e}


# ---- state: single-flight lock, rerun flag, last start ----------------------------------------


def _state(root: Path, action: str, suffix: str) -> Path:
    return workspace.state_dir(root) / f"hook-{action}.{suffix}"


def claim(root: Path, action: str, event: str = "") -> filelock.BaseFileLock | None:
    """Take the action's lock, or leave a rerun request (naming ``event``) for its holder and return None.

    The second attempt closes the race with a holder that was just releasing: either it sees our
    request after releasing, or we get the lock here.
    """
    lock = _try_lock(root, action)
    if lock is None:
        _state(root, action, "rerun").write_text(event, encoding="utf-8")
        lock = _try_lock(root, action)
    return lock


def _try_lock(root: Path, action: str) -> filelock.BaseFileLock | None:
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(_state(root, action, "lock")), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        return None
    return lock


def last_start(root: Path, action: str) -> float | None:
    try:
        return float(json.loads(_state(root, action, "json").read_text(encoding="utf-8"))["last_start"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _record_start(root: Path, action: str, when: float) -> None:
    try:
        workspace.atomic_write_text(_state(root, action, "json"), json.dumps({"last_start": when}))
    except OSError:
        pass


# ---- running ---------------------------------------------------------------------------------


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:ERROR_MAX_CHARS]


def execute(root: Path, event: str, spec: ActionSpec, mode: str) -> RunResult:
    """Run the action once against its timeout (:func:`paqad.deadline.run_within`); never raises."""
    started = time.time()
    _record_start(root, spec.action, started)
    outcome = deadline.run_within(lambda: ACTIONS[spec.action](root), spec.timeout, name=f"paqad-{spec.action}")
    result = RunResult(event, spec.action, mode, RunStatus.OK, 0, round(time.time() - started, 3))
    if outcome.timed_out:
        result.status, result.exit, result.error = RunStatus.TIMEOUT, None, f"still running after {spec.timeout:g}s; abandoned"
    elif outcome.error is not None:
        result.status, result.exit, result.error = RunStatus.FAILED, 1, _error_text(outcome.error)
    else:
        result.detail = outcome.value
    log_result(root, result)
    return result


def run_held(root: Path, event: str, spec: ActionSpec, held: filelock.BaseFileLock, mode: str) -> list[RunResult]:
    """Run while holding the action's lock, once more for each rerun request; release; recheck."""
    results: list[RunResult] = []
    rerun = _state(root, spec.action, "rerun")
    lock: filelock.BaseFileLock | None = held
    while lock is not None:
        try:
            requested = _take_rerun(rerun)  # served by the run below
            event = (requested or event) if results else event
            while True:
                result = execute(root, event, spec, mode)
                results.append(result)
                if result.status == RunStatus.TIMEOUT:
                    return results  # the worker may still hold resources; do not stack another run
                if mode == "background":  # hold the lock for the debounce window: a burst becomes one rerun
                    time.sleep(max(0.0, spec.debounce - result.seconds))
                requested = _take_rerun(rerun)
                if requested is None:
                    break
                event = requested or event  # the rerun serves (and is logged as) the latest request
        finally:
            lock.release()
        lock = _try_lock(root, spec.action) if rerun.exists() else None
    return results


def _take_rerun(flag: Path) -> str | None:
    """The event that asked for a rerun ("" if unnamed) and clear the request; None when none is pending."""
    try:
        event = flag.read_text(encoding="utf-8").strip()
        flag.unlink()
    except OSError:
        return None
    return event


def child_argv(root: Path, event: str, action: str) -> list[str]:
    """The detached child's command line: this interpreter, this paqad, the repository off ``sys.path``."""
    return localstate.python_argv("--root", str(root), "hook", "run-action", action, "--event", event)


def spawn(argv: list[str], root: Path) -> int:
    """Start a detached child: own session, no stdio, no GIT_DIR/GIT_INDEX_FILE; return its pid."""
    proc = subprocess.Popen(
        argv,
        cwd=localstate.child_cwd(root),
        env=no_git_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,
    )
    return proc.pid


def _run_background(root: Path, event: str, spec: ActionSpec) -> RunResult:
    lock = claim(root, spec.action, event)
    if lock is None:
        return _logged(root, RunResult(event, spec.action, "background", RunStatus.COALESCED, detail="already running; it will run once more"))
    lock.release()  # the child takes it; a claim in between coalesces into the child's run
    try:
        pid = spawn(child_argv(root, event, spec.action), root)
    except OSError as exc:
        return _logged(root, RunResult(event, spec.action, "background", RunStatus.ERROR, 1, error=_error_text(exc)))
    return RunResult(event, spec.action, "background", RunStatus.STARTED, detail=f"pid {pid}")


def _run_foreground(root: Path, event: str, spec: ActionSpec) -> RunResult:
    started = last_start(root, spec.action)
    if started is not None and 0 <= time.time() - started < spec.debounce:
        return _logged(root, RunResult(event, spec.action, "foreground", RunStatus.DEBOUNCED, detail=f"started {time.time() - started:.1f}s ago"))
    lock = claim(root, spec.action, event)
    if lock is None:
        return _logged(root, RunResult(event, spec.action, "foreground", RunStatus.COALESCED, detail="already running; it will run once more"))
    return run_held(root, event, spec, lock, "foreground")[-1]


def _logged(root: Path, result: RunResult) -> RunResult:
    log_result(root, result)
    return result


def run_event(root: Path, event: str) -> list[RunResult]:
    """Run every action configured for ``event``; never raises, whatever the config or the actions do.

    A work tree paqad is not set up in (:func:`paqad.workspace.is_set_up`) runs nothing and
    writes nothing, whatever its committed ``.paqad/`` holds.
    """
    if not workspace.is_set_up(root):
        return []
    try:
        if event not in EVENTS:
            raise ConfigError(f"unknown event {event!r}; choose from {', '.join(EVENTS)}")
        specs = load_config(root).get(event, ())
    except ConfigError as exc:
        return [_logged(root, RunResult(event, "-", "-", RunStatus.ERROR, 2, error=str(exc)))]
    results = []
    for spec in specs:
        try:
            run = _run_background if spec.background else _run_foreground
            results.append(run(root, event, spec))
        except Exception as exc:  # noqa: BLE001 - the last line of defence for a hook
            results.append(_logged(root, RunResult(event, spec.action, "-", RunStatus.ERROR, 1, error=_error_text(exc))))
    return results


def run_background(root: Path, event: str, action: str) -> RunResult:
    """Start ``action`` detached for ``event`` now (single-flight), whatever the event's configuration lists.

    The prompt hook uses it to refresh the context behind a prompt it could not answer in time.
    """
    try:
        spec = next((s for s in load_config(root).get(event, ()) if s.action == action), None) or ActionSpec(action)
    except ConfigError:
        spec = ActionSpec(action)
    return _run_background(root, event, spec)


def start_refresh(root: Path) -> None:
    """The detached, single-flight ``refresh-context`` action for a prompt; never raises."""
    try:
        run_background(root, "prompt-submit", "refresh-context")
    except Exception:  # noqa: BLE001 - a prompt hook never fails the prompt
        pass


def run_action(root: Path, event: str, action: str) -> list[RunResult]:
    """The detached child's body: claim the lock (or coalesce) and run, honouring reruns and debounce."""
    if not workspace.is_set_up(root):
        return []
    try:
        spec = next((s for s in load_config(root).get(event, ()) if s.action == action), None) or ActionSpec(action)
        if action not in ACTIONS:
            raise ConfigError(f"unknown action {action!r}; choose from {', '.join(sorted(ACTIONS))}")
        lock = claim(root, action, event)
        if lock is None:
            return [_logged(root, RunResult(event, action, "background", RunStatus.COALESCED, detail="already running; it will run once more"))]
        return run_held(root, event, spec, lock, "background")
    except Exception as exc:  # noqa: BLE001
        return [_logged(root, RunResult(event, action, "background", RunStatus.ERROR, 1, error=_error_text(exc)))]
