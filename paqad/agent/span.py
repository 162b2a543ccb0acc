"""``open``: a span of a repository file, bounded in lines and bytes, confined to the repository.

The path goes through :func:`paqad.confinement.readable`, the rule delivery uses too (no escape
from the repository, no ``.git/``, ``.paqad/`` or secrets file, symlinks included). Binary files are refused; text is decoded as UTF-8 with
replacement characters, so a stray byte never fails the request, and known secret shapes are
masked (``paqad.redaction``, line count kept) before the span is cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paqad import confinement, redaction
from paqad.confinement import ConfinementError

MAX_FILE_BYTES = 20 * 1024 * 1024  # a file larger than this is not a source file worth a span
BINARY_SNIFF = 8192
#: ``open``'s in-band errors; the path rule itself is :mod:`paqad.confinement`, shared with delivery.
SpanError = ConfinementError


@dataclass
class Span:
    path: str
    start_line: int
    end_line: int  # the last line returned (start_line - 1 when none fit)
    total_lines: int
    text: str
    truncated: bool
    truncated_by: str | None  # "lines" | "bytes" | None
    next_start_line: int | None


def read_span(root: Path, relative: str, start_line: int, end_line: int | None, max_lines: int, max_bytes: int) -> Span:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of ``relative``, at most
    ``max_lines`` lines and ``max_bytes`` UTF-8 bytes of text; says where to continue."""
    full, rel = confinement.readable(root, relative)
    size = full.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SpanError("too_large", f"{rel} is {size} bytes; open reads files up to {MAX_FILE_BYTES}")
    with full.open("rb") as handle:
        if b"\x00" in handle.read(BINARY_SNIFF):
            raise SpanError("binary", f"{rel} is a binary file")
        handle.seek(0)
        lines = redaction.redact(handle.read().decode("utf-8", errors="replace"), rel).splitlines(keepends=True)
    total = len(lines)
    if start_line > max(total, 1):
        raise SpanError("out_of_range", f"start_line {start_line} is past the end of {rel} ({total} lines)")
    last = min(end_line if end_line is not None else total, total, start_line + max_lines - 1)
    text, used, by_bytes = _take(lines, start_line, last, max_bytes)
    stop = start_line - 1 + used
    wanted_end = min(end_line if end_line is not None else total, total)
    truncated = stop < wanted_end or by_bytes
    reason = ("bytes" if by_bytes else "lines") if truncated else None
    resume = stop + 1 if stop < wanted_end else None
    return Span(rel, start_line, stop, total, text, truncated, reason, resume)


def _take(lines: list[str], start: int, last: int, max_bytes: int) -> tuple[str, int, bool]:
    """Whole lines from ``start`` to ``last`` while they fit in ``max_bytes``; a first line that is
    longer than the budget is cut at a character boundary (and counts as returned)."""
    out: list[str] = []
    spent = 0
    for number in range(start, last + 1):
        line = lines[number - 1]
        size = len(line.encode("utf-8"))
        if spent + size > max_bytes:
            if not out:
                cut = line.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
                return cut, 1, True
            return "".join(out), len(out), True
        out.append(line)
        spent += size
    return "".join(out), len(out), False
