"""The code graph as a networkx ``DiGraph``, built from the index's own tables and cached.

Built from ``units`` (no second store), so the graph is always the same generation as the index
it is read from. The ``Index`` caches it per generation (its file and SQLite's ``PRAGMA
data_version``, which changes on the reader's connection when another connection commits): an
incremental ``rag update`` or a rebuild yields a fresh graph on the next call, and nothing is
rebuilt while the index is unchanged.

Nodes: unit ids (``path::qualified_name``, attribute ``node="unit"``), file paths
(``node="file"``) and unresolved names (``?name``, ``node="unresolved"``). Edges carry
``type`` (contains, calls, imports, inherits) and, to unresolved nodes, ``unresolved``
(``ambiguous`` or ``unknown``). A unit split into parts is one node (its first part's id, its
whole span). A ``DiGraph`` keeps one edge per pair; when two types link the
same pair (a class that contains and calls a method) the first in ``EDGE_TYPES`` order is kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paqad.graph import resolve
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    import networkx as nx

    from paqad.index.reader import Index

EDGE_TYPES = ("contains", "inherits", "calls", "imports")


@dataclass
class CodeGraph:
    graph: nx.DiGraph
    build_ms: float
    units: int
    edges: int
    aliases: dict[str, str]  # a split unit's later parts → the node of its first part

    def node(self, unit_id: str) -> str:
        return self.aliases.get(unit_id, unit_id)


def load(index: Index) -> CodeGraph:
    """The graph of ``index``'s generation, rebuilt only when the index changed."""
    return index.cached("graph", lambda: build(index))


def build(index: Index) -> CodeGraph:
    """Read the units, resolve names (``resolve.Resolver``) and assemble the DiGraph."""
    import networkx as nx  # lazily: the prompt hook never builds a graph

    started = time.perf_counter()
    with index.guard():
        units, texts = resolve.read_units(index)
    resolver = resolve.Resolver(units, texts)
    g = nx.DiGraph()
    for path, fs in resolver.files.items():
        g.add_node(path, node="file", path=path, kind="file", qualified_name="", language=fs.language)
    parts = _merge_parts(units)
    g.add_nodes_from(
        (u.id, {"node": "unit", "path": u.path, "kind": u.kind, "qualified_name": u.qualified_name,
                "start_line": u.start_line, "end_line": parts.get(u.id, (u.end_line,))[0], "language": u.language})
        for u in units if u.part == 1
    )
    rank = {t: i for i, t in enumerate(EDGE_TYPES)}
    for e in resolver.edges():
        if e.unresolved and e.dst not in g:
            g.add_node(e.dst, node="unresolved", path=None, kind="unresolved", qualified_name=e.dst[1:])
        old = g.get_edge_data(e.src, e.dst)
        if old is not None and rank[old["type"]] <= rank[e.type]:
            continue
        attrs = {"type": e.type, "unresolved": e.unresolved} if e.unresolved else {"type": e.type}
        g.add_edge(e.src, e.dst, **attrs)
    ms = (time.perf_counter() - started) * 1000
    aliases = {alias: first for first, (_end, names) in parts.items() for alias in names}
    return CodeGraph(g, round(ms, 1), len(units), g.number_of_edges(), aliases)


def _merge_parts(units: list[StoredUnit]) -> dict[str, tuple[int, list[str]]]:
    """Split units (``id#2``, ``id#3``...) fold into their first part's node: first id → (last
    line of the whole declaration, the other parts' ids)."""
    out: dict[str, tuple[int, list[str]]] = {}
    for u in units:
        if u.part > 1:
            first = u.id.rsplit("#", 1)[0]
            end, names = out.get(first, (u.end_line, []))
            out[first] = (max(end, u.end_line), names + [u.id])
    return out
