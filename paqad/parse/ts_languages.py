"""What each tree-sitter grammar's nodes mean, as data: one table per language.

The engine in :mod:`paqad.parse.treesitter` knows nothing about any language; adding one is a
``LangSpec`` in a :mod:`paqad.parse.languages` family module, a line in ``GRAMMARS`` below, a
stack pack and a fixture. Node and field names come from each grammar's ``node-types.json``
(print a tree with ``str(tree.root_node)`` to find them). The table's shape is documented in
:mod:`paqad.parse.languages.spec`.
"""

from __future__ import annotations

from collections.abc import Mapping

from paqad.parse.languages import (
    declarative,
    functional,
    managed,
    scripting,
    systems,
    web,
)
from paqad.parse.languages.spec import (
    EACH_ARGUMENT,
    NOT_A_UNIT,
    SCOPE,
    STRING_ARGUMENT,
    Decl,
    LangSpec,
    Path,
    ro,
)

__all__ = ["EACH_ARGUMENT", "GRAMMARS", "NOT_A_UNIT", "SCOPE", "STRING_ARGUMENT", "Decl", "LangSpec", "Path", "language_spec"]

# Grammar name (a stack pack's ``grammar`` field) → table. ``tsx`` and ``typescript`` differ
# only in the grammar loaded: JSX is a syntax error for the plain TypeScript grammar.
GRAMMARS: Mapping[str, LangSpec] = ro({
    "javascript": web.JAVASCRIPT,
    "typescript": web.TYPESCRIPT,
    "tsx": web.TSX,
    "php": web.PHP,
    "go": systems.GO,
    "rust": systems.RUST,
    "c": systems.C,
    "cpp": systems.CPP,
    "zig": systems.ZIG,
    "java": managed.JAVA,
    "kotlin": managed.KOTLIN,
    "csharp": managed.CSHARP,
    "swift": managed.SWIFT,
    "scala": managed.SCALA,
    "dart": managed.DART,
    "ruby": scripting.RUBY,
    "bash": scripting.BASH,
    "lua": scripting.LUA,
    "perl": scripting.PERL,
    "julia": scripting.JULIA,
    "sql": declarative.SQL,
    "hcl": declarative.HCL,
    "elixir": functional.ELIXIR,
    "haskell": functional.HASKELL,
    "ocaml": functional.OCAML,
})


def language_spec(grammar: str) -> LangSpec:
    """The table for ``grammar``; an unknown name is a ``LookupError`` listing the known ones."""
    try:
        return GRAMMARS[grammar]
    except KeyError:
        raise LookupError(f"no tree-sitter grammar {grammar!r}. Choose from: {', '.join(GRAMMARS)}") from None
