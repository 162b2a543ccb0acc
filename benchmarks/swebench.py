#!/usr/bin/env python3
"""SWE-bench Lite (sympy) localization: can a retriever, given a real issue, find the files and
functions its fix changed?

Usage (from the repo root):
    python benchmarks/swebench.py --sympy-git PATH [--limit N] [--ids ID ...] [--keep] [--budget-min M]
                                  [--set SETTING=VALUE ...]
    python benchmarks/swebench.py --sympy-git PATH --resume ROWS.jsonl [--set ...]  # finish a stopped run
    python benchmarks/swebench.py --make-ruler SRC --sympy-git PATH   # (re)derive the ruler

``PATH`` is a git directory holding sympy's history (a bare clone of github.com/sympy/sympy is
fine; it is only read). ``SRC`` is ``swe-bench-lite.json`` (the SWE-bench Lite test split, 300
instances) or a git directory whose HEAD holds that file.

Ruler (``benchmarks/rulers/swebench/sympy.json``, committed): the 77 ``sympy__sympy-*`` instances
only, each with its base commit, problem statement and accepted answers derived from the gold
patch:
- gold files: the non-test files the patch changes (paths containing ``/tests/`` or a basename
  starting with ``test_`` are dropped);
- gold functions: every ``def`` (function or method, nested ones too) in those files at
  ``base_commit`` whose span (decorators included) contains a removed/modified line of a hunk's
  old side; for a pure addition, the ``def`` enclosing the insertion point, if any. Qualified
  names follow paqad's Python parser (``Class.method``, ``outer.inner``, ``name@2`` for a
  redefinition such as a property setter), spans are ``ast``'s ``lineno..end_lineno``.

Run: for each instance, ``git archive <base_commit>`` into
``benchmarks/.cache/swebench/<instance>/`` (gitignored), made a git repo with one commit; then
- paqad lexical, in-process: ``build_full`` (settings: defaults with
  ``rag_embedding_provider=none`` pinned, since this is the lexical retriever whatever the
  default provider is, plus any ``--set`` overrides, which go in as ``-c`` flags would) then
  ``search(root, problem_statement, top_n=50, gate=False)``; its file ranking is the order of first appearance of files among its units.
  The gated search (``gate=True``) is asked too, to count how often it stays silent;
- BM25 (reference): ``bm25s`` with its default tokenizer (English stopwords) and default
  parameters over the checkout's ``.py`` files, each document ``<path>\\n<content>`` as in
  SWE-bench's own BM25 retrieval.
Metrics: file Acc@1 / Acc@5 (any gold file among the top 1 / 5 files); function Acc@5 (paqad
only): any of paqad's top 5 units is a function/method unit in a gold file whose qualified name
equals a gold function's or whose span overlaps it. Instances without a gold function are left
out of function Acc. Each checkout is deleted after scoring unless ``--keep`` (a kept checkout
and its index are reused by the next run with the same settings). A ``--set`` run checks out into
``<instance>+<hash of its settings>/``, so it can run beside a default run.

Rows go to ``benchmarks/.cache/results/swebench-sympy-<UTC timestamp>.jsonl`` (gitignored); a summary table is printed.
Each row records the paqad measured and its ``settings`` overrides (``{}`` for a default run), so
two runs (say, default and ``--set rag_max_file_size=262144``) can be told apart and compared.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RULER = HERE / "rulers" / "swebench" / "sympy.json"
CACHE = HERE / ".cache" / "swebench"
RESULTS = HERE / ".cache" / "results"  # gitignored; summaries/ keeps published runs
SOURCE_REPO = "ivan4722/csvtransfer"
SOURCE_PATH = "swe-bench-lite.json"
PREFIX = "sympy__sympy-"
TOP_UNITS = 50
PUBLISHED_BM25 = {"acc1": 38.7, "acc5": 61.7}  # SWE-bench Lite, whole split (all 12 repositories)
# The retriever measured here is paqad lexical: embedding all of sympy (~30k units) with the local
# model would take most of an hour per instance on 2 cores. ``--set`` may still override this.
BASE_SETTINGS = {"rag_embedding_provider": "none"}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "paqad-bench",
    "GIT_AUTHOR_EMAIL": "bench@paqad.invalid",
    "GIT_COMMITTER_NAME": "paqad-bench",
    "GIT_COMMITTER_EMAIL": "bench@paqad.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
}
GIT_CFG = ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


def git(args: list[str], cwd: Path | None = None, git_dir: str | None = None, stdin: bytes | None = None) -> bytes:
    cmd = ["git", *GIT_CFG] + ([f"--git-dir={git_dir}"] if git_dir else []) + args
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
    return proc.stdout


def is_test_path(path: str) -> bool:
    return "/tests/" in f"/{path}" or os.path.basename(path).startswith("test_")


# --------------------------------------------------------------------------- gold answers


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_patch(patch: str) -> list[dict]:
    """Files of a unified diff: path, whether new/deleted, and its hunks.

    Each hunk keeps its stated old start, its old side (context and removed lines, in order),
    the old line numbers it removes and its insertion points ``(k, indent)``: added lines that
    replace nothing go before old line ``k``, ``indent`` being the indentation of the first
    non-blank added line. Hunk line counts are followed, so a removed line that itself starts
    with ``--`` is not taken for a file header.
    """
    files: list[dict] = []
    cur: dict | None = None
    hunk: dict | None = None
    old_no = old_left = new_left = 0
    block_plus: list[str] = []  # the current run of changed lines: added texts ...
    block_minus = False  # ... and whether it removed anything

    def end_block() -> None:
        nonlocal block_plus, block_minus
        if hunk is not None and block_plus and not block_minus:
            text = next((t for t in block_plus if t.strip()), None)
            if text is not None:
                hunk["insertions"].append((old_no, len(text) - len(text.lstrip())))
        block_plus, block_minus = [], False

    for line in patch.split("\n"):
        if old_left > 0 or new_left > 0:  # inside a hunk
            tag, body = line[:1], line[1:]
            if tag == "-":
                hunk["removed"].append(old_no)
                hunk["old_side"].append(body)
                old_no += 1
                old_left -= 1
                block_minus = True
            elif tag == "+":
                block_plus.append(body)
                new_left -= 1
            elif tag == "\\":
                pass  # "\ No newline at end of file"
            else:  # context (a blank context line may have lost its leading space)
                end_block()
                hunk["old_side"].append(body)
                old_no += 1
                old_left -= 1
                new_left -= 1
            if old_left <= 0 and new_left <= 0:
                end_block()
            continue
        m = _HUNK.match(line)
        if m and cur is not None:
            old_no = int(m.group(1))
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(4)) if m.group(4) is not None else 1
            if old_left == 0:  # "-k,0": the insertion goes after old line k
                old_no += 1
            hunk = {"old_start": old_no, "old_side": [], "removed": [], "insertions": []}
            cur["hunks"].append(hunk)
            continue
        if line.startswith("diff --git "):
            cur, hunk = {"path": None, "new": False, "deleted": False, "hunks": []}, None
            files.append(cur)
            m = re.match(r"diff --git a/(.*) b/(.*)$", line)
            if m:
                cur["path"] = m.group(1)
        elif cur is not None and line.startswith("--- "):
            if line.strip() == "--- /dev/null":
                cur["new"] = True
            elif line.startswith("--- a/"):
                cur["path"] = line[6:].rstrip("\t")
        elif cur is not None and line.startswith("+++ "):
            if line.strip() == "+++ /dev/null":
                cur["deleted"] = True
            elif cur["new"] and line.startswith("+++ b/"):
                cur["path"] = line[6:].rstrip("\t")
    return [f for f in files if f["path"]]


def locate_hunks(hunks: list[dict], lines: list[str]) -> tuple[list[int], list[tuple[int, int]], list[str]]:
    """Removed lines and insertion points in the base file's own numbering.

    ``git apply`` (which SWE-bench uses) accepts a hunk whose context sits at another line than
    its header says, and the gold patches use that: the old side is searched for in the file
    and the match nearest the stated start wins (exact, then ignoring trailing whitespace).
    """
    removed: list[int] = []
    inserts: list[tuple[int, int]] = []
    notes: list[str] = []
    for h in hunks:
        side, stated = h["old_side"], h["old_start"]
        delta = 0
        if side:
            found = None
            for norm in (lambda t: t, lambda t: t.rstrip()):
                want = [norm(t) for t in side]
                have = [norm(t) for t in lines]
                starts = [i + 1 for i in range(len(have) - len(want) + 1) if have[i : i + len(want)] == want]
                if starts:
                    found = min(starts, key=lambda s: abs(s - stated))
                    break
            if found is None:
                notes.append(f"hunk at -{stated} not found in the base file; header line numbers used")
            else:
                delta = found - stated
        removed += [n + delta for n in h["removed"]]
        inserts += [(k + delta, ind) for k, ind in h["insertions"]]
    return removed, inserts, notes


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def defs_of(source: str) -> list[dict]:
    """Every def paqad's Python parser makes a unit of, with paqad's qualified names.

    Mirrors paqad/parse/python_ast.py: recurse into def/class bodies and into if/try/with;
    a repeated qualified name becomes ``name@2``, ``name@3``.
    """
    tree = ast.parse(source)
    out: list[dict] = []
    seen: dict[str, int] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (*_FUNCS, ast.ClassDef)):
                qual = prefix + node.name
                n = seen.get(qual, 0) + 1
                seen[qual] = n
                if isinstance(node, _FUNCS):
                    out.append(
                        {
                            "qualified_name": qual if n == 1 else f"{qual}@{n}",
                            "start_line": node.lineno,
                            "end_line": node.end_lineno or node.lineno,
                            "first_line": min([d.lineno for d in node.decorator_list] + [node.lineno]),
                            "col": node.col_offset,
                        }
                    )
                walk(node.body, qual + ".")
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for child in (getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    walk(child, prefix)
                for h in getattr(node, "handlers", []):
                    walk(h.body, prefix)

    walk(tree.body, "")
    return out


def gold_functions(source: str, removed: list[int], insertions: list[tuple[int, int]]) -> list[dict]:
    chosen = []
    for d in defs_of(source):
        lo, hi = d["first_line"], d["end_line"]
        hit = any(lo <= n <= hi for n in removed)
        for k, indent in insertions:
            prev = k - 1
            if lo <= prev and (hi >= k or (hi == prev and indent > d["col"])) and d["start_line"] <= prev:
                hit = True
        if hit:
            chosen.append({"qualified_name": d["qualified_name"], "start_line": d["start_line"], "end_line": d["end_line"]})
    return chosen


def load_source(src: str) -> tuple[bytes, dict]:
    p = Path(src)
    if p.is_file():
        return p.read_bytes(), {"repo": SOURCE_REPO, "path": SOURCE_PATH}
    commit = git(["rev-parse", "HEAD"], git_dir=src).decode().strip()
    return git(["show", f"HEAD:{SOURCE_PATH}"], git_dir=src), {"repo": SOURCE_REPO, "path": SOURCE_PATH, "commit": commit}


def make_ruler(src: str, sympy_git: str) -> None:
    raw, origin = load_source(src)
    data = json.loads(raw)
    # Only the sympy instances are read past this filter; the rest of the split stays held out.
    instances = [x for x in data if str(x.get("instance_id", "")).startswith(PREFIX)]
    rows = []
    for x in sorted(instances, key=lambda x: x["instance_id"]):
        files = parse_patch(x["patch"])
        gold_files, new_files, funcs, notes = [], [], [], []
        for f in files:
            if is_test_path(f["path"]):
                continue
            gold_files.append(f["path"])
            if f["new"]:
                new_files.append(f["path"])
                continue
            if not f["path"].endswith(".py"):
                continue
            source = git(["show", f"{x['base_commit']}:{f['path']}"], git_dir=sympy_git).decode("utf-8", "surrogateescape")
            removed, inserts, where = locate_hunks(f["hunks"], source.split("\n"))
            notes += [f"{f['path']}: {w}" for w in where]
            try:
                for g in gold_functions(source, removed, inserts):
                    funcs.append({"path": f["path"], **g})
            except SyntaxError as exc:
                notes.append(f"{f['path']}: does not parse with Python {sys.version_info[0]}.{sys.version_info[1]} ({exc.msg})")
        row = {
            "instance_id": x["instance_id"],
            "base_commit": x["base_commit"],
            "created_at": x.get("created_at"),
            "version": x.get("version"),
            "gold_files": gold_files,
            "gold_functions": funcs,
            "problem_statement": x["problem_statement"],
        }
        if new_files:
            row["new_files"] = new_files
        if notes:
            row["notes"] = notes
        rows.append(row)
    ruler = {
        "benchmark": "SWE-bench Lite (test split), sympy instances: file/function localization",
        "source": {**origin, "sha256": hashlib.sha256(raw).hexdigest(), "instances_in_file": len(data)},
        "filter": f"instance_id startswith '{PREFIX}'",
        "derivation": "see the docstring of benchmarks/swebench.py",
        "instances": rows,
    }
    RULER.parent.mkdir(parents=True, exist_ok=True)
    RULER.write_text(json.dumps(ruler, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    n_funcs = sum(1 for r in rows if r["gold_functions"])
    print(f"wrote {RULER.relative_to(REPO)}: {len(rows)} instances, {n_funcs} with gold functions")


# --------------------------------------------------------------------------- checkouts


def checkout(sympy_git: str, inst: dict, settings: dict[str, str] | None = None) -> tuple[Path, bool]:
    """The instance's base commit as a one-commit git repo; reused when already complete.

    A run with ``--set`` overrides works in its own folder (``<instance>+<hash of the settings>``),
    so it can run side by side with a default run without the two deleting each other's checkout."""
    name = inst["instance_id"]
    if settings:
        name += "+" + hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
    root = CACHE / name
    marker = root / ".git" / "paqad-bench-base"
    if marker.exists() and marker.read_text().strip() == inst["base_commit"]:
        return root, True
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    tar = git(["archive", "--format=tar", inst["base_commit"]], git_dir=sympy_git)
    subprocess.run(["tar", "-x", "-C", str(root)], input=tar, check=True)
    git(["init", "-q", "."], cwd=root)
    # keep paqad's own folder out of the indexed listing (info/ is absent when git has no templates)
    (root / ".git" / "info").mkdir(exist_ok=True)
    with open(root / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
        fh.write("/.paqad/\n")
    git(["add", "-A", "-f", "."], cwd=root)
    git(["commit", "-q", "--no-verify", "-m", f"sympy {inst['base_commit']}"], cwd=root)
    marker.write_text(inst["base_commit"] + "\n")
    return root, False


# --------------------------------------------------------------------------- retrievers


def paqad_revision() -> dict:
    """Which paqad was measured: the repo's HEAD, whether paqad/ had uncommitted changes, and a
    sha256 over paqad/**/*.py (relative path and content), taken once the modules are imported.
    A kept index is reused only by a run with the same ``source_sha256``."""
    h = hashlib.sha256()
    for f in sorted((REPO / "paqad").rglob("*.py")):
        h.update(f.relative_to(REPO).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    try:
        head = git(["rev-parse", "HEAD"], cwd=REPO).decode().strip()
        dirty = bool(git(["status", "--porcelain", "--", "paqad"], cwd=REPO).strip())
    except RuntimeError:
        head, dirty = None, None
    return {"head": head, "paqad_dirty": dirty, "source_sha256": h.hexdigest()}


def import_paqad() -> None:
    """Import every module a run uses up front, so one run measures one paqad even while the
    tree is edited (the Python parser is otherwise imported lazily on first use)."""
    import paqad.config  # noqa: F401
    import paqad.index.store  # noqa: F401
    import paqad.index.writing.build  # noqa: F401
    import paqad.parse.python_ast  # noqa: F401
    import paqad.search.pipeline  # noqa: F401


#: The tuned constants this run overrides (``--const``), carried by every search's request: no
#: module global is set (``paqad.search.params``).
PARAMS = None


def set_consts(pairs: list[str]) -> dict[str, str]:
    """``module.NAME=value`` of ``paqad.search.params.KNOBS``, typed like the constant it replaces,
    into ``PARAMS``; returns them as given, for the rows."""
    from benchmarks.ablate import parse_value
    from paqad.search.params import SearchParams

    global PARAMS
    out = dict(pair.partition("=")[::2] for pair in pairs)
    PARAMS = SearchParams.of({k: parse_value(k, v) for k, v in out.items()})
    return out


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """``SETTING=VALUE`` pairs, checked against paqad's settings table as ``-c`` flags are: an
    unknown name or a bad value fails the run before any checkout instead of after an hour."""
    from paqad import config
    from paqad.settings import SETTINGS

    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set {pair!r}: expected SETTING=VALUE, e.g. rag_max_file_size=262144")
        if key not in SETTINGS:
            raise ValueError(f"--set {pair!r}: unknown setting {key!r}")
        config.coerce(SETTINGS[key], value.strip(), f"--set {key}")  # raises ConfigError when not allowed
        out[key] = value.strip()
    return out


def settings_label(settings: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(settings.items())) or "defaults"


def fresh_rows_path(stamp: str) -> Path:
    """A rows file no other run has: two runs started in the same second (a curve run in parallel)
    once wrote into one file. Created here, exclusively; ``-2``, ``-3`` ... when the stamp is taken."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    for n in range(1, 100):
        path = RESULTS / f"swebench-sympy-{stamp}{'' if n == 1 else f'-{n}'}.jsonl"
        try:
            path.open("x", encoding="utf-8").close()
            return path
        except FileExistsError:
            continue
    raise SystemExit(f"no free rows file for stamp {stamp} in {RESULTS}")


def run_paqad(
    root: Path, text: str, gold_files: list[str], rev: str, settings: dict[str, str] | None = None,
    seed: Path | None = None, any_source: bool = False,
) -> dict:
    """Index (or reuse) the checkout and ask it.

    A kept index is reused only by the same paqad sources built with the same settings, unless
    ``any_source`` (``--reuse-index``: for ranking-only changes, which do not touch what is stored;
    the row records the source that built it). With ``seed`` (the previous instance's kept
    checkout, ``--seed``), its index is copied in and brought up to this commit by ``build.update``,
    the incremental path git hooks run, instead of a full build."""
    from paqad import config
    from paqad.index import store
    from paqad.index.reader import Index
    from paqad.index.writing import build
    from paqad.search import pipeline

    t0 = time.perf_counter()
    stamp = root / ".git" / "paqad-bench-index"
    overrides = {**BASE_SETTINGS, **(settings or {})}
    key = rev if not settings else f"{rev} {json.dumps(settings, sort_keys=True)}"
    suffix = "" if not settings else f" {json.dumps(settings, sort_keys=True)}"
    kept = stamp.read_text().strip() if stamp.exists() else ""
    reused = store.current_path(root) is not None and (kept == key or (any_source and kept.endswith(suffix) and (suffix or " " not in kept)))
    report = None
    mode = "reused" if reused else "full"
    if not reused:
        cfg = config.load(root, cli_overrides=overrides, environ={})
        seed_stamp = seed / ".git" / "paqad-bench-index" if seed else None
        if seed is not None and seed_stamp is not None and seed_stamp.exists() and seed_stamp.read_text().strip() == key:
            shutil.rmtree(root / ".paqad", ignore_errors=True)
            shutil.copytree(seed / ".paqad", root / ".paqad", ignore=shutil.ignore_patterns("*.lock", "logs"))
            Index.forget(root)
            report = build.update(root, cfg)
            mode = "seeded"
        else:
            report = build.build_full(root, cfg)
        stamp.write_text(key + "\n")
        kept = key
    t1 = time.perf_counter()
    resp = pipeline.search(root, text, top_n=TOP_UNITS, gate=False, params=PARAMS)
    t2 = time.perf_counter()
    gated = pipeline.search(root, text, top_n=TOP_UNITS, gate=True, params=PARAMS)
    t3 = time.perf_counter()
    index = Index.shared(root)
    index.refresh()
    indexed = [f for f in gold_files if index.has_file(f)]
    units = [
        {"path": r.path, "kind": r.kind, "qualified_name": r.qualified_name, "start_line": r.start_line, "end_line": r.end_line, "score": r.score}
        for r in resp.results
    ]
    return {
        "config_overrides": overrides,
        "index_reused": reused,
        "index_mode": mode,
        "index_built_by": kept.split(" ", 1)[0][:16],
        "index_s": round(t1 - t0, 2),
        "search_s": round(t2 - t1, 3),
        "gated_search_s": round(t3 - t2, 3),
        "files_indexed": report.files_indexed if report else None,
        "units_indexed": report.units if report else None,
        "units": units,
        "files": first_files(u["path"] for u in units),
        "gold_files_indexed": indexed,
        "gated_answered": gated.answered,
        "gated_reason": (gated.diagnosis or {}).get("reason"),
        "evidence": resp.evidence,
    }


def first_files(paths) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def run_bm25(root: Path, text: str, k: int = 50) -> dict:
    import bm25s

    t0 = time.perf_counter()
    paths = sorted(p for p in git(["ls-files", "-z"], cwd=root).decode().split("\0") if p.endswith(".py"))
    docs = [p + "\n" + (root / p).read_text(encoding="utf-8", errors="replace") for p in paths]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    q = bm25s.tokenize([text], stopwords="en", show_progress=False)
    ids, _ = retriever.retrieve(q, k=min(k, len(paths)), show_progress=False)
    return {"files": [paths[i] for i in ids[0]], "s": round(time.perf_counter() - t0, 2), "n_docs": len(paths)}


# --------------------------------------------------------------------------- scoring


def rank_of(files: list[str], gold: list[str]) -> int | None:
    for i, f in enumerate(files, 1):
        if f in gold:
            return i
    return None


def function_hit(units: list[dict], gold: list[dict], k: int = 5) -> int | None:
    """Rank (1-based, among the top ``k`` units) of the first unit that hits a gold function."""
    for i, u in enumerate(units[:k], 1):
        if u["kind"] not in ("function", "method"):
            continue
        for g in gold:
            if u["path"] != g["path"]:
                continue
            if u["qualified_name"] == g["qualified_name"] or (u["start_line"] <= g["end_line"] and g["start_line"] <= u["end_line"]):
                return i
    return None


def score_instance(inst: dict, pq: dict, bm: dict) -> dict:
    gold = inst["gold_files"]
    pr, br = rank_of(pq["files"], gold), rank_of(bm["files"], gold)
    fr = function_hit(pq["units"], inst["gold_functions"]) if inst["gold_functions"] else None
    return {
        "paqad_file_rank": pr,
        "paqad_acc1": pr == 1,
        "paqad_acc5": pr is not None and pr <= 5,
        "paqad_fn_rank": fr,
        "paqad_fn_acc5": (fr is not None) if inst["gold_functions"] else None,
        "bm25_file_rank": br,
        "bm25_acc1": br == 1,
        "bm25_acc5": br is not None and br <= 5,
    }


def summarize(rows: list[dict]) -> str:
    n = len(rows)
    if not n:
        return "no instances scored"

    def pct(vals: list[bool]) -> str:
        return f"{100 * sum(vals) / len(vals):.1f}" if vals else "n/a"

    fn = [r["paqad_fn_acc5"] for r in rows if r["paqad_fn_acc5"] is not None]
    silent = sum(1 for r in rows if not r["paqad"]["gated_answered"])
    per = [r["seconds"] for r in rows]
    idx = [r["paqad"]["index_s"] for r in rows if not r["paqad"]["index_reused"]]
    revs = {(r["paqad_rev"]["head"], r["paqad_rev"]["paqad_dirty"], r["paqad_rev"]["source_sha256"]) for r in rows if r.get("paqad_rev")}
    unindexed = [r["instance_id"] for r in rows if r["paqad"].get("gold_files_indexed") == []]
    labels = sorted({settings_label(r.get("settings") or {}) for r in rows})
    paqad_name = f"paqad lexical (gate off, top {TOP_UNITS} units)" if labels == ["defaults"] else f"paqad lexical (gate off, top {TOP_UNITS} units; {' | '.join(labels)})"
    lines = [
        f"SWE-bench Lite sympy localization: N = {n} instances ({len(fn)} with gold functions)",
        "",
        "| retriever | file Acc@1 | file Acc@5 | function Acc@5 |",
        "| --- | --- | --- | --- |",
        f"| {paqad_name} | {pct([r['paqad_acc1'] for r in rows])} | {pct([r['paqad_acc5'] for r in rows])} | {pct(fn)} |",
        f"| BM25 (bm25s, .py files) | {pct([r['bm25_acc1'] for r in rows])} | {pct([r['bm25_acc5'] for r in rows])} | n/a |",
        f"| BM25, published (whole Lite split, orientation only) | {PUBLISHED_BM25['acc1']} | {PUBLISHED_BM25['acc5']} | n/a |",
        "",
        f"gated search (gate=True) silent on {silent}/{n} answerable issues ({100 * silent / n:.1f}%)",
        f"time per instance: mean {sum(per) / n:.1f}s, max {max(per):.1f}s"
        + (f"; paqad index build mean {sum(idx) / len(idx):.1f}s" if idx else ""),
    ]
    lines.append(f"paqad settings: {' | '.join(labels)}" + (" (rows of different settings mixed!)" if len(labels) > 1 else ""))
    for head, dirty, sha in sorted(revs, key=str):
        lines.append(f"paqad measured: HEAD {head}{' + uncommitted changes in paqad/' if dirty else ''} (paqad/**/*.py sha256 {sha[:16]})")
    if unindexed:
        lines.append(f"gold file(s) not in paqad's index (e.g. over rag_max_file_size): {', '.join(unindexed)}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sympy-git", help="git directory with sympy's history (e.g. a bare clone)")
    ap.add_argument("--make-ruler", metavar="SRC", help="derive the ruler from swe-bench-lite.json (file, or git dir holding it)")
    ap.add_argument("--limit", type=int, help="score only the first N instances")
    ap.add_argument("--ids", nargs="*", help="score only these instance ids")
    ap.add_argument("--keep", action="store_true", help="keep checkouts (and their indexes) for a fast rerun")
    ap.add_argument("--seed", action="store_true", help="with --keep: build each instance's index by updating a copy of the previous one's (date order)")
    ap.add_argument("--reuse-index", action="store_true", help="reuse kept indexes built by other paqad sources (ranking-only changes)")
    ap.add_argument("--const", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="override a tuned search constant (paqad.search.params.KNOBS) for this run's requests (ranking.ENABLED=false); recorded in every row")
    ap.add_argument("--budget-min", type=float, help="start no new instance after this many minutes")
    ap.add_argument("--summarize", metavar="ROWS", help="only print the summary of a results .jsonl")
    ap.add_argument("--resume", metavar="ROWS", help="append to this results .jsonl, scoring only the instances it lacks (same --set required)")
    ap.add_argument(
        "--set", dest="settings", action="append", default=[], metavar="SETTING=VALUE",
        help="override a paqad setting for this run's index builds, e.g. rag_max_file_size=262144 (repeatable; recorded in every row)",
    )
    args = ap.parse_args()
    if args.summarize:
        print(summarize([json.loads(x) for x in Path(args.summarize).read_text(encoding="utf-8").splitlines() if x.strip()]))
        return
    if not args.sympy_git:
        ap.error("--sympy-git PATH is required")
    if args.make_ruler:
        make_ruler(args.make_ruler, args.sympy_git)
        return
    from paqad.errors import ConfigError

    try:
        settings = parse_settings(args.settings)
    except (ValueError, ConfigError) as exc:
        ap.error(str(exc))
    ruler = json.loads(RULER.read_text(encoding="utf-8"))
    instances = ruler["instances"]
    if args.ids:
        instances = [x for x in instances if x["instance_id"] in set(args.ids)]
    if args.limit:
        instances = instances[: args.limit]
    RESULTS.mkdir(parents=True, exist_ok=True)
    done: list[dict] = []
    if args.resume:
        out_path = Path(args.resume)
        done = [json.loads(x) for x in out_path.read_text(encoding="utf-8").splitlines() if x.strip()]
        other = {settings_label(r.get("settings") or {}) for r in done} - {settings_label(settings)}
        if other:
            ap.error(f"--resume {out_path}: its rows were run with settings {sorted(other)}, this run with {settings_label(settings)}")
        seen = {r["instance_id"] for r in done}
        instances = [x for x in instances if x["instance_id"] not in seen]
        print(f"resuming {out_path}: {len(seen)} instances already scored, {len(instances)} to go", file=sys.stderr)
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out_path = fresh_rows_path(stamp)
    import_paqad()
    consts = set_consts(args.const)
    rev = paqad_revision()
    rev["consts"] = consts
    print(
        f"paqad: HEAD {rev['head']}, paqad/ {'dirty' if rev['paqad_dirty'] else 'clean'}, source sha256 {rev['source_sha256'][:16]}, "
        f"settings: {settings_label(settings)}",
        file=sys.stderr,
    )
    rows: list[dict] = []
    started = time.perf_counter()
    previous: Path | None = None
    if args.seed:
        instances = sorted(instances, key=lambda x: x["created_at"])  # consecutive base commits differ least
    with open(out_path, "a" if args.resume else "w", encoding="utf-8") as out:
        for i, inst in enumerate(instances, 1):
            if args.budget_min and time.perf_counter() - started > args.budget_min * 60:
                print(f"budget of {args.budget_min} min spent: stopping after {len(rows)} instances", file=sys.stderr)
                break
            t0 = time.perf_counter()
            root, cached = checkout(args.sympy_git, inst, settings)
            t1 = time.perf_counter()
            pq = run_paqad(root, inst["problem_statement"], inst["gold_files"], rev["source_sha256"], settings,
                           seed=previous if args.seed else None, any_source=args.reuse_index)
            previous = root
            bm = run_bm25(root, inst["problem_statement"])
            row = {
                "instance_id": inst["instance_id"],
                "base_commit": inst["base_commit"],
                "paqad_rev": rev,
                "settings": settings,
                "gold_files": inst["gold_files"],
                "gold_functions": inst["gold_functions"],
                **score_instance(inst, pq, bm),
                "checkout_s": round(t1 - t0, 2),
                "checkout_cached": cached,
                "paqad": {**pq, "files": pq["files"][:10], "units": pq["units"][:10]},
                "bm25": {**bm, "files": bm["files"][:10]},
            }
            t2 = time.perf_counter()
            if not args.keep:
                shutil.rmtree(root)
            row["cleanup_s"] = round(time.perf_counter() - t2, 2)
            row["seconds"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(
                f"[{i}/{len(instances)}] {inst['instance_id']}: paqad file#{row['paqad_file_rank']} fn#{row['paqad_fn_rank']} "
                f"gated={'answer' if pq['gated_answered'] else 'silent'} | bm25 file#{row['bm25_file_rank']} | "
                f"index {pq['index_s']}s, total {row['seconds']}s, elapsed {(time.perf_counter() - started) / 60:.1f} min",
                file=sys.stderr,
                flush=True,
            )
    print(summarize(done + rows))
    print(f"\nrows: {out_path.resolve().relative_to(REPO) if out_path.resolve().is_relative_to(REPO) else out_path}")


if __name__ == "__main__":
    main()
