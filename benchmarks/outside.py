#!/usr/bin/env python3
"""Fetch rulers by other authors (rulers/OUTSIDE.md) at pinned commits and write their cases.

Usage (from the repo root):
    python -m benchmarks outside fetch [RULER ...] [--mirrors DIR] [--clone] [--update-lock] [--per-repo N]
    python -m benchmarks outside list

Rulers (a RULER names its source; every ruler of that source is rebuilt, since they share corpora):

- ``arb-code2test``, ``arb-comment2context``, ``arb-trace2code``, ``arb-abstention`` (source ``arb``):
  Agent Retrieval Bench (GitHub eyuansu62/agent-retrieval-bench), ``data/benchmark/v0_1/*.jsonl``
  and ``data/benchmark/v2_abstention_pilot/abstention.jsonl``, each record a repository at a base
  commit; answers are ARB's own target files (``outside_convert.arb_gold``), file level.
- ``sverklo-swe`` (source ``sverklo``): sverklo's bench:swe (GitHub sverklo/sverklo),
  ``benchmark/src/swe/datasets/*.jsonl`` asked against the repositories and tags of
  ``benchmark/src/swe/repos.json`` (as its ``index.ts`` clones them); answers are the
  ``required_evidence`` files.
- ``d4j-reports`` (source ``d4j``): Defects4J's bug reports as Quatrain collected them (GitHub
  Trustworthy-Software/Quatrain ``data/BugReport/*_bugreport.txt``) with Defects4J's own metadata and
  source patches (GitHub rjust/defects4j): each report asked against its project at the bug's buggy
  commit, answered by the files and methods the fix changes (``outside_d4j.py``). Every case has its
  own commit; its corpus is written from the git directory when ``all_rulers`` first asks it (``lazy``).

Sources and corpora come from ``--mirrors`` (``<mirrors>/<owner>+<name>/repo``, bare, default
``/work/.mirror``) or, with ``--clone``, a clone from GitHub (``semble.py``'s ``git_dir_for``).
The source files' sha256 must match ``benchmarks/outside.lock.json`` (and each corpus its
fingerprint): a drift stops with exit 3 before anything is written, unless ``--update-lock``.

Selection (fixed before any result; ``outside_convert.select_commits`` and ``place``): a corpus is
one repository at one commit, skipped when its tree has more than 6,000 files or no git directory
holds it. ARB spreads over 95 (repository, base commit) pairs in 23 repositories; per repository the ``--per-repo``
(default 1) base commits with most answerable cases, then most cases, then the smallest
sha256(``<owner/name>@<commit>``) are kept. An answerable case at another commit is dropped; an
unanswerable one (its answer lies outside the repository) moves to the repository's first kept
commit, its own commit kept in ``moved_from``. An answer file the corpus lacks is taken out
(``answers_absent``); an answerable case left with none is dropped. Records derived from a
SWE-bench instance of a repository other than sympy are dropped (``outside_convert.from_swe_bench``).

Writes ``benchmarks/.cache/outside/cases/<ruler>.jsonl``, ``benchmarks/.cache/outside/corpora/<key>/``
(one commit, fixed author and dates: ``corpora.git_init_one_commit``) and this script's keys of the
lock (other scripts' keys are kept).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import corpora  # fingerprint, one-commit git init
from benchmarks import outside_convert as oc
from benchmarks import outside_d4j as d4j  # Defects4J bug reports
from benchmarks.semble import git, git_dir_for, has_commit, write_tree  # git directories, trees

HERE = Path(__file__).resolve().parent

OUTSIDE = HERE / ".cache" / "outside"
LOCK = HERE / "outside.lock.json"
BY = "outside.py"

ARB_REPO, ARB_COMMIT = "eyuansu62/agent-retrieval-bench", "07014c986f3deadb1548c62b32c0ffbe6a81465d"
ARB_TASK_FILES = ("data/benchmark/v0_1/code2test.jsonl", "data/benchmark/v0_1/comment2context.jsonl",
                  "data/benchmark/v0_1/trace2code.jsonl", "data/benchmark/v2_abstention_pilot/abstention.jsonl")
ARB_FILES = (*ARB_TASK_FILES, "data/benchmark/v0_1/samples.jsonl", "data/benchmark/v0_1/manifest.json",
             "data/repo_manifest.jsonl", "LICENSE", "DATA_LICENSE.md")
SVERKLO_REPO, SVERKLO_COMMIT = "sverklo/sverklo", "b0a7b816b1a122082ebc4544690780d99994e1a4"
SVERKLO_DIR = "benchmark/src/swe"
SOURCES: dict[str, dict[str, Any]] = {
    "arb": {"repo": ARB_REPO, "commit": ARB_COMMIT, "rulers": sorted(oc.ARB_RULERS.values()),
            "licence": "MIT (LICENSE; DATA_LICENSE.md: benchmark metadata MIT, corpus files under their own licences)"},
    "sverklo": {"repo": SVERKLO_REPO, "commit": SVERKLO_COMMIT, "rulers": [oc.SVERKLO_RULER], "licence": "MIT (LICENSE)"},
    "d4j": {"repo": d4j.QUATRAIN_REPO, "commit": d4j.QUATRAIN_COMMIT, "rulers": [d4j.RULER], "licence": d4j.LICENCE,
            "also": f"{d4j.D4J_REPO}@{d4j.D4J_COMMIT}"},
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def source_of(name: str) -> str:
    for src, spec in SOURCES.items():
        if name == src or name in spec["rulers"]:
            return src
    raise SystemExit(f"unknown ruler {name!r}; known: {', '.join(r for s in SOURCES.values() for r in s['rulers'])}")


def load_lock() -> dict[str, Any]:
    return json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}


# --------------------------------------------------------------------------- reading a source


def read_source(src: str, mirrors: Path | None, clone: bool) -> tuple[dict[str, bytes], Path]:
    spec = SOURCES[src]
    gdir = git_dir_for(spec["repo"], mirrors, clone)
    if gdir is None or not has_commit(gdir, spec["commit"]):
        raise SystemExit(f"{spec['repo']}: no git directory with {spec['commit']} (bring it to --mirrors, or pass --clone)")
    if src == "d4j":
        return read_d4j(gdir, mirrors, clone), gdir
    paths = list(ARB_FILES) if src == "arb" else [
        f"{SVERKLO_DIR}/repos.json", f"{SVERKLO_DIR}/index.ts", "LICENSE",
        *(f"{SVERKLO_DIR}/datasets/{n}" for n in git(gdir, "ls-tree", "--name-only", f"{spec['commit']}:{SVERKLO_DIR}/datasets").split())]
    files = {}
    for p in paths:
        out = git_show_bytes(gdir, f"{spec['commit']}:{p}")
        files[p] = out
    return files, gdir


def read_d4j(quatrain: Path, mirrors: Path | None, clone: bool) -> dict[str, bytes]:
    """Quatrain's report files, and Defects4J's (keys ``rjust/defects4j:<path>``) at their pins."""
    files = {p: git_show_bytes(quatrain, f"{d4j.QUATRAIN_COMMIT}:{p}") for p in d4j.quatrain_files()}
    gdir = git_dir_for(d4j.D4J_REPO, mirrors, clone)
    if gdir is None or not has_commit(gdir, d4j.D4J_COMMIT):
        raise SystemExit(f"{d4j.D4J_REPO}: no git directory with {d4j.D4J_COMMIT} (bring it to --mirrors, or pass --clone)")
    names = {p: git(gdir, "ls-tree", "--name-only", f"{d4j.D4J_COMMIT}:framework/projects/{p}/patches").split() for p in d4j.PROJECTS}
    for path in d4j.d4j_files({p: [n for n in ns if n.endswith(".src.patch")] for p, ns in names.items()}):
        files[f"{d4j.D4J_REPO}:{path}"] = git_show_bytes(gdir, f"{d4j.D4J_COMMIT}:{path}")
    return files


def git_show_bytes(gdir: Path, obj: str) -> bytes:
    p = subprocess.run(["git", "--git-dir", str(gdir), "cat-file", "blob", obj], capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"git cat-file blob {obj} in {gdir}: {p.stderr.decode(errors='replace').strip()[:300]}")
    return p.stdout


def jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def raws_of(src: str, files: dict[str, bytes]) -> tuple[list[oc.Raw], dict[str, Any]]:
    """The source's records as raw cases, and facts about what was read (SWE-bench drops, checks)."""
    facts: dict[str, Any] = {}
    if src == "sverklo":
        repos = json.loads(files[f"{SVERKLO_DIR}/repos.json"])
        raws = []
        for r in repos:
            repo = r["url"].removeprefix("https://github.com/").removesuffix(".git")
            raws += [oc.sverklo_raw(t, repo, r["ref"]) for t in jsonl(files[f"{SVERKLO_DIR}/datasets/{r['dataset']}"])]
        facts["refs"] = {f"{r['url'].removeprefix('https://github.com/').removesuffix('.git')}": r["ref"] for r in repos}
    else:
        records = [rec for p in ARB_TASK_FILES for rec in jsonl(files[p])]
        union = {(r["task_type"], r["id"]) for r in jsonl(files["data/benchmark/v0_1/samples.jsonl"])}
        facts["samples_jsonl_is_union"] = union == {(r["task_type"], r["id"]) for r in records if r["task_type"] != "abstention"}
        swe = [r for r in records if oc.from_swe_bench(r)]
        facts["swe_bench_dropped"] = len(swe)
        raws = [oc.arb_raw(r) for r in records if not oc.from_swe_bench(r)]
    ids = Counter((r.ruler, r.id) for r in raws)
    if dup := [k for k, n in ids.items() if n > 1]:
        raise SystemExit(f"{src}: duplicate case ids {dup[:5]}")
    return raws, facts


def source_digests(src: str, files: dict[str, bytes]) -> dict[str, str]:
    if src != "d4j":
        return {p: hashlib.sha256(b).hexdigest() for p, b in sorted(files.items())}
    prefix = f"{d4j.D4J_REPO}:"
    return d4j.digests({p: b for p, b in files.items() if not p.startswith(prefix)},
                       {p.removeprefix(prefix): b for p, b in files.items() if p.startswith(prefix)})


def d4j_raws(files: dict[str, bytes], mirrors: Path | None, clone: bool) -> tuple[list[oc.Raw], dict[str, Any]]:
    """Every active Defects4J bug of ``d4j.PROJECTS`` with a Quatrain report, its answers read from
    its source patch and the buggy commit's files; counted by why a bug was left out."""
    raws: list[oc.Raw] = []
    dropped: Counter[str] = Counter()
    for project, repo in d4j.PROJECTS.items():
        texts = d4j.reports(files[f"data/BugReport/{project}_bugreport.txt"].decode("utf-8"))
        gdir = git_dir_for(repo, mirrors, clone)
        for bug in d4j.active_bugs(files[f"{d4j.D4J_REPO}:framework/projects/{project}/active-bugs.csv"].decode("utf-8")):
            name, commit = f"{project}-{bug['bug.id']}", bug["revision.id.buggy"]
            patch = files.get(f"{d4j.D4J_REPO}:framework/projects/{project}/patches/{bug['bug.id']}.src.patch")
            if name not in texts or patch is None:
                dropped[f"{d4j.RULER}: no report" if name not in texts else f"{d4j.RULER}: no source patch"] += 1
                continue
            if not d4j.report_matches(project, bug):
                dropped[f"{d4j.RULER}: report text is another issue's (Mockito on Google Code)"] += 1
                continue
            if gdir is None or not has_commit(gdir, commit):
                dropped[f"{d4j.RULER}: buggy commit not in a git directory"] += 1
                continue

            def read(path: str, gdir: Path = gdir, commit: str = commit) -> str | None:
                p = subprocess.run(["git", "--git-dir", str(gdir), "cat-file", "blob", f"{commit}:{path}"], capture_output=True)
                return p.stdout.decode("utf-8", errors="replace") if p.returncode == 0 else None

            raws.append(d4j.raw(project, bug, texts[name], d4j.answers_of(patch.decode("utf-8", errors="replace"), read)))
    facts = {"swe_bench_dropped": 0, "reports": sum(len(d4j.reports(files[f"data/BugReport/{p}_bugreport.txt"].decode("utf-8")))
                                                    for p in d4j.PROJECTS), "dropped_before_corpora": dict(sorted(dropped.items()))}
    return raws, facts


def build_lazy(src: str, raws: list[oc.Raw], args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any], list[str]]:
    """Every case at its own commit (one corpus each, none moved or dropped for another's sake); the
    corpora are not written here but by ``all_rulers`` when first asked (``lazy``: 405 copies of
    commons-math or closure-compiler would take ~10 GB). Files over ``MAX_FILES`` are skipped."""
    mirrors = Path(args.mirrors) if args.mirrors else None
    gdirs, commits, absent = resolve(raws, mirrors, args.clone)
    cases: list[dict[str, Any]] = []
    entries: dict[str, dict[str, Any]] = {}
    dropped: Counter[str] = Counter()
    answers_absent = 0
    for r in raws:
        commit = commits.get((r.repo, r.commit))
        if commit is None:
            dropped[f"{r.ruler}: repository has no corpus"] += 1
            continue
        tree = tree_files(gdirs[r.repo], commit)
        if len(tree) > oc.MAX_FILES:
            dropped[f"{r.ruler}: corpus over {oc.MAX_FILES} files"] += 1
            continue
        key = oc.corpus_key(r.repo, commit)
        lang = oc.main_language(tree)
        case, lost = oc.finish(oc.Raw(r.ruler, r.id, r.repo, commit, r.style, r.q, r.answers, r.extra), tree, lang)
        answers_absent += lost
        if case is None:
            dropped[f"{r.ruler}: no answer file at the base commit"] += 1
            continue
        cases.append(case)
        entries[key] = {"repo": r.repo, "commit": commit, "sub_folder": "", "files": len(tree), "lazy": True,
                        "by": BY, "source": src, "language": lang, "rulers": [r.ruler]}
    facts = {"corpora_kept": len(entries), "absent": absent, "dropped": dict(sorted(dropped.items())),
             "answers_absent": answers_absent, "repositories": len({r.repo for r in raws})}
    return cases, entries, facts, []


def lazy_corpus(key: str, entry: dict[str, Any], dest: Path, mirrors: Path | None = Path("/work/.mirror")) -> None:
    """Write a ``lazy`` corpus (its repository at its commit, one commit) into ``dest``."""
    gdir = git_dir_for(entry["repo"], mirrors, False)
    if gdir is None:
        raise RuntimeError(f"{key}: no git directory for {entry['repo']} (python -m benchmarks outside fetch --clone)")
    dest.mkdir(parents=True, exist_ok=True)
    write_tree(gdir, entry["commit"], None, dest)
    corpora.git_init_one_commit(dest, f"{entry['repo']}@{entry['commit'][:12]} (paqad outside rulers)")


# --------------------------------------------------------------------------- corpora


def tree_files(gdir: Path, commit: str) -> dict[str, int]:
    """Every blob of a commit's tree the git directory holds: path -> bytes (submodules and blobs the
    directory lacks, which ``write_tree`` cannot write either, left out)."""
    out = {}
    for rec in git(gdir, "ls-tree", "-r", "-z", "-l", commit).split("\0"):
        meta, _, path = rec.partition("\t")
        if rec and meta.split()[1] == "blob" and meta.split()[3].isdigit():
            out[path] = int(meta.split()[3])
    return out


def resolve(raws: list[oc.Raw], mirrors: Path | None, clone: bool) -> tuple[dict[str, Path], dict[tuple[str, str], str], dict[str, str]]:
    """Git directories per repository and each (repo, ref) -> commit; repositories without one -> why."""
    gdirs: dict[str, Path] = {}
    commits: dict[tuple[str, str], str] = {}
    absent: dict[str, str] = {}
    for repo in sorted({r.repo for r in raws}):
        gdir = git_dir_for(repo, mirrors, clone)
        if gdir is None:
            absent[repo] = "no git directory (not in --mirrors; --clone not given or failed)"
            continue
        gdirs[repo] = gdir
        for ref in sorted({r.commit for r in raws if r.repo == repo}):
            if has_commit(gdir, f"{ref}^{{commit}}"):
                commits[(repo, ref)] = git(gdir, "rev-parse", f"{ref}^{{commit}}").strip()
            else:
                absent[f"{repo}@{ref}"] = "the git directory lacks this commit"
    return gdirs, commits, absent


def materialise(key: str, repo: str, commit: str, gdir: Path, entry: dict[str, Any] | None) -> dict[str, Any]:
    dest = OUTSIDE / "corpora" / key
    if (dest / ".git").is_dir() and entry and entry.get("fingerprint"):
        fp, n = corpora.fingerprint(dest)
        if fp == entry["fingerprint"]:
            return {**entry, "cached": True}
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    missing = write_tree(gdir, commit, None, dest)
    fp, n = corpora.fingerprint(dest)
    corpora.git_init_one_commit(dest, f"{repo}@{commit[:12]} (paqad outside rulers)")
    return {"repo": repo, "commit": commit, "sub_folder": "", "fingerprint": fp, "files": n, "blobs_missing": missing}


def build(src: str, raws: list[oc.Raw], args: argparse.Namespace, lock: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any], list[str]]:
    """Select, materialise, convert: (cases, corpus entries, selection facts, drifts)."""
    mirrors = Path(args.mirrors) if args.mirrors else None
    gdirs, commits, absent = resolve(raws, mirrors, args.clone)
    # a tag (sverklo) becomes its commit; a record whose ref cannot be resolved keeps it (and has no corpus)
    raws = [oc.Raw(r.ruler, r.id, r.repo, commits.get((r.repo, r.commit), r.commit), r.style, r.q, r.answers, r.extra) for r in raws]
    trees = {(repo, c): tree_files(gdirs[repo], c) for (repo, _), c in commits.items()}
    sizes: dict[tuple[str, str], int | None] = {k: len(v) for k, v in trees.items()}
    per_repo = args.per_repo if src == "arb" else 1
    kept = oc.select_commits(raws, sizes, per_repo)
    placed, dropped = oc.place(raws, kept)
    over = sorted(f"{oc.corpus_key(*k)} ({n} files)" for k, n in sizes.items() if n is not None and n > oc.MAX_FILES)
    answers_absent = 0
    cases: list[dict[str, Any]] = []
    entries: dict[str, dict[str, Any]] = {}
    drifts: list[str] = []
    locked = lock.get("corpora") or {}
    for repo, cs in kept.items():
        for commit in cs:
            key = oc.corpus_key(repo, commit)
            here = [r for r in placed if r.repo == repo and r.commit == commit]
            log(f"{key}: {len(here)} cases, {sizes[(repo, commit)]} files")
            entry = materialise(key, repo, commit, gdirs[repo], locked.get(key))
            drifts += [f"corpus {key}: {d}" for d in oc.corpus_drift(locked.get(key), entry["fingerprint"], entry["files"])]
            tree = trees[(repo, commit)]
            lang = oc.main_language(tree)
            for r in here:
                case, lost = oc.finish(r, tree, lang)
                answers_absent += lost
                if case is None:
                    dropped[f"{r.ruler}: no answer file at the base commit"] += 1
                    continue
                cases.append(case)
            entry.pop("cached", None)
            entries[key] = {**entry, "by": BY, "source": src, "language": lang,
                            "rulers": sorted({c["ruler"] for c in cases if c["corpus"] == key})}
    facts = {"pairs_available": len({(r.repo, r.commit) for r in raws}), "repositories": len({r.repo for r in raws}),
             "corpora_kept": sum(len(v) for v in kept.values()), "over_max_files": over, "absent": absent,
             "dropped": dict(sorted(dropped.items())), "answers_absent": answers_absent, "per_repo": per_repo}
    return cases, entries, facts, drifts


# --------------------------------------------------------------------------- commands


def counts(cases: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    def tally(f: str) -> dict[str, int]:
        return dict(sorted(Counter(str(c[f]) for c in cases).items()))
    return {f: tally(f) for f in ("language", "style", "half", "answerable")}


def write_lock(lock: dict[str, Any], src: str, digests: dict[str, str], cases: list[dict[str, Any]],
               entries: dict[str, dict[str, Any]], facts: dict[str, Any]) -> None:
    """Replace this source's keys; another script's keys stay as they are."""
    fresh = load_lock()  # re-read: another script may have written since we started
    rulers, corpora_lock = fresh.setdefault("rulers", {}), fresh.setdefault("corpora", {})
    for k in [k for k, v in corpora_lock.items() if v.get("by") == BY and v.get("source") == src]:
        del corpora_lock[k]
    corpora_lock.update(entries)
    spec = SOURCES[src]
    for ruler in spec["rulers"]:
        mine = [c for c in cases if c["ruler"] == ruler]
        path = OUTSIDE / "cases" / f"{ruler}.jsonl"
        rulers[ruler] = {"script": f"benchmarks/{BY}", "source_repo": spec["repo"], "source_commit": spec["commit"],
                         "licence": spec["licence"], "source_files": digests, "cases": len(mine),
                         "cases_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                         "corpora": sorted({c["corpus"] for c in mine}), "counts": counts(mine), "selection": facts}
    fresh["rulers"], fresh["corpora"] = dict(sorted(rulers.items())), dict(sorted(corpora_lock.items()))
    LOCK.write_text(json.dumps(fresh, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def cmd_fetch(args: argparse.Namespace) -> int:
    srcs = sorted({source_of(n) for n in args.rulers}) if args.rulers else sorted(SOURCES)
    lock = load_lock()
    for src in srcs:
        spec = SOURCES[src]
        files, _ = read_source(src, Path(args.mirrors) if args.mirrors else None, args.clone)
        digests = source_digests(src, files)
        drifts = [d for r in spec["rulers"] for d in oc.pin_drift((lock.get("rulers") or {}).get(r), spec["repo"], spec["commit"], digests)]
        if drifts and not args.update_lock:
            return refuse(src, sorted(set(drifts)))
        if src == "d4j":
            raws, facts = d4j_raws(files, Path(args.mirrors) if args.mirrors else None, args.clone)
            cases, entries, sel, cdrift = build_lazy(src, raws, args)
        else:
            raws, facts = raws_of(src, files)
            cases, entries, sel, cdrift = build(src, raws, args, lock)
        if cdrift and not args.update_lock:
            return refuse(src, cdrift)
        facts.update(sel)
        cases.sort(key=lambda c: (c["ruler"], c["corpus"], c["id"]))
        (OUTSIDE / "cases").mkdir(parents=True, exist_ok=True)
        for ruler in spec["rulers"]:
            text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases if c["ruler"] == ruler)
            (OUTSIDE / "cases" / f"{ruler}.jsonl").write_text(text, encoding="utf-8")
        write_lock(lock, src, digests, cases, entries, facts)
        log(f"{src}: {len(cases)} cases over {len(entries)} corpora; dropped {facts['dropped']}; "
            f"SWE-bench records dropped: {facts.get('swe_bench_dropped', 0)}")
    print(table())
    return 0


def refuse(src: str, drifts: list[str]) -> int:
    bar = "!" * 78
    log(f"{bar}\n{src}: DRIFT from benchmarks/outside.lock.json; no case and no lock entry written (--update-lock to accept):")
    for d in drifts:
        log(f"  {d}")
    log(bar)
    return 3


def table() -> str:
    """Cases per ruler, language, style, half and answerable; corpora and whether fetched."""
    rows = ["| ruler | language | style | cases | answerable | tune | report |", "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for path in sorted((OUTSIDE / "cases").glob("*.jsonl")):
        cases = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        if not cases:
            rows.append(f"| {path.stem} | - | - | 0 | 0 | 0 | 0 |")
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for c in cases:
            groups.setdefault((c["language"], c["style"]), []).append(c)
        for (lang, style), cs in sorted(groups.items()):
            h = Counter(c["half"] for c in cs)
            rows.append(f"| {path.stem} | {lang} | {style} | {len(cs)} | {sum(bool(c['answerable']) for c in cs)} | {h['tune']} | {h['report']} |")
    lock = load_lock().get("corpora") or {}
    rows += ["", "| corpus | by | files | fetched |", "| --- | --- | ---: | --- |"]
    for key, e in sorted(lock.items()):
        fetched = "yes" if (OUTSIDE / "corpora" / key / ".git").is_dir() else "when asked" if e.get("lazy") else "no"
        rows.append(f"| {key} | {e.get('by') or e.get('ruler')} | {e.get('files')} | {fetched} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="read the sources, write cases and corpora")
    f.add_argument("rulers", nargs="*", help="rulers (or sources arb, sverklo); default all")
    f.add_argument("--mirrors", default="/work/.mirror", help="folder of bare git directories <owner>+<name>/repo; '' for none")
    f.add_argument("--clone", action="store_true", help="clone from GitHub what --mirrors lacks")
    f.add_argument("--update-lock", action="store_true", help="accept a drift from outside.lock.json")
    f.add_argument("--per-repo", type=int, default=1, help="ARB base commits kept per repository (default 1)")
    sub.add_parser("list", help="rulers, case counts, corpora and whether fetched")
    args = ap.parse_args(argv)
    if args.cmd == "list":
        print(table())
        return 0
    return cmd_fetch(args)


if __name__ == "__main__":
    raise SystemExit(main())
