#!/usr/bin/env python3
"""Choose the evidence gate on every ruler at once: fit on the pooled ``tune`` halves, report on
the ``report`` halves, per ruler, beside the gate of the rows (the one that ran).

    python -m benchmarks fit_gate ROWS.jsonl [ROWS.jsonl ...] [--silence 0.95] [--features a,b,...]

ROWS are ``all_rulers.py`` rows (one run per settings; rows of several runs are pooled, a case
counted once: the last file wins). A gate here is a logistic model over the figures the search
already computes for every query (the row's ``evidence``: lexical coverage and concentration, the
query's length class, a declared name, the vector side's best cosine and its margin over the
median), so a candidate is judged without searching again.

Weights: each ruler counts once. Answerable cases of a ruler share 1/R_a of the weight (R_a: the
rulers with answerable cases), unanswerable ones 1/R_u, so neither a large ruler nor the larger
class decides the fit. The threshold is the lowest at which the pooled silence on the tune halves'
unanswerable cases (macro over those rulers) reaches ``--silence``.

What is printed, on the report halves: per ruler, answered share of answerable, silence on
unanswerable, MRR over answered (the gated rank where the gate of the rows answered, else the
ungated rank: the ranking the new gate would deliver), for the gate of the rows and the fitted one;
and the curve (answered vs silence, pooled) at a few thresholds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

Row = dict[str, Any]


def _vector(row: Row) -> dict[str, Any]:
    return (row.get("evidence") or {}).get("vector") or {}


FEATURES: dict[str, Callable[[Row], float]] = {
    "coverage": lambda r: float((r.get("evidence") or {}).get("coverage") or 0.0),
    "concentration": lambda r: float((r.get("evidence") or {}).get("concentration") or 0.0),
    "long_query": lambda r: float(bool((r.get("evidence") or {}).get("long_query"))),
    "declared": lambda r: float(bool((r.get("evidence") or {}).get("declared"))),
    "top_cosine": lambda r: float(_vector(r).get("top_cosine") or 0.0),
    "margin": lambda r: float(_vector(r).get("margin") or 0.0),
    "z": lambda r: float(_vector(r).get("z") or 0.0),
    "has_vector": lambda r: float(bool(_vector(r))),
}
DEFAULT_FEATURES = ("coverage", "concentration", "long_query", "declared", "top_cosine", "margin", "has_vector")


def load(paths: Iterable[Path]) -> list[Row]:
    seen: dict[tuple[str, str, str], Row] = {}
    for p in paths:
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                seen[(r["ruler"], r["corpus"], r["id"])] = r
    return list(seen.values())


def rank_of(row: Row, gate: str) -> int | None:
    key = "unit_rank" if row.get("level") == "unit" else "file_rank"
    side = row.get(gate) or {}
    return side.get(key)


def weights(rows: list[Row]) -> np.ndarray:
    n: dict[tuple[str, bool], int] = defaultdict(int)
    for r in rows:
        n[(r["ruler"], bool(r["answerable"]))] += 1
    ra = len({k[0] for k in n if k[1]}) or 1
    ru = len({k[0] for k in n if not k[1]}) or 1
    return np.array([1.0 / ((ra if r["answerable"] else ru) * n[(r["ruler"], bool(r["answerable"]))]) for r in rows])


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, ridge: float = 1e-3, steps: int = 60) -> np.ndarray:
    """Weighted logistic regression by Newton's method; ``x`` has a leading column of ones."""
    beta = np.zeros(x.shape[1])
    penalty = np.diag(np.r_[0.0, np.full(x.shape[1] - 1, ridge)])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-x @ beta))
        grad = x.T @ (w * (p - y)) + penalty @ beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + penalty
        beta -= np.linalg.solve(hess, grad)
    return beta


def outcomes(rows: list[Row], answered: np.ndarray) -> dict[str, dict[str, Any]]:
    """Per ruler: answered share, silence, MRR over answered, hit@1 (a silence is a miss)."""
    out: dict[str, dict[str, Any]] = {}
    by: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by[r["ruler"]].append(i)
    for ruler, idx in sorted(by.items()):
        ans = [i for i in idx if rows[i]["answerable"]]
        una = [i for i in idx if not rows[i]["answerable"]]
        got = [i for i in ans if answered[i]]
        ranks = [rank_of(rows[i], "gated" if rows[i]["answered"] else "ungated") for i in got]
        out[ruler] = {
            "n_a": len(ans), "n_u": len(una),
            "answered": len(got) / len(ans) if ans else None,
            "silence": sum(1 for i in una if not answered[i]) / len(una) if una else None,
            "mrr": sum(1.0 / k for k in ranks if k) / len(got) if got else None,
            "hit1": sum(1 for k in ranks if k == 1) / len(ans) if ans else None,
        }
    return out


def macro(res: dict[str, dict[str, Any]], key: str) -> float | None:
    vals = [m[key] for m in res.values() if m[key] is not None]
    return sum(vals) / len(vals) if vals else None


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def table(rows: list[Row], old: np.ndarray, new: np.ndarray) -> str:
    a, b = outcomes(rows, old), outcomes(rows, new)
    lines = ["| ruler | n ans / unans | answered: rows' gate → fitted | silence | MRR over answered | hit@1 |", "| --- | --- | --- | --- | --- | --- |"]
    for ruler in a:
        x, y = a[ruler], b[ruler]
        lines.append(f"| {ruler} | {x['n_a']} / {x['n_u']} | {_f(x['answered'])} → {_f(y['answered'])} | {_f(x['silence'])} → {_f(y['silence'])} "
                     f"| {_f(x['mrr'])} → {_f(y['mrr'])} | {_f(x['hit1'])} → {_f(y['hit1'])} |")
    lines.append(f"| **macro** | | {_f(macro(a, 'answered'))} → {_f(macro(b, 'answered'))} | {_f(macro(a, 'silence'))} → {_f(macro(b, 'silence'))} "
                 f"| {_f(macro(a, 'mrr'))} → {_f(macro(b, 'mrr'))} | {_f(macro(a, 'hit1'))} → {_f(macro(b, 'hit1'))} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path)
    ap.add_argument("--silence", type=float, default=0.95, help="pooled silence the threshold must reach on the tune halves")
    ap.add_argument("--features", default=",".join(DEFAULT_FEATURES))
    ap.add_argument("--exclude", action="append", default=[], help="leave a ruler out (repeatable)")
    args = ap.parse_args(argv)
    rows = [r for r in load(args.rows) if r["ruler"] not in args.exclude and "evidence" in r]
    names = [f for f in args.features.split(",") if f]
    raw = np.array([[FEATURES[f](r) for f in names] for r in rows])
    tune = np.array([r["half"] == "tune" for r in rows])
    mu, sd = raw[tune].mean(0), raw[tune].std(0) + 1e-9
    x = np.c_[np.ones(len(rows)), (raw - mu) / sd]
    y = np.array([float(r["answerable"]) for r in rows])
    beta = fit(x[tune], y[tune], weights([r for r, t in zip(rows, tune) if t]))
    p = 1.0 / (1.0 + np.exp(-x @ beta))
    tune_rows = [r for r, t in zip(rows, tune) if t]
    thr = 1.0
    for cand in np.linspace(0.0, 1.0, 201):
        s = macro(outcomes(tune_rows, p[tune] >= cand), "silence")
        if s is not None and s >= args.silence:
            thr = float(cand)
            break
    coef = {"bias": beta[0] - float(np.sum(beta[1:] * mu / sd)), **{f: float(b / s) for f, b, s in zip(names, beta[1:], sd)}}
    print(f"{len(rows)} cases ({int(tune.sum())} tune), {len({r['ruler'] for r in rows})} rulers; features {names}")
    print("coefficients on the raw features: " + ", ".join(f"{k} {v:+.3f}" for k, v in coef.items()))
    print(f"threshold {thr:.3f} (pooled tune silence ≥ {args.silence})\n")
    rep = [not t for t in tune]
    rep_rows = [r for r, t in zip(rows, rep) if t]
    old = np.array([bool(r["answered"]) for r in rep_rows])
    print("report halves:\n" + table(rep_rows, old, p[np.array(rep)] >= thr) + "\n")
    print("curve on the report halves (macro answered share of answerable / macro silence):")
    for cand in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        res = outcomes(rep_rows, p[np.array(rep)] >= cand)
        print(f"  p ≥ {cand:.1f}: answered {_f(macro(res, 'answered'))}, silence {_f(macro(res, 'silence'))}, MRR {_f(macro(res, 'mrr'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
