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
from paqad.search.query import PROSE_SHARE, AnalyzedQuery

IDENT_MASK = 0b01011  # name, signature, relations


# Ranking prior by unit kind: agents asked about behaviour need the code that implements it;
# prose and config sections that merely mention it rank a little lower. Chosen on the rulers.
KIND_PRIOR = {"section": 0.75, "document": 0.75, "key": 0.75, "module": 0.6}
# Tests exercise behaviour but rarely are the answer to "where is X done"; they still rank when
# nothing else matches (a question about a test names the test's own words).
TEST_PRIOR = 0.6


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
    postings = {qt.term: con.execute("SELECT uid, w, mask FROM postings WHERE tid = ?", (qt.tid,)).fetchall() for qt in scored}
    _mark_prose(scored, postings)
    for qt in scored:
        weight = qt.idf
        for uid, w, mask in postings[qt.term]:
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


def _mark_prose(scored: list, postings: dict[str, list]) -> None:
    """Reclassify distinctive terms that this corpus only uses in prose (see query.PROSE_SHARE)."""
    for qt in scored:
        rows = postings[qt.term]
        if not rows:
            continue
        qt.ident_share = sum(1 for _, _, mask in rows if mask & IDENT_MASK) / len(rows)
        if qt.status == "distinctive" and qt.ident_share < PROSE_SHARE:
            qt.status = "prose"


def _apply_kind_prior(con: sqlite3.Connection, cands: dict[int, Candidate]) -> None:
    if not cands:
        return
    kinds = tuple(KIND_PRIOR)
    marks = ",".join("?" * len(kinds))
    sql = f"SELECT uid, kind, is_test FROM units WHERE kind IN ({marks}) OR is_test = 1"
    for uid, kind, is_test in con.execute(sql, kinds):
        cand = cands.get(uid)
        if cand is not None:
            cand.bm25f *= KIND_PRIOR.get(kind, 1.0) * (TEST_PRIOR if is_test else 1.0)
