"""What the `pre-commit` framework hook costs: the first commit (environment build) and every later one.

    python -m benchmarks precommit_cost [--corpus flask-3.1.3] [--commits 12] [--json OUT]

Uses the real ``pre-commit`` (the one importable by this interpreter, from PyPI) exactly as the
README says: a local clone of this repository tagged ``v0.1.0`` (what a release tag would be),
``.pre-commit-config.yaml`` naming it with ``rev: v0.1.0``, ``pre-commit install --hook-type
post-commit`` in a copy of the corpus, then ``git commit``s that change one file each. Measures:

* the first commit, which makes pre-commit clone the hook repository and build its virtualenv
  (pip installs paqad and its dependencies), and the size of that environment on disk;
* ``git commit`` wall time with the hook installed and, on the same repository after
  ``pre-commit uninstall``, without it: the median difference is the per-commit overhead (the
  index update itself runs detached, after git returns).

``PRE_COMMIT_HOME`` is a fresh temporary folder, so nothing is reused from an earlier run except
pip's own download cache. The index is lexical (``PAQAD_RAG_EMBEDDING_PROVIDER=none``) so a
background embedding run does not load the machine while commits are timed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPORA = HERE / ".cache" / "corpora"
GIT_ID = ["-c", "user.name=paqad bench", "-c", "user.email=bench@paqad.invalid", "-c", "commit.gpgsign=false"]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 1800) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stdout[-800:]}{done.stderr[-800:]}")
    return time.perf_counter() - started


def _commit(repo: Path, env: dict[str, str], n: int) -> float:
    (repo / "paqad_bench_note.py").write_text(f"def bench_note():\n    '''Benchmark commit number {n}.'''\n    return {n}\n")
    _run(["git", *GIT_ID, "add", "-A"], repo, env)
    return _run(["git", *GIT_ID, "commit", "-q", "-m", f"bench {n}"], repo, env)


def _size_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6, 1)


def measure(corpus: str, commits: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="paqad-precommit-"))
    try:
        env = {**os.environ, "PRE_COMMIT_HOME": str(work / "pre-commit-home"), "PAQAD_RAG_EMBEDDING_PROVIDER": "none"}
        source = work / "paqad-src"
        _run(["git", "clone", "-q", str(REPO), str(source)], work, env)
        _run(["git", *GIT_ID, "tag", "v0.1.0"], source, env)
        repo = work / "repo"
        shutil.copytree(CORPORA / corpus, repo, symlinks=True, ignore=shutil.ignore_patterns(".paqad"))
        (repo / ".pre-commit-config.yaml").write_text(f"repos:\n  - repo: {source}\n    rev: v0.1.0\n    hooks:\n      - id: paqad-update\n")
        _run([*PRE_COMMIT, "install", "--hook-type", "post-commit"], repo, env)
        first = _commit(repo, env, 0)
        env_mb = _size_mb(work / "pre-commit-home")
        time.sleep(5)  # the first background build (lexical) finishes before anything is timed
        with_hook = []
        for n in range(1, commits + 1):
            with_hook.append(_commit(repo, env, n))
            time.sleep(2.5)  # past the 2 s debounce: every commit starts its own update
        _run([*PRE_COMMIT, "uninstall", "--hook-type", "post-commit"], repo, env)
        time.sleep(3)
        without = [_commit(repo, env, 100 + n) for n in range(commits)]
        med_with, med_without = statistics.median(with_hook), statistics.median(without)
        return {
            "corpus": corpus, "commits": commits, "first_commit_s": round(first, 1), "pre_commit_home_mb": env_mb,
            "commit_with_hook_ms": {"p50": round(med_with * 1000), "max": round(max(with_hook) * 1000)},
            "commit_without_ms": {"p50": round(med_without * 1000), "max": round(max(without) * 1000)},
            "overhead_ms_p50": round((med_with - med_without) * 1000),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="flask-3.1.3")
    ap.add_argument("--commits", type=int, default=12)
    ap.add_argument("--json", dest="out")
    args = ap.parse_args()
    figures = measure(args.corpus, args.commits)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
