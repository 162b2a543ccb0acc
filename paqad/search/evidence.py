"""Evidence tests: may search answer at all, or should it say "nothing here answers that"?

Two figures, both corpus-derived (no stopword list):
- coverage:      share of the query's distinctive rarity that the index knows
                 (Σ idf of distinctive terms present / Σ idf of distinctive + absent terms);
- concentration: share of the query's present distinctive rarity that lands inside the single
                 best unit (Σ idf of terms it matches / Σ idf of all present scored terms).
A short question must pass both bars. A long query (a pasted report) has many words nobody
indexed; it passes coverage on an absolute count of matched distinctive terms instead, and
concentration on an absolute count of terms inside one unit, so it is not refused for its length.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from paqad.search.lexical import Scored
from paqad.search.query import AnalyzedQuery

COVERAGE_BAR = 0.6
CONCENTRATION_BAR = 0.6
# A small repository has not had the chance to use every common word, so a word it lacks says
# less there: absent terms weigh min(1, units / ABSENCE_FULL_WEIGHT_UNITS) in the coverage test.
ABSENCE_FULL_WEIGHT_UNITS = 500
LONG_QUERY_TERMS = 25  # distinct terms from which a query counts as long
LONG_MIN_MATCHED = 10  # distinctive terms a long query must share with the index
LONG_MIN_IN_ONE_UNIT = 6  # ... and with its best unit

REASONS = (
    "no_query_term_in_index",
    "only_ubiquitous_terms_matched",
    "too_little_of_the_query_matched",
    "matched_terms_are_scattered",
)
HINTS = {
    "no_query_term_in_index": "none of the query's words occur in this repository; rephrase with words the code or docs would use",
    "only_ubiquitous_terms_matched": "the query only shares words the repository uses everywhere; name the feature, file or behaviour more specifically",
    "too_little_of_the_query_matched": "most of the query's distinctive words do not occur here; this repository may not implement it",
    "matched_terms_are_scattered": "the matching words are spread over unrelated places; no single passage answers the whole question",
}


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

    def diagnosis(self) -> dict:
        """The machine-readable diagnosis returned when search stays silent."""
        data = asdict(self)
        data["hint"] = HINTS.get(self.reason or "", "")
        return data


def assess(query: AnalyzedQuery, result: Scored) -> Evidence:
    present = query.distinctive
    absent = query.absent
    scored = [t for t in query.scored() if t.status == "distinctive"]
    long_query = len(query.terms) >= LONG_QUERY_TERMS
    present_mass = sum(t.idf for t in present)
    absence_weight = min(1.0, query.n_units / ABSENCE_FULL_WEIGHT_UNITS)
    coverage = present_mass / (present_mass + absence_weight * sum(t.idf for t in absent) or 1.0)
    scored_mass = sum(t.idf for t in scored) or 1.0
    best = max(result.ranked[:50], key=lambda c: c.rarity, default=None)
    if best is not None:
        result.explain([best])
    concentration = (best.rarity / scored_mass) if best else 0.0
    ev = Evidence(
        passed=False,
        reason=None,
        coverage=round(coverage, 4),
        concentration=round(concentration, 4),
        long_query=long_query,
        distinctive_terms=sorted(t.term for t in present),
        absent_terms=sorted(t.term for t in absent),
        ubiquitous_terms=sorted(t.term for t in query.ubiquitous),
        prose_terms=sorted(t.term for t in query.prose),
        best_unit_terms=sorted(t for t in best.matched if t in {q.term for q in present}) if best else [],
        bars=_bars(long_query),
    )
    ev.reason = _reason(query, ev, len(present), len(ev.best_unit_terms))
    ev.passed = ev.reason is None
    return ev


def _bars(long_query: bool) -> dict[str, float]:
    if long_query:
        return {"min_matched_terms": LONG_MIN_MATCHED, "min_terms_in_one_unit": LONG_MIN_IN_ONE_UNIT}
    return {"coverage": COVERAGE_BAR, "concentration": CONCENTRATION_BAR}


def _reason(query: AnalyzedQuery, ev: Evidence, n_present: int, n_best: int) -> str | None:
    if not any(t.status != "absent" for t in query.terms):
        return "no_query_term_in_index"
    if n_present == 0:
        return "only_ubiquitous_terms_matched"
    if ev.long_query:
        if n_present < LONG_MIN_MATCHED:
            return "too_little_of_the_query_matched"
        return None if n_best >= LONG_MIN_IN_ONE_UNIT else "matched_terms_are_scattered"
    if ev.coverage < COVERAGE_BAR:
        return "too_little_of_the_query_matched"
    if ev.concentration < CONCENTRATION_BAR:
        return "matched_terms_are_scattered"
    return None
