"""Memory of the warm service with 1 and with N work trees open: a process per tree, or one process for all.

    python -m benchmarks serve_trees [--corpus flask-3.1.3|PATH] [--trees 10] [--provider local|none]
        [--model minilm-static] [--embed-cache DIR] [--json OUT]

Issue 34's "one warm process per user, not per work tree": a user with ten repositories open
held ten services of 143-215 MB each. N copies of a corpus (``python benchmarks/corpora.py fetch
flask``) get ``rag init`` in private data, cache and runtime folders (the embedding cache makes
copies 2..N cheap to index; the first pays the model, unless ``--embed-cache`` names a user cache
folder that already holds the corpus's vectors). ``--corpus`` is a fetched corpus's name or the
path of any git work tree (a sympy clone, for a sympy-sized tree); ``--model`` picks the local
model (``minilm-static`` has MiniLM's 384 dimensions, so a tree's vectors weigh the same, and it
indexes sympy's 45k units in minutes where MiniLM takes an hour on a loaded machine). Then, for
each work tree, one warm search:

- ``service``: ``paqad serve`` started for each work tree as the doors start it, ``rag search``
  through it; the resident memory (``VmRSS``) of the distinct service processes after each
  tree's search (a process per tree before the per-user service, one after);
- ``shared``: one Python hosting a :class:`paqad.Repository` per work tree (what a per-user
  service hosts: the query model loaded once, per tree its index, vectors and caches); its
  resident memory after the first tree's search and after each further one.

"Per extra work tree" is (RSS with N - RSS with 1) / (N - 1). Prints one JSON object with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent
CORPORA = HERE / ".cache" / "corpora"
CACHE = HERE / ".cache" / "serve_trees"

QUERY = "where is the session cookie signed"

#: One process, one Repository per work tree: RSS (MB) after each tree's first search.
SHARED = r"""
import json, os, sys
from paqad import Repository
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
out = {"before": rss(), "after": [], "modes": [], "units": 0}
repos = []
for root in sys.argv[2:]:
    repo = Repository(root)
    response = repo.search(sys.argv[1])
    repos.append(repo)
    out["after"].append(rss())
    out["modes"].append(response.mode)
out["units"] = sum(repos[0].index.counts().units_by_kind.values())  # after the last RSS: not in it
print(json.dumps(out))
"""


def paqad(root: Path, env: dict[str, str], *args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "paqad", *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def vm_rss_mb(pid: int) -> float:
    """The resident memory of ``pid``; 0.0 once it is gone (a service past its memory cap exits)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0.0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1000
    return 0.0


def _serve_log(root: Path, env: dict[str, str]) -> list[str]:
    """The work tree's ``serve.log`` lines (why a service exited, e.g. past its memory cap)."""
    from paqad import localstate

    try:
        return (Path(localstate.tree_dir(root, env)) / "logs" / "serve.log").read_text().splitlines()
    except OSError:
        return []


def prepare(corpus: str, tmp: Path, n: int, provider: str, env: dict[str, str]) -> tuple[list[Path], list[float]]:
    source = Path(corpus) if os.sep in corpus else CORPORA / corpus
    if not (source / ".git").exists():
        sys.exit(f"{source}: not fetched; run python benchmarks/corpora.py fetch")
    roots, seconds = [], []
    for i in range(n):
        root = tmp / f"t{i}"
        shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".paqad"))
        started = time.perf_counter()
        init = paqad(root, {**env, "PAQAD_RAG_SERVE": "false"}, "rag", "init", "--provider", provider)
        if init.returncode != 0:
            sys.exit(f"rag init {root} failed: {init.stderr[-2000:]}")
        seconds.append(round(time.perf_counter() - started, 1))
        roots.append(root)
    return roots, seconds


def service(roots: list[Path], env: dict[str, str]) -> dict:
    """``paqad serve`` started for each work tree as the doors start it; the resident memory of
    the distinct service processes after each tree's search (one per tree before issue 34's
    per-user process, one in all after)."""
    after, pids = [], []
    try:
        for root in roots:
            subprocess.Popen([sys.executable, "-P", "-m", "paqad", "--root", str(root), "serve"], cwd="/", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + 300
            status: dict = {}
            while time.monotonic() < deadline:
                proc = paqad(root, env, "serve", "status", "--json")
                status = json.loads(proc.stdout) if proc.returncode == 0 else {}
                if status.get("running") and status.get("service"):
                    break
                time.sleep(0.3)
            search = paqad(root, env, "rag", "search", QUERY, "--json")
            if search.returncode != 0:
                sys.exit(f"rag search {root}: {search.stderr[-1000:]}")
            pids.append(int(status["service"]["pid"]))
            after.append(round(sum(vm_rss_mb(pid) for pid in set(pids)), 1))
    finally:
        exits = [line for root in roots for line in _serve_log(root, env) if " exited: " in line]
        for root in roots:
            paqad(root, env, "serve", "stop")
    return {
        "processes": len(set(pids)), "rss_mb_after_each": after, "rss_mb_1": after[0], "rss_mb_total": after[-1],
        "per_extra_tree_mb": round((after[-1] - after[0]) / max(1, len(after) - 1), 1), "exits": exits,
    }


def shared(roots: list[Path], env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-P", "-c", SHARED, QUERY, *map(str, roots)], cwd="/", env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        sys.exit(f"shared: {proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)
    after = [round(x, 1) for x in data["after"]]
    return {
        "rss_mb_before_any": round(data["before"], 1), "rss_mb_after_each": after, "rss_mb_1": after[0], "rss_mb_total": after[-1],
        "per_extra_tree_mb": round((after[-1] - after[0]) / max(1, len(after) - 1), 1), "modes": data["modes"],
        "units_per_tree": data["units"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="flask-3.1.3", help="a name under benchmarks/.cache/corpora, or a git work tree's path")
    ap.add_argument("--trees", type=int, default=10)
    ap.add_argument("--provider", default="local", choices=("local", "none"))
    ap.add_argument("--mode", default="both", choices=("both", "service", "shared"))
    ap.add_argument("--model", default="", help="rag_embedding_model for every tree (default: the package's)")
    ap.add_argument("--embed-cache", type=Path, default=CACHE / "xdg-cache", help="XDG_CACHE_HOME for the runs (the embedding cache's parent)")
    ap.add_argument("--json", dest="out", default=None)
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="pqt-", dir="/tmp"))  # short: the socket paths must fit sun_path
    try:
        runtime = tmp / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
        env.update({
            "PAQAD_DATA_DIR": str(tmp / "data"), "XDG_RUNTIME_DIR": str(runtime), "XDG_CACHE_HOME": str(args.embed_cache),
            "OPENBLAS_NUM_THREADS": "1",
        })
        if args.model:
            env["PAQAD_RAG_EMBEDDING_MODEL"] = args.model
        load_before = list(os.getloadavg())
        roots, init_s = prepare(args.corpus, tmp, args.trees, args.provider, env)
        result: dict = {
            "benchmark": "serve_trees", "corpus": Path(args.corpus).name, "trees": args.trees, "provider": args.provider, "model": args.model or "default", "init_seconds": init_s,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE.parent, capture_output=True, text=True).stdout.strip(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_avg_before": load_before,
        }
        if args.mode in ("both", "shared"):
            result["shared"] = shared(roots, env)
        if args.mode in ("both", "service"):
            result["service"] = service(roots, env)
        result["load_avg_after"] = list(os.getloadavg())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
