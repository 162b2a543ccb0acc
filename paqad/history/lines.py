"""Line numbers carried through the commits that changed a file, blame-like, from the stored hunks.

A hunk is git's ``-U0`` header as numbers, ``(old_start, old_count, new_start, new_count)``. A
commit's hunks in one file map that file's lines before it onto its lines after it: lines outside
every hunk keep their text and move by the lines added or removed above them; lines inside a
hunk were rewritten. So, with the commits that touched a file in order:

- :func:`forward` carries the lines a commit wrote to where they are at a later commit (the lines
  a later commit rewrote are dropped: they are no longer that commit's);
- :func:`walk` starts from lines of the file as it is now and goes back, newest commit first,
  naming each commit whose hunks touched them (the first is what ``git blame`` would call the last
  change of those lines), and carries the lines back over the commits that did not.

The order is the stored one (``git log``'s, newest first, every parent): exact on a history
without parallel branches; where branches ran in parallel, a commit's hunks are relative to its
own parent, so lines carried across the other branch's commits may be off by the lines those added
above them. ``benchmarks/history_lines.py`` measures the agreement with ``git blame``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

Hunk = tuple[int, int, int, int]
Span = tuple[int, int]


def written(hunks: Iterable[Hunk]) -> list[Span]:
    """The lines a commit wrote (post-image); a pure deletion counts as the line before it."""
    out = []
    for _, _, new, count in hunks:
        if new == 0 and count == 0:  # the file deleted: no line left behind
            continue
        first = max(new, 1)
        out.append((first, first + max(count, 1) - 1))
    return out


def _blocks(hunks: Iterable[Hunk], side: int) -> list[tuple[int, int, int]]:
    """Each hunk as ``(lo, hi, shift)`` on one side (0: before, 2: after): lines ``lo..hi`` of that
    side are the hunk's own (none when ``hi < lo``: an insertion after line ``lo - 1``), lines past
    ``hi`` move by ``shift`` to the other side. Sorted by ``lo``."""
    out = []
    for hunk in hunks:
        start, count = hunk[side], hunk[side + 1]
        other = hunk[3] if side == 0 else hunk[1]
        lo, hi = (start, start + count - 1) if count else (start + 1, start)
        out.append((lo, hi, other - count))
    return sorted(out)


def forward(spans: Iterable[Span], hunks: Sequence[Hunk]) -> list[Span]:
    """``spans`` (lines before the commit of ``hunks``) where they are after it; rewritten lines dropped."""
    blocks = _blocks(hunks, 0)
    out: list[Span] = []
    for start, end in spans:
        shift, cur = 0, start
        for lo, hi, delta in blocks:
            if cur > end or lo > end:
                break
            if hi < cur:  # the hunk lies wholly above what is left
                shift += delta
                continue
            if lo > cur:
                out.append((cur + shift, lo - 1 + shift))
            cur, shift = max(cur, hi + 1), shift + delta
        if cur <= end:
            out.append((cur + shift, end + shift))
    return out


def _back(start: int, end: int, hunks: Sequence[Hunk]) -> tuple[bool, int, int]:
    """Whether the commit of ``hunks`` touched lines ``start..end`` of its result (a rewritten line,
    or lines removed between two of them), and those lines' place before it (touched lines: the
    span of the hunks' old lines)."""
    touched, new_start, new_end = False, start, end
    for lo, hi, delta in _blocks(hunks, 2):
        if lo > end:
            break
        if hi >= lo and hi >= start:  # a hunk's own lines overlap
            touched = True
        elif hi < lo and start <= hi < end:  # lines removed between two of ours
            touched = True
        if hi < start:
            new_start += delta
        if hi < end:
            new_end += delta
    return touched, max(new_start, 1), max(new_end, new_start, 1)


def walk(start: int, end: int, commits: Iterable[tuple[int, Sequence[Hunk]]]) -> Iterator[int]:
    """The ids of the commits that touched lines ``start..end`` (of the file after the first commit
    given), newest first; ``commits`` are ``(id, hunks)`` of that file, newest first."""
    for cid, hunks in commits:
        touched, start, end = _back(start, end, hunks)
        if touched:
            yield cid
