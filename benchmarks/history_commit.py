"""A commit with the hooks installed, with and without ``history-update`` (issue 35, item 3).

    python -m benchmarks history_commit --repo /tmp/hist-sympy [--commits 20] [--pause 3] [--history 5000]

Two clones of ``--repo`` (``--shared``, so the long history is borrowed) in a temp folder, each
with ``paqad hooks install --agents none`` and its own per-developer folder (``PAQAD_DATA_DIR``),
``rag_serve`` off (each commit's shim starts the hook's Python; no service takes the events).
Arm ``history``: ``.paqad/hooks.yaml`` runs ``[rag-update, history-update]`` after a commit and
the history store holds the newest ``--history`` commits; arm ``default``: the default
``hooks.yaml``. Retrieval is off in both (no index of the clone: ``rag-update`` is skipped), so
the arms differ by the history action alone. The arms commit in turn (one appended line, ``git
add``, ``git commit``), ``--pause`` seconds apart so each commit's background work ends before the
next (a commit alone, not a burst); the wall time of ``git commit`` is what git and the shim cost
the developer. Then each arm's ``logs/hooks.log`` says how long its background actions took.
Raw rows go to ``benchmarks/.cache/history_commit.json``, the summary to
``benchmarks/summaries/history_commit.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from paqad import workspace

HERE = Path(__file__).resolve().parent
ARMS = ("history", "default")


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, timeout=1800)


def _setup(source: Path, work: Path, arm: str, history: int) -> tuple[Path, dict[str, str]]:
    root = work / arm
    env = {**os.environ, "PAQAD_DATA_DIR": str(work / f"data-{arm}"), "PAQAD_RAG_SERVE": "false"}
    _run(["git", "clone", "-q", "--shared", str(source), str(root)], work, env)
    for key, value in (("user.name", "bench"), ("user.email", "bench@paqad.invalid"), ("commit.gpgsign", "false")):
        _run(["git", "config", key, value], root, env)
    _run(["paqad", "hooks", "install", "--agents", "none"], root, env)
    if arm == "history":
        (root / ".paqad" / "hooks.yaml").write_text("post-commit: [rag-update, history-update]\n", encoding="utf-8")
        _run(["paqad", "rag", "history", "--max-commits", str(history)], root, env)
    return root, env


def _commit(root: Path, env: dict[str, str], n: int) -> float:
    with (root / "bench.txt").open("a", encoding="utf-8") as fh:
        fh.write(f"{n}\n")
    _run(["git", "add", "bench.txt"], root, env)
    started = time.perf_counter()
    _run(["git", "commit", "-q", "-m", f"bench {n}"], root, env)
    return (time.perf_counter() - started) * 1000


def _background(root: Path, env: dict[str, str]) -> list[dict]:
    """The hook runs the log recorded: action, status and seconds."""
    os.environ["PAQAD_DATA_DIR"] = env["PAQAD_DATA_DIR"]
    log = workspace.logs_dir(root) / "hooks.log"
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.is_file() else []:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        rows.append({k: row.get(k) for k in ("event", "action", "status", "seconds", "detail")})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone with a long history (e.g. sympy)")
    parser.add_argument("--commits", type=int, default=20, help="commits per arm")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between commits")
    parser.add_argument("--history", type=int, default=5000, help="newest commits in the history arm's store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-commit-") as tmp:
        work = Path(tmp)
        arms = {arm: _setup(args.repo.resolve(), work, arm, args.history) for arm in ARMS}
        load_before = os.getloadavg()
        walls: dict[str, list[float]] = {arm: [] for arm in ARMS}
        for n in range(args.commits):
            for arm in ARMS if n % 2 == 0 else ARMS[::-1]:
                walls[arm].append(_commit(*arms[arm], n))
                time.sleep(args.pause)
        time.sleep(args.pause * 2)
        logs = {arm: _background(*arms[arm]) for arm in ARMS}
    ratios = [a / b for a, b in zip(walls["history"], walls["default"], strict=True)]
    history_runs = [r for r in logs["history"] if r.get("action") == "history-update" and re.match(r"history: \d+ commits added \([1-9]", str(r.get("detail")))]
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": load_before, "load_after": os.getloadavg(),
           "repo": str(args.repo), "commits_per_arm": args.commits, "pause_s": args.pause,
           "commit_wall_ms_median": {arm: round(statistics.median(walls[arm]), 1) for arm in ARMS},
           "commit_wall_ms_range": {arm: [round(min(walls[arm]), 1), round(max(walls[arm]), 1)] for arm in ARMS},
           "ratio_median_pairwise": round(statistics.median(ratios), 3),
           "history_update_runs": len(history_runs),
           "history_update_s_median": round(statistics.median(float(r["seconds"] or 0) for r in history_runs), 3) if history_runs else None}
    (HERE / ".cache").mkdir(exist_ok=True)
    (HERE / ".cache" / "history_commit.json").write_text(json.dumps({**out, "walls": walls, "logs": logs}, indent=1))
    (HERE / "summaries" / "history_commit.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
