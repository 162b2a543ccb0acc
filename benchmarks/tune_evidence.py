"""Tune the evidence bars and ranking knobs on the rulers, fast: index each corpus once, record
each question's evidence figures and hit rank, then sweep the bars offline.

    python benchmarks/tune_evidence.py [--rebuild]

Prints hit@1/hit@3/MRR (probe, no gate), and for each bar setting: share of answerable questions
answered, hit@1 with the gate (silent = miss) and silence on the refusal ruler.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from benchmarks import scoring  # benchmarks/scoring.py
from paqad import config
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import evidence, lexical
from paqad.search import query as query_mod

HERE = Path(__file__).resolve().parent

CORPORA = {"flask": "flask-3.1.3", "requests": "requests-2.32.3", "cobra": "cobra-1.6.1", "rxjs": "rxjs-7.8.1"}


def hit(res: tuple[str, int, int], ans: dict) -> bool:
    """The ruler's HIT RULE, from the scorer (one definition for every benchmark)."""
    return scoring.unit_hit(res, scoring.Expected(ans["path"], int(ans["lines"][0]), int(ans["lines"][1])))


def rows_for(corpus: str, root: Path, questions: list[dict], rebuild: bool) -> list[dict]:
    cfg = config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={})
    if rebuild or store.current_pointer(root).exists() is False:
        build.build_full(root, cfg)
    index = Index.open(root)
    n = index.meta().n_units
    out = []
    for q in questions:
        aq = query_mod.analyze(index, q["q"], n)
        sc = lexical.score(index, aq)
        ranked = sc.ranked
        ev = evidence.assess(aq, sc)
        spans = index.units([c.uid for c in ranked[:10]], ("path", "start_line", "end_line"))
        top = [(u.path, u.start_line, u.end_line) for u in (spans[c.uid] for c in ranked[:10])]
        rank = next((i + 1 for i, r in enumerate(top) if any(hit(r, a) for a in q["answers"])), None)
        out.append({
            "corpus": corpus, "id": q["id"], "style": q.get("style", "plain"), "answerable": bool(q["answers"]),
            "rank": rank, "coverage": ev.coverage, "concentration": ev.concentration, "long": ev.long_query,
            "n_present": len(ev.distinctive_terms), "n_best": len(ev.best_unit_terms), "reason": ev.reason,
        })
    index.close()
    return out


def summarize(rows: list[dict], label: str) -> None:
    ans = [r for r in rows if r["answerable"]]
    ref = [r for r in rows if not r["answerable"]]
    h1 = sum(1 for r in ans if r["rank"] == 1) / max(len(ans), 1)
    h3 = sum(1 for r in ans if r["rank"] and r["rank"] <= 3) / max(len(ans), 1)
    mrr = sum(1 / r["rank"] for r in ans if r["rank"]) / max(len(ans), 1)
    gated = [r for r in ans if r["reason"] is None]
    gh1 = sum(1 for r in gated if r["rank"] == 1) / max(len(ans), 1)
    sil = sum(1 for r in ref if r["reason"] is not None) / max(len(ref), 1)
    print(f"{label:<22} n={len(ans):3d} probe hit@1 {h1:.3f} hit@3 {h3:.3f} MRR {mrr:.3f} | answered {len(gated)/max(len(ans),1):.3f} gated hit@1 {gh1:.3f} | refusal n={len(ref)} silence {sil:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--dump", type=Path)
    args = ap.parse_args()
    refusal = yaml.safe_load((HERE / "rulers" / "refusal.yaml").read_text())["questions"]
    rows = []
    for corpus, folder in CORPORA.items():
        root = HERE / ".cache" / "corpora" / folder
        ruler = yaml.safe_load((HERE / "rulers" / f"{corpus}.yaml").read_text())["questions"]
        rows += rows_for(corpus, root, ruler + refusal, args.rebuild)
    for corpus in CORPORA:
        summarize([r for r in rows if r["corpus"] == corpus], corpus)
    for style in ("plain", "paraphrase", "chinese"):
        summarize([r for r in rows if r["style"] == style and r["answerable"]], f"style={style}")
    summarize(rows, "ALL")
    if args.dump:
        args.dump.write_text("\n".join(json.dumps(r) for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
