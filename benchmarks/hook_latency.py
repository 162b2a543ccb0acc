"""Prompt-hook and git-hook cost with and without the resident ``paqad serve``, as hosts and git see it.

    nice -n 10 python -m benchmarks hook_latency [--corpus flask-3.1.3] [--runs 30] [--commits 50] [--rounds 3] [--provider local|none] [--json OUT]

On a copy of the corpus (never the cached original) it runs ``paqad rag init`` and ``paqad hooks
install --agents claude``, then runs Claude Code's configured ``UserPromptSubmit`` command with the
JSON Claude sends, a different question each time, from process start to exit, measuring wall
time and the CPU of the hook's processes (``sh`` and Python; ``RUSAGE_CHILDREN``, so a service
the hook starts is not counted):

* ``no_service``: ``PAQAD_RAG_SERVE=false``, today's in-process path (imports, model load, search);
* ``cold``: no service running: the first prompt answers in-process and starts one; also how
  long until that service answers (``service_ready_s``);
* ``warm``: the service running: the hook is a thin client (the service syncs, searches with the
  warm index and model, delivers);
* ``entry_import``: CPU of ``python -c 'import paqad.serve.hookclient'`` minus a bare ``python -c pass``;
* ``commits``: ``--commits`` commits in a tight loop (no pause between them), total wall time,
  with the hooks and a running service, with the hooks and no service (``rag_serve`` off: the
  first commit's Python runs the detached debounced update and stays for the burst), and after ``paqad hooks uninstall`` (git alone), ``--rounds``
  times with the order rotated, medians and their ratios; how long the background work took to
  settle; and the post-commit shim run by itself (``shim_alone``: what paqad adds to a commit).

The hook log says which path each prompt took (``live service hybrid`` ...). Prints one JSON
object (p50/p95 in ms) with the load average before and after. Uses the installed ``paqad``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpora
from benchmarks.emit import emit
from paqad import workspace  # per-developer state (logs, locks) lives outside the work tree

HERE = Path(__file__).resolve().parent
CORPORA = corpora.CACHE
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


def paqad(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([paqad_exe(), *args], cwd=root, capture_output=True, text=True, env=env)


def prepare(corpus: str, workdir: Path, provider: str) -> Path:
    root = corpora.private_copy(CORPORA / corpus, workdir / corpus)
    env = {**os.environ, "PAQAD_RAG_SERVE": "false"}
    for args in (["rag", "init", "--provider", provider], ["hooks", "install", "--agents", "claude"]):
        proc = paqad(root, *args, env=env)
        if proc.returncode != 0:
            sys.exit(f"paqad {' '.join(args)} failed: {proc.stderr}")
    return root


def hook_command(root: Path) -> str:
    data = json.loads((root / ".claude" / "settings.json").read_text())
    return data["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]


def timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> tuple[float, float]:
    """(wall ms, CPU ms of the child and its reaped descendants)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, check=False)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def time_prompt(root: Path, question: str, env: dict[str, str]) -> tuple[float, float, str]:
    payload = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": question}
    wall, cpu = timed(["sh", "-c", hook_command(root)], root, env, json.dumps(payload))
    return wall, cpu, last_path(root)


def last_path(root: Path) -> str:
    for line in reversed((workspace.logs_dir(root) / "hooks.log").read_text().splitlines()):
        entry = json.loads(line)
        if entry.get("action") == "context:claude":
            detail = entry.get("detail") or ""
            mode = " hybrid" if "(hybrid" in detail else " lexical" if "(lexical" in detail else ""
            door = " service" if entry.get("mode") == "service" else " in-process"
            return entry["status"] + door + mode
    return "?"


def question(i: int) -> str:
    return QUESTIONS[i % len(QUESTIONS)] + ("" if i < len(QUESTIONS) else f" ({i})")


def summary(walls: list[float], cpus: list[float] | None = None, paths: list[str] | None = None) -> dict:
    def stats(samples: list[float], unit: str) -> dict:
        qs = statistics.quantiles(samples, n=20, method="inclusive") if len(samples) > 1 else samples * 19
        return {f"p50_{unit}": round(statistics.median(samples), 1), f"p95_{unit}": round(qs[18], 1), f"max_{unit}": round(max(samples), 1)}

    out = {"n": len(walls), **stats(walls, "wall_ms")}
    if cpus:
        out.update(stats(cpus, "cpu_ms"))
    if paths:
        out["paths"] = {p: paths.count(p) for p in sorted(set(paths))}
    return out


def serve_ready(root: Path, env: dict[str, str], timeout: float = 120.0) -> float | None:
    """Seconds until the service answers ``paqad serve status`` (polling), or None."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        proc = paqad(root, "serve", "status", "--json", env=env)
        if proc.returncode == 0 and json.loads(proc.stdout)["running"]:
            return time.perf_counter() - started
        time.sleep(0.05)
    return None


def settle(root: Path, timeout: float = 300.0) -> float:
    """Seconds until no hook action holds its lock and the service (if any) has no pending job."""
    import filelock

    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        status = paqad(root, "serve", "status", "--json")
        service = json.loads(status.stdout).get("service") if status.returncode == 0 else None
        if not (service and service["jobs"]):
            break
        time.sleep(0.1)
    for lock_file in workspace.state_dir(root).glob("hook-*.lock"):
        lock = filelock.FileLock(str(lock_file), timeout=max(0.1, timeout - (time.perf_counter() - started)))
        try:
            lock.acquire()
            lock.release()
        except filelock.Timeout:
            pass
    return round(time.perf_counter() - started, 2)


def prompts(root: Path, env: dict[str, str], runs: int, offset: int = 0) -> dict:
    walls, cpus, paths = [], [], []
    for i in range(runs):
        wall, cpu, path = time_prompt(root, question(offset + i), env)
        walls.append(wall)
        cpus.append(cpu)
        paths.append(path)
    return summary(walls, cpus, paths)


def cold(root: Path, env: dict[str, str], runs: int) -> dict:
    walls, cpus, paths, ready = [], [], [], []
    for i in range(runs):
        paqad(root, "serve", "stop", env=env)
        settle(root)
        wall, cpu, path = time_prompt(root, question(100 + i), env)
        walls.append(wall)
        cpus.append(cpu)
        paths.append(path)
        took = serve_ready(root, env)
        if took is not None:
            ready.append(took + wall / 1000)
    return {**summary(walls, cpus, paths), "service_ready_s_p50": round(statistics.median(ready), 2) if ready else None}


def entry_import(runs: int) -> dict:
    bare = [timed([sys.executable, "-c", "pass"], Path(tempfile.gettempdir()), dict(os.environ))[1] for _ in range(runs)]
    entry = [timed([sys.executable, "-c", "import paqad.serve.hookclient"], Path(tempfile.gettempdir()), dict(os.environ))[1] for _ in range(runs)]
    return {"python_bare_cpu_ms_p50": round(statistics.median(bare), 1), "with_hookclient_cpu_ms_p50": round(statistics.median(entry), 1),
            "import_cpu_ms_p50": round(statistics.median(entry) - statistics.median(bare), 1)}


def update_runs(root: Path) -> list[dict]:
    """The finished rag-update runs in the hook log (each a real index update)."""
    log = workspace.logs_dir(root) / "hooks.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [e for e in map(json.loads, lines) if e.get("action") == "rag-update" and e.get("status") in ("ok", "failed", "timeout")]


def commit_loop(root: Path, count: int, env: dict[str, str], tag: str) -> dict:
    target = root / "paqad_bench_touch.py"
    runs_before = len(update_runs(root))
    started = time.perf_counter()
    for i in range(count):
        target.write_text(f'def bench_touch_{tag}_{i}():\n    """Changed by the hook benchmark, commit {i} of run {tag}."""\n    return {i}\n')
        subprocess.run(["git", *GIT_ID, "add", target.name], cwd=root, check=True, env=env)
        subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", f"bench {tag} {i}"], cwd=root, check=True, env=env)
    total = time.perf_counter() - started
    settled = settle(root)
    runs = update_runs(root)[runs_before:]
    return {"commits": count, "total_s": round(total, 2), "per_commit_ms": round(total * 1000 / count, 1), "settle_s": settled,
            "updates": len(runs), "update_modes": sorted({r["mode"] for r in runs})}


CONDITIONS = ("hooks_with_service", "without_hooks", "hooks_no_service")


def _condition(root: Path, name: str, env: dict[str, str]) -> dict[str, str]:
    """Put the copy in state ``name`` (hooks installed or not, a service running or not); the env to commit with."""
    no_service = {**env, "PAQAD_RAG_SERVE": "false"}
    if name == "without_hooks":
        paqad(root, "hooks", "uninstall", "--agents", "none", env=no_service)
        return no_service
    paqad(root, "hooks", "install", "--agents", "none", env=no_service)
    if name == "hooks_no_service":
        paqad(root, "serve", "stop", env=env)
        return no_service
    time_prompt(root, "warm up: where is the app object created", env)  # starts the service if none runs
    serve_ready(root, env)
    return env


def commits(root: Path, count: int, env: dict[str, str], rounds: int = 3) -> dict:
    """``rounds`` rounds of the three conditions, the order rotated each round (a machine whose
    load drifts during the run favours no condition); the ratios are of the medians."""
    loops: dict[str, list[dict]] = {name: [] for name in CONDITIONS}
    for r in range(rounds):
        for name in CONDITIONS[r % 3:] + CONDITIONS[: r % 3]:
            commit_env = _condition(root, name, env)
            loops[name].append(commit_loop(root, count, commit_env, f"{name}{r}"))
    out: dict = {}
    for name, runs in loops.items():
        totals = [run["total_s"] for run in runs]
        out[name] = {"total_s_median": round(statistics.median(totals), 2), "totals_s": totals,
                     "per_commit_ms_median": round(statistics.median(totals) * 1000 / count, 1),
                     "updates": [run["updates"] for run in runs], "settle_s": [run["settle_s"] for run in runs],
                     "update_modes": sorted({m for run in runs for m in run["update_modes"]})}
    base = out["without_hooks"]["total_s_median"]
    out["ratio_with_service"] = round(out["hooks_with_service"]["total_s_median"] / base, 2)
    out["ratio_no_service"] = round(out["hooks_no_service"]["total_s_median"] / base, 2)
    out["shim_alone"] = shim_alone(root, env, count)
    return out


def shim_alone(root: Path, env: dict[str, str], runs: int) -> dict:
    """The post-commit shim by itself with the service running (what paqad adds to each commit,
    git's own work aside): CPU and wall of ``sh .git/hooks/post-commit``, and the same for a bare
    ``sh -c true``."""
    _condition(root, "hooks_with_service", env)
    hook = root / ".git" / "hooks" / "post-commit"
    shim = [timed(["sh", str(hook)], root, env) for _ in range(runs)]
    bare = [timed(["sh", "-c", "true"], root, env) for _ in range(runs)]
    settle(root)
    return {"shim_cpu_ms_p50": round(statistics.median(c for _, c in shim), 2), "shim_wall_ms_p50": round(statistics.median(w for w, _ in shim), 2),
            "sh_true_cpu_ms_p50": round(statistics.median(c for _, c in bare), 2), "sh_true_wall_ms_p50": round(statistics.median(w for w, _ in bare), 2)}


def run(corpus: str, runs: int, n_commits: int, provider: str, rounds: int = 3) -> dict:
    with tempfile.TemporaryDirectory(prefix="paqad-hook-bench-") as tmp:
        root = prepare(corpus, Path(tmp), provider)
        env = {**os.environ, "PATH": f"{Path(paqad_exe()).parent}:{os.environ.get('PATH', '')}"}
        for key in ("PAQAD_HOOK_BUDGET", "PAQAD_RAG_SERVE"):
            env.pop(key, None)
        load_before = [round(x, 2) for x in os.getloadavg()]
        result: dict = {"corpus": corpus, "provider": provider, "cpus": os.cpu_count(), "load_before": load_before}
        result["entry_import"] = entry_import(runs)
        off = {**env, "PAQAD_RAG_SERVE": "false"}
        time_prompt(root, "warm up: where is the app object created", off)
        result["no_service"] = prompts(root, off, runs)
        result["cold"] = cold(root, env, max(3, runs // 5))
        serve_ready(root, env)
        time_prompt(root, "warm up: where is the app object created", env)
        result["warm"] = prompts(root, env, runs, offset=200)
        result["commits"] = commits(root, n_commits, env, rounds)
        paqad(root, "serve", "stop", env=env)
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three commit-loop conditions (order rotated)")
    parser.add_argument("--provider", default="local", choices=["local", "none"], help="rag_embedding_provider for the index (local is the default)")
    parser.add_argument("--json", dest="out", default=None, help="Also write the result to this file.")
    args = parser.parse_args()
    result = run(args.corpus, args.runs, args.commits, args.provider, args.rounds)
    emit(result, args.out)


if __name__ == "__main__":
    main()
