"""Warm in-process query latency for one tool; a helper of ``benchmarks/speed.py``.

Run under the interpreter of the tool being measured (paqad's venv, or the peer's venv), so
neither tool's imports leak into the other's process::

    python -m benchmarks speed_warm --tool paqad --root REPO --queries Q.json [--passes 3]
    .cache/peer-venv/bin/python benchmarks/speed_warm.py --tool peer --root REPO --queries Q.json

It loads what the tool needs once ("load"), answers every query once untimed (warm-up), then
``--passes`` timed passes over all queries, and prints one JSON object: per-query wall ms,
per-query CPU ms (``time.process_time``), the load time and which queries were answered (samples
are in query order, pass after pass).
Only the standard library is imported here, the tool itself is imported inside its runner.

What one "query" is, per tool (each as its CLI does it, minus argument parsing and JSON output):

* paqad: ``paqad.search.pipeline.search(root, q, rag_top_n, rag_source_chars)`` -- opens the
  SQLite index, analyses, ranks, applies the evidence gate, attaches sources.
* peer (rag-your-code 1.5.3): with ``units`` from ``read_index`` and the ``SearchIndex`` from
  ``build_search_index`` built once at load, ``search(...)`` with the repository's settings,
  then ``context(within_budget(results, max_chars), max_chars)`` (the source text), or
  ``diagnose(assess(...))`` when it refuses -- the same calls ``rag-your-code search --json``
  makes after loading.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path


def paqad_runner(root: Path):
    from paqad import config
    from paqad.search import pipeline

    cfg = config.load(root)
    top_n, source_chars = cfg["rag_top_n"], cfg["rag_source_chars"]

    def run(q: str) -> bool:
        return pipeline.search(root, q, top_n, source_chars, pipeline.DEFAULT_BUDGET_CHARS, gate=True).answered

    return run


def peer_runner(root: Path):
    from ragyourcode import config as config_module
    from ragyourcode.embeddings import embedder
    from ragyourcode.indexer import read_index
    from ragyourcode.search import assess, build_search_index, context, diagnose, search, within_budget

    cfg = config_module.load(root)
    _, units = read_index(root / ".rag-your-code" / "index.json")
    index = build_search_index(units, embedder(cfg))
    limit, max_chars = cfg["search.limit"], cfg["search.max_chars"]
    weight, recall = cfg["search.vector_weight"], cfg["search.vector_recall"]
    coverage, grouping = cfg["search.min_coverage"], cfg["search.min_concentration"]

    def run(q: str) -> bool:
        results = search(units, q, limit, search_index=index, vector_weight=weight, vector_recall=recall,
                         min_coverage=coverage, min_concentration=grouping)
        if results:
            context(within_budget(results, max_chars), max_chars)
            return True
        diagnose(assess(index, q, coverage, grouping), coverage, grouping)
        return False

    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", choices=["paqad", "peer"], required=True)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True, help="JSON list of query strings")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--profile", type=Path, help="write a cProfile of the timed passes here (pstats)")
    args = ap.parse_args()
    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    root = args.root.resolve()

    t0, c0 = time.perf_counter(), time.process_time()
    run = (paqad_runner if args.tool == "paqad" else peer_runner)(root)
    load_s, load_cpu_s = time.perf_counter() - t0, time.process_time() - c0

    flags = [bool(run(q)) for q in queries]  # warm-up, untimed; whether each query was answered
    wall_ms: list[float] = []
    cpu_ms: list[float] = []
    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    for _ in range(args.passes):
        for q in queries:
            c = time.process_time()
            t = time.perf_counter()
            run(q)
            wall_ms.append((time.perf_counter() - t) * 1000)
            cpu_ms.append((time.process_time() - c) * 1000)
    if prof:
        prof.disable()
        pstats.Stats(prof).dump_stats(str(args.profile))
    json.dump({"tool": args.tool, "queries": len(queries), "answered": sum(flags), "answered_flags": flags,
               "passes": args.passes,
               "load_s": load_s, "load_cpu_s": load_cpu_s, "wall_ms": wall_ms, "cpu_ms": cpu_ms}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
