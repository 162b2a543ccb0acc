"""The runner's actions: what an event can do. Each is ``action(root) -> detail`` and may raise;
the runner (:mod:`paqad.hooks.runner`) bounds it with its timeout, logs it and never lets it fail
a commit or a prompt. Heavy imports happen inside each action, in the process that runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

Action = Callable[[Path], "str | None"]


def _rag_update(root: Path) -> str:
    """Re-index the files whose content changed; a no-op while retrieval is off."""
    from paqad import config  # lazy: the post-commit burst process imports the actions; settings (109 modules) only for an action that runs
    from paqad.index.writing import build  # lazy: the index writer (211 modules), only for the update action

    cfg = config.load(root)
    if not cfg.rag_enabled:
        return "skipped: retrieval is off here (paqad rag init)"
    report = build.update(root, cfg)
    return f"{report.mode}: {report.files_changed} changed, {report.files_removed} removed, {report.units} units"


def _refresh_context(root: Path) -> str:
    """Sync the index, query with the recorded prompt or the working set, deliver the context."""
    from paqad import config  # lazy: the post-commit burst process imports the actions; settings (109 modules) only for an action that runs
    from paqad.delivery import refresh  # lazy: the search stack (240 modules), only for refresh-context

    cfg = config.load(root)
    if not cfg.rag_enabled:
        return "skipped: retrieval is off here (paqad rag init)"
    report = refresh.refresh(root, cfg)
    from paqad.delivery import drift  # lazy: 98 modules, only for the drift action

    moved = drift.check(root, cfg, files=(report.working_set or {}).get("files"))
    return f"{report.case}: depth {report.depth.get('level')}, {report.results} results for the {report.query_source}; base drift {moved.status}"


def _history_update(root: Path) -> str:
    """Append the new commits to the commit history (issue 35, item 3); a no-op until ``paqad rag
    history`` built it once. Listed by no default: a team adds it to ``.paqad/hooks.yaml``."""
    from paqad.history import build as history  # lazy: only for the history action

    if not history.history_path(root).is_file():
        return "skipped: no commit history here (paqad rag history)"
    report = history.update(root)
    return f"history: {report.added} commits added ({report.read} read) in {report.seconds} s"


# The registry: dispatch and validation both read it. A new action is one function and one line.
ACTIONS: dict[str, Action] = {"rag-update": _rag_update, "refresh-context": _refresh_context, "history-update": _history_update}
