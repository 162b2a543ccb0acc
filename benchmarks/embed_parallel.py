"""One onnxruntime session against parallel single-threaded sessions, on a corpus's unit texts.

    python -m benchmarks embed_parallel [--corpus flask] [--units 600]

Builds a lexical index of a copy of the pinned corpus (benchmarks/.cache, after ``python
benchmarks/corpora.py fetch``) in a temporary folder, takes the first ``--units`` unit texts as
``rag init`` embeds them, and embeds them with the shipped MiniLM twice in this process: one
session with onnxruntime's default threads (every text one run, as before), then
``OnnxProvider.embed_documents``' parallel single-threaded sessions (``PARALLEL_SESSIONS``).
Prints wall units/s, CPU ms per unit, the load, and whether the two gave the same vectors bit for bit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks import corpora
from paqad import config
from paqad.embed.local import MINILM, OnnxProvider
from paqad.index import store
from paqad.index.embedding import vectors
from paqad.index.writing import build

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="flask")
    ap.add_argument("--units", type=int, default=600)
    args = ap.parse_args()
    lock = json.loads((HERE / "corpora.lock.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="paqad-embed-parallel-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(corpora.CACHE / lock[args.corpus]["root"], root, symlinks=True)
        build.build_full(root, config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        path = store.current_path(root)
        assert path is not None
        con = store.connect(path)
        uids = [r[0] for r in con.execute("SELECT uid FROM units ORDER BY uid LIMIT ?", (args.units,))]
        texts = vectors.texts_of(con, uids)
        con.close()
    print(f"{args.corpus}: {len(texts)} unit texts; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}\n")
    print("| sessions | wall s | units/s | CPU ms/unit | load |\n| --- | --- | --- | --- | --- |")
    out = {}
    for name, parallel in (("one, default threads", False), ("parallel, one thread each", True)):
        provider = OnnxProvider(MINILM)
        provider.embed_query("warm up")
        if not parallel:
            provider._parallel_sessions = lambda _n: 1  # type: ignore[method-assign]  # the path before parallel sessions
        else:
            provider.embed_documents(["warm up"] * 8)  # start the sessions outside the timing
        wall, cpu = time.perf_counter(), time.process_time()
        out[name] = provider.embed_documents(texts)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"| {name} | {wall:.1f} | {len(texts) / wall:.1f} | {1000 * cpu / len(texts):.1f} | {os.getloadavg()[0]:.2f} |")
    a, b = out.values()
    print(f"\nsame vectors bit for bit: {bool((a == b).all())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
