#!/usr/bin/env python3
"""Workspace search over about a million units: synthetic member repositories, generated here.

    python -m benchmarks workspace_1m [--members 10] [--units 1000000] [--dir /tmp/paqad-ws-1m] [--queries 40]

Generates ``--members`` git repositories under ``--dir`` (deterministic: seeded; Python modules of
``FUNCS_PER_FILE`` documented functions each, names and docstrings drawn from a fixed vocabulary;
never committed anywhere), indexes each lexically (``rag_embedding_provider: none``: embedding a
million units would take days on this machine), then, from a home repository whose workspace
holds them all, times ``across.search`` over queries made from generated docstrings: the first
query cold (every index opened by it), then warm, members one by one and in parallel, alternating.
Reported: median and p95, the process's resident memory (now and peak), the indexes' size on disk,
and the load average. An existing ``--dir`` of the same shape is reused (delete it to regenerate);
after building, the script starts itself again so the memory reported is the search's alone.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from paqad import config
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import across

FUNCS_PER_FILE = 20
FILES_PER_DIR = 200
SEED = 15
VERBS = "parse load save render validate merge split encode decode schedule retry cancel sign verify compress resize index rank fetch publish archive refund charge ship bill audit sync cache evict lock".split()
NOUNS = "invoice ledger session cookie parcel payment token account order customer address report thumbnail image queue job webhook tenant quota license certificate schema migration snapshot backup shard replica cursor batch".split()
ADJS = "pending signed expired partial nightly cached remote local encrypted draft overdue primary stale weekly archived".split()
WHY = "so the client cannot tamper with it|before the nightly batch runs|when the processor times out|for the tenant's monthly report|without blocking the request thread|after the lock is released".split("|")
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@paqad.invalid", "-c", "commit.gpgsign=false"]


def rss_mib() -> tuple[float, float]:
    """(resident now, peak) of this process in MiB."""
    now = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            now = int(line.split()[1]) / 1024
    return now, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def function(rng: random.Random, k: int, serial: int) -> tuple[str, str]:
    verb, noun, other, adj = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(NOUNS), rng.choice(ADJS)
    doc = f"{verb.capitalize()} the {adj} {noun} of the {other} {rng.choice(WHY)}."
    name = f"{verb}_{adj}_{noun}_{other}_{serial % 97}"
    body = f"    result = {{'{noun}': {noun}, 'member': {k}}}\n    if not {noun}:\n        raise ValueError('no {noun}')\n    return result\n"
    return f'def {name}({noun}, {other}=None):\n    """{doc}"""\n{body}\n\n', doc


def generate(folder: Path, k: int, files: int) -> list[str]:
    """Member ``k``: ``files`` modules; returns some of its docstrings (the queries are made from them)."""
    rng = random.Random(SEED * 1000 + k)
    docs = []
    for j in range(files):
        path = folder / f"svc{k}" / f"pkg{j // FILES_PER_DIR:03d}" / f"mod{j:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        parts = [f'"""Module {j} of member {k}: generated for the workspace benchmark."""\n\n\n']
        for f in range(FUNCS_PER_FILE):
            text, doc = function(rng, k, j * FUNCS_PER_FILE + f)
            parts.append(text)
            if rng.random() < 0.001:
                docs.append(doc)
        path.write_text("".join(parts), encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-qm", "synthetic"], check=True)
    return docs


def lexical(root: Path) -> config.Config:
    return config.load(root, cli_overrides={"rag_embedding_provider": "none", "rag_serve": "false"}, environ={})


def prepare(base: Path, members: int, units: int) -> tuple[list[Path], list[str], bool]:
    files = max(1, units // members // FUNCS_PER_FILE)
    paths, docs, built = [], [], False
    for k in range(members):
        folder = base / f"member-{k:02d}"
        marker = folder / ".paqad" / "bench-docs.txt"
        if not folder.exists() or store.current_path(folder) is None:
            t0 = time.perf_counter()
            if not folder.exists():
                found = generate(folder, k, files)
            else:
                found = (marker.read_text().splitlines() if marker.exists() else [])
            report = build.build_full(folder, lexical(folder))
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("\n".join(found) + "\n")
            built = True
            print(f"member {k}: {report.units} units indexed in {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
        paths.append(folder)
        docs += [d for d in marker.read_text().splitlines() if d]
    return paths, docs, built


def question(doc: str) -> str:
    """Not the docstring itself: its first four content words, the verb moved last."""
    words = [w.strip(".,'") for w in doc.lower().split() if w not in ("the", "of", "so", "it", "with", "for", "a")]
    return " ".join(words[1:4] + words[:1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--units", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/paqad-ws-1m")
    ap.add_argument("--queries", type=int, default=40)
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} at start", flush=True)
    paths, docs, built = prepare(base, args.members, args.units)
    if built:  # measure search in a fresh process: the builds' memory is not the search's
        print("running again in a fresh process to measure the search alone", flush=True)
        return subprocess.run([sys.executable, *sys.argv], check=False).returncode  # not exec: the peak RSS would carry over
    home = base / "home"
    if not (home / ".git").exists():
        home.mkdir()
        (home / "README.md").write_text("# home\n\nThe repository whose workspace holds the synthetic members.\n")
        subprocess.run(["git", "init", "-q", "-b", "main", str(home)], check=True)
        subprocess.run([*GIT, "-C", str(home), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(home), "commit", "-qm", "home"], check=True)
        build.build_full(home, lexical(home))
    for p in paths:
        across.add(home, str(p))
    os.environ["PAQAD_RAG_EMBEDDING_PROVIDER"] = "none"
    os.environ["PAQAD_RAG_SERVE"] = "false"
    rng = random.Random(SEED)
    queries = [question(rng.choice(docs)) for _ in range(args.queries)]
    units = sum(Index.shared(p).meta().n_units for p in paths)
    disk = sum(store.current_path(p).stat().st_size for p in paths)  # type: ignore[union-attr]
    for p in paths:
        Index.forget(p)
    print(f"{len(paths)} members, {units:,} units, {disk / 1e9:.2f} GB of index on disk; RSS {rss_mib()[0]:.0f} MiB before the first query")
    t0 = time.perf_counter()
    first = across.search(home, queries[0], top_n=10, timeout=600.0)
    print(f"first query, cold (opens every index): {(time.perf_counter() - t0) * 1000:.0f} ms, answered {first.answered}; RSS {rss_mib()[0]:.0f} MiB")
    for q in queries[:3]:  # warm-up
        across.search(home, q, top_n=10, timeout=600.0)
    times: dict[int, list[float]] = {1: [], across.MAX_PARALLEL: []}
    answered = 0
    for q in queries:
        for parallel, out in times.items():
            t0 = time.perf_counter()
            resp = across.search(home, q, top_n=10, parallel=parallel, timeout=60.0)
            out.append((time.perf_counter() - t0) * 1000)
        answered += resp.answered
    for parallel, out in times.items():
        p95 = sorted(out)[int(0.95 * (len(out) - 1))]
        how = "one by one" if parallel == 1 else f"{parallel} threads"
        print(f"warm, {how}: median {statistics.median(out):.0f} ms, p95 {p95:.0f} ms over {len(out)} queries")
    now, peak = rss_mib()
    print(f"answered {answered}/{len(queries)}; RSS {now:.0f} MiB now, {peak:.0f} MiB peak; load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
