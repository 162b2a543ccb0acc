"""Every non-Python code language through tree-sitter: one engine, language knowledge as data.

The engine walks the syntax tree once. Declaration nodes named in the language's table
(:mod:`paqad.parse.ts_languages`) become units; call and import nodes are credited to the
innermost enclosing unit (or the file). Tree-sitter recovers from syntax errors, so a broken file
still yields whatever parsed, and never raises: the leftover lines land in the ``module`` unit.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections import deque
from dataclasses import dataclass

import tree_sitter

from paqad.parse.leftover import module_unit
from paqad.parse.ts_languages import NOT_A_UNIT, SCOPE, STRING_ARGUMENT, Decl, LangSpec, Path, language_spec
from paqad.units import CodeUnit

_SIGNATURE_MAX = 300
_CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
# Fields that lead from a name-holding node to the name itself, most specific first.
_NAME_FIELDS = ("declarator", "name", "type")
# Leaf node types that hold a name, besides every ``*identifier``.
_NAME_LEAVES = frozenset({"name", "constant", "word"})
# A callee's last name is never inside its arguments, lambdas or string literals.
_NOT_CALLEE = ("argument", "lambda", "block", "body", "closure", "parameter", "call_suffix", "string")
# ``new self()``, ``super()``, ``parent::__construct()``: the receiver, not a callee name.
_SELF_NAMES = frozenset({"self", "this", "super", "parent", "static"})
_BASE_KEYWORDS = frozenset(
    {"extends", "implements", "with", "public", "private", "protected", "internal", "virtual", "where"}
)
_BRACKETS = re.compile(r"<[^<>]*>|\([^()]*\)|\[[^\[\]]*\]")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|\\)[A-Za-z_$][\w$]*)*")
_IMPORT_KEYWORDS = re.compile(
    r"^(?:import|using|use|static|function|const|require_once|require|include_once|include|global)\b\s*"
)
_COMMENT_MARK = re.compile(r"^(?:/\*+!?|//[/!]?|#+|\*+)")

_LOCAL = threading.local()


def parse(path: str, text: str, grammar: str) -> list[CodeUnit]:
    """Parse one file with the tree-sitter grammar ``grammar`` (``LookupError`` if unknown)."""
    spec = language_spec(grammar)
    source = text.encode("utf-8", "surrogatepass")
    tree = _parser(grammar).parse(source)
    walk = _FileWalk(spec, path, source, text.split("\n"))
    walk.run(tree.root_node)
    return walk.result()


def syntax_tree(text: str, grammar: str) -> tree_sitter.Tree:
    """The raw tree, for tools and tests that need to look at the parse itself (errors, nodes)."""
    return _parser(grammar).parse(text.encode("utf-8", "surrogatepass"))


@functools.cache
def _language(grammar: str) -> tree_sitter.Language:
    """Load a grammar wheel on first use: most repositories touch only a few languages."""
    spec = language_spec(grammar)
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:  # a missing wheel is an unusable grammar, like an unknown one
        raise LookupError(f"grammar {grammar!r} needs the {spec.module} package: {exc}") from exc
    return tree_sitter.Language(getattr(module, spec.factory)())


def _parser(grammar: str) -> tree_sitter.Parser:
    """One cached parser per grammar and thread: a ``Parser`` must not be shared across threads."""
    parsers: dict[str, tree_sitter.Parser] = _LOCAL.__dict__.setdefault("parsers", {})
    if grammar not in parsers:
        parsers[grammar] = tree_sitter.Parser(_language(grammar))
    return parsers[grammar]


@dataclass(frozen=True)
class _Scope:
    """Where the walk is: the dotted prefix, whether functions here are methods, who gets calls."""

    prefix: str
    in_class: bool
    calls: dict[str, int]  # callee name → byte offset of its first appearance


class _FileWalk:
    """One pass over one file's tree, collecting units, spans, calls, imports and comment lines."""

    def __init__(self, spec: LangSpec, path: str, source: bytes, lines: list[str]) -> None:
        self.spec, self.path, self.source, self.lines = spec, path, source, lines
        self.units: list[tuple[CodeUnit, dict[str, int]]] = []
        self.covered: list[tuple[int, int]] = []
        self.imports: dict[str, None] = {}
        self.comment_rows: set[int] = set()
        self.module_calls: dict[str, int] = {}

    def run(self, root: tree_sitter.Node) -> None:
        """Depth-first, iteratively: deeply nested code must not hit Python's recursion limit."""
        stack = [(root, _Scope("", False, self.module_calls))]
        while stack:
            node, scope = stack.pop()
            inner = self._visit(node, scope)
            stack.extend((child, inner) for child in reversed(node.named_children))

    def result(self) -> list[CodeUnit]:
        """The module unit first (if any), then the declarations in source order."""
        units = []
        for unit, calls in self.units:
            unit.calls = _in_order(calls)
            units.append(unit)
        _number_overloads(units)
        module = self._module_unit()
        return ([module] if module else []) + units

    def _visit(self, node: tree_sitter.Node, scope: _Scope) -> _Scope:
        """Handle one node; return the scope its children live in."""
        kind = node.type
        if kind in self.spec.comments:
            self._note_comment(node)
            return scope
        decl = self.spec.decls.get(kind)
        inner = self._declare(node, decl, scope) if decl else None
        if kind in self.spec.calls:
            self._call(node, self.spec.calls[kind], scope)
        if kind in self.spec.imports:
            self._import(node, self.spec.imports[kind])
        return inner or scope

    # -- declarations ------------------------------------------------------------------------

    def _declare(self, node: tree_sitter.Node, decl: Decl, scope: _Scope) -> _Scope | None:
        """Emit a unit (or open a naming scope) for a declaration node that really is one."""
        kind = _decl_kind(node, decl)
        if kind == NOT_A_UNIT or not _applies(node, decl):
            return None
        *qualifier, name = self._name_parts(node, decl)
        if not name and kind not in _CLASS_KINDS and kind != SCOPE:
            return None
        if not name:  # ``export default class {`` or PHP ``new class {``: members are still methods
            kind = SCOPE
        prefix = scope.prefix + "".join(f"{part}." for part in qualifier)
        if kind == SCOPE:
            return _Scope(prefix + (f"{name}." if name else ""), True, scope.calls)
        if kind == "function" and (scope.in_class or qualifier):
            kind = "method"
        calls: dict[str, int] = {}
        self.units.append((self._unit(node, kind, name, prefix + name), calls))
        return _Scope(f"{prefix}{name}.", kind in _CLASS_KINDS, calls)

    def _name_parts(self, node: tree_sitter.Node, decl: Decl) -> list[str]:
        """``[qualifier..., name]``: C++ ``Foo::bar`` and Go receivers carry their own qualifier."""
        target = _follow(node, decl.name) if decl.name else None
        if target is None and decl.alt_name:
            target = _follow(node, decl.alt_name)
        text = self._name_text(target) if target is not None else ""
        parts = [_strip_brackets(p) for p in text.split("::")[:-1]] + [text.split("::")[-1]]
        parts[-1] = parts[-1] or decl.default_name
        receiver = _follow(node, decl.receiver) if decl.receiver else None
        if receiver is not None:
            parts = [self._name_text(receiver)] + parts
        return [p for p in parts[:-1] if p] + [parts[-1]]

    def _name_text(self, node: tree_sitter.Node) -> str:
        """Descend from a name-holding node (``pointer_type``, ``generic_type``) to the name."""
        for _ in range(10):
            if node.type in self.spec.name_types or node.named_child_count == 0:
                break
            fields = (node.child_by_field_name(f) for f in _NAME_FIELDS)
            node = next((n for n in fields if n is not None), node.named_children[0])
        return " ".join(_text(node).split())

    def _unit(self, node: tree_sitter.Node, kind: str, name: str, qualified: str) -> CodeUnit:
        span = self._span_node(node)
        first = self._leading(span)
        start, end = first.start_point.row + 1, _last_row(span) + 1
        self.covered.append((start, end))
        return CodeUnit(
            path=self.path,
            language=self.spec.language,
            kind=kind,
            name=name,
            qualified_name=qualified,
            start_line=start,
            end_line=end,
            text="\n".join(self.lines[start - 1 : end]),
            signature=self._signature(span, node),
            docstring=self._docstring(first),
            bases=self._bases(node),
        )

    def _span_node(self, node: tree_sitter.Node) -> tree_sitter.Node:
        """Widen to wrappers (``export``, ``template<>``, ``typedef``) that hold only this node."""
        while node.parent is not None and node.parent.type in self.spec.wrappers:
            if any(s.type == node.type and s != node for s in node.parent.named_children):
                break
            node = node.parent
        return node

    def _leading(self, span: tree_sitter.Node) -> tree_sitter.Node:
        """The first of the sibling nodes that belong to the declaration (Rust ``#[derive]``)."""
        first, prev = span, span.prev_named_sibling
        while prev is not None and prev.type in self.spec.leading:
            first, prev = prev, prev.prev_named_sibling
        return first

    def _signature(self, span: tree_sitter.Node, node: tree_sitter.Node) -> str:
        """The header from the declaration's start to its body, whitespace collapsed."""
        body = _body(node, self.spec.body_types)
        end = body.start_byte if body is not None else span.end_byte
        comment = next((c for c in node.children if c.type in self.spec.comments), None)
        if comment is not None and comment.start_byte < end:  # Ruby: ``module Outer  # note``
            end = comment.start_byte
        header = self.source[span.start_byte : end].decode("utf-8", "replace")
        return " ".join(header.split()).rstrip("{=;").rstrip()[:_SIGNATURE_MAX]

    def _docstring(self, first: tree_sitter.Node) -> str:
        """The comment lines directly above the declaration (no blank line between), cleaned."""
        block: list[str] = []
        row, prev = first.start_point.row, _previous(first)
        while prev is not None and prev.type in self.spec.comments:
            text = _text(prev)
            if _last_row(prev) < row - 1 or not self._starts_line(prev) or text.startswith("#!"):
                break
            block.insert(0, text)
            row, prev = prev.start_point.row, _previous(prev)
        return _clean_comment("\n".join(block))

    def _bases(self, node: tree_sitter.Node) -> list[str]:
        found: dict[str, None] = {}
        for child in node.named_children:
            if child.type in self.spec.bases:
                found.update(dict.fromkeys(_base_names(_text(child))))
        return list(found)

    # -- calls, imports, comments ------------------------------------------------------------

    def _call(self, node: tree_sitter.Node, field: str, scope: _Scope) -> None:
        """Credit the callee's last name to the enclosing unit; ``require("x")`` is an import."""
        callee = _follow(node, (field,)) if field else _first_named(node)
        leaf = _last_name(callee) if callee is not None else None
        name = _text(leaf) if leaf is not None else ""
        if leaf is None or name in _SELF_NAMES:
            return
        if name in self.spec.import_calls:
            self._import_argument(node, callee)
        else:
            scope.calls[name] = min(scope.calls.get(name, leaf.start_byte), leaf.start_byte)

    def _import_argument(self, call: tree_sitter.Node, callee: tree_sitter.Node | None) -> None:
        """The first string literal (or shell word) after the callee names the imported module."""
        stack = [c for c in reversed(call.named_children) if c != callee]
        while stack:
            node = stack.pop()
            if "string" in node.type or node.type == "word":
                self._add_import(_text(node))
                return
            stack.extend(reversed(node.named_children))

    def _import(self, node: tree_sitter.Node, field: str) -> None:
        if field == STRING_ARGUMENT:
            self._import_argument(node, None)
            return
        target = node.child_by_field_name(field) if field else node
        if target is not None:
            self._add_import(_text(target))

    def _add_import(self, text: str) -> None:
        name = _module_name(text)
        if name:
            self.imports.setdefault(name, None)

    def _note_comment(self, node: tree_sitter.Node) -> None:
        """Remember comment-only lines: a module unit of nothing but comments is not emitted."""
        if self._starts_line(node):
            self.comment_rows.update(range(node.start_point.row + 1, _last_row(node) + 2))

    def _starts_line(self, node: tree_sitter.Node) -> bool:
        """True when only whitespace precedes ``node`` on its first line (not a trailing comment)."""
        line_start = node.start_byte - node.start_point.column
        return not self.source[line_start : node.start_byte].strip()

    def _module_unit(self) -> CodeUnit | None:
        """Leftover lines as one unit, unless they are only blank lines and comments."""
        covered = [False] * (len(self.lines) + 2)
        for start, end in self.covered:
            covered[start : end + 1] = [True] * (end + 1 - start)
        kept = [n for n, line in enumerate(self.lines, 1) if line.strip() and not covered[n]]
        if all(n in self.comment_rows for n in kept):
            return None
        unit = module_unit(self.path, self.spec.language, self.lines, self.covered, list(self.imports))
        if unit is not None:
            unit.calls = _in_order(self.module_calls)
        return unit


# -- tree helpers ----------------------------------------------------------------------------


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _last_row(node: tree_sitter.Node) -> int:
    """0-based last row with content: a node ending at column 0 ended on the line before."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _first_named(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return node.named_children[0] if node.named_child_count else None


def _follow(node: tree_sitter.Node | None, path: Path) -> tree_sitter.Node | None:
    """Walk a name path from ``ts_languages`` (fields, child types, ``^``, ``declarator*``)."""
    for step in path:
        if node is None:
            return None
        if step.startswith("^"):  # ``^type_definition``: the parent, if it is of that type
            node = node.parent if node.parent is not None and node.parent.type == step[1:] else None
        elif step == "declarator*":
            while (inner := node.child_by_field_name("declarator")) is not None:
                node = inner
        else:
            by_field = node.child_by_field_name(step)
            node = by_field if by_field is not None else _child_of_type(node, step)
    return node


def _child_of_type(node: tree_sitter.Node, kind: str) -> tree_sitter.Node | None:
    return next((c for c in node.named_children if c.type == kind), None)


def _decl_kind(node: tree_sitter.Node, decl: Decl) -> str:
    """The unit kind, refined by a keyword or child type (``interface`` vs ``class``)."""
    if not decl.kind_by:
        return decl.kind
    for child in node.children:
        keys = [child.type] + ([leaf.type for leaf in _leaves(child)] if child.type == "modifiers" else [])
        hit = next((decl.kind_by[k] for k in keys if k in decl.kind_by), None)
        if hit is not None:
            return hit
    return decl.kind


def _leaves(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    if node.child_count == 0:
        return [node]
    return [leaf for child in node.children for leaf in _leaves(child)]


def _applies(node: tree_sitter.Node, decl: Decl) -> bool:
    """Context checks that keep anonymous or forward declarations from becoming units."""
    if decl.parents and (node.parent is None or node.parent.type not in decl.parents):
        return False
    if decl.needs_body and node.child_by_field_name("body") is None:
        return False
    if decl.value:
        value = _follow(node, decl.value)
        return value is not None and value.type in decl.value_types
    return True


def _body(node: tree_sitter.Node, body_types: frozenset[str]) -> tree_sitter.Node | None:
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


def _previous(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The node before ``node``, climbing out of parents that start where it starts.

    Ruby puts a comment above a class's first member before the ``body_statement`` that holds it.
    """
    while node.prev_sibling is None and node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent
    return node.prev_sibling


def _last_name(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The last name leaf of a callee expression: ``foo.bar`` → ``bar``, ``Foo::new`` → ``new``."""
    best: tree_sitter.Node | None = None
    stack = [node]
    while stack:
        current = stack.pop()
        if current.named_child_count == 0:
            if _is_name(current) and (best is None or current.start_byte > best.start_byte):
                best = current
        elif current == node or not any(part in current.type for part in _NOT_CALLEE):
            stack.extend(current.named_children)
    return best


def _is_name(node: tree_sitter.Node) -> bool:
    return node.type.endswith("identifier") or node.type in _NAME_LEAVES


# -- text helpers ----------------------------------------------------------------------------


def _in_order(calls: dict[str, int]) -> list[str]:
    return sorted(calls, key=calls.__getitem__)


def _strip_brackets(text: str) -> str:
    """Remove ``<...>``, ``(...)`` and ``[...]`` groups, innermost first (generics, arguments)."""
    while True:
        stripped = _BRACKETS.sub("", text)
        if stripped == text:
            return text.strip()
        text = stripped


def _base_names(text: str) -> list[str]:
    """Supertype names from a heritage clause (``extends A<T> implements B, C``)."""
    text = re.sub(r"'\w+|\bby\s+[\w.]+", "", text)  # Rust lifetimes, Kotlin delegation targets
    return [t for t in _DOTTED.findall(_strip_brackets(text)) if t not in _BASE_KEYWORDS]


def _module_name(text: str) -> str:
    """Normalise an import's text to a module name: no keywords, quotes, braces or wildcards."""
    name = " ".join(text.split()).rstrip(";").strip()
    while (trimmed := _IMPORT_KEYWORDS.sub("", name)) != name:
        name = trimmed
    name = name.split("=", 1)[-1].split(" as ")[0].split("{")[0].strip(" ()'\"<>`")
    return re.sub(r"(?:\.\*|\._|::\*|\.|::|\\)+$", "", name)


def _clean_comment(text: str) -> str:
    """Comment text without its markers (``//``, ``/** */``, ``#``, ``///``, leading ``*``)."""
    lines = []
    for line in text.splitlines():
        line = line.strip()
        line = line[:-2].rstrip() if line.endswith("*/") else line
        lines.append(_COMMENT_MARK.sub("", line, count=1).strip())
    return "\n".join(lines).strip("\n")


def _number_overloads(units: list[CodeUnit]) -> None:
    """Overloads sharing a qualified name get ``name@2``, ``@3``, ... so unit ids stay unique."""
    seen: dict[str, int] = {}
    for unit in units:
        count = seen[unit.qualified_name] = seen.get(unit.qualified_name, 0) + 1
        if count > 1:
            unit.qualified_name = f"{unit.qualified_name}@{count}"
            unit.id = ""
            unit.__post_init__()
