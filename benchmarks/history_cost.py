"""What the commit-history index costs (issue 35, item 3): time, CPU and disk per 1k commits, and per new commit.

    python -m benchmarks history_cost --repo /tmp/hist-sympy [--counts 5000,10000] [--new 20] [--all]

``--repo`` is a clone with its history (the corpora are one-commit snapshots, so none serves);
it is cloned again (``--shared --no-checkout``, the objects borrowed) into a temp folder, so its
own refs are never moved. For each count N, a fresh per-developer folder (``PAQAD_DATA_DIR``) and
``paqad.history.build.update(limit=N)``: wall time, this process's CPU and git's (``os.times``:
children), the store's bytes. ``--all`` adds the whole history. Then the cost of new commits: the
clone's branch is set back ``--new`` first-parent steps, the newest N built there, and the branch
moved forward one step at a time (a step is a commit, or a merge with the commits it brings) with
an update after each, as a post-commit run would do. Raw rows go to
``benchmarks/.cache/history_cost.json``, the summary to ``benchmarks/summaries/history_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from paqad.history import build, search

HERE = Path(__file__).resolve().parent
QUESTIONS = ("why does the printer wrap long lines", "fix the precision of float evaluation", "deprecate the old keyword argument",
             "speed up the matrix determinant", "solve fails on a rational equation")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=600)
    return done.stdout.strip()


def _measure(repo: Path, data: Path, limit: int | None) -> dict:
    os.environ["PAQAD_DATA_DIR"] = str(data)
    before, started = os.times(), time.perf_counter()
    report = build.update(repo, limit=limit)
    wall, after = time.perf_counter() - started, os.times()
    store = Path(report.path)
    size = sum(p.stat().st_size for p in store.parent.glob(store.name + "*"))
    cpu_self = (after.user - before.user) + (after.system - before.system)
    cpu_git = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"limit": limit, "read": report.read, "added": report.added, "dropped_secrets": report.dropped_secrets, "wall_s": round(wall, 3),
            "cpu_python_s": round(cpu_self, 3), "cpu_git_s": round(cpu_git, 3), "bytes": size, "full": report.full}


def _per_1k(row: dict) -> dict:
    k = max(row["read"], 1) / 1000
    return {"commits": row["read"], "wall_s_per_1k": round(row["wall_s"] / k, 2), "cpu_s_per_1k": round((row["cpu_python_s"] + row["cpu_git_s"]) / k, 2),
            "git_cpu_share": round(row["cpu_git_s"] / max(row["cpu_python_s"] + row["cpu_git_s"], 1e-9), 2), "mb_per_1k": round(row["bytes"] / 1e6 / k, 2)}


def _query_ms(repo: Path) -> float:
    times = []
    for _ in range(3):
        for q in QUESTIONS:
            started = time.perf_counter()
            search.search(repo, q, 10)
            times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def _new_commits(repo: Path, work: Path, steps: int, base: int) -> dict:
    branch = _git(repo, "symbolic-ref", "--short", "HEAD")
    tip = _git(repo, "rev-parse", "HEAD")
    chain = _git(repo, "rev-list", "--first-parent", f"--max-count={steps + 1}", tip).split()[::-1]  # oldest first
    _git(repo, "update-ref", f"refs/heads/{branch}", chain[0])
    _measure(repo, work / "new", base)
    rows = []
    for sha in chain[1:]:
        _git(repo, "update-ref", f"refs/heads/{branch}", sha)
        rows.append(_measure(repo, work / "new", None))
    _git(repo, "update-ref", f"refs/heads/{branch}", tip)
    per_commit = [r["wall_s"] / max(r["read"], 1) for r in rows]
    return {"steps": len(rows), "commits": sum(r["read"] for r in rows), "wall_ms_median_per_step": round(statistics.median(r["wall_s"] for r in rows) * 1000, 1),
            "wall_ms_median_per_commit": round(statistics.median(per_commit) * 1000, 1),
            "cpu_ms_median_per_step": round(statistics.median(r["cpu_python_s"] + r["cpu_git_s"] for r in rows) * 1000, 1), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone with its history (e.g. sympy)")
    parser.add_argument("--counts", default="5000,10000", help="newest-N commit counts to build from scratch")
    parser.add_argument("--all", action="store_true", help="also build the whole history")
    parser.add_argument("--new", type=int, default=20, help="first-parent steps appended one at a time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-cost-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(args.repo.resolve()), str(repo)], check=True, timeout=600)
        counts: list[int | None] = [int(c) for c in args.counts.split(",") if c]
        rows = [_measure(repo, work / f"n{n or 'all'}", n) for n in (counts + [None] if args.all else counts)]
        query_ms = _query_ms(repo)
        new = _new_commits(repo, work, args.new, counts[0] or 1000) if args.new else None
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(), "repo": str(args.repo),
           "builds": [{**_per_1k(r), "wall_s": r["wall_s"], "mb": round(r["bytes"] / 1e6, 1)} for r in rows], "query_ms_median": query_ms,
           "new_commits": {k: v for k, v in (new or {}).items() if k != "rows"}}
    (HERE / ".cache").mkdir(exist_ok=True)
    (HERE / ".cache" / "history_cost.json").write_text(json.dumps({**out, "raw": rows, "new_rows": (new or {}).get("rows")}, indent=1))
    (HERE / "summaries" / "history_cost.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
