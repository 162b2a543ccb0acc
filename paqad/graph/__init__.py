"""The code graph: units and files as nodes, ``contains``/``calls``/``imports``/``inherits`` edges.

Library API (pure functions over an :class:`~paqad.index.reader.Index`; they never print):

- ``neighbors(index, unit_id, hops, direction, budget)``: what a unit calls, what calls it, what
  contains it, what it inherits from, up to ``hops`` away;
- ``expand(index, seeds, hops, budget)``: neighbours of search results (the seeds themselves are
  left out), each scored ``seed score × (HOP_DECAY × edge weight)`` per hop (``walk.py``).

Each returned dict: ``id, path, kind, qualified_name, start_line, end_line, hops, score,
evidence`` (``a -calls-> b <-contains- c``) and ``edges`` (``[{"src", "type", "dst"}]``, plus
``unresolved`` on an edge to an unresolved name). A unit split into parts (``id#2``) is one node,
named by its first part's id, with the whole declaration's span. networkx is imported on first use only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paqad.errors import UsageError
from paqad.graph import walk
from paqad.graph.walk import DIRECTIONS, EDGE_WEIGHT, HOP_DECAY, MAX_HOPS

if TYPE_CHECKING:
    from paqad.index.reader import Index

__all__ = ["neighbors", "expand", "DIRECTIONS", "EDGE_WEIGHT", "HOP_DECAY", "MAX_HOPS"]

MAX_BUDGET = 500


def neighbors(index: Index, unit_id: str, hops: int = 1, direction: str = "both", budget: int = 50) -> list[dict]:
    """Units, files and unresolved names within ``hops`` of ``unit_id`` (a unit id or a file path),
    best first. Raises UsageError for an unknown id, hops outside 1..3, a bad direction or budget."""
    _check(hops, budget)
    if direction not in DIRECTIONS:
        raise UsageError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    from paqad.graph import model  # lazy: networkx takes 0.5 s to import, and only graph questions need it

    index.refresh()
    cg = model.load(index)
    g, unit_id = cg.graph, cg.node(unit_id)
    if unit_id not in g or g.nodes[unit_id].get("node") == "unresolved":
        raise UsageError(f"no unit or file {unit_id[:200]!r} in the index; ids are printed by `paqad rag search` (e.g. src/app.py::App.run)")
    return [walk.describe(g, item) for item in walk.walk(g, [(unit_id, 1.0)], hops, direction, budget)]


def expand(index: Index, seeds: list[tuple[str, float]], hops: int = 1, budget: int = 20) -> list[dict]:
    """Units near the seed units (both directions), not the seeds; unknown seed ids are skipped."""
    _check(hops, budget)
    from paqad.graph import model  # lazy: networkx, as in neighbors

    index.refresh()
    cg = model.load(index)
    g = cg.graph
    best: dict[str, float] = {}
    for node, score in seeds:
        node = cg.node(node)
        if node in g and g.nodes[node].get("node") == "unit":
            best[node] = max(best.get(node, 0.0), float(score))
    known = sorted(best.items(), key=lambda kv: -kv[1])
    items = walk.walk(g, known, hops, "both", budget, units_only=True)
    return [walk.describe(g, item) for item in items]


def _check(hops: int, budget: int) -> None:
    if not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
        raise UsageError(f"hops must be 1 to {MAX_HOPS}, not {hops!r}")
    if not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise UsageError(f"budget must be 1 to {MAX_BUDGET} nodes, not {budget!r}")
