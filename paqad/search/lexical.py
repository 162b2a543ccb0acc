"""Lexical candidates: sum the stored BM25F posting weights of the query's scored terms.

``relevance`` is the documented [0, 1] score every result carries: the share of the query's
rarity (Σ idf over its distinctive terms that the index knows) that the unit matches, each
matched term credited by the best field it appears in (``fields.FIELD_CREDIT``: name 1.0 …
body 0.5). 1.0 means every distinctive query term is in the unit's name.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from paqad.index.fields import FIELD_CREDIT, FIELDS, best_field
from paqad.search.query import AnalyzedQuery


# Ranking prior by unit kind: agents asked about behaviour need the code that implements it;
# prose and config sections that merely mention it rank a little lower. Chosen on the rulers.
KIND_PRIOR = {"section": 0.75, "document": 0.75, "key": 0.75, "module": 0.9}


@dataclass
class Candidate:
    uid: int
    bm25f: float = 0.0
    relevance: float = 0.0
    matched: dict[str, str] = field(default_factory=dict)  # term -> best field name
    rarity: float = 0.0  # Σ idf of matched distinctive terms (for the concentration test)


def score(con: sqlite3.Connection, query: AnalyzedQuery) -> list[Candidate]:
    """All units matching at least one scored term, best BM25F first."""
    scored = query.scored()
    total_rarity = sum(t.idf for t in scored) or 1.0
    cands: dict[int, Candidate] = {}
    for qt in scored:
        weight = qt.idf
        for uid, w, mask in con.execute("SELECT uid, w, mask FROM postings WHERE tid = ?", (qt.tid,)):
            cand = cands.get(uid)
            if cand is None:
                cand = cands[uid] = Candidate(uid)
            f = best_field(mask)
            cand.bm25f += weight * w
            if qt.status == "distinctive":
                cand.rarity += weight
            cand.relevance += weight * FIELD_CREDIT[f] / total_rarity
            cand.matched[qt.term] = FIELDS[f]
    _apply_kind_prior(con, cands)
    ranked = sorted(cands.values(), key=lambda c: (-c.bm25f, c.uid))
    for cand in ranked:
        cand.relevance = min(1.0, round(cand.relevance, 4))
    return ranked


def _apply_kind_prior(con: sqlite3.Connection, cands: dict[int, Candidate]) -> None:
    if not cands:
        return
    kinds = tuple(KIND_PRIOR)
    marks = ",".join("?" * len(kinds))
    for uid, kind in con.execute(f"SELECT uid, kind FROM units WHERE kind IN ({marks})", kinds):
        cand = cands.get(uid)
        if cand is not None:
            cand.bm25f *= KIND_PRIOR[kind]
