"""One table of every retrieval ruler: the semble benchmark per language beside our own rulers.

    python benchmarks/combined_table.py --lexical STAMP --hybrid STAMP[,STAMP] --rulers STAMP [--swe ROWS]

Reads saved rows only (nothing is run): ``benchmarks/results/<STAMP>-{gated,ungated,bm25raw,probes}.jsonl``
of ``semble.py score`` runs (``--lexical``: one run over all repositories with the bm25raw arm;
``--hybrid``: the default-model runs whose repositories together make the whole, e.g. half A and
half B), ``benchmarks/results/<STAMP>-<retriever>.jsonl`` of a ``score.py`` run (``--rulers``: with
paqad-lexical, paqad-probe, paqad-hybrid, paqad-hybrid-probe and bm25), and optionally the rows of a
``swebench.py`` run. Prints one Markdown table: per row the metric, plain BM25, paqad lexical gated
(``rag search`` with ``rag_embedding_provider=none``) and ungated (``rag probe``), paqad with the
default model gated and ungated, the share of answerable queries refused (lexical / hybrid) and
silence on unanswerable questions (semble_probes.py's probes; the rulers' refusal.yaml).

Semble rows are NDCG@10, macro over repositories as upstream defines it; ruler rows are unit MRR@10
over the questions (score.py's "all" is the same micro mean); the SWE-bench row is file Acc@5.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
RULER_RETRIEVERS = ("bm25", "paqad-lexical", "paqad-probe", "paqad-hybrid", "paqad-hybrid-probe")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def semble_arm(stamps: Iterable[str], arm: str, optional: bool = False) -> list[dict[str, Any]]:
    """Rows of one arm over the runs; ``optional``: a run without that file (no probes generated
    then) gives none, and its column prints "–"."""
    out: list[dict[str, Any]] = []
    for stamp in stamps:
        # semble.py writes to results/semble/ by default; older runs were written to results/
        p = next((d / f"{stamp}-{arm}.jsonl" for d in (RESULTS / "semble", RESULTS) if (d / f"{stamp}-{arm}.jsonl").exists()), None)
        if p is None and optional:
            continue
        if p is None:
            sys.exit(f"missing {RESULTS / 'semble' / f'{stamp}-{arm}.jsonl'} (and in {RESULTS})")
        out += rows(p)
    return out


def macro(qrows: list[dict[str, Any]], key: str = "ndcg10") -> float | None:
    """Mean over repositories of the per-repository mean (upstream's overall and per-language figure)."""
    by_repo: dict[str, list[float]] = defaultdict(list)
    for r in qrows:
        by_repo[r["repo"]].append(float(r[key]))
    return sum(sum(v) / len(v) for v in by_repo.values()) / len(by_repo) if by_repo else None


def share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def f3(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def semble_lines(lexical: str, hybrid: list[str]) -> list[str]:
    arms = {"bm25": semble_arm([lexical], "bm25raw"), "lg": semble_arm([lexical], "gated"), "lu": semble_arm([lexical], "ungated"),
            "hg": semble_arm(hybrid, "gated"), "hu": semble_arm(hybrid, "ungated")}
    probes = {"l": semble_arm([lexical], "probes", optional=True), "h": semble_arm(hybrid, "probes", optional=True)}
    languages = sorted({r["language"] for r in arms["lu"]})
    out = []
    for label, lang in [("**semble, all 63 repositories**", None)] + [(f"semble {x}", x) for x in languages]:
        sel = {k: [r for r in v if lang in (None, r["language"])] for k, v in arms.items()}
        psel = {k: [r for r in v if lang in (None, r["language"])] for k, v in probes.items()}
        n_repos = len({r["repo"] for r in sel["lu"]})
        refused = f"{pct(share([not r['answered'] for r in sel['lg']]))} / {pct(share([not r['answered'] for r in sel['hg']]))}"
        silence = f"{f3(share([not p['answered'] for p in psel['l']]))} / {f3(share([not p['answered'] for p in psel['h']]))}"
        out.append(f"| {label} | {n_repos} | {len(sel['lu'])} | NDCG@10 | {f3(macro(sel['bm25']))} | {f3(macro(sel['lg']))} | {f3(macro(sel['lu']))} "
                   f"| {f3(macro(sel['hg']))} | {f3(macro(sel['hu']))} | {refused} | {silence} |")
    return out


def ruler_lines(stamp: str) -> list[str]:
    data = {name: rows(RESULTS / f"{stamp}-{name}.jsonl") for name in RULER_RETRIEVERS}
    corpora = list(dict.fromkeys(r["corpus"] for r in data["paqad-lexical"]))
    out = []
    for label, corpus in [(f"ruler {c}", c) for c in corpora] + [("**our rulers, all four**", None)]:
        sel = {k: [r for r in v if corpus in (None, r["corpus"])] for k, v in data.items()}
        mrr = {k: _mrr([r for r in v if not r["refusal"]]) for k, v in sel.items()}
        refused = {k: share([r["silent"] for r in v if not r["refusal"]]) for k, v in sel.items()}
        silence = {k: share([r["silent"] for r in v if r["refusal"]]) for k, v in sel.items()}
        n_q = sum(1 for r in sel["paqad-lexical"] if not r["refusal"])
        out.append(f"| {label} | 1 | {n_q} | unit MRR@10 | {f3(mrr['bm25'])} | {f3(mrr['paqad-lexical'])} | {f3(mrr['paqad-probe'])} "
                   f"| {f3(mrr['paqad-hybrid'])} | {f3(mrr['paqad-hybrid-probe'])} | {pct(refused['paqad-lexical'])} / {pct(refused['paqad-hybrid'])} "
                   f"| {f3(silence['paqad-lexical'])} / {f3(silence['paqad-hybrid'])} |")
    return out


def _mrr(answerable: list[dict[str, Any]]) -> float | None:
    return sum(1 / r["unit_rank"] for r in answerable if r["unit_rank"]) / len(answerable) if answerable else None


def swe_line(path: Path) -> str:
    r = rows(path)
    acc = share([bool(x["paqad_acc5"]) for x in r])
    bm = share([bool(x["bm25_acc5"]) for x in r])
    fn = [x["paqad_fn_acc5"] for x in r if x.get("paqad_fn_acc5") is not None]
    note = f"file Acc@5 (function Acc@5 {pct(share(fn))})"
    return f"| SWE-bench Lite sympy (`{path.name}`) | 1 | {len(r)} | {note} | {pct(bm)} | – | {pct(acc)} | – | – | – | – |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexical", required=True, help="semble.py run over all repositories, with the bm25raw arm")
    ap.add_argument("--hybrid", required=True, help="comma-separated semble.py runs with the default model (halves)")
    ap.add_argument("--rulers", required=True, help="score.py run stamp")
    ap.add_argument("--swe", default=None, help="swebench.py rows file")
    args = ap.parse_args()
    print("| ruler | repos | queries | metric | plain BM25 | lexical gated | lexical ungated | hybrid gated (default) | hybrid ungated "
          "| answerable refused, lexical / hybrid | silence on unanswerable, lexical / hybrid |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for line in semble_lines(args.lexical, args.hybrid.split(",")) + ruler_lines(args.rulers):
        print(line)
    if args.swe:
        print(swe_line(Path(args.swe)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
