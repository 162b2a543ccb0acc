"""The warm prompt hook of two paqad revisions side by side in one run: the hook's CPU and wall time.

    nice -n 10 python -m benchmarks prompt_client_cost --before REV [--after REV] [--corpus flask-3.1.3]
        [--runs 30] [--provider local|none] [--bytecode] [--json OUT]

Each revision's ``paqad/`` is exported (``git archive``) into a temp folder, and one copy of the
corpus gets that revision everywhere: ``rag init``, ``paqad hooks install --agents claude`` and the
machine shim ``.paqad/bin/paqad`` (the revision's own text, with ``PYTHONPATH`` set to its folder),
so the prompt hook, the service it talks to and the service's git calls are all that revision's.
Both services are started and warmed first; then the prompts alternate between the two copies
(the same questions, in the same order), run as Claude Code runs them (``sh -c`` with its JSON on
stdin). CPU is the hook's own processes (``sh``, ``git``, Python: ``RUSAGE_CHILDREN``; the
services are not its children). ``--bytecode`` compiles both folders first, as a wheel install
does (this machine sets ``PYTHONDONTWRITEBYTECODE=1``, so without it every hook compiles the
modules it imports). Prints one JSON object (p50/p95 in ms) with the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks import corpora, hook_latency  # the corpus copy, the payload, the timing, the log reading
from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent


def export(rev: str, dest: Path, bytecode: bool) -> Path:
    """``paqad/`` at ``rev`` (plus its shipped data) in ``dest``; returns ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", rev, "paqad", "stackpacks", "hooks"], cwd=HERE.parent, capture_output=True, check=True).stdout
    tar = dest / "paqad.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as handle:
        handle.extractall(dest, filter="data")
    tar.unlink()
    if bytecode:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "paqad")], check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    return dest


def env_for(tree: Path, base: dict[str, str]) -> dict[str, str]:
    return {**base, "PYTHONPATH": str(tree)}


def prepare(corpus: str, where: Path, tree: Path, provider: str, base_env: dict[str, str]) -> Path:
    root = corpora.private_copy(corpora.CACHE / corpus, where / corpus)
    env = {**env_for(tree, base_env), "PAQAD_RAG_SERVE": "false"}
    py = [sys.executable, "-m", "paqad"]
    for args in (["rag", "init", "--provider", provider], ["hooks", "install", "--agents", "claude"]):
        done = subprocess.run([*py, *args], cwd=root, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"paqad {' '.join(args)} ({tree}) failed: {done.stderr}")
    shim = root / ".paqad" / "bin" / "paqad"
    lines = shim.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("PY="))
    lines.insert(at + 1, f"PYTHONPATH={shlex.quote(str(tree))}; export PYTHONPATH  # benchmark: this revision's paqad\n")
    shim.write_text("".join(lines))
    return root


def warm(root: Path, env: dict[str, str]) -> None:
    hook_latency.time_prompt(root, "warm up: where is the app object created", env)  # answers in-process, starts the service
    if hook_latency.serve_ready(root, env) is None:
        sys.exit(f"{root}: the service did not start")
    for _ in range(3):
        hook_latency.time_prompt(root, "warm up: where is the app object created", env)


def bare_python(runs: int) -> float:
    cpus = [hook_latency.timed([sys.executable, "-c", "pass"], Path(tempfile.gettempdir()), dict(os.environ))[1] for _ in range(runs)]
    return round(statistics.median(cpus), 1)


def run(before: str, after: str, corpus: str, runs: int, provider: str, bytecode: bool) -> dict:
    base = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    for key in ("PAQAD_HOOK_BUDGET", "PAQAD_RAG_SERVE", "PYTHONPATH"):
        base.pop(key, None)
    with tempfile.TemporaryDirectory(prefix="paqad-client-bench-") as tmp:
        sides = {}
        for name, rev in (("before", before), ("after", after)):
            tree = export(rev, Path(tmp) / name / "tree", bytecode)
            root = prepare(corpus, Path(tmp) / name, tree, provider, base)
            sides[name] = (rev, root, env_for(tree, base))
        result: dict = {"corpus": corpus, "provider": provider, "bytecode": bytecode, "cpus": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()]}
        for _, root, env in sides.values():
            warm(root, env)
        samples = {name: ([], [], []) for name in sides}
        for i in range(runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                _, root, env = sides[name]
                wall, cpu, path = hook_latency.time_prompt(root, hook_latency.question(300 + i), env)
                samples[name][0].append(wall)
                samples[name][1].append(cpu)
                samples[name][2].append(path)
        for name, (rev, root, env) in sides.items():
            walls, cpus, paths = samples[name]
            result[name] = {"rev": subprocess.run(["git", "rev-parse", "--short", rev], cwd=HERE.parent, capture_output=True, text=True).stdout.strip(),
                            **hook_latency.summary(walls, cpus, paths)}
            hook_latency.paqad(root, "serve", "stop", env=env)
        result["python_bare_cpu_ms_p50"] = bare_python(runs)
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision to compare against (e.g. main)")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--provider", default="local", choices=["local", "none"])
    parser.add_argument("--bytecode", action="store_true", help="compile both revisions' modules first, as a wheel install does")
    parser.add_argument("--json", dest="out", default=None)
    args = parser.parse_args()
    result = run(args.before, args.after, args.corpus, args.runs, args.provider, args.bytecode)
    emit(result, args.out)


if __name__ == "__main__":
    main()
