"""The module unit: every line outside all declarations, so nothing in a file is lost."""

from __future__ import annotations

from pathlib import PurePosixPath

from paqad.units import CodeUnit


def module_unit(
    path: str, language: str, lines: list[str], covered: list[tuple[int, int]], imports: list[str]
) -> CodeUnit | None:
    """Build the ``module`` unit from the lines no declaration covers (1-based spans).

    Returns None when the leftovers are blank: a file that is all declarations has no module unit.
    """
    mask = [False] * (len(lines) + 2)
    for start, end in covered:
        for n in range(max(1, start), min(len(lines), end) + 1):
            mask[n] = True
    kept = [n for n in range(1, len(lines) + 1) if not mask[n] and lines[n - 1].strip()]
    if not kept:
        return None
    text = "\n".join(lines[n - 1] for n in kept)
    stem = PurePosixPath(path).stem
    return CodeUnit(
        path=path,
        language=language,
        kind="module",
        name=stem,
        qualified_name="",
        start_line=kept[0],
        end_line=kept[-1],
        text=text,
        imports=imports,
    )
