#!/usr/bin/env python3
"""cProfile one paqad step of ``benchmarks/speed.py`` on a fresh copy of a corpus.

Usage (from the repo root, paqad installed into the venv running this)::

    python -m benchmarks speed_profile warm synthetic-10k    # warm queries, in-process
    python -m benchmarks speed_profile update flask          # `paqad rag update` after a 1-file edit
    python -m benchmarks speed_profile fresh flask           # `paqad rag search Q --json`, whole process
    python -m benchmarks speed_profile build synthetic-10k   # `paqad rag init`

Prints the top functions by own time and by cumulative time, each with its share of the
profiled total, and keeps the .pstats file in ``benchmarks/.cache/speed-profile/`` (gitignored)
for snakeviz/pstats. The profiler slows Python code down unevenly (C calls less), so shares are
a guide, not a budget.
"""

from __future__ import annotations

import argparse
import json
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpora, speed

HERE = Path(__file__).resolve().parent


def cli(copy: Path, *args: str, out: Path | None = None) -> None:
    """Run the paqad CLI in-tree; under cProfile when ``out`` is given."""
    prefix = [sys.executable] + (["-m", "cProfile", "-o", str(out)] if out else []) + ["-m", "paqad"]
    subprocess.run(prefix + list(args), cwd=copy, check=True, stdout=subprocess.DEVNULL, env=speed.child_env())


def report(path: Path, top: int) -> None:
    stats = pstats.Stats(str(path))
    total = stats.total_tt or 1.0
    print(f"profiled total {total:.3f} s ({path})\n")
    for key, title in (("tottime", "own time"), ("cumulative", "cumulative time")):
        print(f"top {top} by {title}:")
        rows = sorted(stats.stats.items(), key=lambda kv: -(kv[1][2] if key == "tottime" else kv[1][3]))
        for (file, line, func), (_, ncalls, tt, ct, _) in rows[:top]:
            where = f"{Path(file).name}:{line}" if file != "~" else "builtin"
            share = (tt if key == "tottime" else ct) / total
            print(f"  {share:6.1%}  {tt:7.3f} own {ct:7.3f} cum  {ncalls:>8}  {func}  ({where})")
        print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["build", "update", "fresh", "warm"])
    ap.add_argument("corpus")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    c = corpora.CORPORA[args.corpus]
    src = corpora.corpus_path(c)
    (speed.CACHE / "speed-profile").mkdir(parents=True, exist_ok=True)
    out = speed.CACHE / "speed-profile" / f"speed-profile-{args.step}-{args.corpus}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.pstats"
    queries, _ = speed.queries_for(args.corpus)
    with tempfile.TemporaryDirectory(prefix="paqad-speed-profile-") as tmp:
        copy = Path(tmp) / "repo"
        subprocess.run(["cp", "-a", str(src), str(copy)], check=True)
        for d in speed.TOOL_DIRS:
            shutil.rmtree(copy / d, ignore_errors=True)
        if args.step == "build":
            cli(copy, "rag", "init", "--provider", "none", "--json", out=out)
        else:
            cli(copy, "rag", "init", "--provider", "none", "--json")
            if args.step == "update":
                speed.append_function(copy / speed.edit_target(args.corpus, copy), 0)
                cli(copy, "rag", "update", "--json", out=out)
            elif args.step == "fresh":
                cli(copy, "rag", "search", queries[0], "--json", out=out)
            else:
                qfile = Path(tmp) / "queries.json"
                qfile.write_text(json.dumps(queries), encoding="utf-8")
                subprocess.run([sys.executable, str(speed.WARM_HELPER), "--tool", "paqad", "--root", str(copy),
                                "--queries", str(qfile), "--passes", "2", "--profile", str(out)],
                               check=True, stdout=subprocess.DEVNULL, env=speed.child_env())
    report(out, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
