"""The sync stamp, and the freshness of the index it lets every answer state.

Every build and update (:mod:`paqad.index.writing.build`) records, under the writer lock, what the work
tree looked like when it started: HEAD's commit, the time, and the size and mtime of every file
git lists as changed (staged, modified or untracked; paqad's and the agents' own files left out,
as the index leaves them out). The stamp is ``sync.json`` beside the index, naming the generation
it describes. Why a file and not the index's ``meta`` table: an update that finds nothing to
change writes no transaction on purpose (a commit moves ``PRAGMA data_version``, and every reader
drops its vector matrix and graph), yet that update is the one that proves the index current.

:func:`check` compares the stamp with ``git status`` now (the caller's when it has one: the prompt
hook's refresh ran it already, so its warm path adds no git process):

- ``indexed_commit``: HEAD at the last sync; ``head``: HEAD now; ``behind``: commits reachable from
  HEAD and not from the indexed commit (``git rev-list --count``, asked only when they differ;
  None when git cannot say, e.g. the indexed commit is gone);
- ``uncommitted_covered``: with HEAD unchanged, the changed files are exactly those the last sync
  saw, with the same size and mtime (an edit, a new file, a discarded edit since: False); after a
  commit, every file changed now is as the sync saw it;
- ``stale``: HEAD moved since the last sync, or ``uncommitted_covered`` is False, or no sync of
  this index generation is recorded (an index built by an older paqad, or replaced since). Age
  alone never makes an index stale: an old sync of an untouched work tree is still the truth;
- ``age_seconds``: since the last sync started.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from paqad import git, workspace
from paqad.index import store

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

STAMP_FILE = "sync.json"
STAMP_VERSION = 1
MAX_FILES = 5000  # changed files the stamp lists one by one; past it only their digest is kept

Stat = tuple[int, int] | None  # (size, mtime_ns), None when the file is gone


class Stamp(TypedDict):
    """The stamp file ``sync.json`` beside the generation it describes (this module's docstring)."""

    version: int
    generation: str | None
    head: str | None
    synced_at: float
    digest: str
    files: dict[str, list[int] | None] | None  # None past MAX_FILES


@dataclass
class Observation:
    """The work tree as one sync saw it before indexing (so an edit during it reads as not covered)."""

    head: str | None
    at: float
    files: dict[str, Stat]


@dataclass
class Freshness:
    """How the index compares with the work tree now (see the module docstring for each field)."""

    indexed_commit: str | None
    head: str | None
    behind: int | None
    uncommitted_covered: bool | None
    age_seconds: float | None
    stale: bool
    synced_at: float | None = None
    reason: str = ""  # why stale, in a few words ("" when current)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def stamp_path(root: Path) -> Path:
    return workspace.vectors_dir(root) / STAMP_FILE


def changed_files(st: git.Status) -> list[str]:
    """The files ``st`` lists as staged, modified or untracked that the index could hold."""
    from paqad.eligibility import collect  # ~30 ms off the prompt hook's freshness check

    return sorted({p for p in (*st.staged, *st.unstaged, *st.untracked) if collect.hard_exclusion(p) is None})


def _stats(root: Path, paths: list[str]) -> dict[str, Stat]:
    out: dict[str, Stat] = {}
    for rel in paths:
        try:
            info = os.lstat(root / rel)
            out[rel] = (info.st_size, info.st_mtime_ns)
        except (OSError, ValueError):
            out[rel] = None
    return out


def _digest(files: dict[str, Stat]) -> str:
    return hashlib.sha256(json.dumps(sorted(files.items()), separators=(",", ":")).encode("utf-8", "surrogatepass")).hexdigest()


def observe(root: Path, status: git.Status | None = None) -> Observation | None:
    """HEAD and the changed files' stats now (``status``: the caller's ``git status``, else one is
    run); None outside a git work tree, where there is nothing to compare with."""
    st = status if status is not None else git.status(root)
    if st is None:
        return None
    return Observation(st.head, time.time(), _stats(root, changed_files(st)))


def record(root: Path, seen: Observation) -> None:
    """Write the stamp of the live generation; a failure to write leaves the older stamp (the index
    then reads as older than it is, never as fresher)."""
    files: dict[str, list[int] | None] = {p: list(s) if s else None for p, s in seen.files.items()}
    data: Stamp = {
        "version": STAMP_VERSION, "generation": store.pointer_name(root), "head": seen.head, "synced_at": seen.at,
        "digest": _digest(seen.files), "files": files if len(files) <= MAX_FILES else None,
    }
    try:
        workspace.atomic_write_text(stamp_path(root), json.dumps(data, ensure_ascii=False), durable=False)
    except OSError:
        pass


@contextmanager
def stamping(root: Path, status: git.Status | None = None) -> Iterator[None]:
    """Around a build or update (under the writer lock): observe first, record once it succeeded."""
    seen = observe(root, status)
    yield
    if seen is not None:
        record(root, seen)


def read(root: Path) -> Stamp | None:
    """The stamp of the live generation, or None (none written, unreadable, or another generation's)."""
    try:
        data = json.loads(stamp_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != STAMP_VERSION or data.get("generation") != store.pointer_name(root):
        return None
    typed = isinstance(data.get("synced_at"), (int, float)) and isinstance(data.get("head"), (str, type(None))) and isinstance(data.get("digest"), str)
    return cast(Stamp, data) if typed else None  # a damaged or hand-edited stamp reads as none: stale, never fresh


def check(root: Path, status: git.Status | None = None, now: float | None = None) -> Freshness:
    """The index's freshness against the work tree now; never raises."""
    stamp = read(root)
    if stamp is None:
        return Freshness(None, None, None, None, None, True, reason="no sync of this index recorded")
    synced = float(stamp["synced_at"])
    age = round(max(0.0, (now if now is not None else time.time()) - synced), 1)
    st = status if status is not None else git.status(root)
    indexed = stamp.get("head")
    if st is None:
        return Freshness(indexed, None, None, None, age, False, synced, "")
    moved = indexed != st.head
    behind = _behind(root, indexed, st.head) if moved else 0
    covered = _covered(root, st, stamp, moved)
    reason = "HEAD moved since the last sync" if moved else ("" if covered else "files changed since the last sync")
    return Freshness(indexed, st.head, behind, covered, age, moved or not covered, synced, reason)


def _behind(root: Path, indexed: str | None, head: str | None) -> int | None:
    if not indexed or not head or git.rev_parse(root, f"{indexed}^{{commit}}") is None:
        return None
    return git.count_commits(root, f"{indexed}..{head}")


def _covered(root: Path, st: git.Status, stamp: Stamp, moved: bool) -> bool:
    now = _stats(root, changed_files(st))
    if not moved:
        return _digest(now) == stamp.get("digest")
    seen = stamp.get("files")
    if not isinstance(seen, dict):
        return False
    return all((list(s) if s else None) == seen.get(p, "absent") for p, s in now.items())
