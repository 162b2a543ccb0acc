#!/usr/bin/env python3
"""Score retrievers on the benchmark rulers: one scorer, many retrievers, one run.

Usage (from the repo root, after ``python -m benchmarks corpora fetch``):
    python -m benchmarks score [--corpora flask,requests,cobra,rxjs]
                               [--retrievers paqad-lexical,paqad-probe,grep,bm25,peer]
                               [--out benchmarks/.cache/results/] [--k 10] [--set SETTING=VALUE ...]
    python -m benchmarks score diff A.jsonl B.jsonl

Every retriever answers every ruler question of every corpus (plus ``refusal.yaml`` against the
corpora it names) through one small interface, ``prepare(corpus_root)`` then ``ask(question)``,
and is judged by the same pure functions in ``benchmarks/scoring.py``. Per-question rows go to
``<out>/<UTC timestamp>-<retriever>.jsonl`` (diffable between runs); the Markdown summary is
printed and written to ``<out>/latest.md`` (``<out>`` defaults to the gitignored
``benchmarks/.cache/results/``; ``python -m benchmarks summarize STAMP`` keeps a published run's
small summary in ``benchmarks/summaries/``). ``--set`` (repeatable) adds a paqad setting override to
every ``paqad-*`` retriever (over its own registry overrides); it is recorded in their rows
(``settings``) and in the summary, so such a run is told apart from a default one.

Retrievers run on a private copy of each corpus under ``benchmarks/.cache/score-work/`` (or
``--work DIR``, so that two runs at once never share a copy; paqad's index lands in
``<copy>/.paqad/``), so the pinned corpus keeps its fingerprint and a clean git status; the copy is checked against ``corpora.lock.json`` before every run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from benchmarks import corpora, scoring
from benchmarks.scoring import Answer, Passage, Question

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

RULERS = HERE / "rulers"
WORK = HERE / ".cache" / "score-work"
RESULTS = HERE / ".cache" / "results"  # gitignored; summaries/ keeps published runs
PEER_VENV = HERE / ".cache" / "peer-venv"
PEER_INDEX = HERE / ".cache" / "peer-index"
PEER_PACKAGE = "rag-your-code==1.5.3"
DEFAULT_CORPORA = ("flask", "requests", "cobra", "rxjs")
GREP_PRINT_FILES = 10  # grep's payload: matching lines of this many top files
RERANK_ENV = "PAQAD_BENCH_RERANK_MODEL"  # folder of a real cross-encoder for the paqad-rerank retriever


# --------------------------------------------------------------------------- interface


class Retriever(Protocol):
    """Anything that can index a corpus once and then answer questions about it."""

    name: str

    def prepare(self, corpus_root: Path) -> None: ...

    def ask(self, question: str) -> Answer: ...


# --------------------------------------------------------------------------- paqad

_PAQAD_BUILT: dict[str, tuple] = {}  # corpus root -> overrides its current index was built with


@dataclass
class PaqadRetriever:
    """paqad in-process. ``overrides`` go to ``config.load(cli_overrides=...)`` so a new
    configuration (hybrid, rerank, graph) is one registry line; ``gate=False`` is ``probe``."""

    name: str
    k: int
    overrides: dict[str, str] = field(default_factory=dict)
    gate: bool = True
    root: Path | None = None
    source_chars: int = 1200
    rerank: Any = None

    def prepare(self, corpus_root: Path) -> None:
        from paqad import config
        from paqad.index.writing import build
        from paqad.search import rerank

        cfg = config.load(corpus_root, cli_overrides=self.overrides, environ={})
        key = tuple(sorted((k, v) for k, v in self.overrides.items() if not k.startswith("rag_rerank")))  # search-time only
        if _PAQAD_BUILT.get(str(corpus_root)) != key:  # probe shares lexical's index: build once
            build.build_full(corpus_root, cfg)
            _PAQAD_BUILT[str(corpus_root)] = key
        self.root, self.cfg = corpus_root, cfg
        mode, model = str(cfg["rag_rerank"]), str(cfg["rag_rerank_model"])
        if mode == "local":
            rerank.model_folder(corpus_root, model)  # a missing model is an error here, not a silent fallback

    def ask(self, question: str) -> Answer:
        from paqad.index.reader import Index
        from paqad.search import pipeline
        from paqad.search.request import SearchRequest

        assert self.root is not None, "prepare() first"
        resp = pipeline.run(Index.shared(self.root), SearchRequest.from_settings(self.cfg, self.root, question, top_n=self.k, gate=self.gate))
        if resp.rerank and resp.rerank["fallback"]:
            raise RuntimeError(f"{self.name}: reranking fell back ({resp.rerank['fallback']}); the figures would be the fused order's")
        results = [Passage(r.path, r.start_line, r.end_line, len(r.source or "")) for r in resp.results]
        return Answer(results, silent=not resp.answered)


# --------------------------------------------------------------------------- corpus files


def git_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True).stdout
    return sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


def git_text_files(root: Path) -> dict[str, str]:
    """Everything git tracks, minus symlinks and binaries (a NUL byte or not UTF-8)."""
    out: dict[str, str] = {}
    for rel in git_files(root):
        path = root / rel
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


def paqad_text_files(root: Path) -> dict[str, str]:
    """Exactly the files (and decoded text) paqad indexes, via its own eligibility filters.

    The baselines' default: git-tracked text is not what paqad sees. rxjs's npm package tracks
    2,006 files under dist/ (compiled copies and source maps that embed the sources again) that
    paqad and the peer both skip; grepping them buries src/ under duplicates and ~1.7 MB a question.
    """
    from paqad import config
    from paqad.eligibility import collect

    elig = collect.Eligibility(root, config.load(root, environ={})["rag_max_file_size"])
    out: dict[str, str] = {}
    for rel in elig.listed:
        decision, text = elig.decide(rel)
        if decision.kept and text is not None:
            out[rel] = text
    return out


FILE_SETS: dict[str, Callable[[Path], dict[str, str]]] = {"paqad": paqad_text_files, "git": git_text_files}


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


# --------------------------------------------------------------------------- grep


@dataclass
class GrepRetriever:
    """The agent's world without retrieval: one ``grep -in WORD`` per content word of the question,
    files ranked by distinct words hit, then by matching lines, then path; whole files as results.
    ``file_set`` "paqad" greps the files paqad indexes, "git" every git-tracked text file."""

    k: int
    name: str = "grep"
    file_set: str = "paqad"
    files: dict[str, str] = field(default_factory=dict)
    loop: Any = None

    def prepare(self, corpus_root: Path) -> None:
        from paqad.evaluation.arms import GrepLoop  # the same loop `paqad rag eval` runs

        self.files = FILE_SETS[self.file_set](corpus_root)
        self.loop = GrepLoop(self.files)

    def ask(self, question: str) -> Answer:
        ranked, hits = self.loop.rank(scoring.content_words(question))
        payload = sum(hits[p][2] for p in ranked[:GREP_PRINT_FILES])
        results = [Passage(p, 1, line_count(self.files[p]), hits[p][2] if i < GREP_PRINT_FILES else 0)
                   for i, p in enumerate(ranked[: self.k])]
        return Answer(results, silent=not hits, payload_chars=payload)


# --------------------------------------------------------------------------- bm25


@dataclass
class Bm25Retriever:
    """Plain BM25 over whole files with bm25s defaults and its English stopwords: the textbook
    baseline. Never silent (a ranking always has a top)."""

    k: int
    name: str = "bm25"
    file_set: str = "paqad"
    paths: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    model: Any = None

    def prepare(self, corpus_root: Path) -> None:
        import bm25s

        files = FILE_SETS[self.file_set](corpus_root)
        self.paths = list(files)
        self.sizes = [len(files[p]) for p in self.paths]
        self.lines = [line_count(files[p]) for p in self.paths]
        tokens = bm25s.tokenize([files[p] for p in self.paths], stopwords="en", show_progress=False)
        self.model = bm25s.BM25()
        self.model.index(tokens, show_progress=False)

    def ask(self, question: str) -> Answer:
        import bm25s

        query = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)
        docs, _scores = self.model.retrieve(query, k=min(self.k, len(self.paths)), show_progress=False)
        results = [Passage(self.paths[i], 1, self.lines[i], self.sizes[i]) for i in map(int, docs[0])]
        return Answer(results, silent=False)


# --------------------------------------------------------------------------- peer

PEER_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUTF8": "1"}


def peer_exe() -> Path:
    """The peer's CLI in its own venv, created with ``pip install rag-your-code==1.5.3`` if absent
    (it must not share paqad's environment, and this pins exactly what was measured)."""
    exe = PEER_VENV / "bin" / "rag-your-code"
    pinned = "rag_your_code-" + PEER_PACKAGE.split("==")[1] + ".dist-info"
    if not exe.exists():
        subprocess.run([shutil.which("python3") or sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    if not exe.exists() or not list(PEER_VENV.glob(f"lib/python*/site-packages/{pinned}")):
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", PEER_PACKAGE], check=True)
    return exe


def run_peer(args: list[str]) -> str:
    proc = subprocess.run([str(peer_exe()), *args], capture_output=True, env={**os.environ, **PEER_ENV})
    if proc.returncode != 0:
        raise RuntimeError(f"rag-your-code {args[0]} failed ({proc.returncode}): {proc.stderr.decode('utf-8', 'replace')[-2000:]}")
    return proc.stdout.decode("utf-8")


@dataclass
class PeerRetriever:
    """rag-your-code 1.5.3 through its CLI, all defaults (no ``rag-your-code.toml``: the signed
    feature-hash embedder, which opens no socket), index written outside the corpus."""

    k: int
    name: str = "peer"
    root: Path | None = None
    index: Path | None = None

    def prepare(self, corpus_root: Path) -> None:
        self.root, self.index = corpus_root, PEER_INDEX / corpus_root.name / "index.json"
        run_peer(["index", str(corpus_root), "--output", str(self.index), "--full"])

    def ask(self, question: str) -> Answer:
        out = run_peer(["search", "--root", str(self.root), "--index", str(self.index),
                        "--limit", str(self.k), "--json", "--", question])
        data = json.loads(out)
        units = [r["unit"] for r in data.get("results") or []]
        results = [Passage(u["path"], int(u["start_line"]), int(u["end_line"]), 0) for u in units]
        return Answer(results, silent=not results, payload_chars=len(data.get("context") or ""))


# --------------------------------------------------------------------------- registry

# The core's lexical configuration, pinned: the shipped default provider is the local model.
LEXICAL = {"rag_embedding_provider": "none"}

REGISTRY: dict[str, Callable[[int], Retriever]] = {
    "paqad-lexical": lambda k: PaqadRetriever("paqad-lexical", k, overrides=dict(LEXICAL)),
    "paqad-probe": lambda k: PaqadRetriever("paqad-probe", k, overrides=dict(LEXICAL), gate=False),
    "paqad-hybrid": lambda k: PaqadRetriever("paqad-hybrid", k, overrides={"rag_embedding_provider": "local"}),
    "paqad-hybrid-probe": lambda k: PaqadRetriever("paqad-hybrid-probe", k, overrides={"rag_embedding_provider": "local"}, gate=False),
    # A cross-encoder folder (model.onnx + tokenizer.json) named by PAQAD_BENCH_RERANK_MODEL; run only when it is set.
    "paqad-rerank": lambda k: PaqadRetriever(
        "paqad-rerank", k, overrides={**LEXICAL, "rag_rerank": "local", "rag_rerank_model": os.environ.get(RERANK_ENV, ""), "rag_rerank_timeout": "120"}
    ),
    "grep": lambda k: GrepRetriever(k),
    "bm25": lambda k: Bm25Retriever(k),
    "grep-all": lambda k: GrepRetriever(k, "grep-all", file_set="git"),
    "bm25-all": lambda k: Bm25Retriever(k, "bm25-all", file_set="git"),
    "peer": lambda k: PeerRetriever(k),
}
DESCRIPTIONS = {
    "paqad-lexical": "paqad in-process, default config, evidence gate on (`search`)",
    "paqad-probe": "same index, gate off (`probe`): ranking alone",
    "paqad-hybrid": "paqad in-process with `rag_embedding_provider=local` (MiniLM vectors blended with BM25F), gate and floor on",
    "paqad-hybrid-probe": "the hybrid index, gate off: lexical and vector ranking alone",
    "paqad-rerank": "paqad-lexical plus `rag_rerank=local` with the cross-encoder in $PAQAD_BENCH_RERANK_MODEL (pool 50, before the floor)",
    "grep": "content words of the question, one case-insensitive grep each, files by words hit; paqad's files",
    "bm25": "bm25s defaults over whole files, English stopwords; paqad's files",
    "grep-all": "grep over every git-tracked text file (incl. rxjs dist/, flask docs .rst)",
    "bm25-all": "bm25 over every git-tracked text file",
    "peer": f"`{PEER_PACKAGE}` CLI, all defaults (signed feature-hash embedder, offline)",
}


# --------------------------------------------------------------------------- corpora and rulers


@dataclass
class Corpus:
    name: str
    version: str
    fingerprint: str
    root: Path  # the private working copy actually scored
    questions: list[Question]
    verified: bool


def load_yaml(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def copy_fingerprint(root: Path) -> str:
    """corpora.py's fingerprint, ignoring the ``.paqad/`` index the scorer itself adds."""
    import hashlib

    entries = sorted((rel, corpora.file_digest(p)) for rel, p in corpora.iter_files(root)
                     if not rel.startswith(".paqad/"))
    h = hashlib.sha256()
    for rel, digest in entries:
        h.update(f"{rel}\t{digest}\n".encode())
    return "sha256:" + h.hexdigest()


def working_copy(src: Path, want: str) -> tuple[Path, bool]:
    """A byte-exact private copy of the corpus (``.git`` included), re-made if it drifted."""
    dst = WORK / src.name
    if dst.exists() and copy_fingerprint(dst) == want:
        return dst, True
    if dst.exists():
        shutil.rmtree(dst)
    WORK.mkdir(parents=True, exist_ok=True)
    skip_index = lambda d, names: [".paqad"] if Path(d) == src else []  # noqa: E731 - someone's index
    shutil.copytree(src, dst, symlinks=True, ignore=skip_index)
    return dst, copy_fingerprint(dst) == want


def load_corpus(name: str, lock: dict[str, Any], refusal: dict[str, Any]) -> Corpus:
    """Corpus copy + its ruler questions (+ refusal questions if refusal.yaml names it)."""
    entry = lock[name]
    src = corpora.CACHE / entry["root"]
    if not (src / ".git").is_dir():
        corpora.die(f"{name} is not fetched: run `python -m benchmarks corpora fetch {name}`")
    root, ok = working_copy(src, entry["fingerprint"])
    if not ok:
        corpora.warn_loud(f"{name}: corpus does not match corpora.lock.json; scores are for DRIFTED bytes")
    ruler = load_yaml(RULERS / f"{name}.yaml")
    if ruler.get("fingerprint") != entry["fingerprint"]:
        corpora.warn_loud(f"{name}: ruler fingerprint {ruler.get('fingerprint')} != lock {entry['fingerprint']}")
    questions = scoring.questions_from_ruler(ruler)
    if name in (refusal.get("corpora") or []):
        questions += scoring.questions_from_ruler(refusal)
    return Corpus(name, entry["version"], entry["fingerprint"], root, questions, ok)


# --------------------------------------------------------------------------- running


def ask_all(ret: Retriever, corpus: str, questions: list[Question], k: int) -> list[dict[str, Any]]:
    """Every question once; an exception becomes a silent row carrying the error text."""
    rows = []
    for q in questions:
        started = time.perf_counter()
        try:
            ans, error = ret.ask(q.q), None
        except Exception as exc:  # noqa: BLE001 - record and go on; the table counts errors
            ans, error = Answer([], silent=True), f"{type(exc).__name__}: {exc}"
        row = scoring.question_row(q, corpus, ret.name, ans, k, (time.perf_counter() - started) * 1000)
        if error:
            row["error"] = error[-500:]
            print(f"  {ret.name} {corpus} {q.id}: {row['error']}", file=sys.stderr)
        rows.append(row)
    return rows


@dataclass
class RunStats:
    """Wall time of one retriever over the run, split so indexing cost is visible on its own."""

    prepare_s: float = 0.0
    ask_s: float = 0.0
    failures: list[str] = field(default_factory=list)


def run_retriever(ret: Retriever, cs: list[Corpus], k: int) -> tuple[list[dict[str, Any]], RunStats]:
    """prepare + ask on each corpus; a corpus whose prepare fails is recorded and skipped."""
    rows, stats = [], RunStats()
    for c in cs:
        started = time.perf_counter()
        try:
            ret.prepare(c.root)
        except Exception as exc:  # noqa: BLE001
            stats.failures.append(f"{c.name}: prepare failed: {type(exc).__name__}: {exc}"[:2000])
            print(f"  {ret.name} {c.name}: PREPARE FAILED: {exc}", file=sys.stderr)
            continue
        stats.prepare_s += time.perf_counter() - started
        started = time.perf_counter()
        rows += ask_all(ret, c.name, c.questions, k)
        stats.ask_s += time.perf_counter() - started
        print(f"  {ret.name:14s} {c.name:9s} {len(c.questions):4d} questions", file=sys.stderr)
    return rows, stats


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- report


def summary_markdown(rows: list[dict[str, Any]], cs: list[Corpus], stats: dict[str, RunStats],
                     files: dict[str, str], meta: dict[str, str]) -> str:
    """latest.md: provenance first (date, k, fingerprints, wall times), then the tables."""
    out = [f"# Retrieval quality — {meta['date']}", "",
           f"`{meta['command']}` · k = {meta['k']} · paqad {meta['paqad']} · git {meta['git']}"
           + (f" · paqad-* settings overridden: `{meta['settings']}`" if meta.get("settings") else ""), "",
           "| corpus | version | fingerprint (corpora.lock.json) | questions (incl. refusal) | verified |",
           "| --- | --- | --- | --- | --- |"]
    out += [f"| {c.name} | {c.version} | `{c.fingerprint}` | {len(c.questions)} | {'yes' if c.verified else '**DRIFT**'} |" for c in cs]
    out += ["", "| retriever | what | index s | questions s | wall s | per-question rows |", "| --- | --- | --- | --- | --- | --- |"]
    for name, st in stats.items():
        out.append(f"| {name} | {DESCRIPTIONS.get(name, '')} | {st.prepare_s:.1f} | {st.ask_s:.1f} | "
                   f"{st.prepare_s + st.ask_s:.1f} | `{files.get(name, '-')}` |")
    out += ["", "## At a glance", ""]
    for key, label in GLANCE:
        out += [scoring.pivot_table(rows, key, label), ""]
    out += ["## Overall", "", scoring.metrics_table(rows, ("retriever",)),
            "", "## By corpus", "", scoring.metrics_table(rows, ("retriever", "corpus")),
            "", "## By style", "", scoring.metrics_table(rows, ("retriever", "style")),
            "", "## By corpus and style", "", scoring.metrics_table(rows, ("retriever", "corpus", "style")),
            "", NOTES]
    problems = [f"- {n}: {f}" for n, st in stats.items() for f in st.failures]
    problems += [f"- {r['retriever']} {r['corpus']} {r['id']}: {r['error']}" for r in rows if r.get("error")]
    if problems:
        out += ["", "## Failures", "", *problems]
    return "\n".join(out) + "\n"


GLANCE = (("unit_mrr", "unit MRR@k (HIT RULE)"), ("file_mrr", "file MRR@k (same path)"),
          ("silence", "silence on refusal.yaml"), ("chars", "chars per question"))

NOTES = """\
Unit columns use the HIT RULE (rulers/FORMAT.md: same path, overlap >= half the shorter span,
result span <= 4 x answer span + 20 lines), so whole-file retrievers (grep, bm25) score ~0 there
by design; compare them on the **file** columns (same path only). hit@n and MRR are over the
answerable questions, within the top k. answered-wrong = answered, no hit in the top k;
silent (answerable) = said nothing to a question that has an answer; silence (refusal) = share
of (refusal question, corpus) pairs met with silence. chars/q = characters handed back per
question (all questions): paqad the source attached to its results (rag_source_chars, 12,000
budget); peer its budgeted `context` block; grep what `grep -n` prints for its top 10 files
(one search per word); bm25 the whole text of its top-k files. grep and bm25 search exactly the
files paqad indexes (its eligibility filters); grep-all and bm25-all every git-tracked text file.
ms/q is in-process for paqad, grep and bm25, and a fresh `rag-your-code search` process (index
load included) for the peer."""


def git_describe() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True)
    return (proc.stdout.strip() or "?") + ("+dirty" if dirty.stdout.strip() else "")


# --------------------------------------------------------------------------- commands


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """``SETTING=VALUE`` pairs checked against paqad's settings table, as ``-c`` flags are."""
    from paqad import config
    from paqad.errors import ConfigError
    from paqad.settings import SETTINGS

    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = (x.strip() for x in pair.partition("="))
        if not sep or key not in SETTINGS:
            corpora.die(f"--set {pair!r}: expected SETTING=VALUE with a known paqad setting, e.g. rag_max_file_size=262144")
        try:
            config.coerce(SETTINGS[key], value, f"--set {key}")
        except ConfigError as exc:
            corpora.die(str(exc))
        out[key] = value
    return out


def cmd_score(args: argparse.Namespace) -> int:
    names = [n for n in args.corpora.split(",") if n]
    wanted = [n for n in args.retrievers.split(",") if n]
    unknown = [n for n in wanted if n not in REGISTRY]
    if unknown:
        corpora.die(f"unknown retriever {unknown}; known: {list(REGISTRY)}")
    settings = parse_settings(getattr(args, "settings", None) or [])
    lock = corpora.load_lock()
    refusal = load_yaml(RULERS / "refusal.yaml")
    cs = [load_corpus(n, lock, refusal) for n in names]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    rows, stats, files = [], {}, {}
    for name in wanted:
        ret = REGISTRY[name](args.k)
        if settings and isinstance(ret, PaqadRetriever):
            ret.overrides = {**ret.overrides, **settings}
        ret_rows, stats[name] = run_retriever(ret, cs, args.k)
        if settings and isinstance(ret, PaqadRetriever):
            for r in ret_rows:
                r["settings"] = settings
        files[name] = f"{stamp}-{name}.jsonl"
        write_jsonl(out / files[name], ret_rows)
        rows += ret_rows
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "k": str(args.k), "git": git_describe(),
            "command": "python -m benchmarks score " + " ".join(sys.argv[1:]), "paqad": paqad_version(),
            "settings": ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))}
    text = summary_markdown(rows, cs, stats, files, meta)
    (out / "latest.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


def paqad_version() -> str:
    import paqad

    return getattr(paqad, "__version__", "?")


def cmd_diff(args: argparse.Namespace) -> int:
    a, b = read_jsonl(Path(args.a)), read_jsonl(Path(args.b))
    lines = scoring.diff_rows(a, b)
    print("\n".join(lines) if lines else "no question changed")
    print(f"\n{len(lines)} changed of {len({(r['corpus'], r['id']) for r in a + b})} questions", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    global WORK  # ``--work``: a private folder for a run beside someone else's
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["diff"]:
        d = argparse.ArgumentParser(prog="score.py diff", description="questions whose outcome changed")
        d.add_argument("a")
        d.add_argument("b")
        return cmd_diff(d.parse_args(argv[1:]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=",".join(DEFAULT_CORPORA))
    ap.add_argument("--retrievers", default=",".join(n for n in REGISTRY if n != "paqad-rerank" or os.environ.get(RERANK_ENV)))
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="SETTING=VALUE",
                    help="paqad setting override for every paqad-* retriever, e.g. rag_max_file_size=262144 (repeatable)")
    ap.add_argument("--work", default=str(WORK),
                    help="folder of the private corpus copies (default benchmarks/.cache/score-work); give each concurrent run its own")
    args = ap.parse_args(argv)
    WORK = Path(args.work).resolve()
    return cmd_score(args)


if __name__ == "__main__":
    sys.exit(main())
