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
from dataclasses import dataclass, field, replace

import tree_sitter

from paqad.parse import ts_nodes
from paqad.parse.leftover import module_unit
from paqad.parse.ts_languages import (
    EACH_ARGUMENT,
    NOT_A_UNIT,
    SCOPE,
    STRING_ARGUMENT,
    Decl,
    LangSpec,
    language_spec,
)
from paqad.units import CodeUnit

_SIGNATURE_MAX = 300
_CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
# Fields that lead from a name-holding node to the name itself, most specific first.
_NAME_FIELDS = ("declarator", "name", "type")
# ``new self()``, ``super()``, ``parent::__construct()``: the receiver, not a callee name.
_SELF_NAMES = frozenset({"self", "this", "super", "parent", "static"})

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
    # The index (in ``_FileWalk.units``) of the last unit declared directly in this scope, so a
    # language with ``clauses`` can extend it when the next declaration has the same name.
    last: list[int] = field(default_factory=list)


class _FileWalk:
    """One pass over one file's tree, collecting units, spans, calls, imports and comment lines."""

    def __init__(self, spec: LangSpec, path: str, source: bytes, lines: list[str]) -> None:
        self.spec, self.path, self.source, self.lines = spec, path, source, lines
        self.units: list[tuple[CodeUnit, dict[str, int]]] = []
        self.covered: list[tuple[int, int]] = []
        self.imports: dict[str, None] = {}
        self.comment_rows: set[int] = set()
        self.module_calls: dict[str, int] = {}
        self.heads: set[int] = set()  # declaration heads (``def f(x)``): their calls are not calls
        self.owned: dict[int, _Scope] = {}  # a body beside its declaration (Dart) → the unit's scope

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
            unit.calls = ts_nodes.in_order(calls)
            units.append(unit)
        ts_nodes.number_overloads(units)
        module = self._module_unit()
        return ([module] if module else []) + units

    def _visit(self, node: tree_sitter.Node, scope: _Scope) -> _Scope:
        """Handle one node; return the scope its children live in."""
        kind = node.type
        scope = self.owned.pop(node.id, scope)
        if node.id in self.heads:
            return replace(scope, calls={})
        if kind in self.spec.comments:
            self._note_comment(node)
            return scope
        decl = self.spec.decls.get(kind)
        inner = self._declare(node, decl, scope) if decl else None
        if kind in self.spec.calls:
            self._call(node, self.spec.calls[kind], scope)
        if kind in self.spec.imports:
            self._import(node, self.spec.imports[kind])
        if kind in self.spec.quiet:
            return replace(inner or scope, calls={})
        return inner or scope

    # -- declarations ------------------------------------------------------------------------

    def _declare(self, node: tree_sitter.Node, decl: Decl, scope: _Scope) -> _Scope | None:
        """Emit a unit (or open a naming scope) for a declaration node that really is one."""
        kind = ts_nodes.decl_kind(node, decl)
        if kind == NOT_A_UNIT or not ts_nodes.applies(node, decl):
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
        head = ts_nodes.follow(node, decl.head) if decl.head else None
        if head is not None:
            self.heads.add(head.id)
        if self.spec.clauses and (same := self._previous_clause(scope, kind, prefix + name)) is not None:
            return self._extend(same, node, prefix + name, kind)
        calls: dict[str, int] = {}
        scope.last[:] = [len(self.units)]
        self.units.append((self._unit(node, kind, name, prefix + name), calls))
        inner = _Scope(f"{prefix}{name}.", kind in _CLASS_KINDS, calls)
        if (body := self._trailing(self._span_node(node))) is not None:
            self.owned[body.id] = inner
        return inner

    def _previous_clause(self, scope: _Scope, kind: str, qualified: str) -> int | None:
        """The unit this declaration continues: the scope's last one, if it has the same name."""
        if not scope.last:
            return None
        unit = self.units[scope.last[0]][0]
        return scope.last[0] if (unit.kind, unit.qualified_name) == (kind, qualified) else None

    def _extend(self, index: int, node: tree_sitter.Node, qualified: str, kind: str) -> _Scope:
        """Grow unit ``index`` to the end of this clause (``pop []`` then ``pop (x:xs)``)."""
        unit, calls = self.units[index]
        unit.end_line = ts_nodes.last_row(self._span_node(node)) + 1
        unit.text = "\n".join(self.lines[unit.start_line - 1 : unit.end_line])
        unit.content_hash = ""
        unit.__post_init__()
        self.covered[index] = (unit.start_line, unit.end_line)
        return _Scope(f"{qualified}.", kind in _CLASS_KINDS, calls)

    def _name_parts(self, node: tree_sitter.Node, decl: Decl) -> list[str]:
        """``[qualifier..., name]``: C++ ``Foo::bar`` and Go receivers carry their own qualifier."""
        target = ts_nodes.follow(node, decl.name) if decl.name else None
        if target is None and decl.alt_name:
            target = ts_nodes.follow(node, decl.alt_name)
        text = self._name_text(target) if target is not None else ""
        if decl.labels:  # HCL ``resource "aws_instance" "web"``: the name ``aws_instance.web``
            found = [ts_nodes.node_text(c).strip("\"'") for c in node.named_children if c.type == decl.labels]
            text = ".".join(found)
        pieces = re.split(self.spec.separator, text)
        parts = [ts_nodes.strip_brackets(p) for p in pieces[:-1]] + [pieces[-1]]
        parts[-1] = parts[-1] or decl.default_name
        receiver = ts_nodes.follow(node, decl.receiver) if decl.receiver else None
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
        return " ".join(ts_nodes.node_text(node).split())

    def _unit(self, node: tree_sitter.Node, kind: str, name: str, qualified: str) -> CodeUnit:
        span = self._span_node(node)
        first = self._leading(span)
        start, end = first.start_point.row + 1, ts_nodes.last_row(self._trailing(span) or span) + 1
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

    def _trailing(self, span: tree_sitter.Node) -> tree_sitter.Node | None:
        """The body that follows the declaration as its sibling (Dart ``void f()`` + ``{ ... }``)."""
        after = span.next_named_sibling if self.spec.trailing else None
        return after if after is not None and after.type in self.spec.trailing else None

    def _leading(self, span: tree_sitter.Node) -> tree_sitter.Node:
        """The first of the sibling nodes that belong to the declaration (Rust ``#[derive]``)."""
        first, prev = span, span.prev_named_sibling
        while prev is not None and prev.type in self.spec.leading:
            first, prev = prev, prev.prev_named_sibling
        return first

    def _signature(self, span: tree_sitter.Node, node: tree_sitter.Node) -> str:
        """The header from the declaration's start to its body, whitespace collapsed."""
        whole = node if node.type in self.spec.headers else ts_nodes.child_in(node, self.spec.headers)
        body = ts_nodes.body(node, self.spec.body_types) if whole is None else None
        end = whole.end_byte if whole is not None else body.start_byte if body is not None else span.end_byte
        comment = next((c for c in node.children if c.type in self.spec.comments), None)
        if comment is not None and comment.start_byte < end:  # Ruby: ``module Outer  # note``
            end = comment.start_byte
        header = self.source[span.start_byte : end].decode("utf-8", "replace")
        return " ".join(header.split()).rstrip("{=;").rstrip()[:_SIGNATURE_MAX]

    def _docstring(self, first: tree_sitter.Node) -> str:
        """The comment lines directly above the declaration (no blank line between), cleaned."""
        block: list[str] = []
        row, prev = first.start_point.row, ts_nodes.previous(first, self.spec.comments)
        while prev is not None and prev.type in self.spec.comments:
            text = ts_nodes.node_text(prev)
            if ts_nodes.last_row(prev) < row - 1 or not self._starts_line(prev) or text.startswith("#!"):
                break
            block.insert(0, text)
            row, prev = prev.start_point.row, ts_nodes.previous(prev, self.spec.comments)
        return ts_nodes.clean_comment("\n".join(block))

    def _bases(self, node: tree_sitter.Node) -> list[str]:
        found: dict[str, None] = {}
        for child in node.named_children:
            if child.type in self.spec.bases:
                found.update(dict.fromkeys(ts_nodes.base_names(ts_nodes.node_text(child))))
        return list(found)

    # -- calls, imports, comments ------------------------------------------------------------

    def _call(self, node: tree_sitter.Node, field: str, scope: _Scope) -> None:
        """Credit the callee's last name to the enclosing unit; ``require("x")`` is an import."""
        if self.spec.call_arguments and ts_nodes.child_in(node, self.spec.call_arguments) is None:
            return
        callee = ts_nodes.follow(node, (field,)) if field else ts_nodes.first_named(node)
        leaf = ts_nodes.last_name(callee, self.spec.name_leaves) if callee is not None else None
        name = ts_nodes.node_text(leaf) if leaf is not None else ""
        if leaf is None or name in _SELF_NAMES or name in self.spec.keywords:
            return
        if name in self.spec.import_calls:
            self._import_argument(node, callee)
        else:
            scope.calls[name] = min(scope.calls.get(name, leaf.start_byte), leaf.start_byte)

    def _import_argument(self, call: tree_sitter.Node, callee: tree_sitter.Node | None) -> None:
        """The first string literal (shell word, Elixir alias) after the callee names the module."""
        stack = [c for c in reversed(call.named_children) if c != callee]
        while stack:
            node = stack.pop()
            if "string" in node.type or node.type == "word" or node.type in self.spec.import_args:
                self._add_import(ts_nodes.node_text(node))
                return
            stack.extend(reversed(node.named_children))

    def _import(self, node: tree_sitter.Node, field: str) -> None:
        if field == STRING_ARGUMENT:
            self._import_argument(node, None)
            return
        if field == EACH_ARGUMENT:  # Julia ``using A, B: f``: A and B
            for child in node.named_children:
                named = ts_nodes.first_named(child) if child.type in self.spec.import_args else child
                self._add_import(ts_nodes.node_text(named or child))
            return
        target = node.child_by_field_name(field) if field else node
        if target is not None:
            self._add_import(ts_nodes.node_text(target))

    def _add_import(self, text: str) -> None:
        name = ts_nodes.module_name(text)
        if name:
            self.imports.setdefault(name, None)

    def _note_comment(self, node: tree_sitter.Node) -> None:
        """Remember comment-only lines: a module unit of nothing but comments is not emitted."""
        if self._starts_line(node):
            self.comment_rows.update(range(node.start_point.row + 1, ts_nodes.last_row(node) + 2))

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
            unit.calls = ts_nodes.in_order(self.module_calls)
        return unit


