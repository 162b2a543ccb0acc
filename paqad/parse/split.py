"""Split units longer than a cap into overlapping parts that keep the unit's identity.

Why: a 600-line function is one declaration but a poor retrieval passage; its parts share the
qualified name (so results and rulers still name the declaration) and overlap so a statement
on a boundary is whole in at least one part.
"""

from __future__ import annotations

from dataclasses import replace

from paqad.units import CodeUnit

OVERLAP_LINES = 10


def split_long_units(units: list[CodeUnit], max_lines: int = 150) -> list[CodeUnit]:
    """Return ``units`` with each unit longer than ``max_lines`` replaced by its parts."""
    out: list[CodeUnit] = []
    for unit in units:
        lines = unit.text.split("\n")
        if len(lines) <= max_lines or unit.kind == "module":
            out.append(unit)
            continue
        out.extend(_parts(unit, lines, max_lines))
    return out


def _parts(unit: CodeUnit, lines: list[str], max_lines: int) -> list[CodeUnit]:
    step = max(1, max_lines - OVERLAP_LINES)
    starts = list(range(0, max(1, len(lines) - OVERLAP_LINES), step))
    parts = []
    for n, offset in enumerate(starts, start=1):
        chunk = lines[offset : offset + max_lines]
        parts.append(
            replace(
                unit,
                text="\n".join(chunk),
                start_line=unit.start_line + offset,
                end_line=unit.start_line + offset + len(chunk) - 1,
                part=n,
                parts=len(starts),
                docstring=unit.docstring if n == 1 else "",
                id="",
                content_hash="",
            )
        )
    for p in parts:
        p.__post_init__()
    return parts
