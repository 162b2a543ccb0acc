#!/usr/bin/env python3
"""Keep a small summary of a published run: ``benchmarks/summaries/<run id>.json``.

    python -m benchmarks summarize RUN_ID [RUN_ID ...] [--from DIR ...] [--force]

Raw per-query rows stay out of git: every benchmark writes them under the gitignored
``benchmarks/.cache/results/`` (``semble.py`` under its ``semble/`` subfolder). A figure the docs
publish keeps one summary here instead, a few KB: the command (when the run recorded it), the date,
the corpus fingerprint (when the run recorded one), the headline metrics, and per group the counts
``combined_table.py`` needs to rebuild its table without the rows. ``raw`` names the row files and,
for runs whose rows were once tracked (before the run logs left the tree), the commit that still
holds them: ``git show COMMIT:benchmarks/results/FILE``.

Kinds, told apart by the files a run id matches:
``all_rulers`` (``all_rulers/<id>.jsonl`` + ``<id>-run.json``),
``semble`` (``<id>-run.json`` + ``<id>-{gated,ungated,bm25raw,probes}.jsonl``), ``swebench``
(``swebench-sympy-<id>.jsonl``), ``speed`` (``speed-<id>.json``), ``rulers`` (``<id>-<retriever>.jsonl``
of ``score.py`` and ``descriptions_eval.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

RESULTS = HERE / ".cache" / "results"  # where runs write their rows now (gitignored)
LEGACY = HERE / "results"  # where they were written (and tracked) before
SUMMARIES = HERE / "summaries"


def source_dirs(extra: list[Path] | None = None) -> list[Path]:
    dirs = [*(extra or []), RESULTS, RESULTS / "semble", RESULTS / "all_rulers", LEGACY, LEGACY / "semble"]
    return [d for d in dirs if d.is_dir()]


def run_date(run_id: str) -> str | None:
    m = re.match(r"(\d{8})T(\d{2})(\d{2})(\d{2})?Z", run_id)
    if not m:
        m2 = re.match(r"(\d{4})(\d{2})(\d{2})", run_id)
        return f"{m2[1]}-{m2[2]}-{m2[3]}" if m2 else None
    d = dt.datetime.strptime(m[1] + m[2] + m[3] + (m[4] or "00"), "%Y%m%d%H%M%S")
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def tracked_in(path: Path) -> str | None:
    """The last commit that holds ``path`` as tracked (so its rows stay reachable after removal)."""
    try:
        rel = path.resolve().relative_to(REPO)
    except ValueError:
        return None
    done = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%H", "--", str(rel)],
                          capture_output=True, text=True)
    return done.stdout.strip() or None


def raw_entry(files: list[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {"files": sorted(f.name for f in files)}
    commits = {c for c in (tracked_in(f) for f in files) if c}
    if commits:
        out["commit"] = sorted(commits)[0] if len(commits) == 1 else sorted(commits)
        out["folder"] = str(files[0].resolve().parent.relative_to(REPO))
    return out


def pretty(obj: Any, indent: int = 0, width: int = 110) -> str:
    """JSON, one line per value that fits in ``width`` (a repository's counts, a metrics dict)."""
    flat = json.dumps(obj, ensure_ascii=False)
    if len(flat) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        inner = [f"{pad}{json.dumps(k)}: {pretty(v, indent + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(inner) + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + pretty(v, indent + 1, width) for v in obj) + "\n" + " " * indent + "]"


def r6(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, dict):
        return {k: r6(v) for k, v in x.items()}
    if isinstance(x, list):
        return [r6(v) for v in x]
    return x


# --------------------------------------------------------------------------- kinds


def semble_groups(arms: dict[str, list[dict[str, Any]]], probes: list[dict[str, Any]],
                  repos: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per repository: its language, per arm ``[queries, sum of NDCG@10, answered]``, and the
    unanswerable probes ``[n, answered]``: enough for every macro average and share over repositories."""
    names = repos or list(dict.fromkeys(r["repo"] for rs in arms.values() for r in rs))
    groups: dict[str, dict[str, Any]] = {}
    for name in names:
        g: dict[str, Any] = {}
        for a, rs in arms.items():
            mine = [r for r in rs if r["repo"] == name]
            if mine:
                g["language"] = mine[0]["language"]
                g[a] = [len(mine), round(sum(r["ndcg10"] for r in mine), 6), sum(bool(r.get("answered")) for r in mine)]
        ps = [p for p in probes if p["repo"] == name]
        if ps:
            g.setdefault("language", ps[0]["language"])
            g["probes"] = [len(ps), sum(bool(p["answered"]) for p in ps)]
        groups[name] = g
    return groups


def semble_summary(run_id: str, d: Path) -> dict[str, Any]:
    from benchmarks import semble  # here: it imports corpora

    run = json.loads((d / f"{run_id}-run.json").read_text())
    meta, per_repo = run["meta"], run["per_repo"]
    arms = {a: rows(d / f"{run_id}-{a}.jsonl") for a in ("gated", "ungated", "bm25raw") if (d / f"{run_id}-{a}.jsonl").exists()}
    probes = rows(d / f"{run_id}-probes.jsonl") if (d / f"{run_id}-probes.jsonl").exists() else []
    headline: dict[str, Any] = {}
    for a, rs in arms.items():
        m = semble.macro(rs, meta["repos"])
        m.pop("repos")
        m["answered"] = sum(bool(r.get("answered")) for r in rs) / len(rs) if rs else None
        headline[a] = m
    if probes:
        headline["probes"] = {"n": len(probes), "silence": sum(not p["answered"] for p in probes) / len(probes)}
    groups = semble_groups(arms, probes, meta["repos"])
    files = [d / f"{run_id}-{x}" for x in ("run.json", "summary.md", *(f"{a}.jsonl" for a in arms))]
    files += [d / f"{run_id}-probes.jsonl"] if probes else []
    return {
        "run": run_id, "kind": "semble", "date": run_date(run_id),
        "command": None,  # not recorded by the run; its settings and repositories are
        "settings": meta.get("settings"), "paqad": meta.get("paqad_version"), "paqad_commit": meta.get("paqad_commit"),
        "fingerprint": {"upstream_commit": meta.get("upstream_commit"),
                        "used": {n: ((per_repo.get(n) or {}).get("used") or "")[:12] or None for n in meta["repos"]}},
        "machine": {k: meta.get(k) for k in ("wall_s", "nproc", "load_before", "load_after")},
        "headline": r6(headline),
        "groups_note": "per repository: language, per arm [queries, sum of NDCG@10, answered], probes [n, answered]",
        "groups": groups,
        "raw": raw_entry([f for f in files if f.exists()]),
    }


def swebench_summary(run_id: str, path: Path) -> dict[str, Any]:
    from benchmarks import swebench

    rs = rows(path)
    share = lambda xs: sum(map(bool, xs)) / len(xs) if xs else None  # noqa: E731
    fn = [r["paqad_fn_acc5"] for r in rs if r.get("paqad_fn_acc5") is not None]
    first = rs[0] if rs else {}
    return {
        "run": run_id, "kind": "swebench", "date": run_date(run_id),
        "command": None,  # not recorded; the settings and the paqad revision are
        "settings": first.get("settings"), "paqad_rev": first.get("paqad_rev"),
        "fingerprint": {"ruler": "benchmarks/rulers/swebench/sympy.json",
                        "instances": len(rs), "base_commits": len({r["base_commit"] for r in rs})},
        "headline": r6({"n": len(rs), "paqad_acc1": share([r["paqad_acc1"] for r in rs]),
                        "paqad_acc5": share([r["paqad_acc5"] for r in rs]),
                        "paqad_fn_acc5": share(fn), "n_fn": len(fn),
                        "bm25_acc1": share([r["bm25_acc1"] for r in rs]), "bm25_acc5": share([r["bm25_acc5"] for r in rs])}),
        "text": swebench.summarize(rs),
        "raw": raw_entry([path]),
    }


def speed_summary(run_id: str, path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    meta = data["meta"]
    corpora = {n: {"corpus": e.get("corpus"), "n_queries": e.get("n_queries"), "summary": e.get("summary")}
               for n, e in data["corpora"].items()}
    return {
        "run": run_id, "kind": "speed", "date": run_date(run_id), "command": meta.get("command"),
        "meta": meta,
        "fingerprint": {n: c["corpus"] for n, c in corpora.items()},
        "headline": {"targets": data.get("targets"), "corpora": {n: c["summary"] for n, c in corpora.items()}},
        "raw": raw_entry([path]),
    }


def rulers_summary(run_id: str, files: list[Path], latest_md: str | None) -> dict[str, Any]:
    from benchmarks import scoring

    arms: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for f in files:
        name = f.name[len(run_id) + 1: -len(".jsonl")]
        rs = rows(f)
        by_corpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rs:
            by_corpus[r["corpus"]].append(r)
        arms[name] = {"all": scoring.metrics(rs), **{c: scoring.metrics(v) for c, v in by_corpus.items()}}
        if rs and rs[0].get("settings"):
            settings[name] = rs[0]["settings"]
    out: dict[str, Any] = {"run": run_id, "kind": "rulers", "date": run_date(run_id), "command": None}
    if latest_md is not None:  # score.py's latest.md records the command and the fingerprints
        text = latest_md
        cmd = re.search(r"^`(python [^`]+)`", text, re.M)
        out["command"] = cmd[1] if cmd else None
        out["fingerprint"] = {m[1]: {"version": m[2], "fingerprint": m[3]}
                              for m in re.finditer(r"^\| (\S+) \| (\S+) \| `(sha256:[0-9a-f]+)` \|", text, re.M)}
    if settings:
        out["settings"] = settings
    out["headline_note"] = "per row file (retriever or configuration), per corpus and all: scoring.metrics"
    out["headline"] = r6(arms)
    out["raw"] = raw_entry(files)
    return out


def all_rulers_summary(run_id: str, d: Path) -> tuple[dict[str, Any], str]:
    """``all_rulers.py``: the table's figures for each half, and its three tables as Markdown."""
    from benchmarks import all_rulers_table

    rs = rows(d / f"{run_id}.jsonl")
    meta = json.loads((d / f"{run_id}-run.json").read_text())["meta"]
    identities = {r["corpus"]: (r.get("index") or {}).get("identity") for r in rs}
    out = {
        "run": run_id, "kind": "all_rulers", "date": run_date(run_id), "command": meta.get("command"),
        "settings": meta.get("settings"), "paqad": meta.get("paqad"), "paqad_commit": meta.get("git"),
        "machine": {k: meta.get(k) for k in ("wall_s", "nproc", "load_before", "load_after")},
        "fingerprint": identities, "skipped": meta.get("skipped"),
        "headline_note": "per half: per ruler, per language, all (cases) and macro (rulers): all_rulers_table.metrics",
        "headline": r6({half: all_rulers_table.figures(rs, half) for half in ("all", "tune", "report")}),
        "raw": raw_entry([d / f"{run_id}.jsonl", d / f"{run_id}-run.json"]),
    }
    return out, "\n".join(all_rulers_table.markdown(rs, meta, half) for half in ("all", "tune", "report"))


def rendered(dirs: list[Path], name: str, marker: str) -> tuple[str, str] | None:
    """The rendered tables of a run (``latest.md``, ``speed-latest.md``): the file at hand if it is
    this run's (it names ``marker``), else the tracked version of it that was; (text, where)."""
    for d in dirs:
        if (d / name).exists() and marker in (text := (d / name).read_text(encoding="utf-8")):
            return text, str(d / name)
    rel = f"benchmarks/results/{name}"
    log = subprocess.run(["git", "-C", str(REPO), "log", "--format=%H", "--", rel], capture_output=True, text=True).stdout.split()
    for commit in log:
        shown = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{rel}"], capture_output=True, text=True)
        if shown.returncode == 0 and marker in shown.stdout:
            return shown.stdout, f"{commit}:{rel}"
    return None


def summarize(run_id: str, dirs: list[Path]) -> tuple[dict[str, Any], str | None]:
    """The summary of one run, and the rendered Markdown kept beside it (if any)."""
    for d in dirs:
        if (d / f"{run_id}-run.json").exists() and (d / f"{run_id}.jsonl").exists():
            return all_rulers_summary(run_id, d)
        if (d / f"{run_id}-run.json").exists():
            return semble_summary(run_id, d), None
        if (d / f"swebench-sympy-{run_id}.jsonl").exists():
            return swebench_summary(run_id, d / f"swebench-sympy-{run_id}.jsonl"), None
        if (d / f"speed-{run_id}.json").exists():
            out = speed_summary(run_id, d / f"speed-{run_id}.json")
            md = rendered(dirs, "speed-latest.md", f"Run {out['meta'].get('started_utc', '?')} ")
            return out, md[0] if md else None
        files = sorted(d.glob(f"{run_id}-*.jsonl"))
        if files:
            md = rendered(dirs, "latest.md", f"`{run_id}-")
            out = rulers_summary(run_id, files, md[0] if md else None)
            if md:
                out["rendered_from"] = md[1].removeprefix(str(REPO) + "/")
            return out, md[0] if md else None
    raise SystemExit(f"no rows for run {run_id} in {', '.join(map(str, dirs))}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks summarize", description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", metavar="RUN_ID")
    ap.add_argument("--from", dest="src", action="append", type=Path, default=[], help="folder of rows (searched first)")
    ap.add_argument("--out", type=Path, default=SUMMARIES)
    ap.add_argument("--force", action="store_true", help="overwrite an existing summary")
    args = ap.parse_args(argv)
    dirs = source_dirs(args.src)
    args.out.mkdir(parents=True, exist_ok=True)
    for run_id in args.runs:
        target = args.out / f"{run_id}.json"
        if target.exists() and not args.force:
            print(f"{target} exists (--force to rewrite)", file=sys.stderr)
            continue
        summary, md = summarize(run_id, dirs)
        if md is not None:
            (args.out / f"{run_id}.md").write_text(md, encoding="utf-8")
            summary["rendered"] = f"{run_id}.md"
        target.write_text(pretty(summary) + "\n", encoding="utf-8")
        print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: {summary['kind']}, {target.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
