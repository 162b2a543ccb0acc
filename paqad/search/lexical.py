"""Lexical candidates: sum the stored BM25F posting weights of the query's scored terms.

``relevance`` is the documented [0, 1] score every result carries: the share of the query's
rarity (Σ idf over the terms it scores) that the unit matches, each matched term credited by the
best field it appears in (``fields.FIELD_CREDIT``: name 1.0 … body 0.5). 1.0 means every
scored query term is in the unit's name. Ranking priors (tests, module and prose units) are
baked into the stored posting weights at index time (``fields.unit_prior``), so a query only
sums arrays: posting lists are accumulated with numpy, indexed by unit id.

A process that has not loaded numpy and has scored only a few thousand postings so far (a
one-off `rag search` or a prompt hook on a small repository) sums them in plain Python instead:
the same operations in the same order, so the same floats and the same ranking (tested on every
ruler question), without the ~0.1 s numpy import. Anything larger, any process past that budget
(a warm server), and any process that already has numpy (a hybrid index) takes the numpy path.
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from paqad.index.fields import FIELD_CREDIT, FIELDS, best_field
from paqad.search import query as query_mod
from paqad.search.query import PROSE_SHARE, AnalyzedQuery, QueryTerm
from paqad.tokenize import terms

if TYPE_CHECKING:
    import numpy as np

    from paqad.index.reader import Index

IDENT_MASK = 0b01011  # name, signature, relations
_QUERY_WORD = re.compile(r"[^\W\d_]\w*")  # a word as the query wrote it (paqad.tokenize's word)
POOL = 200  # candidates materialised for evidence, dedupe and output
# Ranking weight of a term by status: words this corpus uses everywhere or only in prose still
# rank, but count for less than the distinctive ones. Chosen on the rulers.
STATUS_WEIGHT = {"distinctive": 1.0, "ubiquitous": 1.0, "prose": 0.3}


def _weight(status: str) -> float:
    """A term's ranking weight; another form of a query word (``query.VARIANTS``) counts at
    ``query.VARIANT_WEIGHT``."""
    if status == "variant":
        return query_mod.VARIANT_WEIGHT
    return STATUS_WEIGHT.get(status, 1.0)
_CREDIT = [FIELD_CREDIT[best_field(m)] if m else 0.0 for m in range(1 << len(FIELDS))]
_BEST_FIELD = [FIELDS[best_field(m)] for m in range(1 << len(FIELDS))]  # a posting mask's best field, by name
# Postings a process without numpy may sum in plain Python, over all its queries: ~1 µs each, so
# at most about what importing numpy costs (~0.1 s). A one-shot CLI or hook process on a small
# repository never imports numpy; a long-lived server switches to numpy once this is spent.
PY_MAX_POSTINGS = 30_000
_plain_spent = 0


@dataclass(slots=True)  # slots: 200 are made per query (the pool); a third less CPU each
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


def score(index: Index, query: AnalyzedQuery, pool: int = POOL) -> Scored:
    """Units matching at least one scored term, best BM25F first (the top ``pool`` of them)."""
    global _plain_spent
    scored = query.scored()
    volume = sum(qt.df for qt in scored)
    if "numpy" not in sys.modules and _plain_spent + volume <= PY_MAX_POSTINGS:
        _plain_spent += volume
        return _score_plain(index, scored, pool)
    return _score_numpy(index, scored, pool)


def _score_numpy(index: Index, scored: list[QueryTerm], pool: int) -> Scored:
    import numpy as np  # lazily: a lexical search of a small index never loads numpy

    kept = index.cached("lexical-postings", _Kept)
    postings = {qt.term: _postings(index, qt, kept) for qt in scored}
    derived = {qt.term: _derived(kept, qt.tid, postings[qt.term]) for qt in scored}
    _mark_prose(scored, {t: (d.idents, len(postings[t][2])) for t, d in derived.items()})
    size = 1 + max((d.top for d in derived.values() if d.top >= 0), default=0)
    bm25, rel, rarity = np.zeros(size), np.zeros(size), np.zeros(size)
    total_rarity = sum(t.idf for t in scored if t.status != "variant") or 1.0
    for qt in scored:
        uids, w, _ = postings[qt.term]
        k = _weight(qt.status)
        bm25[uids] += qt.idf * k * w
        rel[uids] += qt.idf * (k if qt.status == "variant" else 1.0) * derived[qt.term].credit / total_rarity
        if qt.status == "distinctive":
            rarity[uids] += qt.idf
    matched = np.flatnonzero(bm25)
    order = matched[np.lexsort((matched, -bm25[matched]))][:pool]
    relevance = np.minimum(1.0, rounded(rel[order], 4))  # min(1.0, round(r, 4)) of each, in one pass
    top = zip(order.tolist(), bm25[order].tolist(), relevance.tolist(), rarity[order].tolist())
    ranked = [Candidate(u, b, r, {}, rr) for u, b, r, rr in top]
    return Scored(ranked, int(matched.size), scored, postings)


def rounded(values: np.ndarray, digits: int) -> np.ndarray:
    """``round(v, digits)`` of each float, the very float Python's ``round`` gives, without a
    Python call per value (a query rounds its 200 candidates' relevance).

    Python rounds the exact binary value to ``digits`` decimals (half to even) and returns the
    float nearest that decimal; ``rint(v * 10**digits) / 10**digits`` gives the same float except
    where the product's own rounding (half an ulp) could cross a .5 boundary: those values, and
    any too large or not finite, are rounded by Python. For ``digits`` up to 15."""
    import numpy as np  # lazily: a lexical search of a small index never loads numpy

    scale = 10.0**digits
    scaled = values * scale
    out = np.rint(scaled) / scale
    magnitude = np.abs(scaled)
    unsure = ~(magnitude < 2.0**52) | (np.abs(scaled - np.floor(scaled) - 0.5) <= 1e-9 * np.maximum(1.0, magnitude))
    for i in np.flatnonzero(unsure).tolist():
        out[i] = round(float(values[i]), digits)
    return out


def _score_plain(index: Index, scored: list[QueryTerm], pool: int) -> Scored:
    """``_score_numpy`` without numpy: each float is computed by the same operations in the same
    order (``idf * weight`` times the posting's weight, added in term order), so results match."""
    postings = {qt.term: index.posting_arrays(qt.tid) if qt.tid is not None else ([], [], []) for qt in scored}
    _mark_prose(scored, {t: (sum(1 for m in p[2] if m & IDENT_MASK), len(p[2])) for t, p in postings.items()})
    bm25: dict[int, float] = {}
    rel: dict[int, float] = {}
    rarity: dict[int, float] = {}
    total_rarity = sum(t.idf for t in scored if t.status != "variant") or 1.0
    for qt in scored:
        uids, ws, masks = postings[qt.term]
        k = qt.idf * _weight(qt.status)
        r = qt.idf * (_weight(qt.status) if qt.status == "variant" else 1.0)
        distinctive = qt.status == "distinctive"
        for u, w, m in zip(uids, ws, masks):
            bm25[u] = bm25.get(u, 0.0) + k * w
            rel[u] = rel.get(u, 0.0) + r * _CREDIT[m] / total_rarity
            if distinctive:
                rarity[u] = rarity.get(u, 0.0) + qt.idf
    matched = [u for u, v in bm25.items() if v != 0.0]
    order = sorted(matched, key=lambda u: (-bm25[u], u))[:pool]
    ranked = [Candidate(u, bm25[u], min(1.0, round(rel[u], 4)), {}, rarity.get(u, 0.0)) for u in order]
    return Scored(ranked, len(matched), scored, postings)


class _Kept(dict):
    """Posting lists read in one index generation (``Index.cached``), up to ``KEPT_POSTINGS`` postings:
    a warm process reads a term's list from SQLite once, not once per query; beside each, what
    scoring derives from that list alone (``derived``), computed once too."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.derived: dict[int, _Derived] = {}


@dataclass(frozen=True)
class _Derived:
    """What scoring needs of one posting list besides the list: its largest unit id (-1: empty),
    how many postings have an identifier field (``IDENT_MASK``), and each posting's field credit."""

    top: int
    idents: int
    credit: np.ndarray


def _derived(kept: _Kept, tid: int | None, posting: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Derived:
    """``posting``'s :class:`_Derived`, kept with the list (a fresh one for a term the index lacks).
    Computed as a query computed it (numpy's ``max``, the mask's count, ``credit[mask]``): same values."""
    found = kept.derived.get(tid) if tid is not None else None
    if found is None:
        import numpy as np  # lazily: a lexical search of a small index never loads numpy

        uids, _, mask = posting
        credit = np.array(_CREDIT)[mask]
        credit.flags.writeable = False
        found = _Derived(int(uids.max()) if uids.size else -1, int((mask & IDENT_MASK).astype(bool).sum()), credit)
        if tid is not None and tid in kept:
            kept.derived[tid] = found
    return found


KEPT_POSTINGS = 400_000  # ~10 MB of arrays per index; past it the kept lists are dropped and read again


def _postings(index: Index, qt: QueryTerm, kept: _Kept | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if qt.tid is None:
        import numpy as np  # lazily: a lexical search of a small index never loads numpy

        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    if kept is None:
        return index.postings(qt.tid)
    hit = kept.get(qt.tid)
    if hit is None:
        hit = index.postings(qt.tid)
        for part in hit:
            part.flags.writeable = False  # shared by every later query of this generation
        if kept.size + len(hit[0]) > KEPT_POSTINGS:
            kept.clear()
            kept.derived.clear()
            kept.size = 0
        kept[qt.tid] = hit
        kept.size += len(hit[0])
    return hit


def mark_prose_counts(index: Index, terms: list[QueryTerm]) -> None:
    """The same reclassification as scoring does, from the field masks alone: used to refuse a
    query before scoring it."""
    for qt in terms:
        if qt.status != "distinctive" or qt.tid is None:
            continue
        total, ident = index.posting_counts(qt.tid, IDENT_MASK)
        if total:
            qt.ident_share = (ident or 0) / total
            if qt.ident_share < PROSE_SHARE:
                qt.status = "prose"


def _mark_prose(scored: list[QueryTerm], counts: dict[str, tuple[int, int]]) -> None:
    """Reclassify distinctive terms that this corpus only uses in prose (see query.PROSE_SHARE), from
    each term's (postings with an identifier field, postings)."""
    for qt in scored:
        idents, total = counts[qt.term]
        if not total:
            continue
        qt.ident_share = idents / total
        if qt.status == "distinctive" and qt.ident_share < PROSE_SHARE:
            qt.status = "prose"


class Matchable(Protocol):
    """A ranked unit whose matched terms are filled for output (a lexical ``Candidate`` or a ``fusion.Fused``)."""

    uid: int
    matched: dict[str, str]


def fill_matched(ranked: Sequence[Matchable], scored: list[QueryTerm], postings: dict) -> None:
    """Which query terms each shown candidate matched, and in which best field (for output).
    Posting lists are sorted by unit id (numpy arrays or ``array``s alike): a binary search each."""
    wanted = [c.uid for c in ranked]
    sought = None
    for qt in scored:
        uids, _, mask = postings[qt.term]
        n = len(uids)
        if not n or not ranked:
            continue
        if hasattr(uids, "searchsorted"):  # numpy: every candidate's binary search in one call
            import numpy as np  # loaded already: the postings are numpy arrays

            if sought is None:
                sought = np.array(wanted, dtype=uids.dtype)
            at = np.minimum(uids.searchsorted(sought), n - 1)  # past the end: the last posting, a smaller uid
            for cand, u, m in zip(ranked, uids[at].tolist(), mask[at].tolist()):
                if u == cand.uid:
                    cand.matched[qt.term] = _BEST_FIELD[m]
            continue
        for cand in ranked:
            p = bisect.bisect_left(uids, cand.uid)
            if p < n and uids[p] == cand.uid:
                cand.matched[qt.term] = _BEST_FIELD[int(mask[p])]


def evidence_words(index: Index, text: str) -> dict[str, str]:
    """The query's evidence terms (distinctive, not prose-only in this corpus), each with the word
    of the query it came from: ``{"cooki": "cookie", "sign": "signed"}``. For people reading a
    result's ``matched`` terms: stems and the words every unit has ("the", "is", "where") left out,
    decided by the corpus as the evidence test decides, not by a stopword list."""
    analyzed = query_mod.analyze(index, text, index.meta().n_units)
    mark_prose_counts(index, analyzed.terms)
    keep = {t.term for t in analyzed.terms if t.status == "distinctive"}
    words: dict[str, str] = {}
    for word in _QUERY_WORD.findall(text):
        for term in terms(word):
            if term in keep:
                words.setdefault(term, word)
    return words
