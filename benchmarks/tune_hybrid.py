"""Measure hybrid retrieval on the rulers, fast: build each corpus with the local provider once,
record every question's lexical pool, vector pool, evidence and vector-side statistics, then score
lexical-only, vector-only, RRF and blend rankings, the vector-side test and the confidence floor
offline.

    python benchmarks/tune_hybrid.py [--base DIR] [--dump rows.pkl] [--load rows.pkl] [--model NAME]

``--base`` holds the corpus roots (default ``benchmarks/.cache/corpora``); each gets its own
``.paqad/`` index built with ``rag_embedding_provider=local`` (vectors from the embedding cache
when present; ``--model multilingual-e5-small`` for the second local model). Prints
hit@1/hit@3/MRR per style (plain, paraphrase, chinese) at k = 10, after de-duplicating parts as
``search`` does, and silence on refusal.yaml.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import yaml

from benchmarks.tune_evidence import CORPORA, hit  # one list of corpora, one hit rule
from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import evidence, fusion, lexical, pipeline, vector
from paqad.search import query as query_mod

HERE = Path(__file__).resolve().parent

K = 10


class _C:
    def __init__(self, uid: int) -> None:
        self.uid = uid


def ranked_top(index: Index, uids: list[int], k: int = K) -> list[int]:
    """The uids ``search`` would show: split parts and contained containers de-duplicated."""
    return [c.uid for c in pipeline._dedupe_parts(index, [_C(u) for u in uids], k)]


def rows_for(corpus: str, root: Path, questions: list[dict], model: str = "") -> list[dict]:
    cfg = config.load(root, cli_overrides={"rag_embedding_provider": "local", "rag_embedding_model": model}, environ={})
    t0 = time.perf_counter()
    rep = build.update(root, cfg)
    print(f"{corpus}: {rep.mode} {rep.units} units parsed, vectors {rep.vectors} ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    index = Index.open(root)
    n = index.meta().n_units
    where = vector.space(index)
    assert where is not None and not where.interim, "the model's vectors are complete after build.update"
    mat = where.matrix
    spans = {u.uid: (u.path, u.start_line, u.end_line) for u in index.all_units(("uid", "path", "start_line", "end_line"))}
    out = []
    for q in questions:
        aq = query_mod.analyze(index, q["q"], n)
        sc = lexical.score(index, aq)
        ev = evidence.assess(aq, sc)
        qv = vector.embed_query(where, q["q"])
        vh = vector.similarities(mat, qv)
        cos_of = vh.by_uid()
        lex = [(c.uid, c.bm25f, c.relevance) for c in sc.ranked]
        vec = vh.ranked(vector.POOL)
        good = {u for u, sp in spans.items() if any(hit(sp, a) for a in q["answers"])}
        row = {
            "corpus": corpus, "id": q["id"], "style": q.get("style", "plain"), "answerable": bool(q["answers"]),
            "lex": lex, "vec": vec, "cos_lex": {u: cos_of.get(u) for u, _, _ in lex}, "good": good,
            "reason": ev.reason, "coverage": ev.coverage, "concentration": ev.concentration,
            "top": vh.top, "median": vh.median, "z": vh.z, "n": n,
        }
        row["rank"] = {}
        for method in ("lexical", "vector", "rrf", "blend"):
            uids = order(row, method)
            top = ranked_top(index, uids[:60])
            row.setdefault("tops", {})[method] = top
            row["rank"][method] = next((i + 1 for i, u in enumerate(top) if u in good), None)
        out.append(row)
    index.close()
    return out


def order(row: dict, method: str, w: float | None = None) -> list[int]:
    """Candidate uids best first: ``lexical``, ``vector``, ``rrf`` or ``blend`` (weight ``w``, or
    the pipeline's coverage-dependent one)."""
    if method == "lexical":
        return [u for u, _, _ in row["lex"]]
    if method == "vector":
        return [u for u, _ in row["vec"]]
    cos_of = dict(row["vec"]) | {u: c for u, c in row["cos_lex"].items() if c is not None}
    weight = fusion.blend_weight(row["coverage"]) if w is None else w
    return [f.uid for f in fusion.fuse(row["lex"], row["vec"], cos_of, method, lexical_weight=weight)]


def gated(base: Path, lexical_base: Path, questions: dict[str, list[dict]], variants: dict[str, dict]) -> None:
    """End to end through ``pipeline.search`` (evidence gate, vector test, floor): hit@1/hit@3/MRR
    with silence counted as a miss, share answered at or above the threshold, share answered only
    as low-confidence relief, and silence on the refusal ruler."""
    print(f"{'gated (search)':<26} " + " ".join(f"{s:>30}" for s in ("plain h1/h3/MRR hi/low", "paraphrase h1/h3/MRR hi/low", "chinese h1/h3/MRR hi/low")) + "  silence")
    for label, knobs in variants.items():
        saved = {k: getattr(fusion, k) for k in knobs if k != "lexical_only"}
        for k in saved:
            setattr(fusion, k, knobs[k])
        try:
            stats = _gated_run(lexical_base if knobs.get("lexical_only") else base, questions)
        finally:
            for k, v in saved.items():
                setattr(fusion, k, v)
        cells = []
        for style in ("plain", "paraphrase", "chinese"):
            rs = [x for x in stats if x["style"] == style and x["answerable"]]
            n = max(len(rs), 1)
            h1 = sum(1 for x in rs if x["rank"] == 1) / n
            h3 = sum(1 for x in rs if x["rank"] and x["rank"] <= 3) / n
            mrr = sum(1 / x["rank"] for x in rs if x["rank"]) / n
            hi = sum(1 for x in rs if x["n"] and not x["low"]) / n
            low = sum(1 for x in rs if x["low"]) / n
            cells.append(f"{h1:.3f}/{h3:.3f}/{mrr:.3f} {hi:.2f}/{low:.2f}")
        ref = [x for x in stats if not x["answerable"]]
        sil = sum(1 for x in ref if not x["n"]) / max(len(ref), 1)
        print(f"{label:<26} " + " ".join(f"{c:>30}" for c in cells) + f"  {sil:.3f}", flush=True)


def _gated_run(base: Path, questions: dict[str, list[dict]]) -> list[dict]:
    out = []
    for corpus, qs in questions.items():
        root = base / CORPORA[corpus]
        for q in qs:
            resp = pipeline.search(root, q["q"], top_n=K, source_chars=0)
            res = [(r.path, r.start_line, r.end_line) for r in resp.results]
            rank = next((i + 1 for i, r in enumerate(res) if any(hit(r, a) for a in q["answers"])), None)
            low = bool(resp.results) and resp.results[0].low_confidence
            out.append({"style": q.get("style", "plain"), "answerable": bool(q["answers"]), "rank": rank, "n": len(res), "low": low})
    return out


def metrics(rows: list[dict], method: str) -> tuple[float, float, float, int]:
    ranks = [r["rank"][method] for r in rows]
    n = max(len(ranks), 1)
    return (sum(1 for x in ranks if x == 1) / n, sum(1 for x in ranks if x and x <= 3) / n, sum(1 / x for x in ranks if x) / n, len(ranks))


def table(rows: list[dict]) -> None:
    print(f"{'method':<10} " + " ".join(f"{s:>24}" for s in ("plain h1/h3/MRR", "paraphrase h1/h3/MRR", "chinese h1/h3/MRR", "all h1/h3/MRR")))
    for method in ("lexical", "vector", "rrf", "blend"):
        cells = []
        for style in ("plain", "paraphrase", "chinese", None):
            sel = [r for r in rows if r["answerable"] and (style is None or r["style"] == style)]
            h1, h3, mrr, _ = metrics(sel, method)
            cells.append(f"{h1:.3f}/{h3:.3f}/{mrr:.3f}")
        print(f"{method:<10} " + " ".join(f"{c:>24}" for c in cells))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, default=HERE / ".cache" / "corpora")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--load", type=Path)
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--model", default="", help="rag_embedding_model of the local provider (default: all-MiniLM-L6-v2)")
    ap.add_argument("--lexical-base", type=Path, help="the same corpora indexed with rag_embedding_provider=none (gated comparison)")
    args = ap.parse_args()
    if args.load:
        rows = pickle.loads(args.load.read_bytes())
    else:
        refusal = yaml.safe_load((HERE / "rulers" / "refusal.yaml").read_text())["questions"]
        rows = []
        for corpus in args.corpora.split(","):
            folder = CORPORA[corpus]
            ruler = yaml.safe_load((HERE / "rulers" / f"{corpus}.yaml").read_text())["questions"]
            rows += rows_for(corpus, args.base / folder, ruler + refusal, args.model)
        if args.dump:
            args.dump.write_bytes(pickle.dumps(rows))
    table(rows)
    if args.lexical_base:
        refusal = yaml.safe_load((HERE / "rulers" / "refusal.yaml").read_text())["questions"]
        questions = {c: yaml.safe_load((HERE / "rulers" / f"{c}.yaml").read_text())["questions"] + refusal for c in args.corpora.split(",")}
        for c in questions:
            build.update(args.lexical_base / CORPORA[c], config.load(args.lexical_base / CORPORA[c], cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        gated(args.base, args.lexical_base, questions, VARIANTS)
    return 0


VARIANTS: dict[str, dict] = {
    "lexical only (none)": {"lexical_only": True},
    "hybrid blend": {},
    "hybrid blend, no rescue": {"VECTOR_RESCUE_REASONS": frozenset()},
    "hybrid rrf": {"FUSION": "rrf"},
}


if __name__ == "__main__":
    sys.exit(main())
