"""Prompt-hook and post-commit latency, measured the way the hosts and git see them.

    python benchmarks/hook_latency.py [--corpus flask-3.1.3] [--runs 40] [--provider local|none] [--json OUT]

On a copy of the corpus (never the cached original) it runs ``paqad rag init`` and
``paqad hooks install --agents claude``, then times, from process start to exit:

* same-prompt path: Claude Code's configured ``UserPromptSubmit`` command fed the JSON Claude
  sends, a different question each time, on a warm index (the hook records the prompt, syncs the
  index, searches and answers within its budget); the hook log says which path each run took;
* stale path: the same with ``PAQAD_HOOK_BUDGET=0``, so the hook hands over the last context
  marked stale and starts a background refresh (what a cold index or a slow model costs a prompt);
* the floor: the same command where there is nothing to do (process start and imports);
* ``git commit`` (one changed file each time) with paqad's post-commit shim installed, and again
  after ``paqad hooks uninstall`` (git alone): the shim's cost is the difference.

Prints one JSON object with p50/p95 in milliseconds. Uses the installed ``paqad`` console script
(PYTHONPATH decides which paqad it imports).
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
CORPORA = HERE / ".cache" / "corpora"
GIT_ID = ["-c", "user.name=paqad bench", "-c", "user.email=bench@paqad.invalid", "-c", "commit.gpgsign=false"]
QUESTIONS = [
    "where is the session cookie signed",
    "how does the app register a blueprint",
    "where are url rules matched to view functions",
    "how is the json provider chosen",
    "what happens when a request context is pushed",
    "where is the secret key used",
    "how are static files served",
    "how does the test client follow redirects",
    "where are template filters registered",
    "how are errors handled by error handlers",
]


def paqad_exe() -> str:
    exe = shutil.which("paqad", path=str(Path(sys.executable).parent)) or shutil.which("paqad")
    if not exe:
        sys.exit("the paqad console script is not installed")
    return exe


def prepare(corpus: str, workdir: Path, provider: str = "local") -> Path:
    source = CORPORA / corpus
    if not (source / ".git").exists():
        sys.exit(f"{source}: not fetched; run python benchmarks/corpora.py fetch")
    root = workdir / corpus
    shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".paqad"))
    for args in (["rag", "init", "--provider", provider], ["hooks", "install", "--agents", "claude"]):
        proc = subprocess.run([paqad_exe(), *args], cwd=root, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"paqad {' '.join(args)} failed: {proc.stderr}")
    return root


def hook_command(root: Path) -> str:
    data = json.loads((root / ".claude" / "settings.json").read_text())
    return data["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]


def time_prompt(root: Path, question: str, env: dict[str, str]) -> tuple[float, str]:
    payload = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": question}
    started = time.perf_counter()
    proc = subprocess.run(["sh", "-c", hook_command(root)], cwd=root, input=json.dumps(payload), capture_output=True, text=True, env=env)
    ms = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        sys.exit(f"the prompt hook exited {proc.returncode}: {proc.stderr}")
    return ms, last_path(root)


def last_path(root: Path) -> str:
    lines = (root / ".paqad" / "logs" / "hooks.log").read_text().splitlines()
    for line in reversed(lines):
        entry = json.loads(line)
        if entry.get("action") == "context:claude":
            mode = " hybrid" if "(hybrid" in (entry.get("detail") or "") else " lexical" if "(lexical" in (entry.get("detail") or "") else ""
            return entry["status"] + mode
    return "?"


def settle(root: Path, timeout: float = 60.0) -> None:
    """Wait until no background action holds its lock (a refresh or update started by a hook)."""
    import filelock

    deadline = time.time() + timeout
    for lock_file in (root / ".paqad" / "state").glob("hook-*.lock"):
        lock = filelock.FileLock(str(lock_file), timeout=max(0.1, deadline - time.time()))
        try:
            lock.acquire()
            lock.release()
        except filelock.Timeout:
            pass


def time_commits(root: Path, runs: int) -> list[float]:
    out = []
    target = root / "paqad_bench_touch.txt"
    for i in range(runs):
        target.write_text(f"change {i} {time.time()}\n")
        subprocess.run(["git", *GIT_ID, "add", target.name], cwd=root, check=True)
        started = time.perf_counter()
        subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", f"bench {i}"], cwd=root, check=True)
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(0.2)
        settle(root)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    qs = statistics.quantiles(samples, n=20, method="inclusive")
    return {"n": len(samples), "p50_ms": round(statistics.median(samples), 1), "p95_ms": round(qs[18], 1), "max_ms": round(max(samples), 1)}


def run(corpus: str, runs: int, provider: str = "local") -> dict:
    with tempfile.TemporaryDirectory(prefix="paqad-hook-bench-") as tmp:
        root = prepare(corpus, Path(tmp), provider)
        env = {**os.environ, "PATH": f"{Path(paqad_exe()).parent}:{os.environ.get('PATH', '')}"}
        env.pop("PAQAD_HOOK_BUDGET", None)
        time_prompt(root, "warm up: where is the app object created", env)
        floor = []
        for _ in range(runs):  # the same command with nothing to do (not a repository): process start + imports
            started = time.perf_counter()
            subprocess.run(["sh", "-c", hook_command(root)], cwd=tmp, input="{}", capture_output=True, text=True, env=env)
            floor.append((time.perf_counter() - started) * 1000)
        live, paths = [], []
        for i in range(runs):
            ms, path = time_prompt(root, QUESTIONS[i % len(QUESTIONS)] + ("" if i < len(QUESTIONS) else f" ({i})"), env)
            live.append(ms)
            paths.append(path)
        settle(root)
        stale, stale_paths = [], []
        for i in range(runs):
            ms, path = time_prompt(root, QUESTIONS[i % len(QUESTIONS)], {**env, "PAQAD_HOOK_BUDGET": "0"})
            stale.append(ms)
            stale_paths.append(path)
            settle(root)
        with_shim = time_commits(root, runs)
        subprocess.run([paqad_exe(), "hooks", "uninstall", "--agents", "none"], cwd=root, check=True, capture_output=True)
        without = time_commits(root, runs)
        return {
            "corpus": corpus,
            "provider": provider,
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
            "hook_process_floor": summary(floor),
            "same_prompt": {**summary(live), "paths": {p: paths.count(p) for p in set(paths)}},
            "stale": {**summary(stale), "paths": {p: stale_paths.count(p) for p in set(stale_paths)}},
            "git_commit_with_shim": summary(with_shim),
            "git_commit_without": summary(without),
            "shim_cost_p50_ms": round(statistics.median(with_shim) - statistics.median(without), 1),
            "shim_cost_p95_ms": round(summary(with_shim)["p95_ms"] - summary(without)["p95_ms"], 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--provider", default="local", choices=["local", "none"], help="rag_embedding_provider for the index (local is the default)")
    parser.add_argument("--json", dest="out", default=None, help="Also write the result to this file.")
    args = parser.parse_args()
    result = run(args.corpus, args.runs, args.provider)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
