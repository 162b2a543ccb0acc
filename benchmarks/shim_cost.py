#!/usr/bin/env python3
"""What the host hook shim costs per prompt: the current shim (``test -f`` on the installed
package) against the former one (``python -c "import paqad"`` before the real run), same run.

    python -m benchmarks shim_cost [--runs 20]

A small repository (the tests' shop), lexical index, Claude Code's hooks installed; the prompt hook
is run as Claude Code runs it (``sh -c`` with the recorded input), alternating the two shims;
medians of wall time and of the CPU time of the hook's processes (children's rusage), with the
load average. The warm service answers when it is up (``rag_serve`` default on), so the figures
are the warm prompt path.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paqad.hooks.hosts import launcher
from tests.testing.hosts import run_host
from tests.testing.repos import Repo, make_shop

HERE = Path(__file__).resolve().parent

OLD_CHECK = '"$PY" -c "import paqad" >/dev/null 2>&1'


def old_shim(new: str) -> str:
    """The former shim: the same text with the import check in place of ``test -f``."""
    out = []
    for line in new.splitlines(keepends=True):
        if line.startswith('if [ -x "$PY" ] && [ -f '):
            line = f'if [ -x "$PY" ] && {OLD_CHECK}; then exec "$PY" -m paqad "$@"; fi\n'
        out.append(line)
    return "".join(out)


def timed(root: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = run_host(root, "claude", prompt="where is the session cookie signed")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert run.returncode == 0 and "shop/sessions.py" in run.stdout, run.stderr
    return wall * 1000, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="paqad-shim-") as tmp:
        os.environ["HOME"] = tmp
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / ".cache")
        repo = make_shop(Repo.init(Path(tmp) / "shop"))
        env = {**os.environ, "PAQAD_RAG_EMBEDDING_PROVIDER": "none"}
        os.environ.update(env)
        exe = str(Path(sys.executable).parent / "paqad")
        subprocess.run([exe, "rag", "init"], cwd=repo.root, check=True, capture_output=True)
        subprocess.run([exe, "hooks", "install", "--agents", "claude"], cwd=repo.root, check=True, capture_output=True)
        shim = repo.root / launcher.SHIM_REL
        new = shim.read_text()
        old = old_shim(new)
        assert old != new and OLD_CHECK in old
        for _ in range(3):  # warm: the service starts, caches fill
            timed(repo.root)
        res: dict[str, list[tuple[float, float]]] = {"test -f (now)": [], "import check (before)": []}
        print(f"machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} at start")
        for _ in range(args.runs):
            for label, text in (("test -f (now)", new), ("import check (before)", old)):
                shim.write_text(text)
                res[label].append(timed(repo.root))
        for label, rows in res.items():
            print(f"{label:<24} wall p50 {statistics.median(r[0] for r in rows):6.1f} ms   CPU p50 {statistics.median(r[1] for r in rows):6.1f} ms")
        print(f"load {os.getloadavg()[0]:.1f} at the end")
        from paqad.channel import client

        client.stop(repo.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
