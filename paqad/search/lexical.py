"""Lexical candidates: sum the stored BM25F posting weights of the query's scored terms.

``relevance`` is the documented [0, 1] score every result carries: the share of the query's
rarity (Σ idf over the terms it scores) that the unit matches, each matched term credited by the
best field it appears in (``fields.FIELD_CREDIT``: name 1.0 … body 0.5). 1.0 means every
scored query term is in the unit's name. Ranking priors (tests, module and prose units) are
baked into the stored posting weights at index time (``fields.unit_prior``), so a query only
sums arrays: posting lists are accumulated with numpy, indexed by unit id.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np

from paqad.index import postings as postings_mod
from paqad.index.fields import FIELD_CREDIT, FIELDS, best_field
from paqad.search.query import PROSE_SHARE, AnalyzedQuery, QueryTerm

IDENT_MASK = 0b01011  # name, signature, relations
POOL = 200  # candidates materialised for evidence, dedupe and output
# Ranking weight of a term by status: words this corpus uses everywhere or only in prose still
# rank, but count for less than the distinctive ones. Chosen on the rulers.
STATUS_WEIGHT = {"distinctive": 1.0, "ubiquitous": 1.0, "prose": 0.3}
_CREDIT_BY_MASK = np.array([FIELD_CREDIT[best_field(m)] if m else 0.0 for m in range(1 << len(FIELDS))])


@dataclass
class Candidate:
    uid: int
    bm25f: float = 0.0
    relevance: float = 0.0
    matched: dict[str, str] = field(default_factory=dict)  # term -> best field name
    rarity: float = 0.0  # Σ idf of matched distinctive terms (for the concentration test)


@dataclass
class Scored:
    """The ranked pool, how many units matched at all, and the postings to explain matches."""

    ranked: list[Candidate]
    total: int
    terms: list[QueryTerm] = field(default_factory=list)
    postings: dict = field(default_factory=dict)

    def explain(self, cands: list[Candidate]) -> None:
        """Fill ``matched`` (term → best field) for the candidates that will be shown."""
        fill_matched([c for c in cands if not c.matched], self.terms, self.postings)


def score(con: sqlite3.Connection, query: AnalyzedQuery, pool: int = POOL) -> Scored:
    """Units matching at least one scored term, best BM25F first (the top ``pool`` of them)."""
    scored = query.scored()
    postings = {qt.term: _postings(con, qt) for qt in scored}
    _mark_prose(scored, postings)
    size = 1 + max((int(p[0].max()) for p in postings.values() if p[0].size), default=0)
    bm25, rel, rarity = np.zeros(size), np.zeros(size), np.zeros(size)
    total_rarity = sum(t.idf for t in scored) or 1.0
    for qt in scored:
        uids, w, mask = postings[qt.term]
        bm25[uids] += qt.idf * STATUS_WEIGHT.get(qt.status, 1.0) * w
        rel[uids] += qt.idf * _CREDIT_BY_MASK[mask] / total_rarity
        if qt.status == "distinctive":
            rarity[uids] += qt.idf
    matched = np.flatnonzero(bm25)
    order = matched[np.lexsort((matched, -bm25[matched]))][:pool]
    ranked = [Candidate(int(u), float(bm25[u]), min(1.0, round(float(rel[u]), 4)), {}, float(rarity[u])) for u in order]
    return Scored(ranked, int(matched.size), scored, postings)


def _postings(con: sqlite3.Connection, qt: QueryTerm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if qt.tid is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    return postings_mod.read(con, qt.tid)


def mark_prose_counts(con: sqlite3.Connection, terms: list[QueryTerm]) -> None:
    """The same reclassification as scoring does, from the field masks alone: used to refuse a
    query before scoring it."""
    for qt in terms:
        if qt.status != "distinctive" or qt.tid is None:
            continue
        total, ident = postings_mod.counts(con, qt.tid, IDENT_MASK)
        if total:
            qt.ident_share = (ident or 0) / total
            if qt.ident_share < PROSE_SHARE:
                qt.status = "prose"


def _mark_prose(scored: list[QueryTerm], postings: dict) -> None:
    """Reclassify distinctive terms that this corpus only uses in prose (see query.PROSE_SHARE)."""
    for qt in scored:
        mask = postings[qt.term][2]
        if not mask.size:
            continue
        qt.ident_share = float(np.count_nonzero(mask & IDENT_MASK)) / mask.size
        if qt.status == "distinctive" and qt.ident_share < PROSE_SHARE:
            qt.status = "prose"


def fill_matched(ranked: list[Candidate], scored: list[QueryTerm], postings: dict) -> None:
    """Which query terms each pooled candidate matched, and in which best field (for output)."""
    if not ranked:
        return
    pool = np.array([c.uid for c in ranked])
    for qt in scored:
        uids, _, mask = postings[qt.term]
        if not uids.size:
            continue
        sorter = np.argsort(uids)
        pos = np.searchsorted(uids, pool, sorter=sorter)
        pos = np.clip(pos, 0, uids.size - 1)
        hits = uids[sorter[pos]] == pool
        for cand, hit, p in zip(ranked, hits, pos):
            if hit:
                cand.matched[qt.term] = FIELDS[best_field(int(mask[sorter[p]]))]
