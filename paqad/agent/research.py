"""``research``: search, then graph expansion from the answered results while it adds evidence.

*Evidence* here is concrete: the query's distinctive terms (the ones the evidence gate counts:
known to the index, not ubiquitous), found in a unit's indexed fields by the index's own
tokenizer, so a neighbour "contains" a term where ranking would have matched it. The answer *covers* the terms
its results contain. A neighbour is kept when it contains at least one query term; it *adds
evidence* when it contains a term that neither the results nor an earlier neighbour contained.

Hop ``h`` asks the graph for the units ``h`` edges away from the answered results (so each
neighbour's ``edges`` is the whole path from a result) and keeps the new ones that contain a
query term. Expansion goes one hop further only while the last hop added evidence, and stops at
``hops`` (at most 3). ``expansion.stopped`` says why it stopped: ``not_answered`` (search stayed
silent: nothing to expand from), ``hops`` (the hop limit, including 0), ``no_new_evidence``,
``all_terms_covered`` (nothing left to find), or ``no_graph`` (graph support not installed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

from paqad.index.records import StoredUnit
from paqad.search import query as query_mod
from paqad.tokenize import terms

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.jsontypes import JSONObject

MAX_HOPS = 3
_FIELDS = ("name", "qualified_name", "signature", "docstring", "calls", "imports", "bases", "path", "text")


def query_terms(index: Index, text: str) -> dict[int, str]:
    """The query's distinctive terms as {term id: term}."""
    analyzed = query_mod.analyze(index, text, index.meta().n_units)
    return {t.tid: t.term for t in analyzed.terms if t.status == "distinctive" and t.tid is not None}


def terms_in(index: Index, unit_ids: list[str], wanted: dict[int, str]) -> set[str]:
    """Which of ``wanted`` occur in any of the units ``unit_ids``: the unit's fields (name,
    signature, docstring, relations, path, body) through the index's own tokenizer, so a term
    counts where ranking would have matched it."""
    if not unit_ids or not wanted:
        return set()
    targets = set(wanted.values())
    found: set[str] = set()
    for unit in index.units_by_id(unit_ids, _FIELDS).values():
        found.update(targets.intersection(terms(_searchable(unit))))
    return found


def _searchable(u: StoredUnit) -> str:
    """The unit's indexed fields as one text: its names, signature, docstring, relations (the
    names themselves, not their JSON encoding), path and body."""
    return " ".join(str(v) for v in [u.name, u.qualified_name, u.signature, u.docstring, *u.calls, *u.imports, *u.bases, u.path, u.text])


class Expansion(TypedDict, total=False):
    """``expansion`` in a research answer: how far it went, and why it stopped."""

    hops_run: int
    query_terms: list[str]
    covered_by_results: list[str]
    stopped: str
    missing_terms: list[str]


def expand(index: Index, answer: JSONObject, hops: int, per_hop: int) -> JSONObject:
    """Add ``related`` and ``expansion`` to a search answer (a ``SearchResponse`` dict)."""
    wanted = query_terms(index, str(answer["query"]))
    found = answer.get("results")
    results = [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []
    covered = terms_in(index, [str(r["id"]) for r in results], wanted)
    info: Expansion = {"hops_run": 0, "query_terms": sorted(wanted.values()), "covered_by_results": sorted(covered)}
    related: list[JSONObject] = []
    if answer.get("answered") and results:
        info["stopped"] = _expand_hops(index, results, wanted, covered, (hops, per_hop), related, info)
    else:
        info["stopped"] = "not_answered"
    info["missing_terms"] = sorted(set(wanted.values()) - covered)
    return {**answer, "related": related, "expansion": cast("JSONObject", info)}  # a TypedDict of JSON values


def _expand_hops(
    index: Index, results: list[dict], wanted: dict[int, str], covered: set[str],
    limits: tuple[int, int], related: list[JSONObject], info: Expansion,
) -> str:
    """Hop by hop while a hop adds evidence; fills ``related`` and ``covered``; returns why it stopped."""
    hops, per_hop = limits
    try:
        from paqad import graph  # lazy: an ImportError (no graph support) is the answer "no_graph"
    except ImportError:
        return "no_graph"
    seeds = [(r["id"], float(r.get("score") or 0.0)) for r in results]
    seen = {r["id"] for r in results}
    for hop in range(1, min(hops, MAX_HOPS) + 1):
        info["hops_run"] = hop
        added: set[str] = set()
        for node in graph.expand(index, seeds, hops=hop, budget=per_hop * hop):
            if node.get("hops") != hop or node.get("id") in seen:
                continue
            seen.add(node["id"])
            has = terms_in(index, [node["id"]], wanted)
            if not has:
                continue
            new = has - covered - added
            related.append({**node, "query_terms": sorted(has), "new_terms": sorted(new), "adds_evidence": bool(new)})
            added |= new
        covered |= added
        if not added:
            return "no_new_evidence"
        if not set(wanted.values()) - covered:
            return "all_terms_covered"
    return "hops"
