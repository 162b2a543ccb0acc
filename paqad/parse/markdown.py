"""Markdown by heading sections: each ATX heading starts a section that runs to the next heading.

Sections do not nest in their text (a parent's passage would repeat its children's), but their
qualified names carry the heading trail (``Install > From source``). Text before the first
heading is a ``document`` preamble."""

from __future__ import annotations

import re

from paqad.units import CodeUnit

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def parse(path: str, text: str, grammar: str = "markdown") -> list[CodeUnit]:
    """Sections nest by level; qualified names join the heading trail with `` > ``."""
    lines = text.split("\n")
    headings = _headings(lines)
    units: list[CodeUnit] = []
    first = headings[0][0] if headings else len(lines) + 1
    preamble = _unit(path, lines, 1, first - 1, "document", path.rsplit("/", 1)[-1], "")
    if preamble:
        units.append(preamble)
    trail: list[tuple[int, str]] = []
    for i, (line_no, level, title) in enumerate(headings):
        end = _section_end(headings, i, len(lines))
        trail = [t for t in trail if t[0] < level] + [(level, title)]
        qual = " > ".join(t[1] for t in trail)
        unit = _unit(path, lines, line_no, end, "section", title, qual)
        if unit:
            units.append(unit)
    return units


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    found, in_fence = [], False
    for n, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else _HEADING.match(line)
        if m:
            found.append((n, len(m.group(1)), m.group(2).strip()))
    return found


def _section_end(headings: list[tuple[int, int, str]], i: int, n_lines: int) -> int:
    return headings[i + 1][0] - 1 if i + 1 < len(headings) else n_lines


def _unit(path: str, lines: list[str], start: int, end: int, kind: str, name: str, qual: str) -> CodeUnit | None:
    while end >= start and not lines[end - 1].strip():
        end -= 1
    while start <= end and not lines[start - 1].strip():
        start += 1
    if end < start:
        return None
    body = lines[start - 1 : end]
    first_para = _first_paragraph(body[1:] if kind == "section" else body)
    return CodeUnit(
        path=path,
        language="markdown",
        kind=kind,
        name=name,
        qualified_name=qual or name,
        start_line=start,
        end_line=end,
        text="\n".join(body),
        signature=body[0].strip() if kind == "section" else "",
        docstring=first_para,
    )


def _first_paragraph(body: list[str]) -> str:
    para: list[str] = []
    for line in body:
        if not line.strip():
            if para:
                break
            continue
        if _HEADING.match(line):
            break
        para.append(line.strip())
    return " ".join(para)[:500]
