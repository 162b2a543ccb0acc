#!/usr/bin/env python3
"""Ablate and tune the ranking stack (``paqad.search.ranking``) on the semble benchmark and our
rulers, in one process: indexes are built once, a setting is a module constant changed in place.

    python benchmarks/tune_rank.py --half A [--set ranking.PATH_BOOST=0.5 ...] [--rows OUT.jsonl]
    python benchmarks/tune_rank.py --half A --curve ranking.DIVERSITY=1.0,0.7,0.5,0.3

Every question goes through ``pipeline.run`` with the request the default settings make, lexical,
twice: ungated (``rag probe``: ranking alone) and gated (``rag search``, the door the hooks use).
Printed per point: semble NDCG@10 ungated and gated (macro over repositories, as ``semble.py``),
per category, refused answerable queries and probe silence; on the four rulers, unit hit@1 and
MRR ungated and gated, and silence on ``refusal.yaml``. The rulers run on private copies under
``benchmarks/.cache/tune-work/`` (never ``score.py``'s work folder, which another run may be using).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks import corpora, scoring, semble, semble_probes, tune_gate
from paqad.search import ranking, reports, shape

HERE = Path(__file__).resolve().parent

tune_gate.MODULES.update(ranking=ranking, reports=reports, shape=shape)
WORK = HERE / ".cache" / "tune-work"
#: ``--hybrid`` runs on copies of the repositories here, indexed with the default settings (the
#: packaged model), so the lexical indexes that ``semble.py`` and a lexical run use stay as they are.
WORK_HYBRID = HERE / ".cache" / "tune-hybrid"
#: Settings of the indexes asked: None = lexical (``tune_gate.LEXICAL``); ``--hybrid`` sets ``{}``.
OVERRIDES: dict[str, str] | None = None


def private_copy(src: Path, dst: Path) -> Path:
    """``src`` copied to ``dst`` without its ``.paqad`` (once), so an index built there is its own."""
    if not dst.is_dir():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: [".paqad"] if Path(d) == src else [])
    return dst


def lexical_units(root: Path) -> int:
    """Units in the lexical index ``semble.py`` built at ``root`` (0: none yet)."""
    from paqad.search import pipeline

    return int(pipeline.status(root).get("units") or 0) if root.is_dir() else 0


def ruler_root(corpus: str) -> Path:
    entry = json.loads((HERE / "corpora.lock.json").read_text())[corpus]
    src = corpora.CACHE / entry["root"]
    if not (src / ".git").is_dir():
        sys.exit(f"{corpus} is not fetched: run `python benchmarks/corpora.py fetch {corpus}`")
    return private_copy(src, (WORK if OVERRIDES is None else WORK_HYBRID / "rulers") / entry["root"])


def semble_rows(names: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tasks = semble.load_tasks(semble.load_specs())
    probes = semble_probes.load_probes()
    rows: list[dict[str, Any]] = []
    prow: list[dict[str, Any]] = []
    for name in names:
        root = semble.CACHE / "repos" / name
        rt = [t for t in tasks if t["repo"] == name]
        if not root.is_dir():
            rows += [{**semble.base_row(t), "ndcg10": 0.0, "ungated": 0.0, "answered": False, "parsed": False} for t in rt]
            continue
        if OVERRIDES is not None:
            root = private_copy(root, WORK_HYBRID / "repos" / name)
        a = tune_gate.Asker(root, OVERRIDES)
        lang = semble.PAQAD_LANGUAGE.get(rt[0]["language"], rt[0]["language"]) if rt else ""
        parsed = lang in tune_gate.parsed_languages(root)
        for t in rt:
            gated = a.ask(t["query"])
            ungated = a.ask(t["query"], gate=False)
            g = semble.score_row(t, semble.locs(gated.to_dict()))
            u = semble.score_row(t, semble.locs(ungated.to_dict()))
            rows.append({**semble.base_row(t), "ndcg10": g["ndcg10"], "ungated": u["ndcg10"], "answered": gated.answered, "parsed": parsed,
                         "top": [f"{r.path}:{r.start_line}" for r in ungated.results[:3]]})
        for p in probes.get(name, []):
            prow.append({"repo": name, "pid": p["pid"], "answered": a.ask(p["query"]).answered})
    return rows, prow


def ruler_rows() -> list[dict[str, Any]]:
    refusal = yaml.safe_load((HERE / "rulers" / "refusal.yaml").read_text())
    out = []
    for corpus in tune_gate.RULERS:
        a = tune_gate.Asker(ruler_root(corpus), OVERRIDES)
        ruler = yaml.safe_load((HERE / "rulers" / f"{corpus}.yaml").read_text())
        extra = [dict(x, refusal=True) for x in refusal["questions"] if corpus in refusal.get("corpora", [])]
        for q in ruler["questions"] + extra:
            exp = [scoring.Expected(x["path"], int(x["lines"][0]), int(x["lines"][1])) for x in q.get("answers", [])]
            row: dict[str, Any] = {"corpus": corpus, "id": q["id"], "style": q.get("style", "plain"), "refusal": bool(q.get("refusal"))}
            for arm, gate in (("gated", True), ("ungated", False)):
                res = a.ask(q["q"], gate=gate)
                row[f"{arm}_answered"] = res.answered
                row[f"{arm}_rank"] = next((i for i, r in enumerate(res.results, 1)
                                           if any(scoring.unit_hit((r.path, r.start_line, r.end_line), e) for e in exp)), None)
            out.append(row)
    return out


def _share(rows: list[dict[str, Any]], test: Any) -> float:
    return round(sum(1 for r in rows if test(r)) / max(1, len(rows)), 4)


def summary(rows: list[dict[str, Any]], prow: list[dict[str, Any]], rrows: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    g = semble.macro(rows, names)
    u = semble.macro([dict(r, ndcg10=r["ungated"]) for r in rows], names)
    parsed = [r for r in rows if r["parsed"]]
    s: dict[str, Any] = {"ungated": round(u["overall"], 4), "gated": round(g["overall"], 4)}
    s.update({f"u_{c}": round(v, 4) for c, v in u["category"].items()})
    s.update({f"g_{c}": round(v, 4) for c, v in g["category"].items()})
    s["refused"] = _share(parsed, lambda r: not r["answered"])
    s["probe_silence"] = _share(prow, lambda p: not p["answered"])
    answerable = [r for r in rrows if not r["refusal"]]
    for arm in ("ungated", "gated"):
        s[f"r_{arm}_hit1"] = _share(answerable, lambda r, a=arm: r[f"{a}_answered"] and r[f"{a}_rank"] == 1)
        s[f"r_{arm}_mrr"] = round(sum(1 / r[f"{arm}_rank"] for r in answerable if r[f"{arm}_answered"] and r[f"{arm}_rank"]) / max(1, len(answerable)), 4)
    s["r_refusal_silence"] = _share([r for r in rrows if r["refusal"]], lambda r: not r["gated_answered"])
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=("A", "B"), default=None)
    ap.add_argument("--repos", default=None)
    ap.add_argument("--set", action="append", default=[], help="module.CONST=value (modules: ranking, reports, shape, evidence, fusion, query, lexical, paths)")
    ap.add_argument("--curve", default=None, help="CONST[,CONST...]=v1,v2,...")
    ap.add_argument("--no-rulers", action="store_true")
    ap.add_argument("--per-language", action="store_true", help="also print ungated NDCG per language")
    ap.add_argument("--rows", default=None, help="write every row to this jsonl")
    ap.add_argument("--hybrid", action="store_true", help="default settings (the packaged model), on copies under .cache/tune-hybrid/")
    ap.add_argument("--max-units", type=int, default=None, help="only repositories whose lexical index holds at most this many units")
    args = ap.parse_args(argv)
    global OVERRIDES
    OVERRIDES = {} if args.hybrid else None
    split = json.loads(semble.SPLIT.read_text())
    names = split[args.half] if args.half else split["A"] + split["B"]
    if args.repos:
        want = args.repos.split(",")
        names = [n for n in names if n in want]
    if args.max_units is not None:
        names = [n for n in names if 0 < lexical_units(semble.CACHE / "repos" / n) <= args.max_units]
    for spec in args.set:
        tune_gate.set_const(spec)
    points: list[tuple[str, str]] = [("", "")]
    if args.curve:
        consts, values = args.curve.split("=", 1)
        points = [(consts, v) for v in values.split(",")]
    for consts, v in points:
        for c in filter(None, consts.split(",")):
            tune_gate.set_const(f"{c}={v}")
        t0 = time.time()
        rows, prow = semble_rows(names)
        rrows = [] if args.no_rulers else ruler_rows()
        s = {"point": f"{consts}={v}" if consts else " ".join(args.set) or "as shipped", **summary(rows, prow, rrows, names)}
        if args.per_language:
            s["u_language"] = {k: round(x, 3) for k, x in semble.macro([dict(r, ndcg10=r["ungated"]) for r in rows], names)["language"].items()}
        s["wall_s"] = round(time.time() - t0, 1)
        print(json.dumps(s), flush=True)
        if args.rows:
            with open(args.rows, "w") as fh:
                for kind, rs in (("semble", rows), ("probe", prow), ("ruler", rrows)):
                    fh.writelines(json.dumps({"kind": kind, **r}) + "\n" for r in rs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
