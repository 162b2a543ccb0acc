"""YAML and JSON by top-level keys: each key with its value is one ``key`` unit.

Found by scanning lines rather than by loading the document, because a loader loses line numbers
and a broken file must still be indexed (it falls back to one document unit).
"""

from __future__ import annotations

import re

from paqad.parse import text as text_parser
from paqad.parse.leftover import module_unit
from paqad.units import CodeUnit

_YAML_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"-][^:#]*?))\s*:(?:\s|$)""")


def parse_yaml(path: str, text: str, grammar: str = "yaml") -> list[CodeUnit]:
    """Top-level mapping keys start units; a key's unit runs to the line before the next key."""
    lines = text.split("\n")
    starts = [(n, _yaml_key(line)) for n, line in enumerate(lines, start=1) if _yaml_key(line)]
    return _units(path, "yaml", lines, starts, text)


def _yaml_key(line: str) -> str:
    m = _YAML_KEY.match(line)
    return next((g for g in m.groups() if g), "").strip() if m else ""


def parse_json(path: str, text: str, grammar: str = "json") -> list[CodeUnit]:
    """Keys at depth 1 of a top-level object; arrays and scalars stay one document."""
    lines = text.split("\n")
    return _units(path, "json", lines, _json_top_keys(text), text)


def _json_top_keys(text: str) -> list[tuple[int, str]]:
    keys: list[tuple[int, str]] = []
    depth, line, i, expect_key = 0, 1, 0, False
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == '"':
            end = _string_end(text, i)
            if depth == 1 and expect_key:
                keys.append((line, text[i + 1 : end]))
                expect_key = False
            line += text.count("\n", i, end)
            i = end
        elif ch in "{[":
            depth += 1
            expect_key = depth == 1 and ch == "{"
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 1:
            expect_key = True
        i += 1
    return keys


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return len(text)


def _units(path: str, language: str, lines: list[str], starts: list[tuple[int, str]], text: str) -> list[CodeUnit]:
    if not starts:
        return text_parser.parse(path, text, language)
    units = []
    for i, (line_no, key) in enumerate(starts):
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines)
        while end > line_no and not lines[end - 1].strip():
            end -= 1
        body = lines[line_no - 1 : end]
        units.append(
            CodeUnit(
                path=path,
                language=language,
                kind="key",
                name=key,
                qualified_name=key,
                start_line=line_no,
                end_line=end,
                text="\n".join(body),
                signature=lines[line_no - 1].strip()[:300],
            )
        )
    _dedupe(units)
    leftover = module_unit(path, language, lines, [(u.start_line, u.end_line) for u in units], [])
    return ([leftover] if leftover else []) + units


def _dedupe(units: list[CodeUnit]) -> None:
    counts: dict[str, int] = {}
    for unit in units:
        counts[unit.name] = counts.get(unit.name, 0) + 1
        if counts[unit.name] > 1:
            unit.qualified_name = f"{unit.name}@{counts[unit.name]}"
            unit.id = ""
            unit.__post_init__()
