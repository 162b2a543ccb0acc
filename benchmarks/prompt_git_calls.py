"""How many git processes one warm prompt costs: the working set and the sync behind the hook.

    nice -n 10 python -m benchmarks prompt_git_calls [--corpus flask-3.1.3] [--runs 10] [--edit] [--json OUT]

On a copy of the corpus (``paqad rag init --provider none``, Claude Code's hooks installed) it
puts a ``git`` wrapper first on PATH that appends its arguments to a file and runs the real git,
starts the resident service with that PATH, then runs Claude Code's ``UserPromptSubmit`` command
``--runs`` times with the service warm (``--edit``: one tracked file changed before each prompt,
so the sync has something to re-index). Printed: the service's git processes per prompt (median,
min, max) and how often each git subcommand ran per prompt, by who ran it: ``service`` (the
resident process: working set, sync) or ``hook`` (the host command line's own
``git rev-parse --show-toplevel`` that finds the shim), so a change to the prompt path can be
compared before and after.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import hook_latency  # the same corpus copy, hook command and payload
from benchmarks.emit import emit

WRAPPER = """#!/bin/sh
printf '%s %s\\n' "${{BENCH_GIT_FROM:-service}}" "$*" >> {log}
exec {git} "$@"
"""


def wrap_git(folder: Path, log: Path) -> None:
    real = shutil.which("git")
    if real is None:
        sys.exit("git is not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "git"
    exe.write_text(WRAPPER.format(log=log, git=real))
    exe.chmod(0o755)


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def subcommand(line: str) -> str:
    """``ls-files -z --others`` → ``ls-files``; options before the subcommand (``-c k=v``) skipped."""
    words = line.split()
    while words and words[0].startswith("-"):
        words = words[2:] if words[0] in ("-C", "-c") else words[1:]
    return words[0] if words else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--edit", action="store_true", help="change a tracked file before each prompt")
    parser.add_argument("--json", dest="out", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paqad-gitcalls-") as tmp:
        work = Path(tmp)
        root = hook_latency.prepare(args.corpus, work, "none")
        log = work / "git-calls.log"
        wrap_git(work / "bin", log)
        env = {**os.environ, "PAQAD_RAG_SERVE": "true", "PATH": f"{work / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        hook_latency.paqad(root, "serve", "stop")
        subprocess.Popen([hook_latency.paqad_exe(), "serve"], cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "running\": true" not in hook_latency.paqad(root, "serve", "status", "--json").stdout:
            time.sleep(0.2)
        hook_env = {**env, "BENCH_GIT_FROM": "hook"}  # the host command line's own git calls, counted apart
        hook_latency.time_prompt(root, "warm up the service", hook_env)
        time.sleep(1.0)  # the refresh behind the warm-up prompt settles
        edited = next(p for p in sorted(root.rglob("*.py")) if ".paqad" not in p.parts and ".git" not in p.parts)
        per_prompt, kinds, paths = [], collections.Counter(), []
        for i in range(args.runs):
            if args.edit:
                edited.write_text(edited.read_text() + f"\n# edit {i}\n")
            log.write_text("")
            _, _, path = hook_latency.time_prompt(root, hook_latency.question(i), hook_env)
            lines = [line.split(" ", 1) for line in calls(log)]
            per_prompt.append(sum(1 for who, _ in lines if who == "service"))
            paths.append(path)
            kinds.update(f"{who}: {subcommand(rest)}" for who, rest in lines)
        hook_latency.paqad(root, "serve", "stop", env=env)
    result = {
        "corpus": args.corpus, "runs": args.runs, "edit": args.edit,
        "service_git_per_prompt": {"median": statistics.median(per_prompt), "min": min(per_prompt), "max": max(per_prompt)},
        "per_prompt_by_subcommand": {k: round(v / args.runs, 2) for k, v in kinds.most_common()},
        "paths": {p: paths.count(p) for p in sorted(set(paths))},
        "load_after": os.getloadavg()[0],
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
