#!/usr/bin/env python3
"""Every ruler, one command: paqad scored gated and ungated on all rulers, one table.

    python -m benchmarks all_rulers [--ruler NAME ...] [--half tune|report|all] [--set SETTING=VALUE ...]
                                    [--lexical] [--limit-corpora N] [--sympy-git DIR]
    python -m benchmarks all_rulers --rescore ROWS.jsonl [--half ...] [--ruler ...]

Rulers, each turned into cases of ``rulers/OUTSIDE.md``'s shape (``all_rulers_cases.py``): ours
(``rulers/{flask,requests,cobra,rxjs}.yaml``; ``refusal.yaml`` is the ruler ``refusal``, asked
against every corpus it names), the semble benchmark (``semble.py``'s tasks over its fetched
repositories), SWE-bench Lite sympy (``rulers/swebench/sympy.json``: gold functions with their
lines, gold files without a function by path) and every ``.cache/outside/cases/*.jsonl``. Every
case's half is ``tune`` when ``int(sha256(f"{ruler}:{id}")[:8], 16)`` is even, else ``report``.
A ruler whose data is not fetched is skipped with one line naming the command that fetches it.

paqad runs in-process. Each corpus is copied once into ``.cache/all_rulers/work/`` (a pinned
corpus keeps its fingerprint), and indexed with ``PAQAD_DATA_DIR`` set to
``.cache/all_rulers/data/<settings key>/``, so the index lives in the benchmark cache, one per
settings; it is reused (``build.update``, which rebuilds if paqad's index versions changed) when the
corpus fingerprint, the paqad version and the settings are those it was built for. Every case is
asked gated (``rag search``: the evidence gate and floor; relief passages marked low_confidence
count as answered) and ungated (``rag probe``), top 10. Rows, one per case, go to
``.cache/results/all_rulers/<UTC stamp>.jsonl``: ranks (unit rank under the HIT RULE when the case
gives lines, file rank always) and NDCG@10 for both, the gate's diagnosis and evidence, delivered
characters and tokens (chars / 4), the ungated top 10 with scores. The table is printed and
written to ``.cache/results/all_rulers/latest.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import all_rulers_cases as cases_mod
from benchmarks import all_rulers_loc, corpora, score, scoring, semble
from benchmarks.all_rulers_cases import Case, CorpusSource

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CACHE = HERE / ".cache" / "all_rulers"
RESULTS = HERE / ".cache" / "results" / "all_rulers"  # gitignored; summaries/ keeps published runs
K = 10
LEXICAL = {"rag_embedding_provider": "none"}  # the lexical-only setting (paqad/settings.py)


# --------------------------------------------------------------------------- scoring one answer


def path_rule(ruler: str) -> Callable[[str, str], bool]:
    """semble's annotations name files by a path suffix; every other ruler by the exact path."""
    return semble.path_matches if ruler == "semble" else (lambda a, b: a == b)


def answer_rank(results: list[tuple[str, int, int]], ans: dict[str, Any], same: Callable[[str, str], bool], unit: bool) -> int | None:
    """1-based rank of the first result hitting one answer: the HIT RULE on its lines (``unit``), else the path."""
    for rank, (path, start, end) in enumerate(results[:K], 1):
        if not same(path, ans["path"]):
            continue
        if not unit:
            return rank
        lo, hi = ans["lines"]
        if scoring.unit_hit((ans["path"], start, end), scoring.Expected(ans["path"], int(lo), int(hi))):
            return rank
    return None


def ranks_of(case: Case, results: list[tuple[str, int, int]]) -> dict[str, Any]:
    """unit rank (over the answers with lines; None when none has), file rank, NDCG@10."""
    same = path_rule(case.ruler)
    with_lines = [a for a in case.answers if a.get("lines")]
    unit = [answer_rank(results, a, same, True) for a in with_lines]
    files = [answer_rank(results, a, same, False) for a in case.answers]
    if case.ruler == "semble":  # upstream's own rule: suffix paths, any overlap with a target's span
        targets = [(a["path"], *(a["lines"] or (None, None))) for a in case.answers]
        found = semble.target_ranks(results[:K], targets)
    else:
        found = [answer_rank(results, a, same, bool(a.get("lines"))) for a in case.answers]
    return {
        "unit_rank": min((r for r in unit if r), default=None) if with_lines else None,
        "file_rank": min((r for r in files if r), default=None),
        "ndcg10": round(semble.ndcg_at_k([r for r in found if r], len(case.answers)), 4) if case.answers else None,
    }


# --------------------------------------------------------------------------- corpora and indexes


def settings_key(overrides: dict[str, str]) -> str:
    if not overrides:
        return "default"
    if overrides == LEXICAL:
        return "lexical"
    import hashlib

    return "set-" + hashlib.sha256(json.dumps(overrides, sort_keys=True).encode()).hexdigest()[:10]


def working_copy(src: CorpusSource, work: Path) -> tuple[Path, str]:
    """The corpus's private copy under ``work`` and its identity (fingerprint, or the git commit of
    a materialised checkout), re-made when it drifted."""
    dst = work / src.key.replace("/", "+")
    mark = dst.with_name(dst.name + ".identity")
    if dst.is_dir() and mark.exists() and mark.read_text().strip() == src.identity:
        if not src.identity.startswith("sha256:") or score.copy_fingerprint(dst) == src.identity:
            return dst, src.identity
    shutil.rmtree(dst, ignore_errors=True)
    mark.unlink(missing_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    src.materialise(dst)
    got = score.copy_fingerprint(dst) if src.identity.startswith("sha256:") else src.identity
    if got != src.identity:
        corpora.warn_loud(f"{src.key}: copy fingerprint {got} != {src.identity}; scores are for DRIFTED bytes")
    mark.write_text(got + "\n")
    return dst, got


def paqad_version() -> str:
    import paqad

    return str(getattr(paqad, "__version__", "?"))


def stamp_of(data: Path, root: Path) -> dict[str, Any] | None:
    path = data / "stamps" / (root.name + ".json")
    return json.loads(path.read_text()) if path.exists() else None


def seed_index(seed: Path, root: Path) -> None:
    """Start ``root``'s index as a copy of ``seed``'s (another commit of the same repository):
    ``build.update`` then re-indexes only the files that differ, the path git hooks take."""
    from paqad import workspace
    from paqad.index.reader import Index

    Index.forget(seed)
    Index.forget(root)
    dst = workspace.vectors_dir(root)
    shutil.rmtree(dst, ignore_errors=True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(workspace.vectors_dir(seed), dst, ignore=shutil.ignore_patterns("*.lock"))


def prepare(root: Path, identity: str, overrides: dict[str, str], data: Path, seed: Path | None = None) -> tuple[Any, dict[str, Any]]:
    """Index ``root`` (its state under ``data``, the PAQAD_DATA_DIR in force) or reuse the index
    built for the same identity, paqad version and settings; ``seed``: a copy of the same
    repository at another commit whose index, built with this paqad and settings, may start this
    one. Returns the config and build facts."""
    from paqad import config
    from paqad.index import store
    from paqad.index.reader import Index
    from paqad.index.writing import build

    cfg = config.load(root, cli_overrides=overrides, environ={})
    want = {"identity": identity, "paqad": paqad_version(), "settings": overrides}
    stamp = data / "stamps" / (root.name + ".json")
    started = time.perf_counter()
    have = stamp_of(data, root) or {}
    # an index that was seeded is reused only by a run that seeds (an update need not rank as a fresh build)
    reuse = {k: have.get(k) for k in want} == want and (seed is not None or not have.get("seeded")) and store.current_path(root) is not None
    seeded = bool(reuse and have.get("seeded"))
    by_seed = stamp_of(data, seed) if seed is not None else None
    if not reuse and seed is not None and by_seed and (by_seed.get("paqad"), by_seed.get("settings")) == (want["paqad"], overrides):
        seed_index(seed, root)
        seeded = True
    report = build.update(root, cfg) if reuse or seeded else build.build_full(root, cfg)
    Index.forget(root)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({**want, "seeded": seeded}) + "\n")
    return cfg, {"reused": reuse, "seeded": seeded, "mode": report.mode, "files": report.files_indexed, "units": report.units,
                 "index_s": round(time.perf_counter() - started, 2)}


# --------------------------------------------------------------------------- asking


def ask(cfg: Any, root: Path, q: str, gate: bool) -> tuple[Any, float]:
    from paqad.index.reader import Index
    from paqad.search import pipeline
    from paqad.search.request import SearchRequest

    started = time.perf_counter()
    resp = pipeline.run(Index.shared(root), SearchRequest.from_settings(cfg, root, q, top_n=K, gate=gate))
    return resp, round((time.perf_counter() - started) * 1000, 2)


def spans(resp: Any) -> list[tuple[str, int, int]]:
    return [(r.path, int(r.start_line), int(r.end_line)) for r in resp.results]


def case_row(case: Case, cfg: Any, root: Path, overrides: dict[str, str]) -> dict[str, Any]:
    """One case asked gated and ungated: everything the table and a later re-scored gate need."""
    gated, g_ms = ask(cfg, root, case.q, True)
    probe, u_ms = ask(cfg, root, case.q, False)
    chars = sum(len(r.source or "") for r in gated.results) if gated.answered else 0
    loc = {"loc": all_rulers_loc.localize(case, cfg, root)} if all_rulers_loc.wants(case) else {}
    return {
        **loc,
        **case.head(),
        "answered": bool(gated.answered),
        "low_confidence": sum(1 for r in gated.results if r.low_confidence),
        "reason": None if gated.answered else (gated.diagnosis or {}).get("reason"),
        "gated": ranks_of(case, spans(gated)) if gated.answered else {"unit_rank": None, "file_rank": None, "ndcg10": 0.0 if case.answers else None},
        "ungated": ranks_of(case, spans(probe)),
        "chars": chars,
        "tokens": round(chars / 4),
        "ms": {"gated": g_ms, "ungated": u_ms},
        "mode": gated.mode,
        "vectors_pending": gated.vectors_pending,  # > 0: the model had not embedded every unit (the figures are not the default's)
        "interim_vectors": gated.interim_vectors,
        "delivered": [[r.path, r.start_line, r.end_line, round(r.score, 4), r.low_confidence] for r in gated.results],
        "candidates": [[r.path, r.start_line, r.end_line, round(r.score, 4)] for r in probe.results[:K]],
        "diagnosis": gated.diagnosis,
        "evidence": gated.evidence,
        "settings": overrides,
    }


@dataclass
class Run:
    overrides: dict[str, str]
    data: Path  # PAQAD_DATA_DIR of this settings key
    work: Path  # the private corpus copies
    seed: bool = False  # a repository's index at one commit starts from its index at the previous one


def family(key: str) -> str | None:
    """``owner__name`` of a corpus key ``owner__name@commit``: copies of one repository at other commits."""
    return key.rsplit("@", 1)[0] if "@" in key else None


def run_corpus(src: CorpusSource, cases: list[Case], run: Run, seed: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Copy, index (or reuse) and ask every case of one corpus; a failure is recorded, not raised."""
    try:
        root, identity = working_copy(src, run.work)
        cfg, info = prepare(root, identity, run.overrides, run.data, seed)
        info["root"] = str(root)
    except Exception as exc:  # noqa: BLE001 - one broken corpus must not end a long run
        print(f"  {src.key}: PREPARE FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return [], {"error": f"{type(exc).__name__}: {exc}"[-800:]}
    rows = []
    for case in cases:
        try:
            rows.append(case_row(case, cfg, root, run.overrides))
        except Exception as exc:  # noqa: BLE001
            print(f"  {case.ruler} {case.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            rows.append({**case.head(), "error": f"{type(exc).__name__}: {exc}"[-500:], "settings": run.overrides})
    return rows, {**info, "identity": identity}


def run_all(selected: cases_mod.Selection, run: Run, out: Path) -> list[dict[str, Any]]:
    """Every corpus of the selection, rows appended to ``out`` as each corpus finishes."""
    old = os.environ.get("PAQAD_DATA_DIR")
    os.environ["PAQAD_DATA_DIR"] = str(run.data.resolve())
    rows: list[dict[str, Any]] = []
    last: dict[str, Path] = {}  # family -> the root indexed last (a seed for the next commit)
    try:
        for key, cs in selected.by_corpus().items():
            started = time.perf_counter()
            fam = family(key) if run.seed else None
            got, info = run_corpus(selected.corpora[key], cs, run, last.get(fam) if fam else None)
            if fam and info.get("root"):
                last[fam] = Path(info["root"])
            for r in got:
                r["index"] = info
            with out.open("a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in got)
            rows += got
            answered = sum(1 for r in got if r.get("answered"))
            print(f"  {key:40s} {len(cs):4d} cases, {answered} answered, index {info.get('mode', info.get('error', '?'))}"
                  f" {info.get('index_s', '-')} s, {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    finally:
        if old is None:
            os.environ.pop("PAQAD_DATA_DIR", None)
        else:
            os.environ["PAQAD_DATA_DIR"] = old
    return rows


# --------------------------------------------------------------------------- command


def git_describe() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return p.stdout.strip() or "?"


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def render(rows: list[dict[str, Any]], meta: dict[str, Any], half: str, rulers: list[str] | None) -> str:
    from benchmarks import all_rulers_table as table

    rows = [r for r in rows if not rulers or cases_mod.wanted(r["ruler"], rulers)]
    return "\n".join([table.markdown(rows, meta, half), *all_rulers_loc.table(rows)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ruler", action="append", default=[], metavar="NAME", help="only this ruler (repeatable; glob ok: 'arb-*')")
    ap.add_argument("--half", choices=("tune", "report", "all"), default="all", help="which half the table is over (default all)")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="SETTING=VALUE", help="paqad setting override (repeatable)")
    ap.add_argument("--lexical", action="store_true", help="lexical only: --set rag_embedding_provider=none")
    ap.add_argument("--limit-corpora", action="append", default=[], metavar="[RULER=]N",
                    help="only N corpora of each ruler, or of RULER (repeatable): a quick run, or SWE-bench's 77 sympy commits cut down")
    ap.add_argument("--seed", action="store_true",
                    help="start each index of a repository at another commit (SWE-bench sympy) from the previous one's, by build.update")
    ap.add_argument("--sympy-git", default="/work/.mirror/sympy+sympy/repo", help="git directory with sympy's history (SWE-bench)")
    ap.add_argument("--rescore", metavar="ROWS", help="print the table of saved rows; nothing is searched")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.rescore:
        path = Path(args.rescore)
        run_file = path.with_name(path.stem + "-run.json")
        saved = json.loads(run_file.read_text())["meta"] if run_file.exists() else {"stamp": path.stem, "command": "?"}
        text = render(read_rows(path), saved, args.half, args.ruler)
        print(text)
        return 0
    overrides = score.parse_settings(args.settings)
    if args.lexical:
        overrides = {**LEXICAL, **overrides}
    selected = cases_mod.load_all(args.ruler, cases_mod.parse_limits(args.limit_corpora), Path(args.sympy_git))
    for line in selected.skipped:
        print(line, file=sys.stderr)
    if not selected.cases:
        print("no ruler to run", file=sys.stderr)
        return 1
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    rows_path = out_dir / f"{stamp}.jsonl"
    key = settings_key(overrides)
    run = Run(overrides, CACHE / "data" / key, CACHE / "work", args.seed)
    meta: dict[str, Any] = {
        "stamp": stamp, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "git": git_describe(), "paqad": paqad_version(),
        "command": "python -m benchmarks all_rulers " + " ".join(argv if argv is not None else sys.argv[1:]),
        "settings": overrides, "settings_key": key, "load_before": os.getloadavg(), "nproc": os.cpu_count(),
        "rulers": selected.counts(), "skipped": selected.skipped,
    }
    print(f"{len(selected.cases)} cases over {len(selected.corpora)} corpora, settings {key}; rows: {rows_path}", file=sys.stderr)
    started = time.perf_counter()
    rows = run_all(selected, run, rows_path)
    meta.update(load_after=os.getloadavg(), wall_s=round(time.perf_counter() - started, 1))
    (out_dir / f"{stamp}-run.json").write_text(json.dumps({"meta": meta}, indent=1) + "\n")
    text = render(rows, meta, args.half, None)
    (out_dir / "latest.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
