#!/usr/bin/env python3
"""The public semble benchmark (MinishLab/semble, folder ``benchmarks/``) as a paqad ruler.

Usage (from the repo root):
    python -m benchmarks semble fetch [REPO ...] [--update-lock]
    python -m benchmarks semble score [--repos a,b | --half A|B] [--arms gated,ungated,bm25raw]
                                      [--set KEY=VALUE ...] [--verify-cli N] [--out DIR]
    python -m benchmarks semble diff A.jsonl B.jsonl

The benchmark is read, never committed: ``fetch`` takes ``benchmarks/repos.json`` and
``benchmarks/annotations/*.json`` from a git directory of the semble repository at the pinned
upstream commit (``UPSTREAM_COMMIT``) into the gitignored cache ``benchmarks/.cache/semble/``
(override with ``PAQAD_SEMBLE_CACHE``), then writes, for each of its 63 repositories, the tree of
its ``benchmark_root`` at its pinned revision into ``<cache>/repos/<name>/`` and makes that a git
repository with one commit (fixed author and dates, as ``corpora.py`` does). Git directories come
from ``--mirrors`` (``<mirrors>/<owner>+<name>/repo``, bare, as the workplace's fetch tool lays
them; default ``/work/.mirror``) or else are cloned from GitHub into ``<cache>/git/``.

Substitution rule (recorded per repository in ``benchmarks/semble.lock.json``): when a git
directory lacks the pinned commit, the newest commit reachable from its branches
(``refs/heads/*``) whose committer date is no later than the semble commit that first pinned that
revision is used instead; a repository whose git directory cannot be had is marked ``absent``
and scores 0 in every arm (it stays in the macro average, as upstream counts it).

Scoring follows upstream's definitions (read from its ``benchmarks/data.py``, ``metrics.py``,
``run_benchmark.py``): a query's targets are its ``relevant`` plus ``secondary`` entries; a result
``path:start-end`` matches a target when either path is a ``/``-suffix of the other and, if the
target has a line span, the ranges overlap; each target's rank is its first matching result;
NDCG@10 puts gain 1 at each such rank (a rank found twice counts once) over the ideal of
``min(10, number of targets)`` ones. A repository's figure is the mean over its queries; overall,
per language and per category are means over repositories (a category: over the repositories that
have it), i.e. macro averages, as upstream's summaries compute them.

Arms: ``gated`` = ``paqad rag search --json --top-n 10`` (the default door: evidence gate and
confidence floor on; a refusal, answered=false, scores 0); ``ungated`` = ``paqad rag probe --json
--top-n 10`` (ranking alone); both go through one long-lived ``paqad agent`` session per repository
(``search`` with ``top_n`` 10, ``gate`` true/false), and ``--verify-cli N`` re-asks the first N
queries of each repository through the CLI and stops on any difference. ``bm25raw`` is our
re-implementation of upstream's "BM25 raw" ablation (``benchmarks/semble_bm25.py``, run in its
own venv ``<cache>/bm25-venv`` with upstream's pinned chunker and bm25s), the calibration arm.
Every paqad arm is lexical (``rag_embedding_provider=none``) unless ``--set`` says otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import corpora  # fingerprint, one-commit git init: one definition

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

UPSTREAM_REPO = "MinishLab/semble"
UPSTREAM_COMMIT = "8d737aba127b76f3c729ef6925b2b17fd769d646"
UPSTREAM_FORKS = ("MinishLab/semble", "michalfedyna/semble")  # a fork carries the same history
CACHE = Path(os.environ.get("PAQAD_SEMBLE_CACHE") or HERE / ".cache" / "semble")
LOCK = HERE / "semble.lock.json"
SPLIT = HERE / "semble_split.json"
RESULTS = HERE / ".cache" / "results" / "semble"  # gitignored; summaries/ keeps published runs
K = 10
UPSTREAM_ABLATIONS = "benchmarks/results/semble-ablations-1ea77add4c1b.json"  # modes bm25 and semantic (raw)
LEXICAL = {"rag_embedding_provider": "none"}
BM25_VENV = CACHE / "bm25-venv"
# upstream's uv.lock pins chonkie 1.6.2 (tree-sitter-language-pack 1.4.1, which downloads its
# grammars at run time, so semble_bm25.py gives chonkie the PyPI grammar wheels instead) and bm25s 0.3.3
BM25_PACKAGES = ["chonkie[code]==1.6.2", "bm25s==0.3.3", "pathspec>=0.12", "numpy"] + [
    f"tree-sitter-{g}" for g in ("python", "javascript", "typescript", "go", "rust", "java", "kotlin", "ruby",
                                 "php", "c", "cpp", "c-sharp", "swift", "scala", "bash", "lua", "haskell",
                                 "elixir", "zig")]
# When the pinned revision is absent and the substitute's tree keeps the code elsewhere. The only
# case: MessagePack-CSharp's snapshot ends in July 2021, when src/MessagePack/ held project files
# and the sources the annotations name (src/MessagePack/MessagePackSerializer.cs, ...) lived in
# the Unity client folder; indexing that folder keeps the annotated paths' suffixes.
SUBSTITUTE_ROOTS = {"messagepack-csharp": "src/MessagePack.UnityClient/Assets/Scripts/MessagePack"}
# A repository whose git directory cannot be had, but whose benchmark_root ships inside a PyPI wheel:
# (requirement, folder of the wheel that is the benchmark_root, why this release). zig's snapshot is
# over the fetch tool's size limit; its GitHub master froze at the pinned 738d2be when the project
# moved to Codeberg (November 2025), after the 0.15.2 release, so 0.15.2 is the newest release
# before the pinned commit. Every annotated zig target is a whole file, present in that wheel.
WHEEL_SUBSTITUTES = {
    "zig": ("ziglang==0.15.2", "ziglang/lib/std",
            "the newest ziglang release on PyPI before the pinned commit (its wheel carries lib/std)"),
}
PUBLISHED = {  # semble's benchmarks/README.md at UPSTREAM_COMMIT, NDCG@10
    "semble hybrid": 0.854, "CodeRankEmbed hybrid": 0.862, "semble BM25 + ranking": 0.834, "BM25 raw": 0.675,
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(gdir: Path, *args: str, check: bool = True) -> str:
    p = subprocess.run(["git", "--git-dir", str(gdir), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {gdir}: {p.stderr.strip()[:500]}")
    return p.stdout


def has_commit(gdir: Path, rev: str) -> bool:
    p = subprocess.run(["git", "--git-dir", str(gdir), "cat-file", "-t", rev], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() == "commit"


# --------------------------------------------------------------------------- upstream files


def git_dir_for(owner_name: str, mirrors: Path | None, clone: bool) -> Path | None:
    if mirrors is not None:
        d = mirrors / owner_name.replace("/", "+") / "repo"
        if d.is_dir():
            return d
    d = CACHE / "git" / (owner_name.replace("/", "+") + ".git")
    if d.is_dir():
        return d
    if not clone:
        return None
    d.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["git", "clone", "-q", "--mirror", f"https://github.com/{owner_name}.git", str(d)],
                       capture_output=True, text=True)
    return d if p.returncode == 0 else None


def upstream_git(mirrors: Path | None, clone: bool, explicit: str | None) -> Path:
    cands = [Path(explicit)] if explicit else []
    for fork in UPSTREAM_FORKS:
        d = git_dir_for(fork, mirrors, clone=False)
        if d:
            cands.append(d)
    if not explicit and clone:
        d = git_dir_for(UPSTREAM_REPO, None, clone=True)
        if d:
            cands.append(d)
    for d in cands:
        if has_commit(d, UPSTREAM_COMMIT):
            return d
    sys.exit(f"no git directory of {UPSTREAM_REPO} with commit {UPSTREAM_COMMIT} (tried {cands}); "
             "pass --semble-git DIR")


def materialise_upstream(ugit: Path) -> None:
    """repos.json + annotations at UPSTREAM_COMMIT into <cache>/upstream/ (never committed)."""
    dest = CACHE / "upstream"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "annotations").mkdir(parents=True)
    (dest / "repos.json").write_text(git(ugit, "show", f"{UPSTREAM_COMMIT}:benchmarks/repos.json"))
    for name in git(ugit, "ls-tree", "--name-only", f"{UPSTREAM_COMMIT}:benchmarks/annotations").split():
        (dest / "annotations" / name).write_text(git(ugit, "show", f"{UPSTREAM_COMMIT}:benchmarks/annotations/{name}"))
    # when each revision was first pinned: the date of the earliest semble commit carrying it
    pinned_at: dict[str, str] = {}
    for line in git(ugit, "log", "--reverse", "--format=%H %cI", UPSTREAM_COMMIT, "--", "benchmarks/repos.json").splitlines():
        sha, date = line.split()
        try:
            specs = json.loads(git(ugit, "show", f"{sha}:benchmarks/repos.json"))
        except (RuntimeError, json.JSONDecodeError):
            continue
        for s in specs:
            pinned_at.setdefault(f"{s['name']}@{s['revision']}", date)
    (dest / "pinned_at.json").write_text(json.dumps(pinned_at, indent=1, sort_keys=True))
    # upstream's per-repo figures of its ablation run (BM25 raw among them), for calibration
    (dest / "ablations.json").write_text(git(ugit, "show", f"{UPSTREAM_COMMIT}:{UPSTREAM_ABLATIONS}"))
    (dest / "SOURCE").write_text(f"{ugit}\n{UPSTREAM_COMMIT}\n")


def load_specs() -> list[dict[str, Any]]:
    p = CACHE / "upstream" / "repos.json"
    if not p.exists():
        sys.exit(f"{p} missing: run `python -m benchmarks semble fetch` first")
    return json.loads(p.read_text())


def _target(raw: Any) -> tuple[str, int | None, int | None]:
    if isinstance(raw, str):
        return (raw, None, None)
    s, e = raw.get("start_line"), raw.get("end_line")
    return (str(raw["path"]), int(s) if s is not None else None, int(e) if e is not None else None)


def infer_category(query: str) -> str:
    """Upstream's rule for an annotation without a category."""
    if " " not in query.strip():
        return "symbol"
    low = query.lower()
    return "architecture" if low.startswith("how ") else "semantic"


def load_tasks(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {s["name"]: s for s in specs}
    tasks = []
    for f in sorted((CACHE / "upstream" / "annotations").glob("*.json")):
        for i, item in enumerate(json.loads(f.read_text())):
            repo = item.get("repo", f.stem)
            if repo not in by_name:
                continue
            cat = item.get("category")
            tasks.append({
                "repo": repo, "language": by_name[repo]["language"], "query": item["query"],
                "qid": f"{f.stem}#{i}", "qhash": hashlib.sha256(item["query"].encode()).hexdigest()[:10],
                "targets": [_target(t) for t in item.get("relevant", [])] + [_target(t) for t in item.get("secondary", [])],
                "category": cat if isinstance(cat, str) else infer_category(item["query"]),
            })
    return tasks


# --------------------------------------------------------------------------- fetch


def resolve_revision(gdir: Path, spec: dict[str, Any], pinned_at: dict[str, str]) -> tuple[str, str | None]:
    rev = spec["revision"]
    if has_commit(gdir, rev):
        return rev, None
    before = pinned_at.get(f"{spec['name']}@{rev}")
    if not before:
        raise RuntimeError(f"{spec['name']}: no pin date for {rev}")
    root = spec.get("benchmark_root")
    for sha in git(gdir, "rev-list", "--branches", f"--before={before}", "--max-count=200").split():
        if root is None or git(gdir, "cat-file", "-t", f"{sha}:{root}", check=False).strip() == "tree":
            date = git(gdir, "log", "-1", "--format=%cI", sha).strip()
            return sha, (f"pinned {rev} not in the git directory; used the newest branch commit dated "
                         f"<= {before} (when semble pinned it) that has {root or 'a tree'}: {sha} ({date})")
    raise RuntimeError(f"{spec['name']}: no commit before {before} with {root}")


def write_tree(gdir: Path, rev: str, root: str | None, dest: Path) -> list[str]:
    """Write rev:root into dest with `git cat-file --batch`; return paths whose blob the git dir lacks."""
    treeish = f"{rev}:{root}" if root else rev
    entries = []
    for rec in git(gdir, "ls-tree", "-r", "-z", treeish).split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((mode, sha, path))
    missing: list[str] = []
    proc = subprocess.Popen(["git", "--git-dir", str(gdir), "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    for mode, sha, path in entries:
        proc.stdin.write(f"{sha}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            missing.append(path)
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode(), out)
        else:
            out.write_bytes(data)
            if mode == "100755":
                out.chmod(0o755)
    proc.stdin.close()
    proc.wait()
    return missing


def seal_tree(dest: Path, message: str, name: str, tasks: list[dict[str, Any]]) -> tuple[str, int, int, int]:
    """Fingerprint a written tree, commit it, and count its targets and those with no file:
    (fingerprint, files, targets, targets without a file)."""
    fp, n = corpora.fingerprint(dest)
    corpora.git_init_one_commit(dest, message)
    files = list(repo_files(dest))
    n_t = sum(len(t["targets"]) for t in tasks if t["repo"] == name)
    lost = sum(1 for t in tasks if t["repo"] == name for tg in t["targets"] if not any(path_matches(f, tg[0]) for f in files))
    return fp, n, n_t, lost


def wheel_substitute(name: str, dest: Path) -> dict[str, str] | None:
    """Write the benchmark_root of `name` from its PyPI wheel (WHEEL_SUBSTITUTES) into dest.

    The wheel is downloaded once into ``<cache>/wheels/`` with pip (the x86_64 manylinux build: the
    library sources are the same in every platform's wheel); None when pip cannot get it."""
    import zipfile

    requirement, folder, why = WHEEL_SUBSTITUTES[name]
    wheels = CACHE / "wheels" / requirement.replace("==", "-")
    have = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not have:
        wheels.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "--platform", "manylinux_2_12_x86_64", "--python-version", "3.11", requirement,
                            "-d", str(wheels)], capture_output=True, text=True)
        have = sorted(wheels.glob("*.whl"))
        if p.returncode != 0 or not have:
            log(f"{name}: pip could not download {requirement}: {p.stderr.strip()[-300:]}")
            return None
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    prefix = folder.rstrip("/") + "/"
    with zipfile.ZipFile(have[0]) as z:
        for info in z.infolist():
            if info.is_dir() or not info.filename.startswith(prefix):
                continue
            rel = Path(info.filename[len(prefix):])
            if rel.is_absolute() or ".." in rel.parts:
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(info))
    sha = hashlib.sha256(have[0].read_bytes()).hexdigest()
    return {"requirement": requirement, "folder": folder, "file": have[0].name, "sha256": sha, "why": why}


def path_matches(file_path: str, target_path: str) -> bool:
    a, b = file_path.replace("\\", "/"), target_path.replace("\\", "/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def repo_files(root: Path) -> dict[str, int]:
    return {rel: (p.lstat().st_size) for rel, p in corpora.iter_files(root)}


def cmd_fetch(args: argparse.Namespace) -> int:
    mirrors = Path(args.mirrors) if args.mirrors else None
    ugit = upstream_git(mirrors, not args.no_clone, args.semble_git)
    log(f"upstream: {ugit} @ {UPSTREAM_COMMIT}")
    materialise_upstream(ugit)
    specs = load_specs()
    pinned_at = json.loads((CACHE / "upstream" / "pinned_at.json").read_text())
    tasks = load_tasks(specs)
    lock = json.loads(LOCK.read_text()) if LOCK.exists() else {"upstream_commit": UPSTREAM_COMMIT, "repos": {}}
    drift = []
    for spec in specs:
        name = spec["name"]
        if args.repos and name not in args.repos:
            continue
        owner_name = spec["url"].removeprefix("https://github.com/").removesuffix(".git")
        dest = CACHE / "repos" / name
        entry: dict[str, Any] = {"language": spec["language"], "url": spec["url"], "pinned": spec["revision"],
                                 "benchmark_root": spec.get("benchmark_root")}
        gdir = git_dir_for(owner_name, mirrors, clone=not args.no_clone)
        wheel = wheel_substitute(name, dest) if gdir is None and name in WHEEL_SUBSTITUTES else None
        if wheel is not None:
            fp, n, n_t, lost = seal_tree(dest, f"semble benchmark {name} {wheel['requirement']} {wheel['folder']}", name, tasks)
            entry.update(used=wheel["requirement"],
                         substitution=(f"absent: no git directory could be had (over the snapshot size limit); used "
                                       f"{wheel['folder']} of {wheel['file']} (sha256 {wheel['sha256']}), {wheel['why']}"),
                         fingerprint=fp, files=n, blobs_missing=[], targets=n_t, targets_without_file=lost)
        elif gdir is None:
            entry.update(used=None, substitution="absent: no git directory could be had (e.g. over the snapshot size limit)",
                         fingerprint=None, files=0)
            shutil.rmtree(dest, ignore_errors=True)
        else:
            used, why = resolve_revision(gdir, spec, pinned_at)
            root = spec.get("benchmark_root")
            if why and name in SUBSTITUTE_ROOTS:
                root = SUBSTITUTE_ROOTS[name]
                why += f"; indexed {root} instead of {spec.get('benchmark_root')} (the annotated files lived there then)"
                entry["indexed_root"] = root
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            missing = write_tree(gdir, used, root, dest)
            fp, n, n_t, lost = seal_tree(dest, f"semble benchmark {name} {used[:12]} {root or '.'}", name, tasks)
            entry.update(used=used, substitution=why, fingerprint=fp, files=n, blobs_missing=missing,
                         targets=n_t, targets_without_file=lost)
        old = lock["repos"].get(name)
        if old and old != entry:
            drift.append(name)
            if not args.update_lock:
                corpora.warn_loud(f"{name}: differs from semble.lock.json (pass --update-lock to accept)\n"
                                  f"  lock: {json.dumps(old)}\n  now:  {json.dumps(entry)}")
        if not old or args.update_lock:
            lock["repos"][name] = entry
        log(f"{name:20} {str(entry['used'])[:12]:12} files={entry['files']:5} "
            f"{'SUBSTITUTED' if entry.get('substitution') else ''} {entry.get('fingerprint') or ''}")
    lock["repos"] = dict(sorted(lock["repos"].items()))
    LOCK.write_text(json.dumps(lock, indent=1) + "\n")
    print(fingerprint_table(lock))
    if drift and not args.update_lock:
        return 3
    return 0


def fingerprint_table(lock: dict[str, Any]) -> str:
    out = ["| repo | language | pinned | used | files | fingerprint |", "| --- | --- | --- | --- | --- | --- |"]
    for name, e in lock["repos"].items():
        used = e["used"][:12] if e.get("used") else "absent"
        mark = " (substituted)" if e.get("substitution") and e.get("used") else ""
        fp = f"`{e['fingerprint'][:19]}…`" if e.get("fingerprint") else "–"
        out.append(f"| {name} | {e['language']} | {e['pinned'][:12]} | {used}{mark} | {e['files']} | {fp} |")
    return "\n".join(out)


# --------------------------------------------------------------------------- scoring


def ndcg_at_k(ranks: list[int], n_targets: int, k: int = K) -> float:
    if n_targets == 0:
        return 0.0
    gains = [0] * k
    for r in ranks:
        if 1 <= r <= k:
            gains[r - 1] = 1
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, n_targets)))
    return dcg / ideal


def target_ranks(results: list[tuple[str, int, int]], targets: list[tuple[str, int | None, int | None]]) -> list[int | None]:
    ranks: list[int | None] = []
    for path, s, e in targets:
        rank = None
        for i, (rp, rs, re_) in enumerate(results, 1):
            if path_matches(rp, path) and (s is None or e is None or not (re_ < s or rs > e)):
                rank = i
                break
        ranks.append(rank)
    return ranks


def score_row(task: dict[str, Any], results: list[tuple[str, int, int]]) -> dict[str, Any]:
    ranks = target_ranks(results[:K], task["targets"])
    return {"ndcg10": ndcg_at_k([r for r in ranks if r is not None], len(task["targets"])), "ranks": ranks,
            "top3": [f"{p}:{s}-{e}" for p, s, e in results[:3]]}  # ranks are over the top 10; rows stay small


def macro(rows: list[dict[str, Any]], repos: Iterable[str]) -> dict[str, Any]:
    """Upstream's summaries: per-repo mean over queries; overall/per language/per category = mean over repos."""
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    repo_mean = {n: sum(r["ndcg10"] for r in by_repo[n]) / len(by_repo[n]) for n in repos if by_repo.get(n)}
    lang_of = {r["repo"]: r["language"] for r in rows}
    langs: dict[str, list[float]] = defaultdict(list)
    for n, v in repo_mean.items():
        langs[lang_of[n]].append(v)
    cats: dict[str, list[float]] = defaultdict(list)
    for n in repo_mean:
        per: dict[str, list[float]] = defaultdict(list)
        for r in by_repo[n]:
            per[r["category"]].append(r["ndcg10"])
        for c, vs in per.items():
            cats[c].append(sum(vs) / len(vs))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return {"overall": mean(list(repo_mean.values())), "repos": repo_mean,
            "language": {lang: mean(v) for lang, v in sorted(langs.items())},
            "category": {c: mean(v) for c, v in sorted(cats.items())},
            "queries": sum(len(by_repo[n]) for n in repo_mean), "n_repos": len(repo_mean),
            "micro": mean([r["ndcg10"] for n in repo_mean for r in by_repo[n]])}


# --------------------------------------------------------------------------- paqad arms


def paqad_cmd(root: Path, settings: dict[str, str], *rest: str) -> list[str]:
    # rag_serve off: every door answers in-process, with this checkout's code. A resident service
    # left by an earlier run (idle timeout 30 min) would otherwise answer a later run with the code
    # it started with: seen 2026-12-03, a re-run of half A scored the old cosine bars.
    cmd = [shutil.which("paqad") or "paqad", "--root", str(root), "-c", "rag_serve=false"]
    for k, v in settings.items():
        cmd += ["-c", f"{k}={v}"]
    return cmd + list(rest)


def paqad_index(root: Path, settings: dict[str, str]) -> dict[str, Any]:
    shutil.rmtree(root / ".paqad", ignore_errors=True)
    provider = settings.get("rag_embedding_provider", "none")
    t0 = time.perf_counter()
    p = subprocess.run(paqad_cmd(root, settings, "rag", "init", "--provider", provider, "--json"),
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    info: dict[str, Any] = {"wall_s": round(wall, 2), "rc": p.returncode}
    try:
        info.update(json.loads(p.stdout))
    except json.JSONDecodeError:
        info["error"] = (p.stderr or p.stdout).strip()[-400:]
    return info


class AgentSession:
    """One `paqad agent` process: JSON lines on stdin/stdout."""

    def __init__(self, root: Path, settings: dict[str, str]):
        self.proc = subprocess.Popen(paqad_cmd(root, settings, "agent"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.n = 0

    def ask(self, action: str, **params: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.n += 1
        self.proc.stdin.write(json.dumps({"id": self.n, "action": action, **params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"paqad agent: {reply.get('error')}")
        return reply["result"]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def locs(result: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(r["path"], int(r["start_line"]), int(r["end_line"])) for r in result.get("results", [])]


def cli_search(root: Path, settings: dict[str, str], query: str, gate: bool) -> dict[str, Any]:
    # `--` keeps a query that starts with '-' a query
    p = subprocess.run(paqad_cmd(root, settings, "rag", "search" if gate else "probe", "--json", "--top-n", str(K),
                                 "--", query), capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"paqad rag {'search' if gate else 'probe'} failed ({p.returncode}): {p.stderr[-400:]}")
    return json.loads(p.stdout)


def run_paqad(root: Path, tasks: list[dict[str, Any]], settings: dict[str, str], arms: list[str],
              verify: int, probes: list[dict[str, Any]] | None = None) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    info: dict[str, Any] = {"index": paqad_index(root, settings)}
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in arms}
    if info["index"]["rc"] != 0:
        for t in tasks:
            for a in arms:
                out[a].append({**base_row(t), **score_row(t, []), "answered": False, "reason": "index_failed", "ms": None})
        return out, info
    sess = AgentSession(root, settings)
    try:
        st = sess.ask("stats").get("index", {})
        info["stats"] = {k: st.get(k) for k in ("files", "units", "source_bytes", "units_by_language")}
        mismatches = 0
        for i, t in enumerate(tasks):
            for a in arms:
                gate = a == "gated"
                t0 = time.perf_counter()
                res = sess.ask("search", query=t["query"], top_n=K, gate=gate)
                ms = (time.perf_counter() - t0) * 1000
                row = {**base_row(t), **score_row(t, locs(res)), "answered": bool(res.get("answered")),
                       "reason": ((res.get("diagnosis") or {}).get("reason") if not res.get("answered") else None),
                       "omitted_for_budget": res.get("omitted_for_budget", 0), "ms": round(ms, 2)}
                out[a].append(row)
                if i < verify:
                    cli = cli_search(root, settings, t["query"], gate)
                    if locs(cli) != locs(res) or bool(cli.get("answered")) != row["answered"]:
                        mismatches += 1
                        log(f"  CLI MISMATCH {a} {t['qid']}: agent {locs(res)[:3]} cli {locs(cli)[:3]}")
        info["cli_checked"] = min(verify, len(tasks)) * len(arms)
        info["cli_mismatches"] = mismatches
        if "gated" in arms and probes:  # unanswerable probes (semble_probes.py), through the same door
            info["probe_rows"] = []
            for p in probes:
                res = sess.ask("search", query=p["query"], top_n=K, gate=True)
                info["probe_rows"].append({"pid": p["pid"], "vocab_kind": p["kind"], "subject": p["subject"],
                                           "answered": bool(res.get("answered")),
                                           "reason": (res.get("diagnosis") or {}).get("reason") if not res.get("answered") else None})
    finally:
        sess.close()
    return out, info


def base_row(t: dict[str, Any]) -> dict[str, Any]:
    # no query text: rows are committed, the benchmark's queries are not (qid = annotation file # index)
    return {"repo": t["repo"], "qid": t["qid"], "qhash": t["qhash"], "language": t["language"],
            "category": t["category"], "n_targets": len(t["targets"])}


# --------------------------------------------------------------------------- bm25 raw arm


def bm25_python() -> Path:
    py = BM25_VENV / "bin" / "python"
    stamp = BM25_VENV / "packages.txt"
    want = "\n".join(BM25_PACKAGES)
    if py.exists() and stamp.exists() and stamp.read_text() == want:
        return py
    log(f"creating {BM25_VENV} ({', '.join(BM25_PACKAGES[:3])}, grammars)")
    shutil.rmtree(BM25_VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(BM25_VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *BM25_PACKAGES], check=True)
    stamp.write_text(want)
    return py


def run_bm25raw(root: Path, tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    job = {"root": str(root), "queries": [t["query"] for t in tasks], "k": K}
    t0 = time.perf_counter()
    p = subprocess.run([str(bm25_python()), str(HERE / "semble_bm25.py")], input=json.dumps(job),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"semble_bm25.py failed on {root}: {p.stderr[-800:]}")
    res = json.loads(p.stdout)
    rows = []
    for t, hits, ms in zip(tasks, res["results"], res["ms"]):
        row = {**base_row(t), **score_row(t, [tuple(h) for h in hits]), "answered": bool(hits), "reason": None, "ms": ms}
        row.pop("top3")  # the calibration arm: figures only
        rows.append(row)
    return rows, {"chunks": res["chunks"], "files": res["files"], "index_s": res["index_s"],
                  "parse_fallbacks": res.get("fallbacks"), "wall_s": round(time.perf_counter() - t0, 2)}


# --------------------------------------------------------------------------- score command


def parse_settings(pairs: list[str]) -> dict[str, str]:
    out = dict(LEXICAL)
    for p in pairs or []:
        k, sep, v = p.partition("=")
        if not sep:
            sys.exit(f"--set wants KEY=VALUE, got {p!r}")
        out[k] = v
    return out


def select_repos(args: argparse.Namespace, specs: list[dict[str, Any]]) -> list[str]:
    names = [s["name"] for s in specs]
    if args.half:
        split = json.loads(SPLIT.read_text())
        names = [n for n in names if n in split[args.half]]
    if args.one_per_language:  # the smallest present repo of each language (files in semble.lock.json, then name)
        lock = json.loads(LOCK.read_text())["repos"]
        best: dict[str, str] = {}
        for n in sorted(names, key=lambda n: (lock.get(n, {}).get("files") or 10**9, n)):
            if lock.get(n, {}).get("used"):
                best.setdefault(lock[n]["language"], n)
        names = [n for n in names if n in best.values()]
    if args.repos:
        want = args.repos.split(",")
        bad = set(want) - set(names)
        if bad:
            sys.exit(f"unknown repos {sorted(bad)}")
        names = [n for n in names if n in want]
    return names


def too_large(root: Path, targets: list[tuple[str, int | None, int | None]], files: dict[str, int], limit: int) -> bool:
    """Every target lies in a file over the size limit (so paqad cannot return it)."""
    if not targets:
        return False
    for path, _s, _e in targets:
        sizes = [sz for f, sz in files.items() if path_matches(f, path)]
        if not sizes or max(sizes) <= limit:
            return False
    return True


def cmd_score(args: argparse.Namespace) -> int:
    specs = load_specs()
    lock = json.loads(LOCK.read_text())
    tasks = load_tasks(specs)
    names = select_repos(args, specs)
    arms = args.arms.split(",")
    settings = parse_settings(args.set)
    max_size = int(settings.get("rag_max_file_size", 153600))
    paqad_arms = [a for a in arms if a in ("gated", "ungated")]
    rows: dict[str, list[dict[str, Any]]] = {a: [] for a in arms}
    per_repo: dict[str, dict[str, Any]] = {}
    started = time.time()
    load0 = os.getloadavg()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = out_dir / f"{stamp}-partial.jsonl"  # every finished repository's rows, as it finishes
    from benchmarks import semble_probes  # here: it imports this module

    probes = semble_probes.load_probes() if args.probes else {}
    prows: list[dict[str, Any]] = []
    for name in names:
        e = lock["repos"].get(name)
        root = CACHE / "repos" / name
        rt = [t for t in tasks if t["repo"] == name]
        info: dict[str, Any] = {"used": e.get("used") if e else None, "files": e.get("files") if e else 0,
                                "queries": len(rt)}
        if not e or not e.get("used") or not root.is_dir():
            info["absent"] = True
            for a in arms:
                rows[a] += [{**base_row(t), **score_row(t, []), "answered": False, "reason": "repo_absent", "ms": None}
                            for t in rt]
            per_repo[name] = info
            log(f"{name:20} absent: scores 0")
            continue
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", ".", ":!.paqad"],
                               capture_output=True, text=True).stdout.strip()
        if dirty:
            sys.exit(f"{root} has changes against its one commit; run fetch again:\n{dirty[:500]}")
        info["head"] = head
        files = repo_files(root)
        for t in rt:
            t["too_large"] = too_large(root, t["targets"], files, max_size)
        info["too_large_queries"] = sum(t["too_large"] for t in rt)
        if paqad_arms:
            out, pinfo = run_paqad(root, rt, settings, paqad_arms, args.verify_cli, probes.get(name))
            prows += [{"repo": name, "language": e["language"], **r} for r in pinfo.pop("probe_rows", [])]
            info.update(pinfo)
            for a in paqad_arms:
                for r, t in zip(out[a], rt):
                    r["too_large"] = t["too_large"]
                rows[a] += out[a]
        if "bm25raw" in arms:
            brows, binfo = run_bm25raw(root, rt)
            info["bm25raw"] = binfo
            rows["bm25raw"] += brows
        per_repo[name] = info
        with partial.open("a") as fh:
            for a in arms:
                for r in rows[a]:
                    if r["repo"] == name:
                        fh.write(json.dumps({"arm": a, **r}, ensure_ascii=False) + "\n")
        msg = " ".join(f"{a}={sum(r['ndcg10'] for r in rows[a] if r['repo'] == name) / max(1, len(rt)):.3f}" for a in arms)
        idx = info.get("index", {})
        log(f"{name:20} q={len(rt):3} files={idx.get('files_indexed', '-')} index={idx.get('wall_s', '-')}s {msg}")
    wall = time.time() - started
    partial.unlink(missing_ok=True)
    meta = {"when": stamp, "upstream_commit": UPSTREAM_COMMIT, "settings": settings, "repos": names,
            "paqad_version": paqad_version(), "paqad_commit": git_describe(), "load_before": load0,
            "load_after": os.getloadavg(), "wall_s": round(wall, 1), "nproc": os.cpu_count()}
    for a in arms:
        with (out_dir / f"{stamp}-{a}.jsonl").open("w") as fh:
            for r in rows[a]:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out_dir / f"{stamp}-run.json").write_text(json.dumps({"meta": meta, "per_repo": per_repo}, indent=1) + "\n")
    md = summary_markdown(rows, names, per_repo, meta, lock)
    if prows:
        with (out_dir / f"{stamp}-probes.jsonl").open("w") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in prows)
        md += "\n".join(probe_summary(prows, rows.get("gated", []))) + "\n"
    (out_dir / f"{stamp}-summary.md").write_text(md)
    print(md)
    log(f"rows: {out_dir}/{stamp}-*.jsonl")
    return 0


def probe_summary(prows: list[dict[str, Any]], gated: list[dict[str, Any]]) -> list[str]:
    """Silence on the unanswerable probes (semble_probes.py) per half and per language, beside the
    share of the benchmark's own (answerable) queries the gate answered in the same repositories."""
    split = json.loads(SPLIT.read_text())
    half_of = {n: h for h in ("A", "B") for n in split[h]}
    L = ["### Unanswerable probes (semble_probes.py)\n",
         "| group | probes | silence | answerable queries answered (gated, same repos) |", "| --- | --- | --- | --- |"]

    def line(label: str, ps: list[dict[str, Any]]) -> str:
        repos = {p["repo"] for p in ps}
        qs = [r for r in gated if r["repo"] in repos and r.get("reason") != "no_query_term_in_index"]
        ans = f"{sum(r['answered'] for r in qs) / len(qs):.3f} of {len(qs)}" if qs else "–"
        return f"| {label} | {len(ps)} | {sum(not p['answered'] for p in ps) / max(1, len(ps)):.3f} | {ans} |"

    L.append(line("all", prows))
    for h in ("A", "B"):
        ps = [p for p in prows if half_of.get(p["repo"]) == h]
        if ps:
            L.append(line(f"half {h}", ps))
    for lang in sorted({p["language"] for p in prows}):
        L.append(line(lang, [p for p in prows if p["language"] == lang]))
    L.append("\n(answerable queries exclude those refused as `no_query_term_in_index`: languages paqad does not parse.)\n")
    return L


def paqad_version() -> str:
    p = subprocess.run([shutil.which("paqad") or "paqad", "--version"], capture_output=True, text=True)
    return p.stdout.strip()


def git_describe() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return p.stdout.strip()


def f3(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def summary_markdown(rows: dict[str, list[dict[str, Any]]], names: list[str], per_repo: dict[str, Any],
                     meta: dict[str, Any], lock: dict[str, Any]) -> str:
    arms = list(rows)
    m = {a: macro(rows[a], names) for a in arms}
    L: list[str] = []
    L.append(f"# semble benchmark, {meta['when']} (upstream {UPSTREAM_COMMIT[:12]}, paqad {meta['paqad_version']} "
             f"at {meta['paqad_commit']})\n")
    L.append(f"Settings: `{json.dumps(meta['settings'])}`; {len(names)} repos; wall {meta['wall_s']} s; load "
             f"{meta['load_before'][0]:.2f} before / {meta['load_after'][0]:.2f} after (1-min avg, {meta['nproc']} cores).\n")
    L.append("NDCG@10, macro average over repositories (upstream's definition); `micro` = mean over queries.\n")
    L.append("| arm | overall | micro | " + " | ".join(sorted(m[arms[0]]["category"])) + " | queries | repos |")
    L.append("| --- " * (5 + len(m[arms[0]]["category"])) + "|")
    for a in arms:
        L.append(f"| {a} | **{f3(m[a]['overall'])}** | {f3(m[a]['micro'])} | "
                 + " | ".join(f3(v) for _, v in sorted(m[a]["category"].items()))
                 + f" | {m[a]['queries']} | {m[a]['n_repos']} |")
    present = [n for n in names if not per_repo.get(n, {}).get("absent")]
    if len(present) < len(names):
        L.append(f"Over the {len(present)} repositories present ({', '.join(sorted(set(names) - set(present)))} absent): "
                 + ", ".join(f"{a} {f3(macro(rows[a], present)['overall'])}" for a in arms) + ".\n")
    abl = CACHE / "upstream" / "ablations.json"
    if abl.exists():
        pub = {r["repo"]: r["ndcg10"] for r in json.loads(abl.read_text())["repos"] if r["mode"] == "bm25"}
        common = [n for n in present if n in pub]
        if common and "bm25raw" in rows:
            pm = sum(pub[n] for n in common) / len(common)
            ours = macro(rows["bm25raw"], common)["overall"]
            L.append(f"Calibration: upstream's published per-repo BM25-raw figures ({UPSTREAM_ABLATIONS.rsplit('/', 1)[-1]}, "
                     f"66-repo run whose mean is the published 0.675) average **{pm:.3f}** over the {len(common)} repos "
                     f"present here that it covers; our bm25raw over the same repos: **{f3(ours)}**.\n")
    L.append("")
    langs = sorted(m[arms[0]]["language"])
    L.append("| language | repos | " + " | ".join(arms) + " |")
    L.append("| --- " * (2 + len(arms)) + "|")
    for lang in langs:
        n = sum(1 for r in names if lock["repos"].get(r, {}).get("language") == lang)
        L.append(f"| {lang} | {n} | " + " | ".join(f3(m[a]["language"].get(lang)) for a in arms) + " |")
    L.append("")
    L.append("| repo | language | used | files | queries | " + " | ".join(arms) + " | paqad files indexed | index s | too-large q |")
    L.append("| --- " * (8 + len(arms)) + "|")
    for n in names:
        info = per_repo.get(n, {})
        e = lock["repos"].get(n, {})
        used = (e.get("used") or "absent")[:12] + (" *" if e.get("substitution") and e.get("used") else "")
        idx = info.get("index", {})
        L.append(f"| {n} | {e.get('language')} | {used} | {e.get('files')} | {info.get('queries')} | "
                 + " | ".join(f3(m[a]["repos"].get(n)) for a in arms)
                 + f" | {idx.get('files_indexed', '–')} | {idx.get('wall_s', '–')} | {info.get('too_large_queries', '–')} |")
    L.append("\n`*` = pinned revision absent from the git directory, nearest commit used (see semble.lock.json).\n")
    for a in [x for x in arms if x in ("gated", "ungated")]:
        rs = rows[a]
        refused = [r for r in rs if not r["answered"]]
        reasons = Counter(r["reason"] for r in refused)
        ms = sorted(r["ms"] for r in rs if r.get("ms") is not None)
        p50 = ms[len(ms) // 2] if ms else None
        p95 = ms[int(len(ms) * 0.95)] if ms else None
        L.append(f"**{a}**: answered=false on {len(refused)} of {len(rs)} queries; reasons: "
                 + ", ".join(f"`{k}` {v}" for k, v in reasons.most_common())
                 + f". Query latency (agent round trip) p50 {f3(p50)} ms, p95 {f3(p95)} ms.\n")
    if "gated" in rows and "ungated" in rows:
        g, u = rows["gated"], rows["ungated"]
        gate_loss = sum(1 for x, y in zip(g, u) if not x["answered"] and y["ndcg10"] > 0)
        L.append(f"Gate cost: {gate_loss} queries refused by the gate where the ungated ranking had a target in the top 10.\n")
    L.extend(loss_breakdown(rows, names, per_repo))
    tl = [r for r in rows[arms[0]] if r.get("too_large")]
    L.append(f"Queries whose every target lies in a file over rag_max_file_size: {len(tl)} "
             f"({', '.join(f'{k} {v}' for k, v in Counter(r['repo'] for r in tl).most_common())}).\n")
    checked = sum(per_repo[n].get("cli_checked", 0) for n in names)
    mism = sum(per_repo[n].get("cli_mismatches", 0) for n in names)
    if checked:
        L.append(f"CLI check: {checked} (query, arm) pairs re-asked through `paqad rag search/probe --json --top-n 10`: "
                 f"{mism} differed from the agent session.\n")
    idx_s = [per_repo[n]["index"]["wall_s"] for n in names if "index" in per_repo.get(n, {})]
    if idx_s:
        L.append(f"paqad index time (`rag init` wall, provider {meta['settings'].get('rag_embedding_provider')}): total {sum(idx_s):.1f} s over {len(idx_s)} repos.\n")
    b = [per_repo[n]["bm25raw"]["index_s"] for n in names if "bm25raw" in per_repo.get(n, {})]
    if b:
        L.append(f"bm25raw chunk+index time: total {sum(b):.1f} s.\n")
    return "\n".join(L) + "\n"


PAQAD_LANGUAGE = {"bash": "shell"}  # semble's language name -> paqad's, where they differ


def loss_breakdown(rows: dict[str, list[dict[str, Any]]], names: list[str], per_repo: dict[str, Any]) -> list[str]:
    """Where the macro NDCG@10 goes: each query weighs 1 / (its repo's queries x repos), so the parts
    add up to the gap between two arms' overall figures."""
    if not all(a in rows for a in ("gated", "ungated")):
        return []
    n_q = Counter(r["repo"] for r in rows["gated"])
    w = lambda r: 1.0 / (n_q[r["repo"]] * len(names))  # noqa: E731
    L = ["### Loss breakdown (macro NDCG@10 points)\n"]
    if "bm25raw" in rows:
        b, u = rows["bm25raw"], rows["ungated"]
        parts: Counter[str] = Counter()
        for x, y in zip(b, u):
            info = per_repo.get(x["repo"], {})
            if info.get("absent"):
                key = "repository absent (both arms 0)"
            elif not ((info.get("stats") or {}).get("units_by_language") or {}).get(PAQAD_LANGUAGE.get(x["language"], x["language"])):
                key = "no unit of the repo's language in paqad's index (no parser: elixir, haskell, lua, zig)"
            elif y.get("too_large"):
                key = "every target in a file over rag_max_file_size"
            else:
                key = "ranking and units, everything else"
            parts[key] += (x["ndcg10"] - y["ndcg10"]) * w(x)
        total = macro(b, names)["overall"] - macro(u, names)["overall"]
        L.append(f"bm25raw - ungated = {total:+.3f}:\n")
        L.append("| part | points |\n| --- | --- |")
        L += [f"| {k} | {v:+.3f} |" for k, v in parts.most_common()]
        L.append("")
    g, u = rows["gated"], rows["ungated"]
    parts = Counter()
    for x, y in zip(g, u):
        key = f"refused: {x['reason']}" if not x["answered"] else "answered, fewer or other passages than ungated"
        parts[key] += (y["ndcg10"] - x["ndcg10"]) * w(x)
    total = macro(u, names)["overall"] - macro(g, names)["overall"]
    L.append(f"ungated - gated = {total:+.3f}:\n")
    L.append("| part | points |\n| --- | --- |")
    L += [f"| {k} | {v:+.3f} |" for k, v in parts.most_common()]
    L.append("")
    return L


def cmd_diff(args: argparse.Namespace) -> int:
    def read(p: str) -> dict[tuple[str, str], dict[str, Any]]:
        return {(r["repo"], r["qid"]): r for r in map(json.loads, Path(p).read_text().splitlines())}
    a, b = read(args.a), read(args.b)
    changed = 0
    for key in sorted(set(a) & set(b)):
        nx, ny = a[key]["ndcg10"], b[key]["ndcg10"]
        if nx != ny or a[key]["answered"] != b[key]["answered"]:
            changed += 1
            print(f"{key[1]:24} {f3(nx)} -> {f3(ny)}  answered {a[key]['answered']} -> {b[key]['answered']}")
    print(f"{changed} of {len(set(a) & set(b))} common queries changed; only in A: {len(set(a) - set(b))}, "
          f"only in B: {len(set(b) - set(a))}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild a run's summary from its saved rows (benchmarks/.cache/results/semble/<stamp>-*)."""
    d = Path(args.out)
    run = json.loads((d / f"{args.stamp}-run.json").read_text())
    arms = [a for a in ("gated", "ungated", "bm25raw") if (d / f"{args.stamp}-{a}.jsonl").exists()]
    rows = {a: [json.loads(x) for x in (d / f"{args.stamp}-{a}.jsonl").read_text().splitlines()] for a in arms}
    md = summary_markdown(rows, run["meta"]["repos"], run["per_repo"], run["meta"], json.loads(LOCK.read_text()))
    (d / f"{args.stamp}-summary.md").write_text(md)
    print(md)
    return 0


def cmd_fingerprint(_args: argparse.Namespace) -> int:
    print(fingerprint_table(json.loads(LOCK.read_text())))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="materialise the annotations and the pinned repositories")
    f.add_argument("repos", nargs="*")
    f.add_argument("--mirrors", default="/work/.mirror" if Path("/work/.mirror").is_dir() else None)
    f.add_argument("--semble-git", default=None, help="git dir of MinishLab/semble (or a fork) with the pinned commit")
    f.add_argument("--no-clone", action="store_true", help="never clone from GitHub")
    f.add_argument("--update-lock", action="store_true")
    s = sub.add_parser("score", help="index with paqad and score every query")
    s.add_argument("--repos", default=None, help="comma-separated repo names")
    s.add_argument("--half", choices=("A", "B"), default=None, help="only that half of semble_split.json")
    s.add_argument("--one-per-language", action="store_true",
                   help="only the smallest repository (by files) of each language: the hybrid subset")
    s.add_argument("--arms", default="gated,ungated,bm25raw")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="paqad setting (over lexical)")
    s.add_argument("--verify-cli", type=int, default=1, help="re-ask the first N queries per repo through the CLI")
    s.add_argument("--no-probes", dest="probes", action="store_false",
                   help="do not ask the unanswerable probes (asked with the gated arm when <cache>/probes.json exists)")
    s.add_argument("--out", default=str(RESULTS))
    d = sub.add_parser("diff", help="queries whose NDCG@10 changed between two rows files")
    d.add_argument("a")
    d.add_argument("b")
    sub.add_parser("fingerprint", help="print the corpus table from semble.lock.json")
    r = sub.add_parser("report", help="rebuild a run's summary from its saved rows")
    r.add_argument("stamp")
    r.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    return {"fetch": cmd_fetch, "score": cmd_score, "diff": cmd_diff, "fingerprint": cmd_fingerprint, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
