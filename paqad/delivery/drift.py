"""Base-branch drift: has the base branch moved on the remote, and does that touch what you change?

At most every ``rag_drift_interval`` minutes (default 10; state in ``<per-developer folder>/state/drift.json``)
``git ls-remote`` asks the base branch's remote (``branch.<base>.remote``, else ``origin``) for its
tip, with a timeout and never an interactive prompt (``GIT_TERMINAL_PROMPT=0``, ssh in batch
mode, no askpass): a remote that wants credentials is skipped and recorded, and so is a missing
remote or network. Only when the remote tip differs from the local remote-tracking ref does
``git fetch`` run. The ``## Base drift`` section of session-context.md then says how many commits
the base gained since your merge-base and which of the files you are changing they touch.
``rag_drift_check: false`` switches it off. This talks to the configured remote, nothing else.

Every git call goes through :mod:`paqad.git` (network calls through ``git.run_network``: batch
mode, a timeout that also kills git's helpers). ``check`` never raises for git: a failed call is a
``skipped`` status with the reason.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import git, workspace
from paqad.delivery import context

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.jsontypes import JSONObject

SECTION = "## Base drift"
STATE_FILE = "drift.json"
DEFAULT_INTERVAL_MIN = 10.0
NETWORK_TIMEOUT_S = git.NETWORK_TIMEOUT_S
MAX_FILES_SHOWN = 20
CREDENTIAL_SIGNS = ("permission denied", "authentication failed", "could not read username", "terminal prompts disabled", "host key verification failed")


@dataclass
class Drift:
    """One check: what was asked, what happened, how far the base moved."""

    status: str  # moved | current | skipped | throttled | off
    reason: str = ""
    base: str | None = None
    remote: str | None = None
    remote_tip: str | None = None
    fetched: bool = False
    behind: int = 0  # commits on the remote base since your merge-base
    touched: list[str] = field(default_factory=list)  # files those commits change that you change too
    base_files: int = 0
    checked_at: float = field(default_factory=time.time)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def state_path(root: Path) -> Path:
    return workspace.state_dir(root) / STATE_FILE


def last_check(root: Path) -> JSONObject | None:
    try:
        data = json.loads(state_path(root).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def check(root: Path, cfg: Config, files: list[str] | None = None, force: bool = False, timeout: float = NETWORK_TIMEOUT_S) -> Drift:
    """Run the throttled check, record it, and write the ``## Base drift`` section; never raises for git."""
    if not cfg.rag_drift_check:
        return Drift("off", "rag_drift_check is false")
    interval = cfg.rag_drift_interval * 60
    checked = (last_check(root) or {}).get("checked_at")
    ago = time.time() - float(checked) if isinstance(checked, (int, float)) else None  # a damaged record: check again
    if not force and ago is not None and 0 <= ago < interval:
        return Drift("throttled", f"checked {ago:.0f}s ago (every {interval / 60:g} min)")
    drift = _check(root, cfg.rag_base_branch, files, timeout)
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(state_path(root), json.dumps(drift.to_dict()))
    context.write_section(root, SECTION, render(drift))
    return drift


def _check(root: Path, base_setting: str, files: list[str] | None, timeout: float) -> Drift:
    branch = _base_name(root, base_setting)
    if branch is None:
        return Drift("skipped", "no base branch (main, master or rag_base_branch) here")
    remote = git.config_get(root, f"branch.{branch}.remote") or "origin"
    drift = Drift("skipped", base=branch, remote=remote)
    if git.remote_url(root, remote) is None:
        drift.reason = f"no remote {remote!r} configured"
        return drift
    try:
        drift.remote_tip = git.ls_remote_head(root, remote, branch, timeout)
    except git.GitError as exc:
        drift.reason = _why(exc)
        return drift
    if drift.remote_tip is None:
        drift.reason = f"{remote} has no branch {branch}"
        return drift
    tracking = f"refs/remotes/{remote}/{branch}"
    if git.rev_parse(root, tracking) != drift.remote_tip:
        try:
            git.fetch_branch(root, remote, branch, tracking, timeout)
        except git.GitError as exc:
            drift.reason = "fetch failed: " + _why(exc)
            return drift
        drift.fetched = True
    return _measure(root, drift, tracking, files)


def _base_name(root: Path, setting: str) -> str | None:
    ref = git.resolve_base(root, setting)
    if ref is None:
        return None
    return ref.split("/", 1)[1] if ref.startswith("origin/") else ref


def _why(exc: git.GitError) -> str:
    """The reason recorded for a remote that could not be asked."""
    if exc.returncode is None:
        return exc.reason
    if any(sign in exc.stderr.lower() for sign in CREDENTIAL_SIGNS):
        return "the remote wants credentials; not asked for (batch mode)"
    line = next((ln for ln in exc.stderr.strip().splitlines() if ln.strip()), f"exit {exc.returncode}")
    return f"remote unreachable: {line[:200]}"


def _measure(root: Path, drift: Drift, tracking: str, files: list[str] | None) -> Drift:
    mb = git.merge_base(root, tracking)
    if mb is None:
        drift.status, drift.reason = "skipped", "no common history with the base branch"
        return drift
    drift.behind = git.count_commits(root, f"{mb}..{tracking}")
    changed = git.diff_names(root, mb, tracking)
    drift.base_files = len(changed)
    mine = set(files if files is not None else git.working_set(root, drift.base or "auto").files)
    drift.touched = sorted(mine & set(changed))
    drift.status = "moved" if drift.behind else "current"
    drift.reason = "fetched the new tip" if drift.fetched else "remote tip already fetched"
    return drift


def render(drift: Drift) -> str:
    """The ``## Base drift`` section body."""
    where = f"{drift.remote}/{drift.base}" if drift.remote and drift.base else (drift.base or "the base branch")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(drift.checked_at))
    if drift.status == "current":
        return f"{where} has not moved since your merge-base (checked {when}).\n"
    if drift.status != "moved":
        return f"Not checked ({drift.reason}; {when}).\n"
    lines = [f"{where} gained {drift.behind} commit{'s' if drift.behind != 1 else ''} since your merge-base, changing {drift.base_files} file(s) (checked {when})."]
    if drift.touched:
        shown = ", ".join(drift.touched[:MAX_FILES_SHOWN]) + (" ..." if len(drift.touched) > MAX_FILES_SHOWN else "")
        lines.append(f"They touch files you are changing: {shown}. Rebase or merge before relying on those files' base.")
    else:
        lines.append("None of them touch the files you are changing.")
    return "\n".join(lines) + "\n"
