#!/usr/bin/env python3
"""Does a per-repository file prior learned from uptake help? (issue 35, item 2)

    python -m benchmarks uptake_prior [--model] [--ruler NAME ...] [--limit-corpora [RULER=]N]
        [--set uptake_prior.NAME=V ...]

Uptake is simulated on one half of each corpus's questions and the prior it teaches is judged on
the other half (both ways: learned on ``tune``, judged on ``report``, and the reverse, so every
case is judged by a prior that never saw it). The simulated agent, for each question asked
through ``rag search`` with the shipped settings:

- opens the files of the question's answers: a delivered one is *used*, one not delivered is
  *missed* (the agent found it itself);
- leaves every other delivered file alone: *ignored*;
- on a question the repository cannot answer, ignores whatever was delivered.

That is the best case for the prior (a real agent also opens files that are not the answer, and
misses some that are), so a prior that does not win here does not win. Every case is asked
without a prior (``shipped``) and with it (``prior``), gated and ungated, and the table is
``ablate``'s: the pooled change per column with a paired bootstrap interval, rulers weighing the
same. Rows: ``.cache/results/uptake_prior/STAMP.jsonl``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import ablate, all_rulers
from benchmarks import all_rulers_cases as cases_mod

RESULTS = all_rulers.CACHE.parent / "results" / "uptake_prior"


def _search(root: Path, cfg: Any, q: str, gate: bool, prior: tuple[tuple[str, float], ...], params: Any) -> Any:
    from paqad.index.reader import Index
    from paqad.search import pipeline
    from paqad.search.request import SearchRequest

    request = SearchRequest.from_settings(cfg, root, q, top_n=all_rulers.K, gate=gate, params=params, file_prior=prior)
    return pipeline.run(Index.shared(root), request)


def gold_files(case: cases_mod.Case, paths: list[str]) -> set[str]:
    """The repository files that hold the case's answers (semble names them by a path suffix)."""
    same = all_rulers.path_rule(case.ruler)
    return {p for a in case.answers for p in paths if same(p, a["path"])}


def simulate(cases: list[cases_mod.Case], root: Path, cfg: Any, params: Any) -> dict[str, Any]:
    """Per file, what the simulated agent did with it over ``cases`` (see the module docstring)."""
    from paqad.index.reader import Index
    from paqad.search.uptake_prior import FileUptake

    paths = list(Index.shared(root).paths())
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for case in cases:
        resp = _search(root, cfg, case.q, True, (), params)
        delivered = {r.path for r in resp.results} if resp.answered else set()
        opened = gold_files(case, paths)
        for f in delivered:
            tally[f][0 if f in opened else 1] += 1
        for f in opened - delivered:
            tally[f][2] += 1
    return {f: FileUptake(*c) for f, c in tally.items()}


def row(case: cases_mod.Case, root: Path, cfg: Any, group: str, prior: tuple[tuple[str, float], ...], params: Any) -> dict[str, Any]:
    gated = _search(root, cfg, case.q, True, prior, params)
    probe = _search(root, cfg, case.q, False, prior, params)
    chars = sum(len(r.source or "") for r in gated.results) if gated.answered else 0
    miss = {"unit_rank": None, "file_rank": None, "ndcg10": 0.0}
    return {
        **case.head(), "group": group, "answered": bool(gated.answered), "tokens": round(chars / 4),
        "gated": all_rulers.ranks_of(case, all_rulers.spans(gated)) if gated.answered else miss,
        "ungated": all_rulers.ranks_of(case, all_rulers.spans(probe)),
        "prior_files": len(prior),
    }


def run(selected: cases_mod.Selection, out: Path, model: bool, params: Any) -> list[dict[str, Any]]:
    from paqad.search.params import using
    from paqad.search.uptake_prior import learn

    overrides: dict[str, str] = {} if model else dict(all_rulers.LEXICAL)
    data = all_rulers.CACHE / "data" / all_rulers.settings_key(overrides)
    rows: list[dict[str, Any]] = []
    for key, cs, root, cfg in ablate.prepared(selected, data, overrides):
        started = time.perf_counter()
        got: list[dict[str, Any]] = []
        for learn_on, judge in (("tune", "report"), ("report", "tune")):
            counts = simulate([c for c in cs if c.half == learn_on], root, cfg, params)
            with using(params):  # the prior's own constants, as this run sets them
                prior = learn(counts)
            for case in (c for c in cs if c.half == judge):
                got.append(row(case, root, cfg, "shipped", (), params))
                got.append(row(case, root, cfg, "prior", prior, params))
        ablate.append_rows(out, got)
        rows += got
        print(f"  {key:40s} {len(cs):4d} cases, {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="store_true", help="default settings (hybrid, packaged model); else lexical")
    ap.add_argument("--ruler", action="append", default=[], metavar="NAME", help="only this ruler (repeatable; glob ok)")
    ap.add_argument("--limit-corpora", action="append", default=[], metavar="[RULER=]N")
    ap.add_argument("--set", action="append", default=[], metavar="uptake_prior.NAME=V", help="a prior constant for this run (repeatable)")
    ap.add_argument("--resample", type=int, default=200)
    ap.add_argument("--min-cases", type=int, default=5)
    ap.add_argument("--rescore", metavar="ROWS", nargs="+", help="print the table of saved rows")
    args = ap.parse_args(argv)
    if args.rescore:
        print(ablate.render(ablate.read_rows([Path(p) for p in args.rescore]), args.resample, args.min_cases))
        return 0
    from paqad.search.params import SearchParams

    params = SearchParams.of({k: ablate.parse_value(k, v) for k, v in (s.split("=", 1) for s in args.set)})
    selected = cases_mod.load_all(args.ruler, cases_mod.parse_limits(args.limit_corpora), Path("/work/.mirror/sympy+sympy/repo"))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + ".jsonl")
    print(f"{len(selected.cases)} cases; rows: {out}; load {os.getloadavg()}", file=sys.stderr)
    started = time.perf_counter()
    rows = run(selected, out, args.model, params)
    print(f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()}", file=sys.stderr)
    print(ablate.render(rows, args.resample, args.min_cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
