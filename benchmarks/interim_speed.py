"""How soon hybrid search works on a new index: lexical build, stand-in vectors, the model's fill.

    python -m benchmarks interim_speed [--corpus flask] [--model-fill]

Copies a pinned corpus (benchmarks/.cache, after ``python -m benchmarks corpora fetch``) into a
temporary folder and, in a fresh process with an empty user cache (``XDG_CACHE_HOME`` in the
temporary folder), builds it the way ``rag init`` does with the default settings: the lexical
index (``build_full(embed=False)``), then the ``minilm-static`` stand-in vectors
(``paqad.index.embedding.interim.fill``: model load included), then, with ``--model-fill``, MiniLM's own
fill. Prints wall and CPU seconds of each step, units a second, and the load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import corpora

HERE = Path(__file__).resolve().parent

CHILD = """
import json, sys, time
from pathlib import Path
from paqad import config
from paqad.index.writing import build
from paqad.index.embedding import interim

root = Path(sys.argv[1])
cfg = config.load(root, cli_overrides={"rag_embedding_provider": "local"}, environ={})
interim.MIN_UNITS = 0 if sys.argv[3] == "always" else interim.MIN_UNITS
out = {}
def step(name, fn):
    w, c = time.perf_counter(), time.process_time()
    value = fn()
    out[name] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
    return value
rep = step("lexical", lambda: build.build_full(root, cfg, embed=False))
out["units"] = rep.units
out["interim_units"] = step("interim", lambda: interim.fill(root, cfg, build.writer_lock(root)))
if sys.argv[2] == "1":
    made, vec = step("model", lambda: interim.fill_then_model(root, cfg, build.writer_lock(root)))
    out["model_embedded"] = vec.embedded
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="flask")
    ap.add_argument("--model-fill", action="store_true", help="also time MiniLM's fill (minutes on a large corpus)")
    args = ap.parse_args()
    lock = json.loads((HERE / "corpora.lock.json").read_text(encoding="utf-8"))
    src = corpora.CACHE / lock[args.corpus]["root"]
    print(f"load at start: {os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="paqad-interim-bench-") as tmp:
        dst = Path(tmp) / "repo"
        shutil.copytree(src, dst, symlinks=True)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "xdg")}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(dst), "1" if args.model_fill else "0", "always"],
            env=env, capture_output=True, text=True, check=True,
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"load at end: {os.getloadavg()[0]:.2f}\n")
    print(f"| {args.corpus} ({r['units']:,} units) | wall s | CPU s | units/s (wall) |")
    print("|---|---|---|---|")
    print(f"| lexical index | {r['lexical']['wall']:.2f} | {r['lexical']['cpu']:.2f} | - |")
    print(f"| stand-in vectors ({r['interim_units']:,}, model load included) | {r['interim']['wall']:.2f} | {r['interim']['cpu']:.2f} | {r['interim_units'] / r['interim']['wall']:,.0f} |")
    if "model" in r:
        print(f"| MiniLM's fill ({r['model_embedded']:,}) | {r['model']['wall']:.1f} | {r['model']['cpu']:.1f} | {r['model_embedded'] / r['model']['wall']:,.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
