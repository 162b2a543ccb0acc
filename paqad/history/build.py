"""Append the commits that are new since the last run to the history store.

Which commits: every commit reachable from HEAD (all parents, not only the first: a merged
branch's commits carry the changes, the merge commit its pull request's title), newest first,
minus those reachable from the tip the last run recorded; a tip git no longer knows (a rewritten
or pruned history) means a full pass, which skips the commits already stored.

What is kept of a commit: its message, masked by :func:`paqad.redaction.redact` (a secret deleted
from the tree stays in history; it is masked here as in a file), and the files it touched that are
not secrets files by name (:func:`paqad.eligibility.secretfiles.secrets_match`) with their line
ranges. A commit that touched only secrets files is not kept at all: its message is about them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock

from paqad import git, redaction, tokenize, workspace
from paqad.eligibility import secretfiles
from paqad.errors import PaqadError
from paqad.history import gitlog
from paqad.index import history as store
from paqad.index import schema

BATCH = 500
LOCK = "history.lock"
LOCK_TIMEOUT_S = 600.0


@dataclass
class UpdateReport:
    added: int = 0  # commits stored by this run
    read: int = 0  # commits git listed
    dropped_secrets: int = 0  # commits that touched only secrets files
    seconds: float = 0.0
    full: bool = False  # no usable tip: the whole history was read
    tip: str | None = None
    path: str = ""


def history_path(root: Path) -> Path:
    return store.path_of(workspace.vectors_dir(root))


def update(root: Path, limit: int | None = None) -> UpdateReport:
    """Bring the history store to HEAD (``limit``: at most that many of the newest commits)."""
    started = time.monotonic()
    head = git.head_commit(root)
    report = UpdateReport(tip=head, path=str(history_path(root)))
    if head is None:
        return report
    for folder in (workspace.local_dir(root), workspace.state_dir(root)):  # not ensure(): nothing goes into the work tree
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with filelock.FileLock(str(workspace.state_dir(root) / LOCK), timeout=LOCK_TIMEOUT_S):
        _drop_other_version(history_path(root))
        with store.opened(history_path(root), write=True) as con:
            _append_new(root, con, head, limit, report)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _drop_other_version(path: Path) -> None:
    """Delete a store another format version wrote: the next pass reads the whole history again."""
    if not path.is_file():
        return
    with store.opened(path) as con:
        version = store.meta(con, "version") if schema.has_table(con, "meta") else None
    if version != str(schema.HISTORY_VERSION):
        for extra in ("", "-wal", "-shm"):
            path.with_name(path.name + extra).unlink(missing_ok=True)


def _append_new(root: Path, con: sqlite3.Connection, head: str, limit: int | None, report: UpdateReport) -> None:
    if store.last_cid(con) == 0:  # the version first: a pass cut short leaves a store the next one resumes
        store.set_meta(con, {"version": str(schema.HISTORY_VERSION)})
    tip = store.meta(con, "tip")
    if tip == head:
        return
    report.full = tip is None or git.rev_parse(root, f"{tip}^{{commit}}") is None
    revisions = [head] if report.full else [head, f"^{tip}"]
    listed = git.count_commits(root, head if report.full else f"{tip}..{head}")
    base = store.last_cid(con)
    top = base + min(listed, limit or listed)  # newest first: the first read gets the largest id
    for batch in _batches(_read(root, revisions, limit, report), BATCH):
        first = report.read - len(batch)  # the batch's first commit's place in the log
        ids = [top - first - i for i in range(len(batch))]
        if ids[-1] <= base:  # git listed more than it counted: never reuse an id
            raise PaqadError(f"git listed more commits than the {listed} it counted; run again")
        kept = [k for c, cid in zip(batch, ids, strict=True) if (k := keep(c, cid, report)) is not None]
        report.added += store.append(con, kept)
        con.commit()
    store.set_meta(con, {"tip": head, "version": str(schema.HISTORY_VERSION)})
    con.commit()


def _read(root: Path, revisions: list[str], limit: int | None, report: UpdateReport) -> Iterator[gitlog.Commit]:
    out = workspace.vectors_dir(root) / f".history-log-{os.getpid()}"
    out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        gitlog.write_log(root, revisions, out, limit)
        for commit in gitlog.commits(out):
            report.read += 1
            yield commit
    finally:
        out.unlink(missing_ok=True)


def _batches(items: Iterable[gitlog.Commit], size: int) -> Iterator[list[gitlog.Commit]]:
    batch: list[gitlog.Commit] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def keep(commit: gitlog.Commit, cid: int, report: UpdateReport | None = None) -> store.NewCommit | None:
    """What the store keeps of ``commit``, or None when it touched only secrets files."""
    allowed = {p for p in commit.paths if secretfiles.secrets_match(p) is None}
    if commit.paths and not allowed:
        if report is not None:
            report.dropped_secrets += 1
        return None
    message = redaction.redact(commit.message).strip()
    subject, _, body = message.partition("\n")
    hunks = {p: h for p, h in commit.hunks.items() if p in allowed}
    renames = {new: old for new, old in commit.renames.items() if new in allowed and secretfiles.secrets_match(old) is None}
    return store.NewCommit(cid, commit.sha, commit.date, subject.strip(), body.strip(), tokenize.terms(message), hunks, renames)


class HistoryMissingError(PaqadError):
    """No history store yet: ``paqad rag history`` without ``--no-update`` builds it."""
