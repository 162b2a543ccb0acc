#!/usr/bin/env python3
"""How fast a second machine's clone becomes hybrid-searchable from a published index artifact
(``rag_shared_index``), against the shared embedding store alone and a local build.

    python -m benchmarks index_artifact [--repo PATH] [--runs 3]

Starts a throwaway PostgreSQL (Debian's server, Unix socket only; ``tests/testing/postgres.py``).
Machine A (its own user cache) builds a copy of the repository with the embedding store on and
publishes its index (``artifacts.publish``). Then, each on a fresh clone with its own empty user
cache (another machine), in turn ``--runs`` times:
1. artifact: ``artifacts.adopt`` (download, checks, swap) then ``build.update`` (what differs: nothing);
2. store: ``build.build_full`` with the embedding store only (parses, fetches every vector);
3. local: ``build.build_full`` without any store (parses and embeds everything): the baseline.
One process: the model is loaded once before timing, so every arm is timed warm (the query a
clone answers next loads it in each arm alike). Medians, ratios and the load average are printed,
and the artifact clone's top 5 for a few questions are compared with machine A's. Default
repository: the semble benchmark's ``requests`` tree (``python -m benchmarks semble fetch``).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import team_machines
from paqad import config
from paqad.index.embedding import vectors
from paqad.index.reader import Index
from paqad.index.team import artifacts
from paqad.index.writing import build
from paqad.search import pipeline
from paqad.search.request import SearchRequest

HERE = Path(__file__).resolve().parent

QUESTIONS = ("where are retries configured", "how is the session closed", "parse the response body as json", "authentication headers")


def cfg(root: Path, dsn: str, shared_index: bool) -> config.Config:
    over = {"rag_embedding_provider": "local", "rag_shared_store": dsn, "rag_shared_index": "true" if shared_index else "false"}
    return config.load(root, cli_overrides=over, environ={})


def top5(root: Path, c: config.Config) -> list[list[str]]:
    Index.forget(root)
    out = []
    for q in QUESTIONS:
        resp = pipeline.run(Index.shared(root), SearchRequest.from_settings(c, root, q, top_n=5, gate=False))
        out.append([r.id for r in resp.results])
    return out


def arm(label: str, root: Path, dsn: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    if label == "artifact":
        c = cfg(root, dsn, True)
        got = artifacts.adopt(root, c)
        if got.status != "adopted":
            raise SystemExit(f"the artifact was not adopted: {got.status} {got.reason}")
        report = build.update(root, c)
        note = f"{report.files_changed} files parsed, {report.vectors.embedded if report.vectors else 0} embedded"
    else:
        report = build.build_full(root, cfg(root, dsn if label == "store" else "", False))
        note = f"{report.units} units, {report.vectors.embedded if report.vectors else 0} embedded"
    return time.perf_counter() - t0, note


def main() -> int:
    args = team_machines.arguments(__doc__)
    with team_machines.team(args.repo, "paqad-artifact-bench-") as t:
        c = cfg(t.origin, t.dsn, True)
        vectors.provider_for("local").dims  # noqa: B018  (load the model before any timing)
        t0 = time.perf_counter()
        build.build_full(t.origin, c)
        pub = artifacts.publish(t.origin, c)
        print(f"A: build with the store and publish {time.perf_counter() - t0:.1f} s; artifact {pub.bytes / 1e6:.2f} MB "
              f"({pub.index_bytes / 1e6:.2f} MB index, {pub.units} units)")
        reference = top5(t.origin, c)
        times: dict[str, list[float]] = {"artifact": [], "store": [], "local": []}
        for i in range(args.runs):
            for label in times:
                clone = t.clone(f"{label}{i}")
                secs, note = arm(label, clone, t.dsn)
                times[label].append(secs)
                print(f"{label}{i}: {secs:.2f} s ({note}); load {os.getloadavg()[0]:.1f}")
                if label == "artifact" and i == 0:
                    same = top5(clone, cfg(clone, t.dsn, True)) == reference
                    print(f"  top 5 for {len(QUESTIONS)} questions identical to machine A's: {same}")
                Index.forget(clone)
                shutil.rmtree(clone)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"\nmedian time to hybrid-searchable on a second clone: artifact {med['artifact']:.2f} s, "
              f"embedding store only {med['store']:.2f} s, local build {med['local']:.2f} s")
        print(f"artifact vs local: {med['local'] / med['artifact']:.1f}x; artifact vs store only: {med['store'] / med['artifact']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
