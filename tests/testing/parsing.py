"""Exact-span fixtures for the tree-sitter languages: the case records and the checks every
language's fixture must pass (``tests/parse_treesitter_test.py`` and ``tests/parse_languages_test.py``
hold the cases; a new language adds a case, not a copy of the checks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paqad.parse import treesitter
from paqad.units import CodeUnit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "languages"

Span = tuple[str, str, int, int]  # kind, qualified name, start line, end line


@dataclass(frozen=True)
class Detail:
    qualified_name: str
    signature: str
    docstring: str
    calls: list[str]
    bases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    file: str
    grammar: str
    units: list[Span]
    imports: list[str]
    detail: Detail


def parse_case(case: Case) -> tuple[list[str], list[CodeUnit]]:
    text = (FIXTURES / case.file).read_text(encoding="utf-8")
    return text.split("\n"), treesitter.parse(case.file, text, case.grammar)


def unit_named(units: list[CodeUnit], qualified_name: str) -> CodeUnit:
    return next(u for u in units if u.qualified_name == qualified_name and u.kind != "module")


def check_parses_without_errors(case: Case) -> None:
    text = (FIXTURES / case.file).read_text(encoding="utf-8")
    assert not treesitter.syntax_tree(text, case.grammar).root_node.has_error


def check_units_are_exact(case: Case, language: str) -> None:
    _, units = parse_case(case)
    assert sorted((u.kind, u.qualified_name, u.start_line, u.end_line) for u in units) == sorted(case.units)
    assert {u.language for u in units} == {language}
    assert len({u.id for u in units}) == len(units)


def check_unit_details_and_imports(case: Case) -> None:
    _, units = parse_case(case)
    unit = unit_named(units, case.detail.qualified_name)
    assert (unit.signature, unit.docstring, unit.calls) == (case.detail.signature, case.detail.docstring, case.detail.calls)
    assert tuple(unit.bases) == case.detail.bases
    assert next(u for u in units if u.kind == "module").imports == case.imports


def check_text_is_exact_lines_and_nothing_is_lost(case: Case) -> None:
    lines, units = parse_case(case)
    covered: set[int] = set()
    for unit in units:
        if unit.kind != "module":
            assert unit.text == "\n".join(lines[unit.start_line - 1 : unit.end_line])
            covered.update(range(unit.start_line, unit.end_line + 1))
    leftover = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    module = next(u for u in units if u.kind == "module")
    assert (module.start_line, module.end_line) == (leftover[0], leftover[-1])
    assert module.text == "\n".join(lines[n - 1] for n in leftover)


def check_signatures_are_single_short_lines(case: Case) -> None:
    _, units = parse_case(case)
    for unit in units:
        assert "\n" not in unit.signature and len(unit.signature) <= 300
        assert unit.kind == "module" or unit.signature
