#!/usr/bin/env python3
"""Workspace search latency: one query over a workspace of N repositories against one repository.

    python -m benchmarks workspace_search [--members 10] [--queries 40]

A throwaway repository gets the first N fetched semble repositories as members
(``python -m benchmarks semble fetch`` first; their existing indexes are used as they are, lexical
or hybrid); the queries are the members' own semble queries, round-robin. Reported: median and p95
wall of ``across.search`` (warm: every member's index opened once before timing) with the members
asked one by one (``parallel=1``, the earlier code path) and in parallel (``across.MAX_PARALLEL``
threads), alternating query by query, beside the median of the same queries against their own
repository alone, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import semble
from paqad import config
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import across, pipeline
from paqad.search.request import SearchRequest

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--queries", type=int, default=40)
    args = ap.parse_args()
    repos = [p for p in sorted((semble.CACHE / "repos").iterdir()) if store.current_path(p) is not None][: args.members]
    if len(repos) < args.members:
        sys.exit(f"only {len(repos)} indexed semble repositories (run `python -m benchmarks semble score` once)")
    tasks = semble.load_tasks(semble.load_specs())
    by_repo = {r.name: [t["query"] for t in tasks if t["repo"] == r.name] for r in repos}
    queries = [(r, by_repo[r.name][i // len(repos) % len(by_repo[r.name])]) for i, r in enumerate(repos * (args.queries // len(repos) + 1))][: args.queries]
    with tempfile.TemporaryDirectory(prefix="paqad-ws-bench-") as tmp:
        root = Path(tmp) / "home"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "README.md").write_text("# home\n\nThe repository the workspace belongs to.\n")
        subprocess.run(["git", "-C", str(root), "add", "."], check=True)
        subprocess.run(["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "home"], check=True)
        build.build_full(root, config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        for r in repos:
            across.add(root, str(r))
        for r in repos:  # warm: open every index once
            Index.shared(r)
        across.search(root, "warm up")
        units = sum(pipeline.status(r).get("units") or 0 for r in repos)
        print(f"machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} at start; {len(repos)} members ({', '.join(r.name for r in repos)}), {units} units")
        ws: dict[int, list[float]] = {1: [], across.MAX_PARALLEL: []}
        single = []
        for r, q in queries:
            for parallel, out in ws.items():
                t0 = time.perf_counter()
                across.search(root, q, top_n=10, parallel=parallel)
                out.append((time.perf_counter() - t0) * 1000)
            cfg = config.load(r)
            t0 = time.perf_counter()
            pipeline.run(Index.shared(r), SearchRequest.from_settings(cfg, r, q, top_n=10))
            single.append((time.perf_counter() - t0) * 1000)
        alone = statistics.median(single)
        for parallel, out in ws.items():
            p95 = sorted(out)[int(0.95 * (len(out) - 1))]
            how = "one by one" if parallel == 1 else f"{parallel} threads"
            print(f"workspace of {len(repos)}, {how}: median {statistics.median(out):.1f} ms, p95 {p95:.1f} ms ({statistics.median(out) / alone:.1f}x one repository)")
        print(f"one repository alone:  median {alone:.1f} ms")
        print(f"load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
