"""The shape of paqad's code, counted from its syntax trees: typed seams, inner imports, package ties, DDL.

    python -m benchmarks code_shape [--rev REV] [--list] [--json OUT]

Issue 33's yardstick for "packages that match their jobs" and "typed seams". Counts, over the
modules of ``paqad/`` (at the working tree, or at a commit with ``--rev``, read through
``git archive``):

- ``any_uses``: every ``Any`` in the code (``Any`` or ``typing.Any``; the import itself not counted);
- ``dict_returns``: functions annotated to return an untyped dict: ``dict``, ``Dict`` or a dict
  whose value type is ``Any`` (``dict[str, Any]``), alone or in a union (``| None``);
  ``dict_returns_typed`` the other dict returns;
- ``inner_imports``: imports inside a function, and how many carry a reason (a comment on the
  import's line or the line above it);
- ``two_way_ties``: pairs of units that import each other (module-level and inner imports); a
  unit is the package holding a module (``paqad.index``, ``paqad.hooks.hosts``), a module right
  under ``paqad/`` being a unit of its own (``paqad.describe``);
- ``ddl``: ``CREATE TABLE/INDEX/VIEW/TRIGGER`` statements in string literals, per module, and
  the tables created in more than one place;
- ``modules_per_package`` and the module and line totals.

Prints one JSON object (``--list`` adds the names behind each count).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.emit import emit

ROOT = Path(__file__).resolve().parent.parent
DDL = re.compile(r"\bCREATE\s+(?:UNIQUE\s+)?(?:VIRTUAL\s+)?(TABLE|INDEX|VIEW|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w{}.]+)", re.I)


def sources(rev: str | None) -> dict[str, str]:
    """Module name -> source text of every ``paqad/**.py``."""
    files: dict[str, str] = {}
    if rev is None:
        for path in sorted((ROOT / "paqad").rglob("*.py")):
            files[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    else:
        data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "paqad"], capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith(".py"):
                    handle = tar.extractfile(member)
                    if handle is not None:
                        files[member.name] = handle.read().decode("utf-8")
    out = {}
    for rel, text in sorted(files.items()):
        parts = Path(rel).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = text
    return out


def package_of(name: str, packages: set[str]) -> str:
    """The unit a module belongs to: its package, or itself when it sits right under ``paqad``."""
    if name in packages:
        return name if name != "paqad" else "paqad"
    parent = name.rpartition(".")[0]
    return name if parent == "paqad" else parent


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")


def dict_kind(ann: ast.AST | None) -> str | None:
    """``untyped`` for ``dict``/``Dict``/``dict[K, Any]``, ``typed`` for another dict, else None."""
    if ann is None:
        return None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # dict[str, Any] | None counts as its dict
        kinds = {dict_kind(ann.left), dict_kind(ann.right)} - {None}
        return "untyped" if "untyped" in kinds else kinds.pop() if kinds else None
    if isinstance(ann, ast.Name) and ann.id in ("dict", "Dict"):
        return "untyped"
    if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id in ("dict", "Dict"):
        args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return "untyped" if args and _is_any(args[-1]) else "typed"
    return None


def imports_of(name: str, tree: ast.AST, is_package: bool, modules: set[str]) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target.split(".")[0] == "paqad" and target != name:
                out.add(target)
    return out


def inner_imports(tree: ast.AST, lines: list[str]) -> list[tuple[int, bool]]:
    """(line, has a reason) for each import inside a function."""
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                line = lines[node.lineno - 1]
                above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                found.append((node.lineno, "#" in line or above.startswith("#")))
    return sorted(set(found))


def ddl_of(tree: ast.AST) -> list[tuple[str, str]]:
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    inside_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.JoinedStr):
            text = ast.unparse(node)  # f"CREATE TABLE {TABLE}(...)": the name as the code spells it
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | inside_fstrings:
            text = node.value
        if text:
            out += [(kind.upper(), target) for kind, target in DDL.findall(text)]
    return out


def measure(rev: str | None) -> dict:
    texts = sources(rev)
    modules = set(texts)
    packages = {m for m in modules if m == "paqad" or any(o.startswith(m + ".") for o in modules)}
    any_uses, dict_untyped, dict_typed, inner, ddl = [], [], [], [], {}
    edges: set[tuple[str, str]] = set()
    lines_total = 0
    for name, text in texts.items():
        tree = ast.parse(text)
        lines = text.splitlines()
        lines_total += len(lines)
        for node in ast.walk(tree):
            if _is_any(node):
                any_uses.append(f"{name}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = dict_kind(node.returns)
                if kind:
                    (dict_untyped if kind == "untyped" else dict_typed).append(f"{name}:{node.name}")
        inner += [(f"{name}:{line}", reason) for line, reason in inner_imports(tree, lines)]
        if found := ddl_of(tree):
            ddl[name] = found
        unit = package_of(name, packages)
        for target in imports_of(name, tree, name in packages, modules):
            other = package_of(target, packages)
            if other != unit:
                edges.add((unit, other))
    ties = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    # a name spelled through a constant ({TABLE}) is that module's own: qualified by it
    created = Counter(
        f"{kind} {m + ':' if '{' in target else ''}{target}" for m, found in ddl.items() for kind, target in set(found)
    )
    per_package = Counter(m if m in packages else m.rpartition(".")[0] for m in modules)
    return {
        "modules": len(modules),
        "lines": lines_total,
        "any_uses": len(any_uses),
        "dict_returns": len(dict_untyped),
        "dict_returns_typed": len(dict_typed),
        "inner_imports": len(inner),
        "inner_imports_with_reason": sum(1 for _, r in inner if r),
        "two_way_ties": [f"{a} <-> {b}" for a, b in ties],
        "ddl_modules": {m: len(found) for m, found in ddl.items()},
        "ddl_created_twice": sorted(k for k, n in created.items() if n > 1),
        "modules_per_package": {p: per_package[p] for p in sorted(packages)},
        "_lists": {"any_uses": any_uses, "dict_returns": dict_untyped, "inner_imports_without_reason": [n for n, r in inner if not r]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="measure this commit (git archive) instead of the working tree")
    parser.add_argument("--list", action="store_true", help="name what each count counts")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    result = measure(args.rev)
    lists = result.pop("_lists")
    if args.list:
        result["lists"] = lists
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.rev or "HEAD"], capture_output=True, text=True).stdout.strip()
    head = {"benchmark": "code_shape", "commit": commit, "working_tree": args.rev is None, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    emit({**head, **result}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
