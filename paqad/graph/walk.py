"""Best-first walks over the code graph: ``neighbors`` of one unit and ``expand`` of search seeds.

Scoring: a neighbour reached over the path e1..eh from a seed of score s scores
``s × Π (HOP_DECAY × EDGE_WEIGHT[type(ei)])``. Every factor is at most 0.5, so a node's best
path is found first by a best-first search (a max-heap on that product), and the walk stops as
soon as ``budget`` nodes are out: the cost is bounded by the budget, not by how many nodes lie
within ``hops``. Unresolved names (``?name``) are leaves, never walked through (every unit calls
``len``); files are walked through (a file links its units) but only units are returned by
``expand``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

    from paqad.jsontypes import JSONObject

HOP_DECAY = 0.5  # each hop halves the score
EDGE_WEIGHT = {"calls": 1.0, "inherits": 1.0, "contains": 0.8, "imports": 0.5}
MAX_HOPS = 3
DIRECTIONS = ("out", "in", "both")


@dataclass(order=True)
class _Item:
    neg_score: float
    order: int
    node: str = field(compare=False)
    hops: int = field(compare=False)
    path: tuple = field(compare=False)  # ((src, type, dst, forward), ...)


def walk(
    g: nx.DiGraph, seeds: list[tuple[str, float]], hops: int, direction: str, budget: int, units_only: bool = False
) -> Iterator[_Item]:
    """Yield up to ``budget`` nodes other than the seeds (only units with ``units_only``), in
    descending score, each once with its best path."""
    heap: list[_Item] = []
    counter = 0
    for node, score in seeds:
        heapq.heappush(heap, _Item(-score, counter, node, 0, ()))
        counter += 1
    done: set[str] = set()
    seed_ids = {n for n, _ in seeds}
    emitted = 0
    while heap and emitted < budget:
        item = heapq.heappop(heap)
        if item.node in done:
            continue
        done.add(item.node)
        if item.node not in seed_ids and (not units_only or g.nodes[item.node].get("node") == "unit"):
            yield item
            emitted += 1
        if item.hops >= hops or (item.hops and g.nodes[item.node].get("node") == "unresolved"):
            continue
        for nxt, etype, forward in _steps(g, item.node, direction):
            if nxt in done:
                continue
            score = -item.neg_score * HOP_DECAY * EDGE_WEIGHT[etype]
            step = (item.node, etype, nxt, forward)
            heapq.heappush(heap, _Item(-score, counter, nxt, item.hops + 1, item.path + (step,)))
            counter += 1


def _steps(g: nx.DiGraph, node: str, direction: str) -> Iterator[tuple[str, str, bool]]:
    if direction in ("out", "both"):
        for nxt, data in g.succ[node].items():
            yield nxt, data["type"], True
    if direction in ("in", "both"):
        for nxt, data in g.pred[node].items():
            yield nxt, data["type"], False


def evidence(path: tuple) -> str:
    """``a -calls-> b -contains-> c``; an edge walked backwards reads ``b <-calls- a``."""
    if not path:
        return ""
    parts = [path[0][0]]
    for _src, etype, dst, forward in path:
        parts.append(f"-{etype}->" if forward else f"<-{etype}-")
        parts.append(dst)
    return " ".join(parts)


def edges(g: nx.DiGraph, path: tuple) -> list[JSONObject]:
    """The path's edges in their real direction, with the unresolved marker where there is one."""
    out = []
    for src, etype, dst, forward in path:
        a, b = (src, dst) if forward else (dst, src)
        edge: JSONObject = {"src": a, "type": etype, "dst": b}
        marker = g.edges[a, b].get("unresolved")
        if marker:
            edge["unresolved"] = marker
        out.append(edge)
    return out


def describe(g: nx.DiGraph, item: _Item) -> JSONObject:
    """The public dict of one neighbour (the shape ``neighbors`` and ``expand`` return)."""
    data = g.nodes[item.node]
    out: JSONObject = {
        "id": item.node,
        "path": data.get("path"),
        "kind": data.get("kind"),
        "qualified_name": data.get("qualified_name", ""),
        "start_line": data.get("start_line"),
        "end_line": data.get("end_line"),
        "hops": item.hops,
        "score": round(-item.neg_score, 6),
        "evidence": evidence(item.path),
        "edges": edges(g, item.path),
    }
    if data.get("node") == "unresolved":
        out["unresolved"] = True
    return out
