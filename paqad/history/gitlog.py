"""``git log -p -U0`` into commits and the hunks they made (``-U0`` headers as numbers).

One git process (``paqad.git.run``) writes the log to a file in the per-developer folder
(``--output``), which is read back in 1 MB pieces, so neither git's output nor a long history sits
in memory. Only git's own diff runs: ``--no-ext-diff --no-textconv`` (a configured diff driver
would run a program on repository content), no colour, fixed ``a/``/``b/`` prefixes (a user's
``diff.noprefix`` or ``diff.mnemonicPrefix`` would change them), renames found (``-M``: a moved file's
lines keep their history; its ``rename from``/``rename to`` lines name both sides), merges without a diff (their message is kept: it often carries the pull request's
title; the changes are the merged commits', which ``git log`` lists too).

The stream is NUL-separated, as neither a commit message nor a text diff can hold a NUL (git
refuses one in a message and calls a file with one binary): a header token, the message token,
then diff tokens until the next header. Inside the diff a hunk's lines are skipped by the counts
in its ``@@`` header, so a changed line that looks like a header (``+++ b/x``, ``diff --git``) is
never read as one. Names come from the ``diff --git`` line, where both sides are the same path
unless the extended header's ``rename from``/``rename to`` lines (outside any hunk) say otherwise,
C-quoted when unusual (:func:`unquote`); a name that is absolute, climbs out with
``..`` or is not UTF-8 is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from paqad import git
from paqad.history.lines import Hunk

LOG_TIMEOUT_S = 6 * 3600.0
CHUNK = 1 << 20
FORMAT = "--format=%x00C%H %at%x00%B%x00"
_HEADER = re.compile(rb"C([0-9a-f]{40}(?:[0-9a-f]{24})?) (-?\d+)")
_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"r": b"\r", b"v": b"\v"}


@dataclass
class Commit:
    sha: str
    date: int
    message: str
    paths: list[str] = field(default_factory=list)  # every file the commit touched (binary too)
    hunks: dict[str, list[Hunk]] = field(default_factory=dict)  # (old start, count, new start, count); a deletion: (1, n, 0, 0)
    renames: dict[str, str] = field(default_factory=dict)  # new name -> old name (its hunks are the old file's to the new's)


def write_log(root: Path, revisions: list[str], out: Path, limit: int | None = None) -> None:
    """``git log`` of ``revisions`` (``HEAD``, ``^old``) into ``out``. Raises GitError."""
    args = ["-c", "log.showSignature=false", "-c", "core.quotePath=true", "log", "-z", "-p", "-U0", "-M",
            "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/",
            "--diff-merges=off", "--encoding=UTF-8", FORMAT, f"--output={out}"]
    if limit:
        args.append(f"--max-count={int(limit)}")
    git.run([*args, *revisions, "--"], cwd=root, timeout=LOG_TIMEOUT_S)


def tokens(path: Path) -> Iterator[bytes]:
    """The NUL-separated tokens of the file, read in pieces."""
    rest = b""
    with path.open("rb") as fh:
        while piece := fh.read(CHUNK):
            parts = (rest + piece).split(b"\0")
            rest = parts.pop()
            yield from parts
    if rest:
        yield rest


def commits(path: Path) -> Iterator[Commit]:
    """The commits of a log written by :func:`write_log`, newest first."""
    current: Commit | None = None
    expect_message = False
    for token in tokens(path):
        if expect_message and current is not None:
            current.message, expect_message = token.decode("utf-8", "replace"), False
            continue
        header = _HEADER.fullmatch(token)
        if header:
            if current is not None:
                yield current
            current, expect_message = Commit(header[1].decode(), int(header[2]), ""), True
        elif current is not None and token.strip():
            read_diff(token, current)
    if current is not None:
        yield current


def read_diff(diff: bytes, commit: Commit) -> None:
    """Add the files and hunks of one commit's ``-U0`` diff text to ``commit``."""
    lines = diff.split(b"\n")
    name: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(b"diff --git "):
            name, old = diff_name(line[11:]), None  # a rename's two names differ: its header lines name them
            if name is not None:
                commit.paths.append(name)
        elif line.startswith(b"rename from "):
            old = header_name(line[12:])
        elif line.startswith(b"rename to "):
            name = _renamed(commit, name, header_name(line[10:]), old)
        elif (hunk := _HUNK.match(line)) is not None:
            old_n = int(hunk[2]) if hunk[2] is not None else 1
            start, new_n = int(hunk[3]), int(hunk[4]) if hunk[4] is not None else 1
            i = _skip(lines, i, old_n + new_n)
            if name is not None:
                commit.hunks.setdefault(name, []).append((int(hunk[1]), old_n, start, new_n))


def _renamed(commit: Commit, parsed: str | None, new: str | None, old: str | None) -> str | None:
    """A rename's new name replaces what the ``diff --git`` line seemed to say; the old one is kept."""
    if parsed is not None and commit.paths and commit.paths[-1] == parsed:
        commit.paths.pop()
    if new is not None:
        commit.paths.append(new)
        if old is not None:
            commit.renames[new] = old
    return new


def header_name(raw: bytes) -> str | None:
    """A name on a ``rename from``/``rename to`` line: C-quoted when unusual; None if unsafe."""
    name = unquote(raw) if raw.startswith(b'"') else raw
    return safe_name(name) if name else None


def _skip(lines: list[bytes], i: int, count: int) -> int:
    """The index after ``count`` changed lines (``\\ No newline`` notes do not count)."""
    while i < len(lines) and (count > 0 or lines[i].startswith(b"\\")):
        if not lines[i].startswith(b"\\"):
            count -= 1
        i += 1
    return i


def diff_name(rest: bytes) -> str | None:
    """The path of ``a/X b/X`` (both sides alike; a rename's header lines correct it), C-quoted or not; None if unsafe."""
    if rest.startswith(b'"'):
        half = rest[: len(rest) // 2]  # '"a/Q" "b/Q"': the first half is '"a/Q"'
        raw = unquote(half.strip()) if half.endswith(b'"') else None
        raw = raw[2:] if raw is not None and raw.startswith(b"a/") else None
    else:
        size = (len(rest) - 5) // 2
        raw = rest[2 : 2 + size] if rest.startswith(b"a/") and rest[2 + size : 5 + size] == b" b/" else None
    return safe_name(raw) if raw else None


def unquote(quoted: bytes) -> bytes | None:
    """git's C-quoting undone (``"a\\tb\\303\\244"``); None when it is not well formed."""
    if len(quoted) < 2 or not (quoted.startswith(b'"') and quoted.endswith(b'"')):
        return None
    body, out, i = quoted[1:-1], bytearray(), 0
    while i < len(body):
        if body[i:i + 1] != b"\\":
            out += body[i:i + 1]
            i += 1
        elif body[i + 1:i + 2] in _ESCAPES:
            out += _ESCAPES[body[i + 1:i + 2]]
            i += 2
        elif re.fullmatch(rb"[0-7]{3}", body[i + 1:i + 4]):
            out.append(int(body[i + 1:i + 4], 8) & 0xFF)
            i += 4
        else:
            return None
    return bytes(out)


def safe_name(raw: bytes) -> str | None:
    """A repository-relative POSIX name, or None (not UTF-8, absolute, ``..``, a control character)."""
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts or any(ord(ch) < 32 for ch in name):
        return None
    return name
