#!/usr/bin/env python3
"""Tune the evidence gate on the semble benchmark, its unanswerable probes and our own rulers, in
one process (the indexes are built once; a setting is a module constant changed in place).

    python benchmarks/tune_gate.py --half A [--set evidence.COVERAGE_BAR=0.5 ...] [--rows OUT.jsonl]
    python benchmarks/tune_gate.py --half B --curve evidence.COVERAGE_BAR,evidence.CONCENTRATION_BAR=0.4,0.5,0.6,0.7,0.8

Every question goes through ``pipeline.run`` with the request ``SearchRequest.from_settings``
makes from the default settings, lexical (``rag_embedding_provider=none``): the same search as
``paqad rag search --json --top-n 10`` and the agent door. It reports, for the semble half:
NDCG@10 gated (macro over repositories, as ``semble.py``), the share of answerable queries in
parsed languages refused, and how many of those had a target in the ungated top 10; silence on
the probes (``semble_probes.py``); and for the four rulers (``score.py``'s work copies, built if
missing): plain answered share, gated unit hit@1 and MRR, and silence on ``refusal.yaml``.
``--curve`` repeats the run for each value of the named constants (all set to the same value)
and prints answered share of answerable against silence on unanswerable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks import scoring, semble, semble_probes
from paqad import config
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import evidence, fusion, lexical, paths, pipeline, query
from paqad.search.request import SearchRequest

HERE = Path(__file__).resolve().parent

MODULES = {"evidence": evidence, "fusion": fusion, "query": query, "lexical": lexical, "paths": paths}
RULERS = {"flask": "flask-3.1.3", "requests": "requests-2.32.3", "cobra": "cobra-1.6.1", "rxjs": "rxjs-7.8.1"}
WORK = HERE / ".cache" / "score-work"
LEXICAL = {"rag_embedding_provider": "none"}


def set_const(spec: str) -> None:
    name, value = spec.split("=", 1)
    mod, const = name.split(".", 1)
    old = getattr(MODULES[mod], const)
    setattr(MODULES[mod], const, type(old)(value) if not isinstance(old, bool) else value.lower() in ("1", "true", "yes"))
    from paqad.search import ranking

    ranking.shape.cache_clear()  # a query's shape reads some constants (TITLE_SCALE, REPORT_CALLS) when first made


class Asker:
    """One repository's index, built or updated on first use; ``overrides`` are settings
    (default: lexical; ``{}`` is the default settings, hybrid with the packaged model)."""

    def __init__(self, root: Path, overrides: dict[str, str] | None = None):
        self.root = root
        self.cfg = config.load(root, cli_overrides=dict(LEXICAL if overrides is None else overrides), environ={})
        if store.current_path(root) is None:
            build.build_full(root, self.cfg)
        else:
            build.update(root, self.cfg)  # rebuilds when a version changed (a parser change, say)

    def ask(self, q: str, gate: bool = True) -> Any:
        return pipeline.run(Index.shared(self.root), SearchRequest.from_settings(self.cfg, self.root, q, top_n=semble.K, gate=gate))


def parsed_languages(root: Path) -> set[str]:
    return set(pipeline.status(root).get("units_by_language") or {})


def semble_rows(names: list[str], ungated_cache: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    specs = semble.load_specs()
    tasks = semble.load_tasks(specs)
    probes = semble_probes.load_probes()
    rows, prow = [], []
    for name in names:
        root = semble.CACHE / "repos" / name
        rt = [t for t in tasks if t["repo"] == name]
        if not root.is_dir():
            rows += [{**semble.base_row(t), "ndcg10": 0.0, "answered": False, "reason": "repo_absent", "parsed": False,
                      "ungated": 0.0} for t in rt]
            continue
        a = Asker(root)
        lang = semble.PAQAD_LANGUAGE.get(rt[0]["language"], rt[0]["language"]) if rt else ""
        parsed = lang in parsed_languages(root)
        for t in rt:
            res = a.ask(t["query"])
            key = f"{name}|{t['qid']}"
            if key not in ungated_cache:
                ungated_cache[key] = semble.score_row(t, semble.locs(a.ask(t["query"], gate=False).to_dict()))["ndcg10"]
            sr = semble.score_row(t, semble.locs(res.to_dict()))
            ev = res.diagnosis or res.evidence
            rows.append({**semble.base_row(t), "ndcg10": sr["ndcg10"], "answered": res.answered,
                         "reason": None if res.answered else (res.diagnosis or {}).get("reason"), "parsed": parsed,
                         "ungated": ungated_cache[key], "evidence": _ev(ev)})
        for p in probes.get(name, []):
            res = a.ask(p["query"])
            prow.append({"repo": name, "language": rt[0]["language"] if rt else "", "pid": p["pid"], "vocab_kind": p["kind"],
                         "answered": res.answered, "reason": None if res.answered else (res.diagnosis or {}).get("reason"),
                         "evidence": _ev(res.diagnosis or res.evidence)})
    return rows, prow


def _ev(ev: dict[str, Any] | None) -> dict[str, Any]:
    if not ev:
        return {}
    keep = ("reason", "coverage", "concentration", "long_query", "distinctive_terms", "absent_terms", "ubiquitous_terms",
            "prose_terms", "best_unit_terms", "named_terms", "best_score")
    return {k: ev[k] for k in keep if k in ev}


def ruler_rows() -> list[dict[str, Any]]:
    refusal = yaml.safe_load((HERE / "rulers" / "refusal.yaml").read_text())
    out = []
    for corpus, rootname in RULERS.items():
        root = WORK / rootname
        if not root.is_dir():
            sys.exit(f"{root} missing: run `python benchmarks/score.py --retrievers paqad-lexical` once")
        a = Asker(root)
        ruler = yaml.safe_load((HERE / "rulers" / f"{corpus}.yaml").read_text())
        for q in ruler["questions"] + [dict(x, refusal=True) for x in refusal["questions"] if corpus in refusal.get("corpora", [])]:
            res = a.ask(q["q"])
            exp = [scoring.Expected(x["path"], int(x["lines"][0]), int(x["lines"][1])) for x in q.get("answers", [])]
            rank = next((i for i, r in enumerate(res.results, 1)
                         if any(scoring.unit_hit((r.path, r.start_line, r.end_line), e) for e in exp)), None)
            out.append({"corpus": corpus, "id": q["id"], "style": q.get("style", "plain"), "refusal": bool(q.get("refusal")),
                        "answered": res.answered, "rank": rank, "reason": None if res.answered else (res.diagnosis or {}).get("reason"),
                        "evidence": _ev(res.diagnosis or res.evidence)})
    return out


def summary(rows: list[dict[str, Any]], prow: list[dict[str, Any]], rrows: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    m = semble.macro(rows, names)
    ans = [r for r in rows if r["parsed"]]
    refused = [r for r in ans if not r["answered"]]
    s: dict[str, Any] = {
        "ndcg_gated": round(m["overall"], 4),
        "ndcg_ungated": round(semble.macro([dict(r, ndcg10=r["ungated"]) for r in rows], names)["overall"], 4),
        "parsed_queries": len(ans), "refused": len(refused),
        "refused_share": round(len(refused) / max(1, len(ans)), 4),
        "refused_with_target": sum(1 for r in refused if r["ungated"] > 0),
        "probes": len(prow), "probe_silence": round(sum(1 for p in prow if not p["answered"]) / max(1, len(prow)), 4),
    }
    plain = [r for r in rrows if not r["refusal"] and r["style"] == "plain"]
    allq = [r for r in rrows if not r["refusal"]]
    ref = [r for r in rrows if r["refusal"]]
    s["rulers_plain_answered"] = round(sum(r["answered"] for r in plain) / max(1, len(plain)), 4)
    s["rulers_plain_hit1"] = round(sum(1 for r in plain if r["answered"] and r["rank"] == 1) / max(1, len(plain)), 4)
    s["rulers_plain_mrr"] = round(sum(1 / r["rank"] for r in plain if r["answered"] and r["rank"]) / max(1, len(plain)), 4)
    s["rulers_all_hit1"] = round(sum(1 for r in allq if r["answered"] and r["rank"] == 1) / max(1, len(allq)), 4)
    s["rulers_refusal_silence"] = round(sum(1 for r in ref if not r["answered"]) / max(1, len(ref)), 4)
    s["rulers_answered_nonplain"] = sum(1 for r in allq if r["style"] != "plain" and r["answered"])
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=("A", "B"), default=None)
    ap.add_argument("--repos", default=None)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--curve", default=None, help="CONST[,CONST...]=v1,v2,...")
    ap.add_argument("--no-rulers", action="store_true")
    ap.add_argument("--rows", default=None, help="write every row (query text excluded) to this jsonl")
    args = ap.parse_args(argv)
    split = json.loads(semble.SPLIT.read_text())
    names = split[args.half] if args.half else ([x for x in args.repos.split(",")] if args.repos else split["A"] + split["B"])
    for spec in args.set:
        set_const(spec)
    cache_file = semble.CACHE / "ungated-cache.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    points: list[tuple[str, str]] = [("", "")]
    if args.curve:
        consts, values = args.curve.split("=", 1)
        points = [(consts, v) for v in values.split(",")]
    for consts, v in points:
        for c in filter(None, consts.split(",")):
            set_const(f"{c}={v}")
        t0 = time.time()
        rows, prow = semble_rows(names, cache)
        cache_file.write_text(json.dumps(cache))
        rrows = [] if args.no_rulers else ruler_rows()
        s = summary(rows, prow, rrows, names)
        s["point"] = f"{consts}={v}" if consts else "as set"
        s["wall_s"] = round(time.time() - t0, 1)
        print(json.dumps(s), flush=True)
        if args.rows:
            with open(args.rows, "w") as fh:
                fh.writelines(json.dumps({"kind": "semble", **r}) + "\n" for r in rows)
                fh.writelines(json.dumps({"kind": "probe", **r}) + "\n" for r in prow)
                fh.writelines(json.dumps({"kind": "ruler", **r}) + "\n" for r in rrows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
