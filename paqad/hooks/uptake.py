"""The uptake record: one JSON line per prompt-hook delivery, in the per-developer ``logs/uptake.jsonl``.

``paqad report`` needs to know, for each delivery, what paqad handed the agent and what it had
ranked, so it can later read what the agent did (:mod:`paqad.hooks.transcript`) and count which
passages were used and which files paqad missed (:mod:`paqad.hooks.usage`). The hook writes the
record and nothing else: the transcript is read by the report, never on the prompt's path.

What a line holds: counts and paths only. The host, its session and turn ids, the status of the
answer, the transcript file the host named and its size at the delivery (where the turn starts),
the estimated tokens delivered, and for each delivered passage and each of the top ranked units
its path, line range and unit name. Never the prompt, never code, and nothing is sent anywhere.

Trust: the file lives in the per-developer folder (:mod:`paqad.localstate`), written with
``O_NOFOLLOW`` (a symlink there is never written through). Reading refuses a symlink and a file
git tracks (a per-developer folder set inside a repository, by ``PAQAD_DATA_DIR``, could hold a
committed one): an untrusted record counts nothing. Bounded: rotated to ``uptake.jsonl.1`` past
``MAX_BYTES``, and each line is capped.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import workspace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from paqad.delivery.context import Passage
    from paqad.jsontypes import JSONObject

NAME = "uptake.jsonl"
MAX_BYTES = 512_000  # rotated to uptake.jsonl.1 beyond this: about two thousand deliveries
MAX_LINE = 16_000  # a line over this is dropped, not written (a crafted name cannot grow the file)
TOP_RANKED = 10  # the ranked units kept per delivery (candidate misses are counted against these)
CHARS_PER_TOKEN = 4  # the usual estimate for English and code
ID_MAX = 200  # characters kept of a host's session or turn id
READ_MAX = 4 * MAX_BYTES  # never read more than this of the record
TAIL_BYTES = 64_000  # what a tool event reads of the record's end to find its session's delivery
TOOL = "tool"  # the ``kind`` of a line a host's tool event wrote (:mod:`paqad.hooks.tooluse`); deliveries have none


def path(root: Path) -> Path:
    """Where the record lives: ``<per-developer folder>/logs/uptake.jsonl``."""
    return workspace.logs_dir(root) / NAME


def span(path: str, start: int, end: int, name: str = "") -> JSONObject:
    """One passage or ranked unit as the record keeps it."""
    return {"path": path, "start": int(start), "end": int(end), "name": name}


def spans(passages: Sequence[Passage]) -> list[JSONObject]:
    return [span(p.path, p.start_line, p.end_line, p.name) for p in passages]


def tokens(text: str | None) -> int:
    """The estimated tokens of what the hook printed (characters / ``CHARS_PER_TOKEN``, rounded up)."""
    return -(-len(text or "") // CHARS_PER_TOKEN)


def transcript_size(transcript: str) -> int:
    """The transcript's size now, where this turn starts in it (one ``stat``): 0 when the file does
    not exist yet (Claude Code 2.1 creates it after the first prompt's hook), -1 when the host
    named none or it cannot be read."""
    if not transcript or not os.path.isabs(transcript):
        return -1
    try:
        return os.stat(transcript).st_size
    except FileNotFoundError:
        return 0
    except OSError:
        return -1


def record(root: Path, entry: JSONObject) -> None:
    """Append one delivery's line; best effort, never raises (the prompt must not notice)."""
    try:
        line = json.dumps({"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "t": round(time.time(), 3), **entry}, ensure_ascii=False)
        if len(line) > MAX_LINE:
            return
        target = path(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if os.lstat(target).st_size > MAX_BYTES:
                os.replace(target, target.with_name(NAME + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, ValueError, TypeError):
        pass


def last_delivery(root: Path, host: str, session: str) -> JSONObject | None:
    """The latest delivery line of this host's session, from the record's last ``TAIL_BYTES``
    (a tool event never reads the whole file; a symlink is refused)."""
    try:
        fd = os.open(path(root), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - TAIL_BYTES))
        lines = handle.read(TAIL_BYTES).decode("utf-8", "replace").splitlines()
    mark = f'"session": {json.dumps(session, ensure_ascii=False)}'
    for line in reversed(lines):
        if mark not in line or f'"kind": "{TOOL}"' in line:  # not this session's delivery: not parsed
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("kind") != TOOL and row.get("host") == host and row.get("session") == session:
            return row
    return None


def read(root: Path) -> tuple[list[JSONObject], str]:
    """Every readable line of the record, oldest first (the rotated file's first), and a note when
    the record was refused (a symlink, a file git tracks) or had unreadable lines."""
    target = path(root)
    rows: list[JSONObject] = []
    notes: list[str] = []
    for part in (target.with_name(NAME + ".1"), target):
        text, why = _read_trusted(root, part)
        if why:
            notes.append(f"{part}: {why}; ignored")
        bad = 0
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(row, dict):
                rows.append(row)
        if bad:
            notes.append(f"{part}: {bad} unreadable lines skipped")
    return rows, "; ".join(notes)


def _read_trusted(root: Path, part: Path) -> tuple[str, str]:
    """The file's text, or "" and why not: absent (no reason), a symlink, not a regular file, tracked by git."""
    try:
        fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return "", ""
    except OSError as exc:
        return "", "a symlink" if os.path.islink(part) else f"unreadable ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return "", "not a regular file"
        if _tracked(root, part):
            return "", "tracked by git (a pull may have written it)"
        return handle.read(READ_MAX).decode("utf-8", "replace"), ""


def _tracked(root: Path, part: Path) -> bool:
    """Whether ``part`` lies in a git work tree (this one or the one around the per-developer
    folder) and git tracks it."""
    from paqad import git  # only when reading: the hook's write path starts no git

    folder = part.parent
    top = git.toplevel(folder) if folder.is_dir() else None
    if top is None:
        return False
    rel = os.path.relpath(os.path.realpath(part), os.path.realpath(top)).replace(os.sep, "/")
    return rel in set(git.tracked_under(Path(top), os.path.dirname(rel) or "."))
