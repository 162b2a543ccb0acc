"""Tree and text helpers for the tree-sitter engine: following name paths, finding bodies,
callee names and comments, and normalising names, imports and comment text."""

from __future__ import annotations

import re
from collections import deque

import tree_sitter

from paqad.parse.ts_languages import Decl, Path
from paqad.units import CodeUnit

# Leaf node types that hold a name, besides every ``*identifier``.
NAME_LEAVES = frozenset({"name", "constant", "word"})
# A callee's last name is never inside its arguments, lambdas or string literals.
NOT_CALLEE = ("argument", "lambda", "block", "body", "closure", "parameter", "call_suffix", "string")
BASE_KEYWORDS = frozenset(
    {"extends", "implements", "with", "public", "private", "protected", "internal", "virtual", "where"}
)
BRACKETS = re.compile(r"<[^<>]*>|\([^()]*\)|\[[^\[\]]*\]")
DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|\\)[A-Za-z_$][\w$]*)*")
IMPORT_KEYWORDS = re.compile(
    r"^(?:import|using|use|static|function|const|require_once|require|include_once|include|global)\b\s*"
)
# ``/**``, ``//!``, ``#``, `` * ``; Lua and Haskell ``---``, ``-- |``, ``{- |``; OCaml ``(**``; Julia ``#=``.
COMMENT_MARK = re.compile(r"^(?:/\*+!?|//[/!]?|#+(?:=(?![=>]))?|\*+|--+(?:\s*[|^])?|\{-+(?:\s*[|^])?|\(\*+)")


# -- tree helpers ----------------------------------------------------------------------------


def node_text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def last_row(node: tree_sitter.Node) -> int:
    """0-based last row with content: a node ending at column 0 ended on the line before."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def first_named(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return node.named_children[0] if node.named_child_count else None


def follow(node: tree_sitter.Node | None, path: Path) -> tree_sitter.Node | None:
    """Walk a name path from ``ts_languages`` (fields, child types, ``^``, ``declarator*``)."""
    for step in path:
        if node is None:
            return None
        if step.startswith("^"):  # ``^type_definition``: the parent, if it is of that type
            node = node.parent if node.parent is not None and node.parent.type == step[1:] else None
        elif step == "<":  # the previous named sibling (Dart: the callee before its arguments)
            node = node.prev_named_sibling
        elif step.endswith("$"):  # ``identifier$``: the last named child of that type
            node = next((c for c in reversed(node.named_children) if c.type == step[:-1]), None)
        elif step == ".":  # the first named child, whatever its type
            node = first_named(node)
        elif step.endswith("*"):  # ``declarator*``: follow the field as far as it goes
            while (inner := node.child_by_field_name(step[:-1])) is not None:
                node = inner
        else:
            by_field = node.child_by_field_name(step)
            node = by_field if by_field is not None else child_of_type(node, step)
    return node


def child_of_type(node: tree_sitter.Node, kind: str) -> tree_sitter.Node | None:
    return next((c for c in node.named_children if c.type == kind), None)


def child_in(node: tree_sitter.Node, kinds: frozenset[str]) -> tree_sitter.Node | None:
    """The first named child of any of ``kinds`` (none when ``kinds`` is empty)."""
    return next((c for c in node.named_children if c.type in kinds), None) if kinds else None


def decl_kind(node: tree_sitter.Node, decl: Decl) -> str:
    """The unit kind, refined by a keyword or child type (``interface`` vs ``class``)."""
    if not decl.kind_by:
        return decl.kind
    if decl.keyword:  # Elixir: the macro's name decides (``defmodule`` → class, ``def`` → function)
        word = follow(node, decl.keyword)
        return decl.kind_by.get(node_text(word), decl.kind) if word is not None else decl.kind
    for child in node.children:
        keys = [child.type] + ([leaf.type for leaf in leaves(child)] if child.type == "modifiers" else [])
        hit = next((decl.kind_by[k] for k in keys if k in decl.kind_by), None)
        if hit is not None:
            return hit
    return decl.kind


def leaves(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    if node.child_count == 0:
        return [node]
    return [leaf for child in node.children for leaf in leaves(child)]


def applies(node: tree_sitter.Node, decl: Decl) -> bool:
    """Context checks that keep anonymous or forward declarations from becoming units."""
    if decl.parents and (node.parent is None or node.parent.type not in decl.parents):
        return False
    if decl.needs_body and node.child_by_field_name("body") is None:
        return False
    if decl.name_node_types and ((target := follow(node, decl.name)) is None or target.type not in decl.name_node_types):
        return False
    if decl.value:
        value = follow(node, decl.value)
        return value is not None and value.type in decl.value_types
    return True


def body(node: tree_sitter.Node, body_types: frozenset[str]) -> tree_sitter.Node | None:
    """The declaration's body: a ``body`` field, a known body node or the first ``{``, nearest first."""
    queue = deque([(node, 0)])
    while queue:
        current, depth = queue.popleft()
        body = current.child_by_field_name("body")
        if body is not None:
            return body
        for child in current.children:
            if child.type in body_types or child.type == "{":
                return child
            if depth < 3 and child.is_named:
                queue.append((child, depth + 1))
    return None


def previous(node: tree_sitter.Node, comments: frozenset[str] = frozenset()) -> tree_sitter.Node | None:
    """The node before ``node``, climbing out of parents that start where it starts.

    Ruby puts a comment above a class's first member before the ``body_statement`` that holds it.
    Haskell puts the comment above the first declaration at the end of the ``imports`` before it:
    a previous node that ends with one of the ``comments`` node types yields that comment.
    """
    while node.prev_sibling is None and node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent
    prev = node.prev_sibling
    last = prev.named_children[-1] if prev is not None and prev.named_child_count else None
    if last is not None and last.type in comments:
        return last
    return prev


def last_name(node: tree_sitter.Node, name_leaves: frozenset[str] = frozenset()) -> tree_sitter.Node | None:
    """The last name leaf of a callee expression: ``foo.bar`` → ``bar``, ``Foo::new`` → ``new``."""
    best: tree_sitter.Node | None = None
    stack = [node]
    while stack:
        current = stack.pop()
        if current.named_child_count == 0:
            if is_name(current, name_leaves) and (best is None or current.start_byte > best.start_byte):
                best = current
        elif current == node or not any(part in current.type for part in NOT_CALLEE):
            stack.extend(current.named_children)
    return best


def is_name(node: tree_sitter.Node, name_leaves: frozenset[str] = frozenset()) -> bool:
    return node.type.endswith("identifier") or node.type in NAME_LEAVES or node.type in name_leaves


# -- text helpers ----------------------------------------------------------------------------


def in_order(calls: dict[str, int]) -> list[str]:
    return sorted(calls, key=calls.__getitem__)


def strip_brackets(text: str) -> str:
    """Remove ``<...>``, ``(...)`` and ``[...]`` groups, innermost first (generics, arguments)."""
    while True:
        stripped = BRACKETS.sub("", text)
        if stripped == text:
            return text.strip()
        text = stripped


def base_names(text: str) -> list[str]:
    """Supertype names from a heritage clause (``extends A<T> implements B, C``)."""
    text = re.sub(r"'\w+|\bby\s+[\w.]+", "", text)  # Rust lifetimes, Kotlin delegation targets
    return [t for t in DOTTED.findall(strip_brackets(text)) if t not in BASE_KEYWORDS]


def module_name(text: str) -> str:
    """Normalise an import's text to a module name: no keywords, quotes, braces or wildcards."""
    name = " ".join(text.split()).rstrip(";").strip()
    while (trimmed := IMPORT_KEYWORDS.sub("", name)) != name:
        name = trimmed
    name = name.split("=", 1)[-1].split(" as ")[0].split("{")[0].strip(" ()'\"<>`")
    return re.sub(r"(?:\.\*|\._|::\*|\.|::|\\)+$", "", name)


def clean_comment(text: str) -> str:
    """Comment text without its markers (``//``, ``/** */``, ``#``, ``///``, leading ``*``).

    A Julia docstring is a string literal in one or three double quotes: its lines lose only the
    quotes and their indentation (a Markdown ``# Examples`` heading keeps its ``#``).
    """
    if len(text) > 1 and text[0] == text[-1] == '"':
        return "\n".join(line.strip() for line in text.strip('"').splitlines()).strip("\n")
    lines = []
    for line in text.splitlines():
        line = line.strip()
        line = line[:-2].rstrip() if line.endswith(("*/", "-}", "*)", "=#")) else line
        lines.append(COMMENT_MARK.sub("", line, count=1).strip())
    return "\n".join(lines).strip("\n")


def number_overloads(units: list[CodeUnit]) -> None:
    """Overloads sharing a qualified name get ``name@2``, ``@3``, ... so unit ids stay unique."""
    seen: dict[str, int] = {}
    for unit in units:
        count = seen[unit.qualified_name] = seen.get(unit.qualified_name, 0) + 1
        if count > 1:
            unit.qualified_name = f"{unit.qualified_name}@{count}"
            unit.id = ""
            unit.__post_init__()
