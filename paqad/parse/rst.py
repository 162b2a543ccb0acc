"""reStructuredText by section headings: a title line underlined (and optionally overlined) with a
repeated punctuation character starts a section that runs to the next heading.

Heading levels in RST are set by the order in which adornment styles first appear, so the
heading trail (qualified names like ``Configuration > Builtin Values``) follows that order.
"""

from __future__ import annotations

import re

from paqad.parse import markdown
from paqad.units import CodeUnit

_ADORN = re.compile(r"^([=\-~^\"'`#*+:._<>!$%&(),/;?@\[\\\]{|}])\1{2,}\s*$")


def parse(path: str, text: str, grammar: str = "rst") -> list[CodeUnit]:
    """Sections by heading; text before the first heading is a ``document`` preamble."""
    lines = text.split("\n")
    headings = _headings(lines)
    units: list[CodeUnit] = []
    first = headings[0][0] if headings else len(lines) + 1
    pre = markdown._unit(path, lines, 1, first - 1, "document", path.rsplit("/", 1)[-1], "")
    if pre:
        units.append(_as_rst(pre))
    trail: list[tuple[int, str]] = []
    for i, (start, level, title) in enumerate(headings):
        end = headings[i + 1][0] - 1 if i + 1 < len(headings) else len(lines)
        trail = [t for t in trail if t[0] < level] + [(level, title)]
        unit = markdown._unit(path, lines, start, end, "section", title, " > ".join(t[1] for t in trail))
        if unit:
            units.append(_as_rst(unit))
    return units


def _as_rst(unit: CodeUnit) -> CodeUnit:
    unit.language = "rst"
    return unit


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line of the heading block, level, title) for each section heading."""
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, int, str]] = []
    n = 1
    while n < len(lines):
        title, under = lines[n - 1], lines[n]
        m = _ADORN.match(under)
        if m and title.strip() and not _ADORN.match(title) and len(under.rstrip()) >= len(title.rstrip()) * 0.8:
            over = n >= 2 and _ADORN.match(lines[n - 2]) is not None and lines[n - 2].strip()[0] == m.group(1)
            style = (m.group(1), over)
            if style not in styles:
                styles.append(style)
            found.append((n - 1 if over else n, styles.index(style), title.strip()))
            n += 2
            continue
        n += 1
    return found
