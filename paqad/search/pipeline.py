"""The one search pipeline every door calls: analyse → lexical candidates → evidence →
vector candidates → fusion → calibrated score → confidence floor → results.

``search`` applies the evidence gate and the floor and may return no results with a diagnosis;
``probe`` returns the top candidates before either, with every signal, for debugging. Neither
writes to the index. Without vectors (provider ``none``, or all still pending) it is lexical only.

The search reads an :class:`~paqad.index.reader.Index` (a session's, or the process's shared one
for ``root``), refreshed once at the start, so one answer comes from one index generation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paqad.index import status as status_mod
from paqad.index.reader import Index
from paqad.index.records import RESULT_FIELDS, SPAN_FIELDS, StoredUnit
from paqad.search import crosslingual, fusion, lexical, params, ranking, uptake_prior, vector
from paqad.search import evidence as evidence_mod
from paqad.search import issues as issues_mod
from paqad.search import query as query_mod
from paqad.search import rerank as rerank_mod
from paqad.search.live import LiveFiles
from paqad.search.params import SearchParams, Stage
from paqad.search.request import DEFAULT_RELIEF_FLOOR, DEFAULT_THRESHOLD, SearchRequest
from paqad.settings import SEARCH_BUDGET_CHARS

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

RESULT_SCHEMA_VERSION = 1
DEFAULT_BUDGET_CHARS = SEARCH_BUDGET_CHARS


@dataclass
class Result:
    id: str
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    signature: str
    start_line: int
    end_line: int
    score: float
    signals: dict[str, float]
    matched_terms: dict[str, str]
    docstring: str = ""
    source: str | None = None
    source_truncated: bool = False
    low_confidence: bool = False
    repository: str = ""  # set by a workspace search (``paqad.search.across``): which member answered


@dataclass
class SearchResponse:
    query: str
    answered: bool
    results: list[Result] = field(default_factory=list)
    diagnosis: dict | None = None
    evidence: dict = field(default_factory=dict)
    omitted_for_budget: int = 0
    candidates: int = 0
    elapsed_ms: float = 0.0
    mode: str = "lexical"
    vectors_pending: int = 0
    interim_vectors: bool = False  # the vector side used the stand-in's vectors (paqad.index.embedding.interim)
    vector_note: str | None = None  # why a query of a hybrid index was answered lexically (a deadline)
    rerank: dict | None = None  # what reranking did (None when off or not reached: a refused query)
    freshness: dict | None = None  # the index against the work tree; set by the doors (paqad.delivery.freshness)

    def to_dict(self) -> dict:
        """What ``dataclasses.asdict`` gives (every field, nested values copied), built directly:
        the service sends one per search and ``asdict``'s generic recursion was a tenth of it."""
        data = {name: _copied(getattr(self, name)) for name in _RESPONSE_FIELDS}
        data["results"] = [{name: _copied(getattr(r, name)) for name in _RESULT_FIELDS} for r in self.results]
        data["schema_version"] = RESULT_SCHEMA_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict) -> SearchResponse:
        """The response :meth:`to_dict` made (the service sends it over its socket)."""
        data = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**{**data, "results": [Result(**r) for r in data.get("results", [])]})


_RESPONSE_FIELDS = tuple(f.name for f in fields(SearchResponse))
_RESULT_FIELDS = tuple(f.name for f in fields(Result))


def _copied(value: Any) -> Any:
    """``value`` with its dicts, lists and tuples copied, as ``asdict`` copies a field's value."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


def search(
    root: Path,
    text: str,
    top_n: int = 20,
    source_chars: int = 1200,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    gate: bool = True,
    threshold: float = DEFAULT_THRESHOLD,
    relief_floor: float = DEFAULT_RELIEF_FLOOR,
    rerank: rerank_mod.RerankConfig | None = None,
    deadline: float | None = None,
    params: SearchParams | None = None,
) -> SearchResponse:
    """:func:`run` with the parameters spelled out, for tests and benchmarks that set them by hand,
    on the process's shared ``Index`` for ``root`` (opened on first use, reused after).

    Doors never call this: they build their request from the settings
    (:meth:`~paqad.search.request.SearchRequest.from_settings`) and call :func:`run`.
    """
    request = SearchRequest(text, top_n, source_chars, budget_chars, gate, threshold, relief_floor, rerank, deadline, params or SearchParams())
    return run(Index.shared(root), request)


def run(index: Index, request: SearchRequest) -> SearchResponse:
    """Answer ``request.query`` from ``index``; with ``gate`` off this is ``probe``.

    ``gate`` applies the evidence tests and the confidence floor: results scoring at or above
    ``threshold`` are returned; if none does, up to ``fusion.RELIEF_MAX`` at or above
    ``relief_floor``, marked ``low_confidence``; below that none, with ``best_score`` in the diagnosis.
    ``embed_deadline`` (``time.monotonic()``, the prompt hook's) bounds the query embedding: past it
    the answer is lexical, with ``vector_note`` saying so.
    ``rerank`` (see ``paqad.search.rerank``) reorders the top fused candidates of a query that was
    not refused, before the floor; scores are kept and any failure keeps the fused order.
    ``params`` (``paqad.search.params``) overrides tuned constants for this request only.
    """
    started = time.perf_counter()
    r = request
    with index.reading(), index.guard(), params.using(r.params), uptake_prior.using(r.file_prior):
        read = crosslingual.read_as(index, r.query)  # a Chinese question goes on in English
        resp = _search(index, read or r.query, r.top_n, r.source_chars, r.budget_chars, r.gate, started, r.threshold, r.relief_floor, r.rerank, r.embed_deadline)
    if read is not None:
        resp.query, resp.evidence["read_as"] = r.query, read  # what was asked, and how it was searched
    return resp


def _search(
    index: Index, text: str, top_n: int, source_chars: int, budget: int, gate: bool, started: float, threshold: float, relief: float,
    rerank: rerank_mod.RerankConfig | None = None, deadline: float | None = None,
) -> SearchResponse:
    n_units = index.meta().n_units
    analyzed = query_mod.analyze(index, text, n_units)
    where = vector.space(index)
    found = ranking.declared(index, ranking.shape(text))
    early = None if found else _early_refusal(index, analyzed, gate, where)
    if early is not None:
        resp = SearchResponse(query=text, answered=False, evidence=_evidence_summary(early), diagnosis=_diagnosis(early, None, False, 0.0))
        resp.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
        return resp
    scored = lexical.score(index, analyzed)
    ev = evidence_mod.assess(analyzed, scored, index)
    if found and ranking.shape(text).symbols and not ranking.shape(text).embedded:
        evidence_mod.declared(ev, sorted({u.name for u in found.values()}))
    try:
        hits = _vector_hits(where, text, ev, gate, deadline)
        late = False
    except vector.DeadlinePassed:
        hits, late = None, True
    vector_ok = hits is not None and fusion.vector_evidence(hits.top, hits.median, hits.bars, ev.coverage)
    # The veto needs every unit's vector: while embedding is still under way (``rag init`` made
    # lexical search ready first) the passage that answers may simply have none yet.
    if gate and hits is not None and where is not None and where.complete and fusion.vector_veto(ev, hits.top, hits.bars):
        ev.passed, ev.reason = False, "meaning_matches_nothing_here"
    answered = ev.passed or vector_ok
    resp = SearchResponse(query=text, answered=answered or not gate, candidates=scored.total, evidence=_evidence_summary(ev, hits, vector_ok))
    resp.mode = "hybrid" if hits is not None else "lexical"
    if late:
        resp.vector_note = "the query embedding did not finish before the deadline; answered from the lexical index alone"
    resp.vectors_pending = _pending(index, where, n_units)
    resp.interim_vectors = where is not None and where.interim and hits is not None
    ranked = ranking.apply(index, _ranked(scored, hits, ev.coverage, ranking.shape(text).report), text, found)
    fusion.calibrate(ranked, fusion.lexical_strength(ev), ev.passed, hits.top if vector_ok and hits else None, hits.bars if hits else None, ev.coverage)
    best = max((c.score for c in ranked[:top_n]), default=0.0)
    if gate and not answered:
        resp.diagnosis = _diagnosis(ev, hits, vector_ok, best)
    else:
        # Reranking reorders the deduplicated pool (the same passages the fused order would show, and
        # more when the pool is larger than top_n), then the floor decides on the kept scores.
        pool = rerank.pool if rerank is not None and rerank.mode != "off" else top_n
        top = _dedupe_parts(index, ranked, max(top_n * ranking.DIVERSITY_WIDEN, pool, issues_mod.pool(text)))
        top = _diversify(index, top, text)
        top, rerank_scores, outcome = rerank_mod.apply(rerank, text, top, lambda c: c.uid, lambda uids: _rerank_texts(index, uids))
        top = top[:top_n]
        resp.rerank = outcome.to_dict() if outcome else None
        confident = len(top)
        if gate:
            top, confident = fusion.floor([c.score for c in top], threshold, relief, top)
            if not top:
                resp.answered = False
                resp.diagnosis = _diagnosis(ev, hits, vector_ok, best, below_floor=True)
        lexical.fill_matched([c for c in top if not c.matched], scored.terms, scored.postings)
        units = index.units([c.uid for c in top], RESULT_FIELDS)
        resp.results = _results(units, top, ranked[0].bm25f if ranked else 1.0, confident, rerank_scores)
        resp.omitted_for_budget = _attach_sources(index.root, units, resp.results, source_chars, budget)
    resp.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return resp


EARLY_REASONS = ("no_query_term_in_index", "only_ubiquitous_terms_matched", "only_prose_words_matched", "too_little_of_the_query_matched")


def _pending(index: Index, where: vector.Space | None, n_units: int) -> int:
    """Units still without the model's vector (the stand-in's may cover them meanwhile)."""
    if where is not None and not where.interim:
        return max(0, n_units - where.matrix.size)
    if not index.meta().has_vectors:
        return 0
    mat = vector.matrix(index)
    return max(0, n_units - (mat.size if mat is not None else 0))


def _early_refusal(index: Index, analyzed: query_mod.AnalyzedQuery, gate: bool, where: vector.Space | None) -> evidence_mod.Evidence | None:
    """Refuse before reading any posting when the answer is already known from document
    frequencies alone: coverage computed before prose-only terms are marked is an upper bound,
    so a query that fails it now fails it after scoring too. Prose-only terms are then marked from
    per-term counts computed inside SQLite, so the reason is the one full scoring would give.
    Only for lexical-only indexes (with vectors, the vector-side test may still rescue it)."""
    if not gate or where is not None:
        return None
    ev = evidence_mod.assess(analyzed, lexical.Scored([], 0))
    if ev.reason not in EARLY_REASONS:
        return None
    lexical.mark_prose_counts(index, analyzed.terms)
    ev = evidence_mod.assess(analyzed, lexical.Scored([], 0))
    return ev if ev.reason in EARLY_REASONS else None


def _vector_hits(
    where: vector.Space | None, text: str, ev: evidence_mod.Evidence, gate: bool, deadline: float | None = None,
) -> vector.VectorHits | None:
    """Cosines of the query, when the index has vectors and the answer could still use them.
    The model is not loaded when the lexical gate refused for a reason vectors may not overrule."""
    if where is None or not where.matrix.size:
        return None
    if gate and not ev.passed and ev.reason not in fusion.VECTOR_RESCUE_REASONS:
        return None
    qvec = vector.embed_query(where, text, deadline)
    return None if qvec is None else vector.similarities(where.matrix, qvec, where.bars)


def _ranked(scored: lexical.Scored, hits: vector.VectorHits | None, coverage: float, report: bool = False) -> list[fusion.Fused]:
    if hits is None:
        # positional (uid, bm25f, relevance, cosine, lexical_rank, vector_rank, fused, score, matched): keywords cost 1.8x per Fused
        out = [fusion.Fused(c.uid, c.bm25f, c.relevance, None, i, None, c.bm25f, 0.0, c.matched) for i, c in enumerate(scored.ranked, 1)]
        return out
    lex = [(c.uid, c.bm25f, c.relevance) for c in scored.ranked]
    return fusion.fuse(lex, hits.ranked(vector.POOL), hits.by_uid([u for u, _, _ in lex]), lexical_weight=fusion.blend_weight(coverage, report))


def _evidence_summary(ev: evidence_mod.Evidence, hits: vector.VectorHits | None = None, vector_ok: bool = False) -> JSONObject:
    out: JSONObject = {"passed": ev.passed, "reason": ev.reason, "coverage": ev.coverage, "concentration": ev.concentration, "long_query": ev.long_query}
    if ev.declared:
        out["declared"] = ev.declared
    if hits is not None:
        out["vector"] = _vector_summary(hits, vector_ok, ev.coverage)
    return out


def _vector_summary(hits: vector.VectorHits, vector_ok: bool, coverage: float) -> JSONObject:
    """The vector-side test's figures and the bars that applied (the top bar depends on the query's
    lexical coverage: ``fusion.VectorBars.top_for``)."""
    return {
        "passed": vector_ok, "top_cosine": round(hits.top, 4), "median_cosine": round(hits.median, 4),
        "margin": round(hits.top - hits.median, 4), "z": round(hits.z, 3),
        "bars": {"top_cosine": hits.bars.top_for(coverage), "margin": hits.bars.margin},
    }


def _diagnosis(ev: evidence_mod.Evidence, hits: vector.VectorHits | None, vector_ok: bool, best_score: float, below_floor: bool = False) -> JSONObject:
    """Why search stayed silent: the evidence figures, the vector test, and the best calibrated score."""
    data = ev.diagnosis()
    if hits is not None:
        data["vector"] = _vector_summary(hits, vector_ok, ev.coverage)
    data["best_score"] = round(best_score, 4)
    if below_floor:
        data["reason"] = "below_relief_floor"
        data["hint"] = "the best passage scored below the relief floor; nothing here answers this well enough"
    return data


DROP_CONTAINERS = True


def _dedupe_parts(index: Index, ranked: list[fusion.Fused], top_n: int) -> list[fusion.Fused]:
    """Keep the best-scoring part of a split unit, and drop a container (a class, a module part)
    ranked below a unit it contains: its text would repeat a passage already delivered.
    A more specific unit ranked below its container is kept: it is the sharper passage."""
    out: list[fusion.Fused] = []
    seen: set[object] = set()
    spans: dict[str, list[tuple[int, int]]] = {}
    units: dict[int, StoredUnit] = {}
    window, read = top_n + 8, 0  # spans are read a window at a time: most answers need only the first
    drop = P.DROP_CONTAINERS
    for i, cand in enumerate(ranked):
        if len(out) >= top_n:
            break
        if i >= read:
            units.update(index.units([c.uid for c in ranked[read : read + window]], SPAN_FIELDS))
            read += window
        u = units.get(cand.uid)
        if u is None:
            continue
        path, start, end = u.path, u.start_line, u.end_line
        key: object = (path, u.qualified_name, u.kind) if u.parts > 1 else cand.uid
        contains = any(start <= a and b <= end and (a, b) != (start, end) for a, b in spans.get(path, []))
        if key in seen or (drop and contains):
            continue
        seen.add(key)
        spans.setdefault(path, []).append((start, end))
        out.append(cand)
    return out


def _diversify(index: Index, top: list[fusion.Fused], text: str) -> list[fusion.Fused]:
    """The deduplicated pool in delivery order: further passages of one file behind other files'
    (``ranking.diversify``); scores unchanged."""
    if issues_mod.speaks(text):  # an issue text: its files first, then the functions inside them
        return issues_mod.order(index, top, text)
    if ranking.P.DIVERSITY >= 1.0:
        return top
    paths = index.units([c.uid for c in top], ("uid", "path"))
    missing = StoredUnit()
    free = ranking.P.TOP_FILE_FREE if ranking.shape(text).report else 0
    return ranking.diversify(top, lambda c: c.fused, lambda c: paths.get(c.uid, missing).path, free)


def _rerank_texts(index: Index, uids: list[int]) -> list[str]:
    """What the reranker reads of each candidate, in the order of ``uids``."""
    units = index.units(uids, ("path", "qualified_name", "text"))
    missing = StoredUnit()
    return [rerank_mod.document_text(u.path, u.qualified_name, u.text) for u in (units.get(uid, missing) for uid in uids)]


def _results(
    units: dict[int, StoredUnit], cands: list[fusion.Fused], top_score: float, confident: int, rerank_scores: dict[int, float] | None = None
) -> list[Result]:
    """Results for ``cands``; those after the first ``confident`` are marked low-confidence."""
    out = []
    for i, cand in enumerate(cands):
        u = units.get(cand.uid)
        if u is None:
            continue
        signals = {"bm25f": round(cand.bm25f, 4), "bm25f_ratio": round(cand.bm25f / top_score, 4) if top_score else 0.0, "relevance": cand.relevance}
        if cand.cosine is not None or cand.vector_rank is not None:
            signals["cosine"] = round(cand.cosine or 0.0, 4)
        signals["fused"] = round(cand.fused, 6)
        signals["calibrated"] = cand.score
        if rerank_scores and cand.uid in rerank_scores:
            signals["rerank"] = round(rerank_scores[cand.uid], 6)
        out.append(
            Result(
                id=u.id, path=u.path, language=u.language, kind=u.kind, name=u.name, qualified_name=u.qualified_name, signature=u.signature,
                start_line=int(u.start_line), end_line=int(u.end_line), docstring=u.docstring[:400], score=cand.score, signals=signals,
                matched_terms=dict(sorted(cand.matched.items())), low_confidence=i >= confident,
            )
        )
    return out


def _attach_sources(root: Path, units: dict[int, StoredUnit], results: list[Result], per_result: int, budget: int) -> int:
    """Each result's source once, trimmed to ``per_result`` chars, until ``budget`` is spent. The
    source is what the live file holds at the unit's lines (``paqad.search.live``): a result whose
    stored text the file does not hold shows the file's lines, without the row's docstring and
    signature; one whose file cannot be read shows no source."""
    live = LiveFiles(root)
    rows = {u.id: u for u in units.values()}
    omitted = 0
    for res in results:
        text, kept = live.source(rows[res.id])
        if not kept:
            res.docstring, res.signature = "", ""
        if per_result <= 0 or text is None:
            continue
        if budget <= 0:
            omitted += 1
            continue
        limit = min(per_result, budget)
        res.source = text[:limit]
        res.source_truncated = len(text) > limit
        budget -= len(res.source)
    return omitted


def status(root: Path) -> dict[str, Any]:
    """Index facts for ``rag status`` (kept here for the doors that import it from the pipeline)."""
    return status_mod.status(root)
