"""benchmarks/fit_gate.py: the pooled weights and the per-ruler outcomes a gate is judged by."""

from __future__ import annotations

import numpy as np

from benchmarks import fit_gate


def _row(ruler: str, answerable: bool, answered: bool, rank: int | None = None, half: str = "tune") -> dict:
    side = {"unit_rank": rank, "file_rank": rank}
    return {"ruler": ruler, "id": f"{ruler}-{id(side)}", "corpus": "c", "answerable": answerable, "answered": answered,
            "level": "unit", "gated": side if answered else {}, "ungated": side, "half": half,
            "evidence": {"coverage": 1.0 if answerable else 0.1, "concentration": 1.0 if answerable else 0.2}}


def test_each_ruler_and_each_class_weighs_the_same_in_all():
    rows = [_row("big", True, True, 1) for _ in range(9)] + [_row("small", True, True, 1)] + [_row("probes", False, False) for _ in range(4)]
    w = fit_gate.weights(rows)
    assert np.isclose(w[:9].sum(), w[9]) and np.isclose(w[:10].sum(), w[10:].sum())


def test_outcomes_use_the_gated_rank_where_the_rows_answered_else_the_ungated_one():
    rows = [_row("r", True, True, 2), _row("r", True, False, 1), _row("r", True, False, None), _row("r", False, False)]
    res = fit_gate.outcomes(rows, np.array([True, True, False, True]))["r"]
    assert res["answered"] == 2 / 3 and res["silence"] == 0.0
    assert res["mrr"] == (1 / 2 + 1) / 2 and res["hit1"] == 1 / 3


def test_a_separable_pool_is_fitted_apart():
    rows = [_row("a", True, True, 1) for _ in range(20)] + [_row("u", False, False) for _ in range(20)]
    x = np.c_[np.ones(len(rows)), [[fit_gate.FEATURES["coverage"](r)] for r in rows]]
    beta = fit_gate.fit(x, np.array([float(r["answerable"]) for r in rows]), fit_gate.weights(rows))
    p = 1 / (1 + np.exp(-x @ beta))
    assert p[:20].min() > 0.5 > p[20:].max()
