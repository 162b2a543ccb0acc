"""The shape of a language table: ``Decl`` (one declaration node type) and ``LangSpec`` (a grammar).

Name paths (``Decl.name``, ``Decl.value``, ``Decl.receiver``, ``Decl.keyword``, ``Decl.head``)
are steps from the declaration node: a field name, else the first named child of that node type;
``^type_definition`` is the parent if it has that type, and ``declarator*`` follows the
``declarator`` field as far as it goes (C's nested declarators; any ``field*`` works the same),
``.`` is the first named child whatever its type, ``identifier$`` the last named child of that
type (Dart's ``Shop.fromJson`` constructor is named ``fromJson``) and ``<`` the previous named
sibling (Dart's callee stands before the ``selector`` holding the arguments).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

Path = tuple[str, ...]

_V = TypeVar("_V")

# The kind a declaration gets when it has no default and no ``kind_by`` key matches: no unit.
NOT_A_UNIT = "?"
# A ``Decl`` of this kind is a naming scope, not a unit (Rust ``impl``, Swift ``extension``).
SCOPE = ""
# An ``imports`` field meaning "the first string literal inside" (PHP ``require __DIR__ . 'x'``).
STRING_ARGUMENT = "<string>"
# An ``imports`` field meaning "every named child is a module" (Julia ``using A, B``); a child of
# an ``import_args`` type is named by its own first child (``using A: f``, ``import A as B``).
EACH_ARGUMENT = "<each>"


def ro(table: Mapping[str, _V] | None = None, /, **entries: _V) -> Mapping[str, _V]:
    """Read-only mapping, so the shared tables cannot be mutated by a caller."""
    return MappingProxyType({**(table or {}), **entries})


@dataclass(frozen=True)
class Decl:
    """How one declaration node type becomes a unit (or a scope that qualifies its members)."""

    kind: str
    name: Path = ("name",)
    alt_name: Path = ()  # tried when ``name`` finds nothing (C ``typedef struct {..} Name``)
    default_name: str = ""  # Kotlin's unnamed ``companion object``
    kind_by: Mapping[str, str] = field(default_factory=ro)  # keyword or child type → kind
    keyword: Path = ()  # if set, this node's text is the ``kind_by`` key (Elixir ``def``/``defmodule``)
    value: Path = ()  # JS ``const f = () => {}``: the initialiser must be one of ``value_types``
    value_types: frozenset[str] = frozenset()
    name_node_types: frozenset[str] = frozenset()  # if set, the ``name`` node must be one of these (JS ``a.b = f``, not ``a[b] = f``)
    parents: frozenset[str] = frozenset()  # if set, the parent node must be one of these types
    needs_body: bool = False  # C ``struct foo;`` forward declarations are not units
    receiver: Path = ()  # Go ``func (s *Server) Handle``: the qualifier and method-ness
    head: Path = ()  # the declaration's head: nothing inside it is a call (Elixir ``def f(x)``)
    labels: str = ""  # if set, every child of this type, joined by ``.``, is the name (HCL labels)


@dataclass(frozen=True)
class LangSpec:
    """One grammar: where to load it and which of its node types mean what."""

    language: str  # ``CodeUnit.language``
    module: str  # the grammar wheel's Python module
    decls: Mapping[str, Decl]
    calls: Mapping[str, str]  # call node type → callee path step ("" = first named child)
    imports: Mapping[str, str] = field(default_factory=ro)  # node type → field ("" = own text)
    import_calls: frozenset[str] = frozenset()  # ``require("x")``: the callee names that import
    import_args: frozenset[str] = frozenset()  # argument node types naming the module (Elixir ``alias``; see EACH_ARGUMENT)
    keywords: frozenset[str] = frozenset()  # callee names that are syntax, not calls (Elixir ``if``)
    call_arguments: frozenset[str] = frozenset()  # if set, a call node needs a child of one of these types to be a call
    quiet: frozenset[str] = frozenset()  # node types whose subtrees hold no calls (Haskell types)
    bases: frozenset[str] = frozenset()  # child node types listing supertypes
    wrappers: frozenset[str] = frozenset()  # parents that are part of the span (``export``)
    leading: frozenset[str] = frozenset()  # preceding siblings that are part of the span
    body_types: frozenset[str] = frozenset()  # bodies without a ``body`` field (end of signature)
    headers: frozenset[str] = frozenset()  # the whole signature: the declaration node itself or its first such child (Julia ``signature``)
    trailing: frozenset[str] = frozenset()  # a next sibling of this type is the body (Dart: ``function_body`` after a signature)
    name_types: frozenset[str] = frozenset()  # name nodes taken whole (C++ ``Foo::bar``)
    name_leaves: frozenset[str] = frozenset()  # leaf types holding a name besides ``*identifier``
    separator: str = "::"  # regex splitting a whole name into qualifier and name (Lua ``[.:]``)
    clauses: bool = False  # consecutive same-name declarations are one unit (Haskell equations)
    factory: str = "language"  # the module function returning the grammar
    comments: frozenset[str] = frozenset({"comment", "line_comment", "block_comment", "multiline_comment"})


FUNCTION = Decl("function")
CLASS = Decl("class")
