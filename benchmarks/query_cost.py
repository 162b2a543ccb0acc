#!/usr/bin/env python3
"""CPU per warm query: paqad in-process, paqad through its service, and semble, side by side in one run.

    python benchmarks/query_cost.py [--corpus flask] [--passes 3] [--before REV] [--after REV]
        [--arms lexical,hybrid,service,prompt,semble] [--json OUT]

The in-process arms set what the revision's entry point sets first (numpy's BLAS on one
thread, from 1da9257 on). The queries are the corpus's ruler questions (``benchmarks/rulers/<corpus>.yaml``, 49 for flask).
Each arm answers every question once untimed (warm-up), then ``--passes`` timed passes; a figure
is CPU milliseconds per query (user + system, this process's ``time.process_time`` or the
service's ``/proc/<pid>/stat``), as a median over queries (in-process) or a mean over a pass
(the service, whose clock ticks are 10 ms: a pass's total is divided by its queries).

- ``lexical``: ``pipeline.search(root, q, rag_top_n, rag_source_chars)`` on a lexical index
  (``rag init --provider none``), in a child process running that revision's paqad;
- ``hybrid``: the same on an index with the default local model's vectors (``--provider local``);
- ``static``: the same with ``minilm-static`` (the token table semble's stand-in is made from);
- ``service``: the same search through the work tree's service, as ``rag search`` sends it
  (``paqad.serve.route.search``): the client's CPU in its process plus the service's CPU;
- ``prompt``: a warm Claude Code prompt (``UserPromptSubmit``) through the service on the hybrid
  index, as the hook client hands it over (``paqad.serve.route.hook``): the service's CPU
  (the hook process's own CPU is ``benchmarks/hook_latency.py``'s);
- ``hook``: the same warm prompt as Claude Code runs it, ``python -m paqad hook run prompt-submit
  --host claude`` with the event on stdin, one process per prompt: the service's CPU per prompt
  (the process found by its command line), any revision (``prompt`` needs ``paqad.serve.route``,
  from 5e0f0a1 on);
- ``semble``: semble from PyPI (pinned ``SEMBLE``, in its own venv under
  ``benchmarks/.cache/query-cost/``) with a stand-in static model: model2vec's ``StaticModel``
  made offline from paqad's ``minilm-static`` token table and MiniLM's tokenizer (no hub); the
  query is ``SembleIndex.search(q, top_k=10)``, its query embedding included.

``--before REV`` runs every paqad arm for that revision too, interleaved with ``--after``
(default: HEAD; ``--rounds`` times, the order alternating), each from its own ``git archive``
export with its own corpus copies, indexes and per-user data folder (so its own service). Prints
one JSON object with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = HERE / ".cache" / "query-cost"
SEMBLE = "semble==0.7.0"
SEMBLE_VENV = CACHE / "semble-venv"
STAND_IN = CACHE / "minilm-static-model2vec"
ARMS = ("lexical", "hybrid", "static", "service", "prompt", "hook", "semble")
#: The index each paqad arm reads: (provider, embedding model) for ``rag init``.
INDEX_OF = {"lexical": ("none", ""), "service": ("none", ""), "hybrid": ("local", ""), "prompt": ("local", ""), "hook": ("local", ""), "static": ("local", "minilm-static")}


# --------------------------------------------------------------------------- the children


def _cpu_ticks(pid: int) -> int:
    """utime + stime of ``pid`` in clock ticks (``/proc/<pid>/stat`` fields 14 and 15)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


def _as_paqad_starts() -> None:
    """What the revision's entry point does before anything else (``localstate.one_blas_thread``
    from 1da9257 on), so an in-process arm runs as a ``paqad`` process would."""
    from paqad import localstate

    getattr(localstate, "one_blas_thread", lambda: None)()


def child_inproc(root: Path, queries: list[str], passes: int) -> dict:
    _as_paqad_starts()
    from paqad import config
    from paqad.search import pipeline

    cfg = config.load(root)
    top_n, chars = cfg["rag_top_n"], cfg["rag_source_chars"]

    def run(q: str) -> object:
        return pipeline.search(root, q, top_n, chars, pipeline.DEFAULT_BUDGET_CHARS, gate=True)

    answered = sum(bool(run(q).answered) for q in queries)  # type: ignore[attr-defined]
    cpu: list[float] = []
    for _ in range(passes):
        for q in queries:
            c = time.process_time()
            run(q)
            cpu.append((time.process_time() - c) * 1000)
    return {"answered": answered, "cpu_ms_p50": round(statistics.median(cpu), 3), "cpu_ms_mean": round(statistics.mean(cpu), 3)}


def _service(root: Path) -> int:
    from paqad.channel import client

    client.start(root)
    if not client.wait_ready(root, timeout=120):
        sys.exit(f"{root}: the service did not start")
    info = (client.request(root, "status").reply or {}).get("info") or {}
    return int(info["pid"])


def child_service(root: Path, queries: list[str], passes: int) -> dict:
    from paqad import config
    from paqad.search.request import SearchRequest
    from paqad.serve import route

    cfg = config.load(root)
    pid = _service(root)
    ask = [SearchRequest.from_settings(cfg, root, q) for q in queries]
    for r in ask:  # warm-up
        route.search(root, cfg, r)
    tick = os.sysconf("SC_CLK_TCK")
    client_ms: list[float] = []
    service_ms: list[float] = []
    for _ in range(passes):
        c, s = time.process_time(), _cpu_ticks(pid)
        for r in ask:
            route.search(root, cfg, r)
        client_ms.append((time.process_time() - c) * 1000 / len(ask))
        service_ms.append((_cpu_ticks(pid) - s) * 1000 / tick / len(ask))
    # a pass's service figure moves in steps of one clock tick over its queries (10 ms / 49 = 0.2 ms
    # on flask): the mean over every pass is finer (``--passes 9``: 0.02 ms)
    return {"client_cpu_ms": round(statistics.median(client_ms), 3), "service_cpu_ms": round(statistics.median(service_ms), 3),
            "total_cpu_ms": round(statistics.median(a + b for a, b in zip(client_ms, service_ms)), 3), "service_pid": pid,
            "total_cpu_ms_mean": round(statistics.mean(a + b for a, b in zip(client_ms, service_ms)), 3)}


def child_prompt(root: Path, queries: list[str], passes: int) -> dict:
    from paqad.channel import calls
    from paqad.serve import route

    pid = _service(root)

    def prompt(q: str) -> str:
        payload = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": q}
        return route.hook(str(root), calls.Hook("prompt-submit", "claude", json.dumps(payload), str(root)))

    delivered = sum(bool(prompt(q)) for q in queries)  # warm-up
    tick = os.sysconf("SC_CLK_TCK")
    service_ms: list[float] = []
    for p in range(passes):
        s = _cpu_ticks(pid)
        for i, q in enumerate(queries):
            prompt(f"{q} ({p}.{i})")  # a new prompt each time, as a user's are
        service_ms.append((_cpu_ticks(pid) - s) * 1000 / tick / len(queries))
    return {"delivered": delivered, "service_cpu_ms": round(statistics.median(service_ms), 3), "service_pid": pid}


def _service_pid(root: Path) -> int | None:
    """The process serving ``root`` (``... paqad --root ROOT serve``), found by its command line."""
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and os.fsencode(root) in argv and entry.name != str(os.getpid()):
            return int(entry.name)
    return None


def child_hook(root: Path, queries: list[str], passes: int) -> dict:
    def prompt(q: str) -> bool:
        payload = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": q}
        argv = [sys.executable, "-P", "-m", "paqad", "hook", "run", "prompt-submit", "--host", "claude"]
        done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=root)
        return bool(done.stdout.strip())

    prompt("warm up: where is the app created")  # starts the service
    deadline = time.monotonic() + 120
    pid = _service_pid(root)
    while pid is None and time.monotonic() < deadline:
        time.sleep(0.5)
        pid = _service_pid(root)
    if pid is None:
        sys.exit(f"{root}: no service started")
    time.sleep(5)  # its warm-up (the model)
    delivered = sum(prompt(q) for q in queries)  # warm-up
    tick = os.sysconf("SC_CLK_TCK")
    service_ms: list[float] = []
    for p in range(passes):
        s = _cpu_ticks(pid)
        for i, q in enumerate(queries):
            prompt(f"{q} ({p}.{i})")
        service_ms.append((_cpu_ticks(pid) - s) * 1000 / tick / len(queries))
    return {"delivered": delivered, "service_cpu_ms": round(statistics.median(service_ms), 3), "service_pid": pid}


def child_semble(root: Path, queries: list[str], passes: int) -> dict:
    from model2vec import StaticModel
    from semble import SembleIndex

    t = time.process_time()
    index = SembleIndex.from_path(root, model_path=str(STAND_IN))
    build_cpu = time.process_time() - t
    assert isinstance(index.model, StaticModel)
    for q in queries:
        index.search(q, top_k=10)
    cpu: list[float] = []
    for _ in range(passes):
        for q in queries:
            c = time.process_time()
            index.search(q, top_k=10)
            cpu.append((time.process_time() - c) * 1000)
    return {"chunks": len(index.chunks), "index_cpu_s": round(build_cpu, 2), "cpu_ms_p50": round(statistics.median(cpu), 3),
            "cpu_ms_mean": round(statistics.mean(cpu), 3)}


CHILDREN = {"lexical": child_inproc, "hybrid": child_inproc, "static": child_inproc, "service": child_service, "prompt": child_prompt, "hook": child_hook, "semble": child_semble}


# --------------------------------------------------------------------------- the parent


def export(rev: str | None, dest: Path) -> str:
    """paqad at ``rev`` (None: HEAD) in ``dest``; returns the commit exported."""
    commit = rev or "HEAD"
    sha = subprocess.run(["git", "rev-parse", "--short", commit], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    dest.mkdir(parents=True)
    data = subprocess.run(["git", "archive", "--format=tar", commit, "paqad", "stackpacks", "hooks"], cwd=REPO, capture_output=True, check=True).stdout
    (dest / "paqad.tar").write_bytes(data)
    with tarfile.open(dest / "paqad.tar") as handle:
        handle.extractall(dest, filter="data")
    (dest / "paqad.tar").unlink()
    return sha


def child_env(tree: Path | None, home: Path) -> dict[str, str]:
    """One side's environment: its paqad on ``PYTHONPATH`` and its own per-user data folder, so each
    side has its own per-user service (the user's embedding cache is shared: vectors are the same)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAQAD_", "OPENBLAS_", "OMP_", "MKL_")) and k != "PYTHONPATH"}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "XDG_DATA_HOME": str(home / "data")})
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    else:  # semble: its index cache and search statistics in the run's folder
        env.update({"XDG_CACHE_HOME": str(home / "cache"), "SEMBLE_CACHE_LOCATION": str(home / "semble")})
    return env


def paqad_copy(corpus: Path, where: Path, provider: str, model: str, env: dict[str, str]) -> Path:
    """A copy of the corpus (mtimes kept) with paqad set up: an index and Claude Code's hooks."""
    root = where / f"{corpus.name}-{provider}{'-' + model if model else ''}"
    subprocess.run(["cp", "-a", str(corpus), str(root)], check=True)
    shutil.rmtree(root / ".paqad", ignore_errors=True)
    chosen = {"PAQAD_RAG_EMBEDDING_MODEL": model} if model else {}
    for args in (["rag", "init", "--provider", provider], ["hooks", "install", "--agents", "claude"]):
        done = subprocess.run([sys.executable, "-m", "paqad", *args], cwd=root, capture_output=True, text=True, env={**env, "PAQAD_RAG_SERVE": "false", **chosen})
        if done.returncode != 0:
            sys.exit(f"paqad {' '.join(args)} failed in {root}: {done.stderr[-2000:]}")
    return root


def semble_ready() -> Path:
    """semble's venv and the stand-in model (made once; nothing from a hub)."""
    python = SEMBLE_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(SEMBLE_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", SEMBLE], check=True)
    if not (STAND_IN / "model.safetensors").exists():
        subprocess.run([str(python), str(Path(__file__).resolve()), "--make-stand-in"], check=True, env={**os.environ, "PYTHONPATH": ""})
    return python


def make_stand_in() -> None:
    """model2vec's StaticModel from paqad's ``minilm-static`` table (rows times their scales) and
    MiniLM's tokenizer, both read from this checkout's ``paqad/embed/data/`` (run in semble's venv)."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    data = REPO / "paqad" / "embed" / "data"
    with np.load(data / "minilm-static" / "tokens-int8.npz", allow_pickle=False) as table:
        vectors = table["vectors"].astype(np.float32) * table["scales"][:, None]
    tokenizer = Tokenizer.from_file(str(data / "all-MiniLM-L6-v2" / "tokenizer.json"))
    StaticModel(vectors, tokenizer, normalize=True, base_model_name="paqad minilm-static (stand-in)").save_pretrained(str(STAND_IN))


def run_child(python: str, tree: Path | None, home: Path, arm: str, root: Path, qfile: Path, passes: int) -> dict:
    args = [python, "-P", str(Path(__file__).resolve()), "--child", arm, "--root", str(root), "--queries", str(qfile), "--passes", str(passes)]
    done = subprocess.run(args, capture_output=True, text=True, env=child_env(tree, home), cwd=str(home))
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def stop_services(roots: list[Path], env: dict[str, str]) -> None:
    for root in roots:
        subprocess.run([sys.executable, "-m", "paqad", "serve", "stop"], cwd=root, capture_output=True, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="flask")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2, help="each side's arms run this many times, sides alternating")
    ap.add_argument("--before", help="a paqad revision to measure beside --after")
    ap.add_argument("--after", help="the paqad revision measured (default: the work tree)")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--json", dest="out")
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--make-stand-in", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make_stand_in:
        make_stand_in()
        return 0
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.root.resolve(), json.loads(args.queries.read_text()), args.passes)))
        return 0
    from benchmarks import corpora, speed

    arms = [a for a in args.arms.split(",") if a]
    corpus = corpora.corpus_path(corpora.CORPORA[args.corpus])
    queries, _ = speed.queries_for(args.corpus)
    result: dict = {"corpus": corpus.name, "queries": len(queries), "passes": args.passes, "cpus": os.cpu_count(),
                    "load_before": [round(x, 2) for x in os.getloadavg()], "arms": {}}
    with tempfile.TemporaryDirectory(prefix="paqad-query-cost-") as tmp:
        work = Path(tmp)
        qfile = work / "queries.json"
        qfile.write_text(json.dumps(queries))
        sides: dict[str, tuple[str, Path, dict[tuple[str, str], Path]]] = {}
        for name, rev in (("before", args.before), ("after", args.after)):
            if name == "before" and not rev:
                continue
            tree = work / name / "tree"
            label = export(rev, tree)
            home = work / name / "home"
            home.mkdir(parents=True)
            env = child_env(tree, home)
            roots: dict[tuple[str, str], Path] = {}
            for arm in arms:
                if arm in INDEX_OF and INDEX_OF[arm] not in roots:
                    roots[INDEX_OF[arm]] = paqad_copy(corpus, work / name, *INDEX_OF[arm], env)
            sides[name] = (label, home, roots)
        semble_py = str(semble_ready()) if "semble" in arms else None
        samples: dict[str, dict[str, list[dict]]] = {}
        for i in range(args.rounds):
            for name in (list(sides) if i % 2 == 0 else list(reversed(sides))):
                label, home, roots = sides[name]
                tree = home.parent / "tree"
                for arm in arms:
                    if arm == "semble":
                        continue
                    root = roots[INDEX_OF[arm]]
                    samples.setdefault(name, {}).setdefault(arm, []).append(run_child(sys.executable, tree, home, arm, root, qfile, args.passes))
            if semble_py:
                home = work / "semble-home"
                if not home.exists():
                    home.mkdir()
                    subprocess.run(["cp", "-a", str(corpus), str(home / corpus.name)], check=True)
                    shutil.rmtree(home / corpus.name / ".paqad", ignore_errors=True)
                samples.setdefault("semble", {}).setdefault("semble", []).append(run_child(semble_py, None, home, "semble", home / corpus.name, qfile, args.passes))
        for name, (label, home, roots) in sides.items():
            stop_services(list(roots.values()), child_env(home.parent / "tree", home))
            result["arms"][name] = {"paqad": label, **{arm: rows for arm, rows in samples.get(name, {}).items()}}
        if "semble" in samples:
            result["arms"]["semble"] = {"semble": SEMBLE, "model": "stand-in: paqad minilm-static table via model2vec", **samples["semble"]}
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
