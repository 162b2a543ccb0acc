"""The calibrated score and the confidence floor: threshold, relief band, silence with the best score."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import fusion, pipeline
from paqad.search.lexical import rounded
from testing.env import LEXICAL
from testing.repos import make_shop

T, F = 0.75, 0.35


@pytest.mark.parametrize(
    "scores, kept, confident",
    [
        ([0.95, 0.8, 0.75, 0.5, 0.3], [0, 1, 2, 3], 3),  # at or above the threshold, then the relief band up to TAIL_MIN
        ([0.95, 0.8, 0.5, 0.4, 0.36, 0.2], [0, 1, 2, 3], 2),  # the tail stops at TAIL_MIN in all
        ([0.9, 0.8, 0.8, 0.8, 0.76, 0.5], [0, 1, 2, 3, 4], 5),  # TAIL_MIN confident ones: no tail
        ([0.7, 0.6, 0.5, 0.2], [0, 1], 0),  # none high: up to RELIEF_MAX in the relief band, low confidence
        ([0.4, 0.2], [0], 0),
        ([0.34, 0.1], [], 0),  # nothing at the relief floor: silence
        ([], [], 0),
    ],
)
def test_floor_on_constructed_scores(scores, kept, confident, monkeypatch):
    monkeypatch.setattr(fusion, "TAIL_MIN", 4)
    monkeypatch.setattr(fusion, "RELIEF_MAX", 2)
    items = list(range(len(scores)))
    assert fusion.floor(scores, T, F, items) == (kept, confident)


def _fused(*ratios: float) -> list[fusion.Fused]:
    return [fusion.Fused(uid=i, fused=r) for i, r in enumerate(ratios)]


def test_lexical_evidence_puts_the_best_above_the_threshold_and_keeps_close_runners_up():
    ranked = _fused(1.0, 0.72, 0.4)
    fusion.calibrate(ranked, lex_strength=1.0, lexical_passed=True)
    assert ranked[0].score == pytest.approx(fusion.LEXICAL_CONF)
    assert ranked[1].score >= T > ranked[2].score
    strong = _fused(1.0)
    fusion.calibrate(strong, lex_strength=2.0, lexical_passed=True)
    assert strong[0].score == 1.0


def test_vector_evidence_alone_is_relief_unless_far_over_its_bar_and_no_evidence_stays_below_relief():
    bar = fusion.default_bars().top_for(0.0)
    ranked = _fused(1.0, 0.9)
    fusion.calibrate(ranked, lex_strength=0.0, lexical_passed=False, top_cos=bar + 0.1)
    assert ranked[0].score == pytest.approx(fusion.VECTOR_CONF + 0.1) and F <= ranked[0].score < T
    fusion.calibrate(ranked, lex_strength=0.0, lexical_passed=False, top_cos=bar + 0.3)  # no cap: far over the bar is confident
    assert ranked[0].score == pytest.approx(fusion.VECTOR_CONF + 0.3) and ranked[0].score >= T
    fusion.calibrate(ranked, lex_strength=0.9, lexical_passed=False, top_cos=None)
    assert ranked[0].score < F


def test_scores_stay_in_unit_interval():
    ranked = _fused(5.0, 1.0, 0.0)
    fusion.calibrate(ranked, lex_strength=10.0, lexical_passed=True)
    assert all(0.0 <= f.score <= 1.0 for f in ranked)


def test_vector_test_needs_a_high_top_that_stands_clear_of_the_median():
    assert fusion.vector_evidence(0.6, 0.2)
    assert not fusion.vector_evidence(0.6, 0.45)  # everything is about as close: no signal
    assert not fusion.vector_evidence(0.3, -0.1)  # clear of the rest, but not close to the query


def test_a_query_partly_matched_lexically_needs_less_vector_evidence():
    between = (fusion.VECTOR_PARTIAL_BAR + fusion.VECTOR_TOP_BAR) / 2
    assert fusion.VECTOR_PARTIAL_BAR < between < fusion.VECTOR_TOP_BAR
    assert not fusion.vector_evidence(between, 0.0, coverage=0.0)  # nothing of it here: the full bar
    assert not fusion.vector_evidence(between, 0.0, coverage=fusion.VECTOR_PARTIAL_COVERAGE / 2)
    assert fusion.vector_evidence(between, 0.0, coverage=fusion.VECTOR_PARTIAL_COVERAGE)
    assert not fusion.vector_evidence(between, between - fusion.VECTOR_MARGIN_BAR / 2, coverage=1.0)  # the margin still holds
    # the calibrated score agrees with the test: a rescued answer is delivered as vector evidence, above the relief floor
    ranked = _fused(1.0, 0.9)
    fusion.calibrate(ranked, lex_strength=0.4, lexical_passed=False, top_cos=between, coverage=fusion.VECTOR_PARTIAL_COVERAGE)
    assert ranked[0].score == pytest.approx(fusion.VECTOR_CONF + between - fusion.VECTOR_PARTIAL_BAR) and ranked[0].score >= F
    fusion.calibrate(ranked, lex_strength=0.4, lexical_passed=False, top_cos=between, coverage=0.0)
    assert ranked[0].score < F


@pytest.fixture
def shop(repo):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_search_applies_the_floor_and_probe_does_not(shop):
    q = "where is the session cookie signed"
    normal = pipeline.search(shop.root, q)
    confident = [r for r in normal.results if not r.low_confidence]
    tail = normal.results[len(confident):]
    assert confident and all(r.score >= T for r in confident)
    # below the threshold: only as a low-confidence tail after the confident ones, at the relief floor or above
    assert all(r.low_confidence and F <= r.score < T for r in tail) and len(normal.results) <= max(len(confident), fusion.TAIL_MIN)
    probe = pipeline.search(shop.root, q, gate=False)
    kept = {r.id for r in normal.results}
    assert kept <= {r.id for r in probe.results}
    # what the floor left out is below the relief floor, or past the tail's length
    assert all(r.score < F or len(tail) == fusion.TAIL_MIN - len(confident) for r in probe.results if r.id not in kept)

    relief = pipeline.search(shop.root, q, threshold=1.01, relief_floor=0.35)
    assert relief.answered and 1 <= len(relief.results) <= fusion.RELIEF_MAX and all(r.low_confidence for r in relief.results)
    assert relief.to_dict()["results"][0]["low_confidence"] is True

    dark = pipeline.search(shop.root, q, threshold=1.01, relief_floor=1.01)
    assert not dark.answered and dark.results == []
    assert dark.diagnosis["reason"] == "below_relief_floor" and dark.diagnosis["best_score"] == 1.0


def test_a_lexical_refusal_reports_the_best_score_below_the_relief_floor(shop):
    silent = pipeline.search(shop.root, "kubernetes helm chart")
    assert not silent.answered and silent.diagnosis["best_score"] < F


def _bits(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]


def test_rounded_is_pythons_round_for_every_float() -> None:
    """The pool's scores are rounded in one numpy pass: each the very float ``round`` gives, ties,
    near-ties, signed zeros and huge values included (a differing bit would change a JSON answer)."""
    rng = np.random.default_rng(7)
    values = np.concatenate([
        rng.random(100_000), rng.random(20_000) * 1e4, rng.random(20_000) * 1e-3, -rng.random(20_000),
        (np.arange(20_000) + 0.5) / 1e4, np.arange(4_000) / 32.0,  # decimal ties, and binary ones (1/32 = 0.03125)
        np.array([0.0, -0.0, -0.00001, 1e300, 2.0**60, 0.00005, 0.00015, 1.00005, 0.12345]),
    ])
    for digits in (4, 6):
        assert _bits(rounded(values, digits).tolist()) == _bits([round(v, digits) for v in values.tolist()])


def test_calibrate_on_a_pool_gives_each_candidate_the_formulas_score() -> None:
    rng = np.random.default_rng(3)
    pool = [fusion.Fused(i, fused=f) for i, f in enumerate(sorted(rng.random(200) * 9.0, reverse=True))]
    fusion.calibrate(pool, 1.3, True)
    best = pool[0].fused
    confidence = fusion.LEXICAL_CONF + fusion.LEXICAL_CONF_GAIN * min(1.0, max(0.0, (1.3 - 1.0) / 0.5))
    want = [round(min(1.0, max(0.0, confidence - fusion.BEHIND_SLOPE * (1.0 - c.fused / best))), 4) for c in pool]
    assert _bits([c.score for c in pool]) == _bits(want)
