#!/usr/bin/env python3
"""How much faster a second machine's clone becomes hybrid-searchable with the team store
(``rag_shared_store``), and what the store costs per unit on the server.

    python -m benchmarks shared_store [--repo PATH] [--runs 3]

Starts a throwaway PostgreSQL (Debian's server, Unix socket only; ``tests/testing/postgres.py``),
then, each with its own empty user cache (a fresh XDG_CACHE_HOME, as on another machine):
1. machine A: ``build_full`` of a copy of the repository with the store (embeds, fills the store);
2. machine B: a clone with the store (fetches every vector);
3. machine C: a clone without the store (embeds everything locally): the baseline.
B and C alternate ``--runs`` times; medians are reported with the load average. Default repository:
the semble benchmark's ``requests`` tree (``python -m benchmarks semble fetch`` first).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import team_machines
from paqad import config
from paqad.index.embedding import shared_store
from paqad.index.writing import build

HERE = Path(__file__).resolve().parent


def cfg(root: Path, dsn: str) -> config.Config:
    return config.load(root, cli_overrides={"rag_embedding_provider": "local", "rag_shared_store": dsn}, environ={})


def timed_build(root: Path, dsn: str) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    report = build.build_full(root, cfg(root, dsn))
    v = report.vectors
    return time.perf_counter() - t0, (v.embedded if v else -1), report.units


def main() -> int:
    args = team_machines.arguments(__doc__)
    with team_machines.team(args.repo, "paqad-store-bench-") as t:
        secs, embedded, units = timed_build(t.origin, t.dsn)
        print(f"A, first build with the store: {secs:.1f} s, {embedded} of {units} units embedded")
        with_store, without = [], []
        for i in range(args.runs):
            for label, dsn, out in (("B", t.dsn, with_store), ("C", "", without)):
                clone = t.clone(f"{label}{i}")
                secs, embedded, units = timed_build(clone, dsn)
                out.append(secs)
                print(f"{label}{i}: {'with' if dsn else 'without'} the store {secs:.2f} s, {embedded} of {units} embedded")
                shutil.rmtree(clone)
        import psycopg

        with psycopg.connect(t.dsn) as con:
            n = con.execute(f"SELECT count(*) FROM {shared_store.TABLE}").fetchone()[0]
            size = con.execute(f"SELECT pg_total_relation_size('{shared_store.TABLE}')").fetchone()[0]
        b, c = statistics.median(with_store), statistics.median(without)
        print(f"\nmedian second-clone build: with the store {b:.2f} s, without {c:.2f} s: {c / b:.1f}x faster")
        print(f"server: {n} rows, {size / 1e6:.2f} MB with index and TOAST, {size / max(n, 1):.0f} bytes per unit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
