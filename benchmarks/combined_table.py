"""One table of every retrieval ruler: the semble benchmark per language beside our own rulers.

    python -m benchmarks combined_table --lexical STAMP --hybrid STAMP[,STAMP] --rulers STAMP [--swe ROWS|STAMP]

Nothing is run. Each run is read from its rows when they are at hand, under the gitignored
``benchmarks/.cache/results/`` (``semble/<STAMP>-{gated,ungated,bm25raw,probes}.jsonl`` of
``semble.py score`` runs, ``<STAMP>-<retriever>.jsonl`` of a ``score.py`` run,
``swebench-sympy-<STAMP>.jsonl``), and otherwise from its summary ``benchmarks/summaries/<STAMP>.json``
(``python -m benchmarks summarize STAMP``), which keeps the per-repository and per-corpus counts the
table needs, so a published table is rebuilt from a fresh checkout. ``--lexical``: one semble run over
all repositories with the bm25raw arm; ``--hybrid``: the default-model runs whose repositories
together make the whole, e.g. half A and half B; ``--rulers``: a ``score.py`` run with
paqad-lexical, paqad-probe, paqad-hybrid, paqad-hybrid-probe and bm25; ``--swe`` (optional): a
``swebench.py`` rows file or run id. Prints one Markdown table: per row the metric, plain BM25, paqad
lexical gated (``rag search`` with ``rag_embedding_provider=none``) and ungated (``rag probe``),
paqad with the default model gated and ungated, the share of answerable queries refused (lexical /
hybrid) and silence on unanswerable questions (semble_probes.py's probes; the rulers' refusal.yaml).

Semble rows are NDCG@10, macro over repositories as upstream defines it; ruler rows are unit MRR@10
over the questions (score.py's "all" is the same micro mean); the SWE-bench row is file Acc@5.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import scoring, summarize

HERE = Path(__file__).resolve().parent

RESULTS = summarize.RESULTS  # benchmarks/.cache/results (gitignored)
SUMMARIES = summarize.SUMMARIES
RULER_RETRIEVERS = ("bm25", "paqad-lexical", "paqad-probe", "paqad-hybrid", "paqad-hybrid-probe")
SEMBLE_ARMS = ("gated", "ungated", "bm25raw")
Group = dict[str, Any]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def summary(stamp: str, kind: str) -> dict[str, Any]:
    path = SUMMARIES / f"{stamp}.json"
    if not path.exists():
        sys.exit(f"no rows for run {stamp} under {RESULTS} and no summary {path}")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("kind") != kind:
        sys.exit(f"{path} is a {data.get('kind')} run, not {kind}")
    return data


def semble_groups(stamps: Iterable[str]) -> dict[str, Group]:
    """Per repository over the runs (rows if at hand, else the run's summary): see summarize.semble_groups."""
    out: dict[str, Group] = {}
    for stamp in stamps:
        d = next((d for d in (RESULTS / "semble", RESULTS) if (d / f"{stamp}-ungated.jsonl").exists()), None)
        if d is None:
            out.update(summary(stamp, "semble")["groups"])
            continue
        arms = {a: rows(d / f"{stamp}-{a}.jsonl") for a in SEMBLE_ARMS if (d / f"{stamp}-{a}.jsonl").exists()}
        probes = rows(d / f"{stamp}-probes.jsonl") if (d / f"{stamp}-probes.jsonl").exists() else []
        out.update(summarize.semble_groups(arms, probes))
    return out


def macro(groups: list[Group], arm: str) -> float | None:
    """Mean over repositories of the per-repository mean (upstream's overall and per-language figure)."""
    means = [g[arm][1] / g[arm][0] for g in groups if g.get(arm) and g[arm][0]]
    return sum(means) / len(means) if means else None


def not_share(groups: list[Group], arm: str) -> float | None:
    """The share of an arm's queries (or probes) left unanswered, over the repositories together."""
    n = sum(g[arm][0] for g in groups if g.get(arm))
    answered = sum(g[arm][-1] for g in groups if g.get(arm))
    return (n - answered) / n if n else None


def share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def f3(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def semble_lines(lexical: str, hybrid: list[str]) -> list[str]:
    lex, hyb = semble_groups([lexical]), semble_groups(hybrid)
    languages = sorted({g["language"] for g in lex.values() if g.get("ungated")})
    out = []
    for label, lang in [("**semble, all 63 repositories**", None)] + [(f"semble {x}", x) for x in languages]:
        ls = [g for g in lex.values() if lang in (None, g.get("language"))]
        hs = [g for g in hyb.values() if lang in (None, g.get("language"))]
        lu = [g for g in ls if g.get("ungated")]
        refused = f"{pct(not_share(ls, 'gated'))} / {pct(not_share(hs, 'gated'))}"
        silence = f"{f3(not_share(ls, 'probes'))} / {f3(not_share(hs, 'probes'))}"
        out.append(f"| {label} | {len(lu)} | {sum(g['ungated'][0] for g in lu)} | NDCG@10 | {f3(macro(ls, 'bm25raw'))} "
                   f"| {f3(macro(ls, 'gated'))} | {f3(macro(ls, 'ungated'))} "
                   f"| {f3(macro(hs, 'gated'))} | {f3(macro(hs, 'ungated'))} | {refused} | {silence} |")
    return out


def ruler_metrics(stamp: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Per retriever, per corpus and "all": scoring.metrics, from the rows or the run's summary."""
    if all((RESULTS / f"{stamp}-{name}.jsonl").exists() for name in RULER_RETRIEVERS):
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for name in RULER_RETRIEVERS:
            rs = rows(RESULTS / f"{stamp}-{name}.jsonl")
            by_corpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rs:
                by_corpus[r["corpus"]].append(r)
            out[name] = {**{c: scoring.metrics(v) for c, v in by_corpus.items()}, "all": scoring.metrics(rs)}
        return out
    head = summary(stamp, "rulers")["headline"]
    missing = [n for n in RULER_RETRIEVERS if n not in head]
    if missing:
        sys.exit(f"run {stamp} has no {missing}")
    return {n: head[n] for n in RULER_RETRIEVERS}


def ruler_lines(stamp: str) -> list[str]:
    data = ruler_metrics(stamp)
    corpora = [c for c in data["paqad-lexical"] if c != "all"]
    out = []
    for label, corpus in [(f"ruler {c}", c) for c in corpora] + [("**our rulers, all four**", "all")]:
        m = {k: v.get(corpus) or {} for k, v in data.items()}
        mrr = {k: v.get("unit_mrr") for k, v in m.items()}
        refused = {k: v.get("silent_answerable") for k, v in m.items()}
        silence = {k: v.get("silence") for k, v in m.items()}
        out.append(f"| {label} | 1 | {m['paqad-lexical'].get('n', 0)} | unit MRR@10 | {f3(mrr['bm25'])} | {f3(mrr['paqad-lexical'])} | {f3(mrr['paqad-probe'])} "
                   f"| {f3(mrr['paqad-hybrid'])} | {f3(mrr['paqad-hybrid-probe'])} | {pct(refused['paqad-lexical'])} / {pct(refused['paqad-hybrid'])} "
                   f"| {f3(silence['paqad-lexical'])} / {f3(silence['paqad-hybrid'])} |")
    return out


def swe_line(arg: str) -> str:
    path = Path(arg)
    if not path.is_file():  # a run id, or the name of a rows file no longer at hand
        m = re.search(r"swebench-sympy-(.+)\.jsonl$", path.name)
        stamp = m[1] if m else arg
        path = RESULTS / f"swebench-sympy-{stamp}.jsonl"
    if path.is_file():
        r = rows(path)
        n, acc, bm = len(r), share([bool(x["paqad_acc5"]) for x in r]), share([bool(x["bm25_acc5"]) for x in r])
        fn = share([x["paqad_fn_acc5"] for x in r if x.get("paqad_fn_acc5") is not None])
    else:
        head = summary(stamp, "swebench")["headline"]
        n, acc, bm, fn = head["n"], head["paqad_acc5"], head["bm25_acc5"], head["paqad_fn_acc5"]
    note = f"file Acc@5 (function Acc@5 {pct(fn)})"
    return f"| SWE-bench Lite sympy (`{path.name}`) | 1 | {n} | {note} | {pct(bm)} | – | {pct(acc)} | – | – | – | – |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexical", required=True, help="semble.py run over all repositories, with the bm25raw arm")
    ap.add_argument("--hybrid", required=True, help="comma-separated semble.py runs with the default model (halves)")
    ap.add_argument("--rulers", required=True, help="score.py run stamp")
    ap.add_argument("--swe", default=None, help="swebench.py rows file or run id")
    args = ap.parse_args()
    print("| ruler | repos | queries | metric | plain BM25 | lexical gated | lexical ungated | hybrid gated (default) | hybrid ungated "
          "| answerable refused, lexical / hybrid | silence on unanswerable, lexical / hybrid |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for line in semble_lines(args.lexical, args.hybrid.split(",")) + ruler_lines(args.rulers):
        print(line)
    if args.swe:
        print(swe_line(args.swe))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
