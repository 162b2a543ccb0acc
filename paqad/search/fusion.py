"""Fusion of the lexical and vector rankings, the calibrated score, and the confidence floor.

Pure functions over plain numbers (no I/O). Their constants are read through ``P`` (the request's
``SearchParams``, ``paqad.search.params``), so ``python -m benchmarks ablate --model`` changes them
per request, on every ruler at once.

Fusion: w · bm25f(u)/max bm25f + (1 − w) · cosine rescaled to [0, 1] over the vector pool,
w = BLEND_LEXICAL (0.7), or BLEND_LEXICAL_WEAK (0.3) when the query's lexical coverage is weak.
On our rulers (probe, k = 10) this blend beat reciprocal rank fusion (Cormack et al. 2009, k = 60):
all questions MRR 0.469 vs 0.410, so RRF was removed (it lived here until Dec 7, commit 6ede2eb).

The calibrated score (``calibrated``) is what the floor compares; see its docstring.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from paqad.search import evidence as ev_mod
from paqad.search.evidence import Evidence
from paqad.search.lexical import rounded
from paqad.search.params import Stage

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)
#: Lexical share of the blend; BLEND_LEXICAL_WEAK when most of the query's distinctive words are not
#: in the corpus (coverage below WEAK_COVERAGE): the lexical ranking then has little to stand on.
#: 0.8 was fitted on our rulers; 0.7 chosen on semble half A with the default model (gated 0.8457 →
#: 0.8493) and confirmed on half B (0.8324 → 0.8353); our rulers, gated MRR 0.4009 → 0.3976 (ten
#: questions move, both ways). benchmarks/README.md, "Names the tokenizer lost...".
BLEND_LEXICAL = 0.7
BLEND_LEXICAL_WEAK = 0.3
WEAK_COVERAGE = 0.4
#: A pasted report (``ranking.QueryShape.report``): its words lead. The model reads only the first
#: 256 tokens of a long issue, and what locates it is lexical (paths, frames, names). SWE-bench
#: Lite sympy with the default model, 46 issues: file Acc@1 54.3 at 0.7, 58.7 at 1.0 (lexical
#: alone: 58.7); the vector side still adds its candidates. No semble query is a report; the 12
#: report-length questions of our rulers rank as they did at 0.7.
BLEND_LEXICAL_REPORT = 1.0


@dataclass(slots=True)  # slots: a query makes one per candidate of its pool (200 and more)
class Fused:
    uid: int
    bm25f: float = 0.0
    relevance: float = 0.0
    cosine: float | None = None
    lexical_rank: int | None = None
    vector_rank: int | None = None
    fused: float = 0.0
    score: float = 0.0
    matched: dict[str, str] = field(default_factory=dict)  # term -> best field (filled for output)


def fuse(
    lexical: list[tuple[int, float, float]], vector: list[tuple[int, float]], cosine_of: dict[int, float], lexical_weight: float | None = None
) -> list[Fused]:
    """Union of both candidate lists, best fused first.

    ``lexical``: (uid, bm25f, relevance) best first; ``vector``: (uid, cosine) best first;
    ``cosine_of``: the cosine of every unit that has a vector (lexical candidates get theirs).
    """
    w = P.BLEND_LEXICAL if lexical_weight is None else lexical_weight
    out: dict[int, Fused] = {}
    for rank, (uid, bm, rel) in enumerate(lexical, 1):
        out[uid] = Fused(uid, bm, rel, cosine_of.get(uid), lexical_rank=rank)
    for rank, (uid, cos) in enumerate(vector, 1):
        item = out.setdefault(uid, Fused(uid, cosine=cos))
        item.vector_rank = rank
    top_bm = max((f.bm25f for f in out.values()), default=0.0) or 1.0
    cos_lo, cos_hi = _cos_range(vector)
    for f in out.values():
        f.fused = blend(f.bm25f / top_bm, f.cosine, cos_lo, cos_hi, w)
    return sorted(out.values(), key=lambda f: (-f.fused, f.lexical_rank or 1 << 30, f.uid))


def blend_weight(coverage: float, report: bool = False) -> float:
    if report:
        return float(P.BLEND_LEXICAL_REPORT)
    return float(P.BLEND_LEXICAL if coverage >= P.WEAK_COVERAGE else P.BLEND_LEXICAL_WEAK)


def blend(bm25_ratio: float, cosine: float | None, lo: float, hi: float, w: float) -> float:
    cos = 0.0 if cosine is None or hi <= lo else min(1.0, max(0.0, (cosine - lo) / (hi - lo)))
    return w * bm25_ratio + (1.0 - w) * cos


def _cos_range(vector: list[tuple[int, float]]) -> tuple[float, float]:
    if not vector:
        return 0.0, 0.0
    return vector[-1][1], vector[0][1]


# --------------------------------------------------------------------------- vector-side evidence

#: Lexical refusal reasons that a vector-side test may overrule (all of the short-query ones:
#: scattered words joined on half A hybrid 0.830 → 0.832 with no probe answered). For the others
#: the lexical refusal stands and no model is loaded.
VECTOR_RESCUE_REASONS = frozenset(
    {"no_query_term_in_index", "only_ubiquitous_terms_matched", "only_prose_words_matched", "too_little_of_the_query_matched", "matched_terms_are_scattered"}
)
#: Lowered from 0.5 on semble half A with the default model (2026-12-04, `tune_rank.py --hybrid`):
#: gated 0.8364 -> 0.8411, answerable refused 1.8 % -> 1.3 %, probe silence 0.969 -> 0.953 (0.45
#: answered more but went below 0.95); half B 0.8273 -> 0.8290, silence 0.995 -> 0.978; the rulers'
#: gated unit MRR 0.386 -> 0.395 with their refusal silence unchanged (benchmarks/README.md).
VECTOR_TOP_BAR = 0.475
VECTOR_MARGIN_BAR = 0.2
#: Two weak signals that agree: a short query refused lexically although at least
#: ``VECTOR_PARTIAL_COVERAGE`` of its distinctive rarity occurs here ("how are routes registered"
#: on fastapi: ``route`` everywhere, ``register`` nowhere) needs a best cosine of only
#: ``VECTOR_PARTIAL_BAR``. Unanswerable probes that come that close in meaning share almost none
#: of their rarity with the repository (their subject is absent: coverage 0-0.17). Chosen on semble
#: half A with the default model (2026-12-07; a grid of coverage 0-0.5 x top 0.35-0.46: three
#: refused answerable queries answered, no probe); half B in benchmarks/README.md.
VECTOR_PARTIAL_COVERAGE = 0.2
VECTOR_PARTIAL_BAR = 0.44


#: The other way round: a lexical pass that left some of the query's words unmatched is
#: overruled when no passage comes even this close in meaning. Probes about a subject a repository
#: lacks ("how does Path handle elevator dispatch scheduling") pass lexically on the repository's
#: own words at a best cosine of 0.14-0.33 with MiniLM, while answerable questions that are not a
#: bare declared name start at about 0.38 (semble half A, benchmarks/README.md).
VECTOR_VETO_BAR = 0.35


@dataclass(frozen=True)
class VectorBars:
    """The cosine bars of one embedding model. Cosines are a property of the model (a static
    model's averaged token vectors sit closer together than a transformer's sentence vectors), so
    a provider may carry its own (``cosine_bars``); the defaults are MiniLM-L6's, chosen above."""

    top: float
    margin: float
    veto: float
    partial: float | None = None  # the top bar when part of the query matched lexically (None: ``top``)

    def top_for(self, coverage: float) -> float:
        """The best cosine a query needs, given the share of its rarity the lexical index holds."""
        if self.partial is not None and coverage >= P.VECTOR_PARTIAL_COVERAGE:
            return min(self.top, self.partial)
        return self.top


def default_bars() -> VectorBars:
    """MiniLM-L6's bars, read at call time through ``P`` (so a request's ``SearchParams`` moves them)."""
    return VectorBars(P.VECTOR_TOP_BAR, P.VECTOR_MARGIN_BAR, P.VECTOR_VETO_BAR, P.VECTOR_PARTIAL_BAR)


def bars_of(provider: object) -> VectorBars:
    """The provider's own bars (its ``cosine_bars``: top, margin, veto), or MiniLM-L6's."""
    bars = getattr(provider, "cosine_bars", None)
    if isinstance(bars, tuple) and len(bars) == 3 and all(isinstance(b, float) for b in bars):
        return VectorBars(*bars)
    return default_bars()


def vector_veto(ev: Evidence, top: float, bars: VectorBars | None = None) -> bool:
    """Should the vectors overrule this lexical pass? Only for a short query that left words
    unmatched and is not a declared name (a bare ``Request`` says little to a sentence model)."""
    veto = (bars or default_bars()).veto
    return ev.passed and not ev.long_query and not ev.declared and ev.coverage < 1.0 and top < veto


def vector_evidence(top: float, median: float, bars: VectorBars | None = None, coverage: float = 0.0) -> bool:
    """May a result stand on vector evidence? The best cosine must be high and stand clear of the
    query's cosine distribution over the whole corpus (top − median); how high depends on the
    query's lexical ``coverage`` (``VectorBars.top_for``)."""
    bars = bars or default_bars()
    return top >= bars.top_for(coverage) and top - median >= bars.margin


# --------------------------------------------------------------------------- calibrated score and floor

#: Passages of an answer with no confident one (it stands on vector evidence alone, whose
#: confidence stays under the threshold unless its top cosine clears its bar by 0.2), all marked
#: low-confidence. 2 until Dec 7; 5 chosen on semble half A with the default model (gated 0.8524
#: -> 0.8551; 10: 0.8555), half B 0.8432 -> 0.8437; silence cannot move (the answered flag is the
#: same), lexical search never gets here (a lexical pass scores at least ``LEXICAL_CONF``).
RELIEF_MAX = 5
#: A confident answer with fewer passages than this is followed by the next ones at or above the
#: relief floor, marked low-confidence, up to this many in all: the floor used to cut everything
#: under 0.69 of the best fused score, so a second-ranked target never reached the agent (semble
#: half A, Dec 2: hybrid 0.828 → 0.830 at 5, 0.835 at 10). 5 until Dec 7, to keep the list short.
#: The tail reaches ``rag search``, MCP and the JSON-lines protocol, marked ``low_confidence``; the
#: prompt hook's delivery table (``delivery.context.select``) reads confident passages only when
#: there are any, so what a hook sends is unchanged (within noise on every ruler, Dec 8; the hook's
#: deeper second search, ``delivery.refresh.search_at_depth``, counts confident passages only:
#: benchmarks/README.md, "The hook's deeper search counts confident passages").
#: 10 chosen on semble half A with the default model (gated 0.8493 → 0.8509; lexical 0.8038 →
#: 0.8082); half B 0.8353 → 0.8384 (lexical in benchmarks/README.md); our rulers' gated MRR 0.3953
#: → 0.3964; silence cannot move (the tail follows a confident answer only).
TAIL_MIN = 10
LEXICAL_CONF = 0.92
LEXICAL_CONF_GAIN = 0.08
VECTOR_CONF = 0.55
NO_EVIDENCE_CONF = 0.3
BEHIND_SLOPE = 0.55


def lexical_strength(ev: Evidence) -> float:
    """How far the query's lexical evidence clears its bars (1.0 = exactly at the bars)."""
    if ev.long_query:
        return min(len(ev.distinctive_terms) / ev_mod.LONG_MIN_MATCHED, len(ev.best_unit_terms) / ev_mod.LONG_MIN_IN_ONE_UNIT)
    return min(ev.coverage / ev_mod.COVERAGE_BAR, ev.concentration / ev_mod.CONCENTRATION_BAR)


def calibrate(
    ranked: list[Fused], lex_strength: float, lexical_passed: bool, top_cos: float | None = None, bars: VectorBars | None = None,
    coverage: float = 0.0,
) -> None:
    """Set ``score`` in [0, 1] on every candidate: the query's confidence, less the distance of the
    candidate behind the best one.

        confidence = LEXICAL_CONF + LEXICAL_CONF_GAIN · min(1, (strength − 1) / 0.5)   lexical evidence passed
                   = min(1, VECTOR_CONF + (top cosine − its bar))                        vector evidence only (``VectorBars.top_for``)
                   = NO_EVIDENCE_CONF · min(1, strength)                                 neither (probe only)
        score      = clip(confidence − BEHIND_SLOPE · (1 − fused / best fused), 0, 1)

    ``strength`` is ``lexical_strength`` (1.0 = exactly at the evidence bars). Fitted by hand on the
    rulers (with tune_hybrid.py, retired Dec 7): with lexical evidence the best candidate scores 0.92-1.0 and
    every ruler hit ranked below it had a fused ratio of at least 0.7, which keeps it at or above
    0.75, while half of the other candidates fall below; a result standing on vector evidence alone
    (MiniLM ranks right there about a quarter of the time) reaches the default threshold 0.75 only
    when its top cosine clears its bar by 0.2, else it is delivered as low-confidence relief (a cap
    at 0.7 kept every one of them there; it changed no delivered target at the prompt hook on 650
    ruler cases, 5 of them lifted: removed Dec 8, benchmarks/README.md "The vector side"); with no
    evidence the best score stays under the relief floor.
    """
    if not ranked:
        return
    if lexical_passed:
        confidence = P.LEXICAL_CONF + P.LEXICAL_CONF_GAIN * min(1.0, max(0.0, (lex_strength - 1.0) / 0.5))
    elif top_cos is not None and top_cos >= (bar := (bars or default_bars()).top_for(coverage)):
        confidence = min(1.0, P.VECTOR_CONF + (top_cos - bar))
    else:
        confidence = P.NO_EVIDENCE_CONF * min(1.0, max(0.0, lex_strength))
    best = ranked[0].fused or 1.0
    slope = P.BEHIND_SLOPE
    if len(ranked) > 16 and "numpy" in sys.modules:  # the pool in one pass: the same operations, the same floats
        import numpy as np  # loaded already (the lexical scores are numpy's)

        behind = confidence - slope * (1.0 - np.array([f.fused for f in ranked]) / best)
        for f, score in zip(ranked, rounded(np.fmin(1.0, np.fmax(0.0, behind)), 4).tolist()):
            f.score = score
        return
    for f in ranked:
        f.score = round(min(1.0, max(0.0, confidence - slope * (1.0 - f.fused / best))), 4)


def floor(scores: list[float], threshold: float, relief: float, items: list) -> tuple[list, int]:
    """The delivery rule, and how many of the kept items are delivered with confidence (the rest
    are low-confidence): items at or above ``threshold``, followed (when fewer than ``TAIL_MIN``)
    by the next ones at or above ``relief`` up to ``TAIL_MIN`` in all; if none is at the
    threshold, up to ``RELIEF_MAX`` at or above ``relief``, all low-confidence; else none."""
    high = [it for it, s in zip(items, scores) if s >= threshold]
    if high:
        tail = [it for it, s in zip(items, scores) if relief <= s < threshold][: max(0, P.TAIL_MIN - len(high))]
        return high + tail, len(high)
    return [it for it, s in zip(items, scores) if s >= relief][: P.RELIEF_MAX], 0
