#!/usr/bin/env python3
"""The two lexical scorers agree: plain Python (a fresh process on a small index) and numpy.

    python -m benchmarks check_scorers        # after `python -m benchmarks corpora fetch`

Indexes copies of the four ruler corpora (lexical configuration, in a temp folder) and, for every
ruler question and every refusal question, scores it with both paths of ``paqad.search.lexical``:
the ranked pool (unit ids, BM25F, relevance, rarity), the match count, the term statuses and the
matched fields of the top 20 must be identical. Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from benchmarks import corpora
from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import lexical
from paqad.search import query as query_mod

HERE = Path(__file__).resolve().parent
RULERS = HERE / "rulers"
CORPORA = {"flask": "flask-3.1.3", "requests": "requests-2.32.3", "cobra": "cobra-1.6.1", "rxjs": "rxjs-7.8.1"}


def fingerprint(s: lexical.Scored) -> tuple:
    return s.total, [(c.uid, c.bm25f, c.relevance, c.rarity) for c in s.ranked], [(t.term, t.status, t.ident_share) for t in s.terms]


def main() -> int:
    refusal = [q["q"] for q in yaml.safe_load((RULERS / "refusal.yaml").read_text())["questions"]]
    total = same = 0
    with tempfile.TemporaryDirectory(prefix="paqad-scorers-") as tmp:
        for short, corpus in CORPORA.items():
            root = corpora.private_copy(corpora.CACHE / corpus, Path(tmp) / corpus)
            build.build_full(root, config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
            index = Index.open(root)
            n = index.meta().n_units
            questions = [q["q"] for q in yaml.safe_load((RULERS / f"{short}.yaml").read_text())["questions"]] + refusal
            for q in questions:
                plain = lexical._score_plain(index, query_mod.analyze(index, q, n).scored(), lexical.POOL)
                fast = lexical._score_numpy(index, query_mod.analyze(index, q, n).scored(), lexical.POOL)
                shown = plain.ranked[:20], fast.ranked[:20]
                lexical.fill_matched(shown[0], plain.terms, plain.postings)
                lexical.fill_matched(shown[1], fast.terms, fast.postings)
                total += 1
                if fingerprint(plain) == fingerprint(fast) and [c.matched for c in shown[0]] == [c.matched for c in shown[1]]:
                    same += 1
                else:
                    print(f"DIFFERENT: {corpus}: {q}")
            index.close()
    print(f"{same}/{total} questions identical (ranked pool, scores, term statuses, matched fields)")
    return 0 if same == total else 1


if __name__ == "__main__":
    argparse.ArgumentParser(prog="python -m benchmarks check_scorers", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    raise SystemExit(main())
