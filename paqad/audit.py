"""``audit.log`` in the work tree's per-developer folder: one line per event that a user may need to reconstruct later.

Format: ``[2026-11-30T09:00:00Z] INFO build-completed mode="full" units="2168" seconds="3.2"``.
Every line passes through :func:`paqad.secrets.redact`, so an API key that reached an error
message never reaches the file. Writing is best effort: the audit log never breaks a build.
"""

from __future__ import annotations

import time
from pathlib import Path

from paqad import workspace
from paqad.secrets import redact

LEVELS = ("INFO", "WARN", "ERROR")
MAX_VALUE_CHARS = 500


def audit_path(root: Path) -> Path:
    return workspace.local_dir(root) / "audit.log"


def format_line(level: str, event: str, fields: dict[str, object]) -> str:
    """The redacted line for one event; values are quoted, with quotes and newlines escaped."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    parts = [f"[{stamp}] {level} {event}"]
    for key, value in fields.items():
        text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")[:MAX_VALUE_CHARS]
        parts.append(f'{key}="{text}"')
    return redact(" ".join(parts)) + "\n"


def log(root: Path, level: str, event: str, **fields: object) -> None:
    """Append one line; a work tree paqad is not set up in, or an unwritable file, is silently skipped."""
    if level not in LEVELS or not workspace.is_set_up(root):
        return
    try:
        with audit_path(root).open("a", encoding="utf-8") as handle:
            handle.write(format_line(level, event, fields))
    except OSError:
        pass


def read(root: Path) -> list[str]:
    path = audit_path(root)
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
