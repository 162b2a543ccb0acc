"""Files to ``CodeUnit``s: one dispatch point over one parser module per family.

Every parser module exposes ``parse(path, text, grammar) -> list[CodeUnit]`` where ``path`` is
the repository-relative POSIX path, ``text`` the decoded file and ``grammar`` the grammar name
the stack pack chose for this file (``python``, ``typescript``, ``tsx``, ``markdown``, ...).

Contract every parser keeps (tests assert it per language):
- exact 1-based ``start_line``/``end_line`` for each declaration, ``text`` = those lines;
- nested declarations get dotted qualified names (``Outer.method``) and kind ``method`` inside
  a class-like parent;
- code outside every declaration lands in one ``module`` unit per file, so nothing is lost;
- nothing is invented: no unit without a declaration in the source.
Long units are split afterwards by :mod:`paqad.parse.split`, never here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from paqad.parse.split import split_long_units
from paqad.units import CodeUnit

ParseFn = Callable[[str, str, str], list[CodeUnit]]

PARSER_VERSION = 4  # 2: files are parsed after paqad.redaction masked the secret shapes in them;
# 3: JavaScript/TypeScript functions declared by assignment and as object members are units;
# 4: the masking covers gitleaks's rule set, URL passwords and secret assignments (issue 31)


# Parser name (the stack pack's ``parser`` field) → (module, function). Imported on first use so
# a search never pays for tree-sitter grammars it does not need.
_REGISTRY: dict[str, tuple[str, str]] = {
    "python-ast": ("paqad.parse.python_ast", "parse"),
    "tree-sitter": ("paqad.parse.treesitter", "parse"),
    "markdown": ("paqad.parse.markdown", "parse"),
    "rst": ("paqad.parse.rst", "parse"),
    "yaml": ("paqad.parse.structured", "parse_yaml"),
    "json": ("paqad.parse.structured", "parse_json"),
    "text": ("paqad.parse.text", "parse"),
}
_LOADED: dict[str, ParseFn] = {}


def parser_names() -> list[str]:
    """Valid values of a stack pack's ``parser`` field (used by the stack pack schema)."""
    return list(_REGISTRY)


def _parser(name: str) -> ParseFn:
    if name not in _LOADED:
        module, attr = _REGISTRY.get(name, _REGISTRY["text"])
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


def parse_file(path: str, text: str, parser: str, grammar: str, max_lines: int = 150) -> list[CodeUnit]:
    """Parse one file and split its long units. Falls back to a whole-file unit on parser failure.

    A parser failing on one odd file must not lose the file or stop the build: the fallback
    ``document`` unit keeps it searchable.
    """
    fn = _parser(parser)
    try:
        units = fn(path, text, grammar)
    except (RecursionError, ValueError, SyntaxError, UnicodeError, LookupError):
        from paqad.parse import text as text_parser  # lazy: only after a parser failed (the hook path loads paqad.parse without it)

        units = text_parser.parse(path, text, grammar)
    return _unique_ids(split_long_units(units, max_lines=max_lines))


def _unique_ids(units: list[CodeUnit]) -> list[CodeUnit]:
    """Two sections or keys with the same name in one file get ``name@2`` so ids stay unique."""
    seen: dict[str, int] = {}
    for unit in units:
        n = seen.get(unit.id, 0) + 1
        seen[unit.id] = n
        if n > 1:
            unit.qualified_name = f"{unit.qualified_name}@{n}"
            unit.id = ""
            unit.__post_init__()
            seen[unit.id] = 1
    return units
