"""Two clones of one repository and the user-level embedding cache: what the second embeds.

    python -m benchmarks embed_cache_bench [--corpus requests] [--cache DIR]

Clones the pinned corpus (benchmarks/.cache, after ``python -m benchmarks corpora fetch``) twice
into a temporary folder and runs a full build with the local model in each, one after the other,
with ``XDG_CACHE_HOME`` pointed at ``--cache`` (default: a fresh temporary folder, so the first
clone starts from an empty cache). Prints, per clone, units, units embedded by the model, units
taken from the cache, embedding seconds (wall and CPU), and then the cache file's size, its bytes
per vector and the machine load (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpora

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="requests")
    ap.add_argument("--cache", default="", help="XDG_CACHE_HOME for both builds (default: a fresh temporary folder)")
    args = ap.parse_args()
    lock = json.loads((HERE / "corpora.lock.json").read_text(encoding="utf-8"))
    src = corpora.CACHE / lock[args.corpus]["root"]
    print(f"uptime at start: {_uptime()}")
    with tempfile.TemporaryDirectory(prefix="paqad-cache-bench-") as tmp:
        cache = Path(args.cache or Path(tmp) / "xdg")
        rows = []
        for name in ("first clone", "second clone"):
            dst = Path(tmp) / name.replace(" ", "-")
            subprocess.run(["git", "clone", "-q", str(src), str(dst)], check=True)
            rows.append((name, _build(dst, cache)))
        db = cache / "paqad" / "embeddings.sqlite"
        held = _count(db)  # checkpoints the WAL into the file first
        size = sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists())
    print(f"uptime at end: {_uptime()}\n")
    print("| build | units | embedded by the model | from the cache | embedding wall s | CPU s |")
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {args.corpus}, {name} | {r['units']:,} | {r['embedded']:,} ({r['embedded'] / max(1, r['units']):.1%}) | {r['cached']:,} | {r['seconds']:.1f} | {r['cpu']:.1f} |")
    print(f"\ncache file: {size / 1e6:.2f} MB for {held:,} vectors = {size / max(1, held):,.0f} bytes per vector")
    return 0


def _build(root: Path, cache: Path) -> dict:
    """A full build in a fresh process (its own model load), with the cache at ``cache``."""
    code = (
        "import json, sys, time; from pathlib import Path; from paqad import config; from paqad.index import build\n"
        "root = Path(sys.argv[1]); cfg = config.load(root, cli_overrides={'rag_embedding_provider': 'local'}, environ={})\n"
        "c = time.process_time(); r = build.build_full(root, cfg)\n"
        "print(json.dumps({'units': r.units, 'embedded': r.vectors.embedded, 'cached': r.vectors.cached,"
        " 'seconds': r.vectors.seconds, 'cpu': time.process_time() - c}))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PAQAD_CACHE_DIR": ""}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=env, cwd=root.parent, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["total_s"] = time.perf_counter() - started
    return out


def _count(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
    finally:
        con.close()


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
