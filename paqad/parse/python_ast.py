"""Python through the standard library's ``ast``: exact spans, docstrings, calls, imports, bases."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from paqad.parse.leftover import module_unit
from paqad.units import CodeUnit

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SIGNATURE_MAX = 300
# The declarations that become units.
_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def parse(path: str, text: str, grammar: str = "python") -> list[CodeUnit]:
    """Parse one Python file. A SyntaxError propagates; the dispatcher falls back to a document."""
    tree = ast.parse(text)
    lines = text.split("\n")
    units: list[CodeUnit] = []
    covered: list[tuple[int, int]] = []
    _walk(tree.body, "", False, path, lines, units, covered)
    module = module_unit(path, "python", lines, covered, _imports(tree))
    _dedupe_names(units)
    return ([module] if module else []) + units


def _walk(
    body: list[ast.stmt],
    prefix: str,
    in_class: bool,
    path: str,
    lines: list[str],
    out: list[CodeUnit],
    covered: list[tuple[int, int]],
) -> None:
    """Emit a unit per def/class, recursing into bodies; ``covered`` includes decorator lines."""
    for node in body:
        if isinstance(node, (*_FUNCS, ast.ClassDef)):
            unit = _unit(node, prefix, in_class, path, lines)
            out.append(unit)
            first = min([d.lineno for d in node.decorator_list] + [unit.start_line])
            covered.append((first, unit.end_line))
            qual = f"{prefix}{node.name}."
            _walk(node.body, qual, isinstance(node, ast.ClassDef), path, lines, out, covered)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            # Conditional definitions (``if TYPE_CHECKING:``, ``try: import``) keep their scope.
            for child in _child_bodies(node):
                _walk(child, prefix, in_class, path, lines, out, covered)


def _child_bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    bodies = [getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])]
    bodies += [h.body for h in getattr(node, "handlers", [])]
    return bodies


def _unit(node: _Def, prefix: str, in_class: bool, path: str, lines: list[str]) -> CodeUnit:
    start, end = node.lineno, node.end_lineno or node.lineno
    is_class = isinstance(node, ast.ClassDef)
    kind = "class" if is_class else ("method" if in_class else "function")
    return CodeUnit(
        path=path,
        language="python",
        kind=kind,
        name=node.name,
        qualified_name=prefix + node.name,
        start_line=start,
        end_line=end,
        text="\n".join(lines[start - 1 : end]),
        signature=_signature(node, lines),
        docstring=ast.get_docstring(node, clean=True) or "",
        calls=_calls(node),
        bases=[_dotted(b) for b in node.bases if _dotted(b)] if isinstance(node, ast.ClassDef) else [],
    )


def _signature(node: _Def, lines: list[str]) -> str:
    """The header from ``def``/``class`` to the colon that opens the body, on one line."""
    body_start = node.body[0].lineno if node.body else node.lineno
    header = lines[node.lineno - 1 : max(node.lineno, body_start - 1)]
    text = " ".join(part.strip() for part in header)
    if node.body and node.body[0].lineno == node.lineno:
        text = text.split(":")[0] + ":"
    text = text.strip()
    cut = text.rfind(":")
    if cut > 0 and not text.endswith(":"):
        text = text[: cut + 1]
    return " ".join(text.split())[:_SIGNATURE_MAX]


def _calls(node: ast.AST) -> list[str]:
    """Callee names inside this unit, excluding nested declarations (they are units themselves)."""
    seen: dict[str, None] = {}
    stack = deque(ast.iter_child_nodes(node))
    while stack:
        child = stack.popleft()
        if isinstance(child, (*_FUNCS, ast.ClassDef)):
            continue
        if isinstance(child, ast.Call):
            name = _callee(child.func)
            if name:
                seen.setdefault(name, None)
        stack.extend(ast.iter_child_nodes(child))
    return list(seen)


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr}" if head else expr.attr
    if isinstance(expr, ast.Subscript):
        return _dotted(expr.value)
    return ""


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without descending into expressions (imports are
    statements, so walking expressions, most of a module's nodes, is wasted work)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _statements(handler.body)
        for case in getattr(node, "cases", None) or []:
            yield from _statements(case.body)


def _imports(tree: ast.Module) -> list[str]:
    found: dict[str, None] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, None)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                found.setdefault(f"{base}.{alias.name}" if base and not base.endswith(".") else base + alias.name, None)
    return list(found)


def _dedupe_names(units: list[CodeUnit]) -> None:
    """Redefinitions (``@property`` + ``@x.setter``, overloads) get ``name@2`` so ids stay unique."""
    counts: dict[str, int] = {}
    for unit in units:
        n = counts.get(unit.qualified_name, 0) + 1
        counts[unit.qualified_name] = n
        if n > 1:
            unit.qualified_name = f"{unit.qualified_name}@{n}"
            unit.id = ""
            unit.__post_init__()
