"""The hooks log: one JSON line per action run or prompt answered, in the per-developer
``logs/hooks.log`` (rotated at ``LOG_MAX_BYTES``).

Its own module, under :mod:`paqad.hooks` and :mod:`paqad.hooks.hosts` alike, so the hosts write
and read it without importing the git-event runner (the two packages no longer import each
other). ``paqad.hooks.runner`` re-exports these names.
"""

from __future__ import annotations

import enum
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import workspace

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 1_000_000  # rotated to hooks.log.1 beyond this
ERROR_MAX_CHARS = 500


class RunStatus(enum.StrEnum):
    """What became of one action for one event (the ``status`` of a ``hooks.log`` line)."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"  # still running at its timeout; abandoned, never waited for
    STARTED = "started"  # a detached child took it
    COALESCED = "coalesced"  # already running: it runs once more when it finishes
    DEBOUNCED = "debounced"  # started too recently
    ERROR = "error"  # could not be run at all (a broken hooks.yaml, a spawn failure)


@dataclass
class RunResult:
    """What happened to one action for one event; also the shape of a ``hooks.log`` line."""

    event: str
    action: str
    mode: str  # foreground | background
    status: str  # a RunStatus (agent hosts log their own AnswerStatus here)
    exit: int | None = None
    seconds: float = 0.0
    error: str | None = None
    detail: str | None = None
    ts: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def log_path(root: Path) -> Path:
    return workspace.logs_dir(root) / LOG_NAME


def log_result(root: Path, result: RunResult) -> None:
    """Append one JSON line (a single ``write`` on an O_APPEND file, so concurrent runs never interleave)."""
    path = log_path(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        line = json.dumps(asdict(result), ensure_ascii=False) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass  # logging must never break a hook


def read_log(root: Path) -> list[JSONObject]:
    """Every readable line of ``hooks.log``, oldest first; unreadable lines are skipped."""
    try:
        text = log_path(root).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
