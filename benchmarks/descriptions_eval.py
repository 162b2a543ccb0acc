#!/usr/bin/env python3
"""How much agent-written descriptions help: one ruler, scored with and without its sidecar.

Usage (from the repo root, after ``python -m benchmarks corpora fetch requests``):
    python -m benchmarks descriptions_eval [--corpus requests] [--hybrid] [--k 10]

The sidecar ``benchmarks/descriptions/<corpus root>.json`` (the ``paqad.descriptions.json``
format) was written once, without reading the ruler's questions (see benchmarks/README.md,
"Descriptions"). Two private copies of the pinned corpus are indexed: ``off`` as fetched, ``on``
with the sidecar at its root. Both answer the same ruler questions (plus the refusal questions
that name the corpus) through the same retriever the scorer uses, and the same pure functions
in ``scoring.py`` judge them. Per-question rows go to ``benchmarks/.cache/results/<stamp>-
descriptions-<corpus>-<config>.jsonl`` (gitignored); the table (overall and by question style) is printed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from benchmarks import corpora, score, scoring

HERE = Path(__file__).resolve().parent

SIDECARS = HERE / "descriptions"
WORK = HERE / ".cache" / "descriptions-work"
RESULTS = HERE / ".cache" / "results"  # gitignored


def copies(name: str) -> tuple[Path, Path, Path, score.Corpus]:
    """Fresh ``off`` and ``on`` copies of the corpus (``on`` with the sidecar) and its questions."""
    lock = corpora.load_lock()
    corpus = score.load_corpus(name, lock, score.load_yaml(score.RULERS / "refusal.yaml"))
    src = corpora.CACHE / lock[name]["root"]
    sidecar = SIDECARS / f"{lock[name]['root']}.json"
    if not sidecar.is_file():
        corpora.die(f"no sidecar {sidecar}")
    roots = []
    for config in ("off", "on"):
        dst = WORK / config / src.name
        if dst.exists():
            shutil.rmtree(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: [".paqad"] if Path(d) == src else [])
        roots.append(dst)
    shutil.copy(sidecar, roots[1] / "paqad.descriptions.json")
    return roots[0], roots[1], sidecar, corpus


def run(name: str, hybrid: bool, k: int) -> int:
    from paqad import describe
    from paqad.index.reader import Index

    off, on, sidecar, corpus = copies(name)
    overrides = {"rag_embedding_provider": "local" if hybrid else "none"}
    configs = [("lexical", overrides, True), ("probe", overrides, False)]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    rows = []
    for label, root in (("off", off), ("on", on)):
        for kind, ovr, gate in configs:
            ret = score.PaqadRetriever(f"{kind}{'-hybrid' if hybrid else ''}-{label}", k, dict(ovr), gate)
            score._PAQAD_BUILT.pop(str(root), None)
            started = time.perf_counter()
            ret.prepare(root)
            built = time.perf_counter() - started
            got = score.ask_all(ret, corpus.name, corpus.questions, k)
            score.write_jsonl(RESULTS / f"{stamp}-descriptions-{name}-{ret.name}.jsonl", got)
            rows += got
            print(f"  {ret.name:22s} index {built:6.1f}s  {len(got)} questions", file=sys.stderr)
        if label == "on":
            st = describe.status(Index.shared(root))
            print(f"  sidecar {sidecar.name}: {st['described']}/{st['total']} declarations described, "
                  f"{st['stale']} stale, {st['unknown_ids']} unknown ids", file=sys.stderr)
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# Descriptions on {name} — {date}\n\n`python -m benchmarks descriptions_eval {' '.join(sys.argv[1:])}` · k = {k} · git {score.git_describe()}\n")
    print(scoring.metrics_table(rows, ("retriever",)))
    print()
    print(scoring.metrics_table(rows, ("retriever", "style")))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="requests")
    ap.add_argument("--hybrid", action="store_true", help="also embed with the local model (slower)")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args(argv)
    return run(args.corpus, args.hybrid, args.k)


if __name__ == "__main__":
    sys.exit(main())
