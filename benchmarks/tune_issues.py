#!/usr/bin/env python3
"""The issue-text path's constants (``paqad.search.issues``), one at a time, on the issue rulers.

    python -m benchmarks tune_issues [--half tune|report|all] [--limit-corpora RULER=N ...] [--lexical]

Every ``issue`` case of SWE-bench Lite sympy and ``d4j-reports`` (``all_rulers``'s cases and
corpora, its cached indexes) is asked ungated, top 50 (``all_rulers_loc``), once per setting: the
path off (``issues.ENABLED`` False: today's order), the shipped constants, and each constant moved
alone. Decisions are made on ``--half tune``; the report half is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import all_rulers, all_rulers_loc
from benchmarks import all_rulers_cases as cases_mod

RULERS = ["swebench-sympy", "d4j-reports"]
GRID: list[tuple[str, dict[str, Any]]] = [
    ("off (today)", {"issues.ENABLED": False}),
    ("shipped", {}),
    ("PER_FILE 2", {"issues.PER_FILE": 2}),
    ("PER_FILE 5", {"issues.PER_FILE": 5}),
    ("AUX_PRIOR 1", {"issues.AUX_PRIOR": 1.0}),
    ("AUX_PRIOR 0.05", {"issues.AUX_PRIOR": 0.05}),
]


def figures(rows: list[dict[str, Any]]) -> str:
    fn = [r["fn_acc5"] for r in rows if r["fn_acc5"] is not None]

    def pct(xs: list[Any]) -> str:
        return f"{100 * sum(xs) / len(xs):5.1f}" if xs else "    -"

    return (f"n {len(rows):3d}  Acc@1 {pct([r['acc1'] for r in rows])}  Acc@5 {pct([r['acc5'] for r in rows])}  "
            f"R@10 {pct([r['r10'] for r in rows])}  fn Acc@5 {pct(fn)} (n {len(fn)})")


def main(argv: list[str] | None = None) -> int:
    from paqad.search.params import SearchParams

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--half", choices=("tune", "report", "all"), default="tune")
    ap.add_argument("--limit-corpora", action="append", default=[], metavar="[RULER=]N")
    ap.add_argument("--lexical", action="store_true", help="rag_embedding_provider=none (the cached lexical indexes)")
    ap.add_argument("--only", action="append", default=[], help="only the settings so named (repeatable)")
    ap.add_argument("--sympy-git", default="/work/.mirror/sympy+sympy/repo")
    args = ap.parse_args(argv)
    overrides = dict(all_rulers.LEXICAL) if args.lexical else {}
    sel = cases_mod.load_all(RULERS, cases_mod.parse_limits(args.limit_corpora), Path(args.sympy_git))
    grid = [g for g in GRID if not args.only or g[0] in args.only]
    run = all_rulers.Run(overrides, all_rulers.CACHE / "data" / all_rulers.settings_key(overrides), all_rulers.CACHE / "work")
    os.environ["PAQAD_DATA_DIR"] = str(run.data.resolve())
    got: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in grid}
    started = time.perf_counter()
    for key, cases in sel.by_corpus().items():
        cases = [c for c in cases if all_rulers_loc.wants(c) and (args.half == "all" or c.half == args.half)]
        if not cases:
            continue
        root, identity = all_rulers.working_copy(sel.corpora[key], run.work)
        cfg, _ = all_rulers.prepare(root, identity, run.overrides, run.data)
        for case in cases:
            for name, values in grid:
                got[name].append({"ruler": case.ruler, "id": case.id, **all_rulers_loc.localize(case, cfg, root, SearchParams.of(values))})
        print(f"  {key} {len(cases)} cases, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"half {args.half}, load {os.getloadavg()[0]:.1f}")
    for ruler in RULERS:
        for name, _ in grid:
            rows = [r for r in got[name] if r["ruler"] == ruler]
            if rows:
                print(f"{ruler:15s} {name:16s} {figures(rows)}")
    out = all_rulers.RESULTS / f"tune_issues-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(got) + "\n")
    print(f"rows: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
