"""The shape of the code, checked: a size budget, and an import graph without cycles.

Size: no module over 500 lines, no function over 60, the median function at most 15 lines
(pre-commit, the runner we learn from: median 8, 90th percentile 30). An exception is listed
here with its reason, so it is a decision, not drift.

Imports: the graph of ``paqad`` modules, counting every import (module-level and the lazy ones
inside functions), has no cycle. ``from pkg import name`` counts as an edge to ``pkg.name`` when
that is a module and to ``pkg`` otherwise (the convention of grimp/import-linter).
"""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

import networkx as nx

import paqad

PACKAGE = Path(paqad.__file__).resolve().parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_MEDIAN_FUNCTION_LINES = 15
#: module (relative to paqad/) -> why it may be longer than MAX_MODULE_LINES.
MODULE_EXCEPTIONS: dict[str, str] = {}
#: "module:function" -> why it may be longer than MAX_FUNCTION_LINES.
FUNCTION_EXCEPTIONS: dict[str, str] = {}
#: The one import edge the graph leaves out: the package's ``__init__`` names the public face
#: (``from paqad import Repository``) through a module ``__getattr__``, so ``import paqad`` (which
#: every module does for ``__version__``) never imports it; counted, it would close a cycle through
#: every module and put the package root above everything.
PUBLIC_FACE = ("paqad", "paqad.repository")


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_module_is_over_the_line_budget() -> None:
    over = {}
    for path in modules().values():
        rel = str(path.relative_to(PACKAGE))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES and rel not in MODULE_EXCEPTIONS:
            over[rel] = lines
    assert over == {}, f"split these modules (or list them in MODULE_EXCEPTIONS with a reason): {over}"


def test_functions_stay_small() -> None:
    lengths, over = [], {}
    for name, path in modules().items():
        for fn in functions(ast.parse(path.read_text(encoding="utf-8"))):
            length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            lengths.append(length)
            if length > MAX_FUNCTION_LINES and f"{name}:{fn.name}" not in FUNCTION_EXCEPTIONS:
                over[f"{name}:{fn.name}"] = length
    assert over == {}, f"functions over {MAX_FUNCTION_LINES} lines: {over}"
    assert statistics.median(lengths) <= MAX_MEDIAN_FUNCTION_LINES


def import_graph() -> nx.DiGraph:
    mods = modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".") if is_package else name.split(".")[:-1]
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                resolved = resolve(target) if target.split(".")[0] == "paqad" else None
                if resolved and resolved != name and (name, resolved) != PUBLIC_FACE:
                    graph.add_edge(name, resolved)
    return graph


def test_the_import_graph_has_no_cycles() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_the_import_graph_sees_lazy_imports() -> None:
    """The check above is only worth something if it sees imports inside functions too."""
    graph = import_graph()
    assert graph.has_edge("paqad.hooks.actions", "paqad.delivery.refresh")  # imported inside an action
    assert graph.has_edge("paqad.cli.app", "paqad.cli.common")


#: The layers, top first (issue 33). A unit is a subpackage of ``paqad`` or one of its top-level
#: modules; a top-level module not listed is in ``BASE`` (settings, git, workspace, errors ...).
#: An import (module-level or lazy) may go to its own layer or a lower one, never up.
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("the commands", frozenset({"cli", "__main__"})),
    ("where a request runs, and the resident service", frozenset({"serve"})),
    ("one work tree as a library (the public face)", frozenset({"repository"})),
    ("the agent doors' operations", frozenset({"agent"})),
    # evaluation measures what the hooks deliver (a host's limit) and doctor samples its questions
    ("hooks, hosts, setup checks and evaluation", frozenset({"hooks", "evaluation", "bootstrap"})),
    ("the way to the service: socket paths, the exchange, typed requests, git events", frozenset({"channel"})),
    ("what reaches the agent, and the graph", frozenset({"delivery", "graph"})),
    ("search, and the commit history behind a passage", frozenset({"search", "history"})),
    ("workspace members given by URL: their clones", frozenset({"workspaces"})),
    ("the descriptions agents write (the index reads their file, never this package)", frozenset({"describe"})),
    ("the index: format and reading, writing, the vector lifecycle, team sharing", frozenset({"index"})),
    ("parsing, eligibility, embedding, remote transport", frozenset({"parse", "eligibility", "embed", "transport", "confinement"})),
]
BASE = "base modules"


def unit_of(module: str) -> str:
    """``paqad.search.pipeline`` → ``search``; ``paqad.git`` → ``git``; ``paqad`` → ``paqad``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(unit: str) -> int:
    for depth, (_, units) in enumerate(LAYERS):
        if unit in units:
            return depth
    return len(LAYERS)  # a base module


def test_no_import_goes_from_a_lower_layer_to_a_higher_one() -> None:
    upward = sorted(
        f"{a} -> {b}" for a, b in import_graph().edges() if layer_of(unit_of(b)) < layer_of(unit_of(a))
    )
    assert upward == [], "imports from a lower layer to a higher one (see LAYERS): " + "; ".join(upward)


def test_every_package_has_a_layer() -> None:
    """A new subpackage is placed in LAYERS on purpose, not left in the base by default."""
    listed = {u for _, units in LAYERS for u in units}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages - listed == set()


def test_the_layering_rule_sees_an_upward_import() -> None:
    assert layer_of(unit_of("paqad.cli.hooks_cmd")) < layer_of(unit_of("paqad.serve.hookclient")) < layer_of(unit_of("paqad.hooks.runner"))
    assert layer_of(unit_of("paqad.channel.client")) > layer_of(unit_of("paqad.hooks.hosts")) and layer_of(unit_of("paqad.git")) == len(LAYERS)


def test_every_create_statement_is_in_the_schema_module() -> None:
    """The DDL of the index, the embedding cache and the team store lives in ``paqad/index/schema.py``
    (issue 33): a ``CREATE`` spelled anywhere else is a second definition of the format."""
    create = re.compile(r"\bCREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER)\b", re.I)
    elsewhere = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs and create.search(node.value):
                elsewhere.append(f"{name}:{node.lineno}")
    assert elsewhere and all(e.startswith("paqad.index.schema:") for e in elsewhere), elsewhere
