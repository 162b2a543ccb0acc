"""How much a report's ranking should lean on its words: SWE-bench Lite sympy through the hybrid
indexes a ``swebench.py --keep --set rag_embedding_provider=local`` run left behind.

    python benchmarks/swebench_blend.py --suffix HASH [--const fusion.BLEND_LEXICAL_REPORT] [--values 0.7,1.0]

``--suffix`` is the settings hash of that run's checkouts (``benchmarks/.cache/swebench/<instance>+HASH/``);
every kept checkout with an index is asked, in-process, once per value of ``--const`` (a module
constant of ``paqad.search.fusion``), ungated, top 50 units, as ``swebench.py`` asks. Printed per
value: file Acc@1 / Acc@5 and function Acc@5 (``swebench.function_hit``). Nothing is rebuilt: an
index built by other paqad sources is asked as it is (the run's ``paqad_rev`` says which).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.swebench import CACHE, RULER, function_hit
from paqad.index.reader import Index
from paqad.search import fusion, pipeline

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suffix", required=True, help="settings hash of the hybrid run's checkouts")
    ap.add_argument("--const", default="BLEND_LEXICAL_REPORT", help="fusion constant to vary")
    ap.add_argument("--values", default="0.7,1.0")
    args = ap.parse_args()
    values = [float(v) for v in args.values.split(",")]
    rows: dict[float, list[tuple[int | None, int | None, bool]]] = {v: [] for v in values}
    for inst in json.loads(RULER.read_text(encoding="utf-8"))["instances"]:
        root = CACHE / f"{inst['instance_id']}+{args.suffix}"
        if not (root / ".git" / "paqad-bench-index").exists():
            continue
        gold = set(inst["gold_files"])
        for v in values:
            setattr(fusion, args.const, v)
            resp = pipeline.search(root, inst["problem_statement"], top_n=50, gate=False)
            files = list(dict.fromkeys(r.path for r in resp.results))
            rank = next((i for i, f in enumerate(files, 1) if f in gold), None)
            units = [{"path": r.path, "kind": r.kind, "qualified_name": r.qualified_name, "start_line": r.start_line, "end_line": r.end_line}
                     for r in resp.results]
            fn = function_hit(units, inst["gold_functions"]) if inst["gold_functions"] else None
            rows[v].append((rank, fn, bool(inst["gold_functions"])))
        Index.forget(root)
    if not rows[values[0]]:
        sys.exit(f"no kept checkouts with the suffix {args.suffix} under {CACHE}")
    for v, rs in rows.items():
        n, nf = len(rs), sum(1 for r in rs if r[2])
        acc1 = 100 * sum(1 for r in rs if r[0] == 1) / n
        acc5 = 100 * sum(1 for r in rs if r[0] is not None and r[0] <= 5) / n
        fn5 = 100 * sum(1 for r in rs if r[2] and r[1] is not None) / max(1, nf)
        print(f"fusion.{args.const}={v}: {n} issues, file Acc@1 {acc1:.1f}, Acc@5 {acc5:.1f}; function Acc@5 {fn5:.1f} ({nf} with gold functions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
