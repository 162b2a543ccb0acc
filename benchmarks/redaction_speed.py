"""How long secret redaction (``paqad.redaction``) takes over a repository's text.

    python -m benchmarks redaction_speed DIR [DIR ...] [--repeat 5]

For each git repository: every tracked file that decodes as UTF-8, run through
``redaction.redact_counted``; prints files, characters, the best time of ``--repeat`` runs and
how many secrets of each kind were masked (with the files they were in).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from paqad import redaction


def texts(root: Path) -> dict[str, str]:
    out = {}
    for rel in subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout.split("\0"):
        try:
            out[rel] = (root / rel).read_text(encoding="utf-8") if rel else ""
        except (OSError, UnicodeDecodeError):
            continue
    return {k: v for k, v in out.items() if v}


def measure(root: Path, repeat: int) -> dict:
    files = texts(root)
    best = float("inf")
    found: Counter[str] = Counter()
    where: set[str] = set()
    for _ in range(repeat):
        started = time.perf_counter()
        found.clear()
        for rel, text in files.items():
            counts = redaction.redact_counted(text)[1]
            if counts:
                found.update(counts)
                where.add(rel)
        best = min(best, time.perf_counter() - started)
    chars = sum(map(len, files.values()))
    return {"root": str(root), "files": len(files), "chars": chars, "best_ms": round(best * 1000, 1), "ms_per_mchar": round(best * 1e9 / max(chars, 1), 1), "masked": dict(found), "in": sorted(where)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps([measure(Path(r).resolve(), args.repeat) for r in args.roots], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
