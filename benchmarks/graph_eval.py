#!/usr/bin/env python3
"""Does the code graph help ranking? Graph build time, and a graph prior scored on the rulers.

Usage (from the repo root, after ``python -m benchmarks corpora fetch``)::

    python -m benchmarks graph_eval build [--corpora flask-3.1.3,synthetic-10k,synthetic-100k]
    python -m benchmarks graph_eval rank [--corpora flask,requests,cobra,rxjs] [--k 10]

``build`` indexes a private copy of each corpus (``benchmarks/.cache/graph-work/``) and times
``paqad.graph.model.build`` (read units, resolve names, assemble the DiGraph), median of 3.

``rank`` answers every ruler question (plus refusal.yaml) once with the shipped search (gate and
floor on, a pool of ``POOL`` results), then scores several orderings of that same answer, so the
configurations differ only in ranking:

- ``lexical``: the shipped order, cut to k (what ``paqad-lexical`` scores);
- ``ppr-λ``: personalised PageRank over the graph (undirected, unresolved names removed),
  restarting at the top ``SEEDS`` results weighted by their score, blended into the order:
  ``(1 − λ) · bm25f/bm25f_top + λ · ppr/ppr_max(pool)``;
- ``expand``: the results and ``paqad.graph.expand`` neighbours (1 hop) merged by score.

Silence is the search's own decision in every configuration (ranking never changes it).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import score, scoring
from benchmarks.scoring import Answer, Passage

HERE = Path(__file__).resolve().parent

WORK = HERE / ".cache" / "graph-work"
POOL = 30
SEEDS = 5
LAMBDAS = (0.1, 0.2, 0.3, 0.5)
PPR_ALPHA = 0.85


def cmd_build(args: argparse.Namespace) -> int:
    from paqad import config
    from paqad.graph import model
    from paqad.index import store
    from paqad.index.reader import Index
    from paqad.index.writing import build

    for name in args.corpora.split(","):
        src = score.corpora.CACHE / name
        root = WORK / name
        if not root.exists():
            shutil.copytree(src, root, symlinks=True, ignore=lambda d, n, src=src: [".paqad"] if Path(d) == src else [])
        if store.current_path(root) is None:
            build.build_full(root, config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        index = Index.open(root)
        times, cg = [], None
        for _ in range(3):
            cg = model.build(index)
            times.append(cg.build_ms)
        g = cg.graph
        kinds = {}
        for _a, _b, d in g.edges(data=True):
            key = d["type"] + ("?" if d.get("unresolved") else "")
            kinds[key] = kinds.get(key, 0) + 1
        print(f"| {name} | {cg.units:,} | {g.number_of_nodes():,} | {g.number_of_edges():,} | "
              f"{statistics.median(times) / 1000:.2f} s ({min(times) / 1000:.2f}–{max(times) / 1000:.2f}) | {kinds} |", flush=True)
    return 0


def _index(root: Path):
    """The process's index of ``root``, refreshed (the graph functions read a refreshed ``Index``)."""
    from paqad.index.reader import Index

    index = Index.shared(root)
    index.refresh()
    return index


def ppr_graph(root: Path):
    """The graph PPR walks: undirected (a caller and a callee inform each other), no unresolved
    names (``?len`` would link every unit), files kept (they link a file's units)."""
    from paqad.graph import model

    g = model.load(_index(root)).graph
    keep = [n for n, d in g.nodes(data=True) if d.get("node") != "unresolved"]
    return g.subgraph(keep).to_undirected(as_view=False)


def personalised_pagerank(ug, seeds: dict[str, float], alpha: float = PPR_ALPHA, eps: float = 1e-5) -> dict[str, float]:
    """Approximate personalised PageRank by local push (Andersen, Chung and Lang, 2006): only
    nodes near the seeds are touched, so a query costs milliseconds on any corpus size.
    (``nx.pagerank`` needs scipy, which paqad does not depend on.) Restart prob = 1 − alpha."""
    total = sum(seeds.values()) or 1.0
    residual = {n: w / total for n, w in seeds.items()}
    estimate: dict[str, float] = {}
    queue = list(residual)
    while queue:
        node = queue.pop()
        r = residual.get(node, 0.0)
        deg = ug.degree(node)
        if deg == 0 or r < eps * deg:
            if deg == 0 and r:
                estimate[node] = estimate.get(node, 0.0) + r
                residual[node] = 0.0
            continue
        estimate[node] = estimate.get(node, 0.0) + (1 - alpha) * r
        residual[node] = 0.0
        share = alpha * r / deg
        for nxt in ug.adj[node]:
            before = residual.get(nxt, 0.0)
            residual[nxt] = before + share
            if before < eps * ug.degree(nxt) <= residual[nxt]:
                queue.append(nxt)
    return estimate


def orderings(resp, ug, root: Path, k: int) -> dict[str, list]:
    """Every configuration's ranked ids for one answer."""
    from paqad import graph
    from paqad.graph import model

    cg = model.load(_index(root))
    res = resp.results
    out = {"lexical": [r.id for r in res[:k]]}
    if not res:
        return {**out, **{f"ppr-{lam}": [] for lam in LAMBDAS}, "expand": []}
    seeds = {cg.node(r.id): r.score for r in res[:SEEDS] if cg.node(r.id) in ug}
    ppr = personalised_pagerank(ug, seeds) if seeds else {}
    top = res[0].signals.get("bm25f") or 1.0
    prior = {r.id: ppr.get(cg.node(r.id), 0.0) for r in res}
    pmax = max(prior.values()) or 1.0
    for lam in LAMBDAS:
        blended = sorted(res, key=lambda r: -((1 - lam) * r.signals.get("bm25f", 0.0) / top + lam * prior[r.id] / pmax))
        out[f"ppr-{lam}"] = [r.id for r in blended[:k]]
    extra = graph.expand(_index(root), [(r.id, r.score) for r in res], hops=1, budget=k)
    merged = sorted([(r.score, r.id) for r in res] + [(n["score"], n["id"]) for n in extra], key=lambda t: -t[0])
    out["expand"] = list(dict.fromkeys(i for _s, i in merged))[:k]
    return out


def spans(root: Path) -> dict[str, tuple[str, int, int]]:
    from paqad.graph import model

    g = model.load(_index(root)).graph
    return {n: (d["path"], d["start_line"], d["end_line"]) for n, d in g.nodes(data=True) if d.get("node") == "unit"}


def cmd_rank(args: argparse.Namespace) -> int:
    from paqad import config
    from paqad.index.writing import build
    from paqad.search import pipeline

    lock = score.corpora.load_lock()
    refusal = score.load_yaml(score.RULERS / "refusal.yaml")
    score.WORK = WORK / "score"  # a private copy: the shared scorer's copies stay untouched
    rows = []
    for name in args.corpora.split(","):
        c = score.load_corpus(name, lock, refusal)
        build.build_full(c.root, config.load(c.root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        ug, where = ppr_graph(c.root), spans(c.root)
        for q in c.questions:
            started = time.perf_counter()
            resp = pipeline.search(c.root, q.q, top_n=POOL)
            ms = (time.perf_counter() - started) * 1000
            by_id = {r.id: (r.path, r.start_line, r.end_line) for r in resp.results}
            for conf, ids in orderings(resp, ug, c.root, args.k).items():
                passages = [Passage(*(by_id.get(i) or where[i])) for i in ids]
                rows.append(scoring.question_row(q, c.name, conf, Answer(passages, silent=not resp.answered), args.k, ms))
        print(f"  {name}: {len(c.questions)} questions", file=sys.stderr, flush=True)
    print(f"graph prior on the rulers, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"`python -m benchmarks graph_eval rank {' '.join(sys.argv[2:])}`, k = {args.k}, git {score.git_describe()}\n")
    for key, label in (("unit_hit1", "unit hit@1"), ("unit_hit3", "unit hit@3"), ("unit_mrr", "unit MRR"),
                       ("file_mrr", "file MRR"), ("silence", "silence (refusal)")):
        print(scoring.pivot_table(rows, key, label) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--corpora", default="flask-3.1.3,synthetic-10k,synthetic-100k")
    r = sub.add_parser("rank")
    r.add_argument("--corpora", default=",".join(score.DEFAULT_CORPORA))
    r.add_argument("--k", type=int, default=10)
    args = ap.parse_args(argv)
    return cmd_build(args) if args.cmd == "build" else cmd_rank(args)


if __name__ == "__main__":
    sys.exit(main())
