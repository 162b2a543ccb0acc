#!/usr/bin/env python3
"""Leave-one-out rows for the index-time constants (issue 32, item 3): field weights, the kind
and test priors, the field credit (the per-field length normalisation went after its row).

    python -m benchmarks ablate_index [--group NAME ...] [--ruler NAME ...] [--half tune|report|all]
        [--limit-corpora [RULER=]N]

These constants are folded into the posting weights when the index is built
(``paqad.index.fields``), so a request cannot override them as ``ablate`` does the query-time
ones: each group is measured on indexes built for it, lexical, in a data folder of its own
(``.cache/all_rulers/data/index-GROUP``; the field credit, read at query time from a table, on the
shipped indexes), by a child process that sets the group's constants to
their neutral values before anything reads them (exactly as editing the module would; the
parent process and every other run keep the shipped values). The shipped row is ``ablate``'s
lexical run on the cached indexes. The table is ``ablate``'s: pooled change per column, paired
bootstrap, rulers equal. Rows: ``.cache/results/ablate/STAMP-index.jsonl``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import ablate, all_rulers
from benchmarks import all_rulers_cases as cases_mod

#: group -> the ``paqad.index.fields`` constants set to neutral (what plain BM25 would use).
GROUPS: dict[str, dict[str, Any]] = {
    "field_weights": {"WEIGHTS": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)},
    "kind_prior": {"KIND_PRIOR": {}},
    "test_prior": {"TEST_PRIOR": 1.0},
    "field_credit": {"FIELD_CREDIT": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)},
}
#: Groups read at query time from a table, not a request knob: they reuse the shipped indexes.
QUERY_TIME = frozenset({"field_credit"})


def child(group: str, args: argparse.Namespace, out: Path) -> int:
    """Set ``group``'s constants, then build and ask every case (run in a fresh process)."""
    from paqad.index import fields

    for name, value in GROUPS[group].items():
        setattr(fields, name, value)
    if group == "field_credit":  # read at query time, from a table the lexical stage makes on import
        from paqad.search import lexical

        lexical._CREDIT = [fields.FIELD_CREDIT[fields.best_field(m)] if m else 0.0 for m in range(1 << len(fields.FIELDS))]
    data = all_rulers.CACHE / "data" / ("lexical" if group in QUERY_TIME else f"index-{group}")
    for key, cs, root, cfg in ablate.prepared(_selected(args), data, dict(all_rulers.LEXICAL)):
        started = time.perf_counter()
        ablate.append_rows(out, [{**ablate.row_of(case, root, cfg, None), "group": group} for case in cs])
        print(f"  {group}: {key:40s} {len(cs):4d} cases, {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return 0


def _selected(args: argparse.Namespace) -> cases_mod.Selection:
    selected = cases_mod.load_all(args.ruler, cases_mod.parse_limits(args.limit_corpora), Path(args.sympy_git))
    if args.half != "all":
        selected.cases = [c for c in selected.cases if c.half == args.half]
    return selected


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", default=[], choices=sorted(GROUPS), help="only this group (repeatable)")
    ap.add_argument("--ruler", action="append", default=[], metavar="NAME")
    ap.add_argument("--half", choices=("tune", "report", "all"), default="tune")
    ap.add_argument("--limit-corpora", action="append", default=[], metavar="[RULER=]N")
    ap.add_argument("--sympy-git", default="/work/.mirror/sympy+sympy/repo")
    ap.add_argument("--resample", type=int, default=200)
    ap.add_argument("--min-cases", type=int, default=5)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args, Path(args.out))
    ablate.RESULTS.mkdir(parents=True, exist_ok=True)
    out = ablate.RESULTS / (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-index.jsonl")
    selected = _selected(args)
    print(f"{len(selected.cases)} cases; rows: {out}; load {os.getloadavg()}", file=sys.stderr)
    rows = ablate.run(selected, [], out, model=False)  # the shipped row, on the cached lexical indexes
    passed = _plain(argv if argv is not None else sys.argv[1:])
    for group in args.group or list(GROUPS):
        done = subprocess.run([sys.executable, "-m", "benchmarks", "ablate_index", *passed, "--child", group, "--out", str(out)], check=False)
        if done.returncode:
            print(f"{group}: child failed ({done.returncode})", file=sys.stderr)
    rows = ablate.read_rows([out])
    print(f"load {os.getloadavg()}", file=sys.stderr)
    print(ablate.render(rows, args.resample, args.min_cases))
    return 0


def _plain(argv: list[str]) -> list[str]:
    """``argv`` without the ``--group X`` pairs (each child gets its own)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--group":
            skip = True
            continue
        out.append(a)
    return out


if __name__ == "__main__":
    sys.exit(main())
