"""``python -m benchmarks NAME [ARGS]``: run one benchmark script; ``python -m benchmarks list``: name them.

NAME is a module's name without ``.py`` (``hook-latency`` works for ``hook_latency``); the module
``benchmarks.NAME`` runs as ``__main__`` with ARGS as its ``sys.argv[1:]``, the way ``python -m
benchmarks.NAME ARGS`` would. Run from the repository root (where ``benchmarks/`` is a package). A
script is any ``benchmarks/*.py`` with a ``__main__`` block; the modules without one (``scoring``,
...) are shared code and are listed apart.
"""

from __future__ import annotations

import ast
import difflib
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def _has_main(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test):
            return True
    return False


def modules() -> dict[str, tuple[bool, str]]:
    """Every ``benchmarks/*.py`` but this package's own files: name -> (is a script, first docstring line)."""
    out: dict[str, tuple[bool, str]] = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = _parse(path)
        if tree is None:
            continue
        doc = (ast.get_docstring(tree) or "").strip().splitlines()
        first = next((line.strip() for line in doc if line.strip() and not line.strip().startswith(("python ", "Usage"))), "")
        out[path.stem] = (_has_main(tree), first)
    return out


def list_scripts() -> int:
    found = modules()
    width = max(map(len, found), default=0)
    print("scripts (python -m benchmarks NAME [ARGS]; NAME --help for their options):")
    for name, (script, doc) in found.items():
        if script:
            print(f"  {name:<{width}}  {doc}")
    shared = [n for n, (script, _) in found.items() if not script]
    if shared:
        print("shared modules (imported by the scripts, not run): " + ", ".join(shared))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "list":
        return list_scripts()
    name = argv[0].removesuffix(".py").replace("-", "_")
    found = modules()
    if name not in found or not found[name][0]:
        why = "is shared code, not a script" if name in found else "is no benchmark script"
        close = difflib.get_close_matches(name, [n for n, (s, _) in found.items() if s], n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; python -m benchmarks list names them"
        print(f"{argv[0]} {why}{hint}", file=sys.stderr)
        return 2
    sys.argv = [str(HERE / f"{name}.py"), *argv[1:]]
    try:
        runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=True)
    except SystemExit as exc:  # the scripts end with raise SystemExit(main()) or sys.exit(...)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
