"""Files with no finer structure (Dockerfile, Makefile, unknown types) become one document unit."""

from __future__ import annotations

from pathlib import PurePosixPath

from paqad.units import CodeUnit


def parse(path: str, text: str, grammar: str) -> list[CodeUnit]:
    """One ``document`` unit spanning the whole file (split later if long)."""
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return []
    name = PurePosixPath(path).name
    return [
        CodeUnit(
            path=path,
            language=grammar or "text",
            kind="document",
            name=name,
            qualified_name=name,
            start_line=1,
            end_line=len(lines),
            text="\n".join(lines),
        )
    ]
