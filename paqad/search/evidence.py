"""Evidence tests: may search answer at all, or should it say "nothing here answers that"?

Two figures, both corpus-derived (no stopword list):
- coverage:      share of the query's distinctive rarity that the index knows
                 (Σ idf of distinctive terms present / Σ idf of distinctive + absent terms);
- concentration: share of the query's present distinctive rarity that lands inside the single
                 best unit (Σ idf of terms it matches / Σ idf of all present scored terms).
A short question must pass both bars. A long query (a pasted report) has many words nobody
indexed; it passes coverage on an absolute count of matched distinctive terms instead, and
concentration on an absolute count of terms inside one unit, so it is not refused for its length.

Names are evidence however common the word is (``named_terms``): a repository's central names
(``Flask``, ``Session``, ``Router``, ``createStore``) occur in the bodies of a large share of its
units, so by document frequency they are *ubiquitous*, yet they are exactly what people look up.
Ubiquity is therefore measured a second time on the name field alone: a ubiquitous query term that
names few declarations counts as distinctive, at its rarity *as a name* (the idf over the units
whose name holds it). It is listed among ``distinctive_terms`` (the diagnosis keeps its shape).
Coverage still weighs every absent word, so a common name beside an unknown subject ("Flask video
transcoding") stays refused.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from paqad import tokenize
from paqad.index.fields import idf
from paqad.search import query as _query
from paqad.search.lexical import Scored
from paqad.search.params import Stage
from paqad.search.query import PROSE_SHARE, AnalyzedQuery

if TYPE_CHECKING:
    import numpy as np

    from paqad.index.reader import Index
    from paqad.jsontypes import JSONObject

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

COVERAGE_BAR = 0.6
# At least half of the query's present rarity in one passage. An answer often joins two things
# ("timer implementation and heap-based scheduling": the timer and the heap are two functions),
# and at 0.6 such questions were refused as scattered. Lowered from 0.6 on half A of the semble
# benchmark (refused answerable 7.8% -> 6.7%, one more of 186 probes answered); on half B refused
# 9.8% -> 5.9%, gated NDCG@10 0.734 -> 0.767, probe silence unchanged (0.946); on our rulers one
# more of the refusal questions answered (benchmarks/README.md, "Refusals").
CONCENTRATION_BAR = 0.5
# A small repository has not had the chance to use every common word, so a word it lacks says
# less there: absent terms weigh min(1, units / ABSENCE_FULL_WEIGHT_UNITS) in the coverage test.
ABSENCE_FULL_WEIGHT_UNITS = 500
# The one-unknown-word relief of the coverage bar (``one_unknown_word``).
ONE_UNKNOWN_WORD = True
ONE_UNKNOWN_COVERAGE_BAR = 0.5
ONE_UNKNOWN_CONCENTRATION_BAR = 0.99
LONG_QUERY_TERMS = 25  # distinct terms from which a query counts as long
LONG_MIN_MATCHED = 10  # distinctive terms a long query must share with the index
LONG_MIN_IN_ONE_UNIT = 6  # ... and with its best unit
# A ubiquitous query term is a *name* (evidence) when the units whose name field holds it are at
# most this share of all units: common in bodies, rare as a declaration's name.
NAMED_MAX_SHARE = 0.12
# ... and when it is in the name of at least this share of the units containing it: a function
# word ("the", "to", "with") sits in a few names (``test_with_...``) but in far more bodies.
NAMED_MIN_OWN_SHARE = 0.03
NAMED_ENABLED = True
# Names count in queries of at most this many distinct terms: in a symbol lookup or a short noun
# phrase every word was chosen; in a sentence, common words that happen to be names ("is", "the",
# "error") are phrasing, and counting them let unanswerable questions through on the rulers.
NAMED_MAX_TERMS = 10
# A name weighs at most what the commonest distinctive word weighs (the idf at the ubiquity
# bar): it is lifted to "distinctive", not above. Uncapped, a word like "is" (in every ``isX``
# name, rare as a name) outweighed the unknown subject of a probe and let it through.
NAMED_WEIGHT_CAP = True
# A query word that *is* a ranked declaration's whole name (express's ``response``: the module
# ``response.js``; ``Sinatra::Helpers``), compared case-insensitively with the names of the units
# whose name field holds it, is evidence however many bodies contain it (``named_terms`` misses
# such a word: one name among dozens of bodies is under ``NAMED_MIN_OWN_SHARE``). Only the
# ``BEST_POOL`` best-ranked units are read for it. Dropped once on a lexical tune-half row that
# showed nothing (960dbfe) and restored when the whole semble benchmark with the default model
# did: express's bare ``response`` refused, sinatra's ``Sinatra::Helpers`` second (Dec 8).
EXACT_NAMES = True
NAME_BIT = 1  # the "name" field's bit in a posting's field mask (paqad.index.fields.FIELDS[0])
BEST_POOL = 50  # candidates searched for the unit holding most of the query's rarity
_WORD = re.compile(r"[^\W\d_]\w*")  # an identifier as written (paqad.tokenize's word)

REASONS = (
    "no_query_term_in_index",
    "only_ubiquitous_terms_matched",
    "only_prose_words_matched",
    "too_little_of_the_query_matched",
    "matched_terms_are_scattered",
    "meaning_matches_nothing_here",
)
HINTS = {
    "no_query_term_in_index": "none of the query's words occur in this repository; rephrase with words the code or docs would use",
    "only_ubiquitous_terms_matched": "the query only shares words the repository uses everywhere; name the feature, file or behaviour more specifically",
    "only_prose_words_matched": "the query's words occur here only in comments and documentation, never in the names of code; name the function, type or file, or use the words the code uses",
    "too_little_of_the_query_matched": "most of the query's distinctive words do not occur here; this repository may not implement it",
    "matched_terms_are_scattered": "the matching words are spread over unrelated places; no single passage answers the whole question",
    "meaning_matches_nothing_here": "some of the query's words occur here, but no passage is close to what the whole query means; this repository may not implement it",
}

MIXED_COMMON_HINT = (
    "the query only shares words the repository uses everywhere or only in comments and documentation; "
    "name the feature, file or behaviour more specifically"
)


@dataclass
class Evidence:
    passed: bool
    reason: str | None
    coverage: float
    concentration: float
    long_query: bool
    distinctive_terms: list[str] = field(default_factory=list)
    absent_terms: list[str] = field(default_factory=list)
    ubiquitous_terms: list[str] = field(default_factory=list)
    prose_terms: list[str] = field(default_factory=list)
    best_unit_terms: list[str] = field(default_factory=list)
    bars: dict[str, float] = field(default_factory=dict)
    declared: list[str] = field(default_factory=list)  # the query is one identifier these declarations are named

    def diagnosis(self) -> JSONObject:
        """The machine-readable diagnosis returned when search stays silent."""
        data = asdict(self)
        data["hint"] = HINTS.get(self.reason or "", "")
        if self.reason == "only_ubiquitous_terms_matched" and self.prose_terms:
            data["hint"] = MIXED_COMMON_HINT
        return data


def assess(query: AnalyzedQuery, result: Scored, index: Index | None = None) -> Evidence:
    """The evidence figures and the refusal reason. ``index`` lets a word that is a ranked unit's
    whole name count (``exact_names``); without it only the name-field shares are used."""
    named = named_terms(query, result)
    if index is not None:
        for term in exact_names(index, query, result):
            named.setdefault(term, named_weight(1 << 30, query.n_units))
    present = query.distinctive
    absent = query.absent
    scored = [t for t in query.scored() if t.status == "distinctive"]
    long_query = len(query.terms) >= P.LONG_QUERY_TERMS
    present_mass = sum(t.idf for t in present) + sum(named.values())
    absence_weight = min(1.0, query.n_units / P.ABSENCE_FULL_WEIGHT_UNITS)
    coverage = present_mass / (present_mass + absence_weight * sum(t.idf for t in absent) or 1.0)
    scored_mass = sum(t.idf for t in scored) + sum(named.values()) or 1.0
    pool = result.ranked[:BEST_POOL]
    named_in = {c.uid: _named_matched(c.uid, named, result) for c in pool} if named else {}
    best = max(pool, key=lambda c: c.rarity + sum(named[t] for t in named_in.get(c.uid, ())), default=None)
    if best is not None:
        result.explain([best])
    best_named = named_in.get(best.uid, []) if best is not None else []
    concentration = ((best.rarity + sum(named[t] for t in best_named)) / scored_mass) if best else 0.0
    present_terms = {t.term for t in present} | set(named)
    ev = Evidence(
        passed=False,
        reason=None,
        coverage=round(coverage, 4),
        concentration=round(concentration, 4),
        long_query=long_query,
        distinctive_terms=sorted(present_terms),
        absent_terms=sorted(t.term for t in absent),
        ubiquitous_terms=sorted(t.term for t in query.ubiquitous if t.term not in named),
        prose_terms=sorted(t.term for t in query.prose),
        best_unit_terms=sorted({t for t in best.matched if t in present_terms} | set(best_named)) if best else [],
        bars=_bars(long_query),
    )
    # before scoring (the early-refusal check) the best unit is unknown: assume it holds everything
    concentration_bound = ev.concentration if result.postings else 1.0
    ev.reason = _reason(query, ev, len(present_terms), len(ev.best_unit_terms), concentration_bound)
    ev.passed = ev.reason is None
    return ev


def declared(ev: Evidence, names: list[str]) -> None:
    """A query that is one identifier (``Session``, ``Sinatra::Base``), declared by that exact name
    here, is answerable however common the word is: it asks for that declaration, which exists.
    (Found by ``paqad.search.ranking.declared``; an unanswerable probe is never a bare name the
    repository declares.)"""
    ev.declared = names
    ev.passed, ev.reason = True, None


def named_terms(query: AnalyzedQuery, result: Scored) -> dict[str, float]:
    """Ubiquitous query terms that name few declarations: term -> its idf as a name.

    Read from the posting masks the scoring already holds. A term that also fails the prose test
    (it is part of an identifier in under ``PROSE_SHARE`` of the units containing it: "and", "the")
    is not a name. Before scoring (``result`` holds no postings: the early-refusal check) every
    scored ubiquitous term counts, at the highest possible rarity, so that check stays an upper
    bound and never refuses what full scoring would answer.
    """
    if not P.NAMED_ENABLED or len(query.terms) > P.NAMED_MAX_TERMS:
        return {}
    n = max(query.n_units, 1)
    candidates = [t for t in query.scored() if t.status == "ubiquitous"]
    if not result.postings:
        return {t.term: idf(1, n) for t in candidates}
    out: dict[str, float] = {}
    for qt in candidates:
        posting = result.postings.get(qt.term)
        if posting is None or qt.ident_share < PROSE_SHARE:
            continue
        n_name = _count_bit(posting[2], NAME_BIT)
        if 1 <= n_name <= NAMED_MAX_SHARE * n and n_name >= NAMED_MIN_OWN_SHARE * len(posting[0]):
            out[qt.term] = named_weight(n_name, n)
    return out


def exact_names(index: Index, query: AnalyzedQuery, result: Scored) -> list[str]:
    """Ubiquitous scored terms written in the query as a word that is the whole name of one of the
    ``BEST_POOL`` best-ranked units (a declaration named exactly so ranks there: its name field
    holds the word). Bounded to those units so a common word costs a few row reads, not thousands."""
    if not P.EXACT_NAMES or not result.postings or len(query.terms) > P.NAMED_MAX_TERMS:
        return []
    status = {t.term: t.status for t in query.scored()}
    pool = [c.uid for c in result.ranked[:BEST_POOL]]
    out: list[str] = []
    names: dict[int, str] | None = None
    for word in dict.fromkeys(_WORD.findall(query.text)):
        word_terms = tokenize.terms(word)
        whole = word_terms[-1] if word_terms else ""
        if status.get(whole) != "ubiquitous" or whole in out or whole not in result.postings:
            continue
        holders = _name_holders(pool, result.postings[whole])
        if not holders:
            continue
        if names is None:  # one read of the pool's names, only when some word needs it
            names = {uid: u.name.lower() for uid, u in index.units(pool, ("name",)).items()}
        if any(names.get(uid) == word.lower() for uid in holders):
            out.append(whole)
    return out


def _name_holders(uids: list[int], posting: tuple[Sequence[int], object, np.ndarray | Sequence[int]]) -> list[int]:
    """Those of ``uids`` whose posting for the term has the name bit (posting lists sorted by unit id)."""
    p_uids, _, masks = posting
    out = []
    for uid in uids:
        i = bisect.bisect_left(p_uids, uid)
        if i < len(p_uids) and p_uids[i] == uid and int(masks[i]) & NAME_BIT:
            out.append(uid)
    return out


def named_weight(n_name: int, n_units: int) -> float:
    """A name's weight in coverage and concentration: its idf as a name, capped (``NAMED_WEIGHT_CAP``)
    at the idf of a word in ``query.UBIQUITY`` of the units."""
    w = idf(min(n_name, n_units), n_units)
    return min(w, idf(max(1, math.ceil(_query.P.UBIQUITY * n_units)), n_units)) if P.NAMED_WEIGHT_CAP else w


def _count_bit(masks: np.ndarray | Sequence[int], bit: int) -> int:
    """How many posting masks have ``bit`` set (numpy arrays and plain sequences alike)."""
    if isinstance(masks, Sequence):  # an array.array or a list: no numpy in this process
        return sum(1 for m in masks if m & bit)
    return int(((masks & bit) != 0).sum())


def _named_matched(uid: int, named: dict[str, float], result: Scored) -> list[str]:
    """The named terms whose posting list holds ``uid`` (posting lists are sorted by unit id)."""
    out = []
    for term in named:
        uids = result.postings[term][0]
        p = bisect.bisect_left(uids, uid)
        if p < len(uids) and uids[p] == uid:
            out.append(term)
    return out


def _bars(long_query: bool) -> dict[str, float]:
    if long_query:
        return {"min_matched_terms": LONG_MIN_MATCHED, "min_terms_in_one_unit": LONG_MIN_IN_ONE_UNIT}
    return {"coverage": P.COVERAGE_BAR, "concentration": P.CONCENTRATION_BAR}


def one_unknown_word(ev: Evidence, concentration: float) -> bool:
    """A short query that misses the coverage bar by a single word the repository never uses, while
    one passage holds all of its other distinctive words: a description of that passage with one
    word of the asker's own ("URL parsing and construction"). An unknown subject seldom takes only
    one word and leaves the rest in one place. On half A of the semble benchmark (bar 0.5) it
    answered 12 refused answerable queries and let 1 of 346 unanswerable ones through; at 0.4 it
    answered 18 and let 4 through (probes named by a single word beside real ones, "elevator
    dispatch scheduling"), too close to the silence bar.

    A second arm (below that coverage, at least three of the query's words as written in the best
    passage) answered 0.3-0.7 % more semble queries when it was added, but moved no ruler of
    ``python -m benchmarks ablate`` beyond its noise on Dec 7 (1,183 tune cases: every column
    +0.0000), so it went (commit 9a96ead has it). Allowing two unknown words let template probes
    through (semble half B silence 0.941 -> 0.898), so it is not done."""
    return (
        P.ONE_UNKNOWN_WORD
        and len(ev.absent_terms) == 1
        and concentration >= ONE_UNKNOWN_CONCENTRATION_BAR
        and ev.coverage >= ONE_UNKNOWN_COVERAGE_BAR
    )


def _reason(query: AnalyzedQuery, ev: Evidence, n_present: int, n_best: int, concentration_bound: float = 0.0) -> str | None:
    """``concentration_bound``: before scoring (the early check) what the best unit holds is
    unknown, so it assumes the unit holds every known term."""
    if not any(t.status != "absent" for t in query.terms):
        return "no_query_term_in_index"
    if n_present == 0:
        # Say what is true: words used everywhere here, or words that occur here only in comments
        # and documentation (the hint names both kinds when both are there: ``Evidence.diagnosis``).
        return "only_prose_words_matched" if ev.prose_terms and not ev.ubiquitous_terms else "only_ubiquitous_terms_matched"
    if ev.long_query:
        if n_present < LONG_MIN_MATCHED:
            return "too_little_of_the_query_matched"
        return None if n_best >= LONG_MIN_IN_ONE_UNIT else "matched_terms_are_scattered"
    concentration = max(ev.concentration, concentration_bound)
    if (
        ev.coverage < P.COVERAGE_BAR
        and not one_unknown_word(ev, concentration)
    ):
        return "too_little_of_the_query_matched"
    if ev.concentration < P.CONCENTRATION_BAR:
        return "matched_terms_are_scattered"
    return None
