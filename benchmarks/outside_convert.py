"""Pure parts of ``outside.py``: other authors' records -> cases of ``rulers/OUTSIDE.md``, the half
rule, the language rule, the corpus-selection rule and the pin check. No git, no network, no files.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

MAX_FILES = 6000  # a corpus with more files is skipped (indexing cost)

ARB_RULERS = {"code2test": "arb-code2test", "comment2context": "arb-comment2context",
              "trace2code": "arb-trace2code", "abstention": "arb-abstention"}
ARB_STYLES = {"code2test": "pr", "comment2context": "review", "trace2code": "trace", "abstention": "abstention"}
SVERKLO_RULER = "sverklo-swe"

# file suffix -> case language (code first; prose and config only when nothing else answers)
LANGUAGE = {".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
            ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
            ".tsx": "typescript", ".vue": "vue", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
            ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby",
            ".php": "php", ".swift": "swift", ".scala": "scala", ".prisma": "prisma",
            ".md": "markdown", ".mdx": "markdown", ".rst": "rst"}
PROSE = frozenset({"markdown", "rst"})

# A SWE-bench instance (Lite, Verified, full) names itself in its id (``owner__name-1234``) or its
# metadata (dataset name, princeton-nlp / SWE-bench urls); only sympy's may be used.
SWE_BENCH = re.compile(r"swe[-_ ]?bench|princeton-nlp|^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+$", re.I)


def half(ruler: str, case_id: str) -> str:
    """OUTSIDE.md's rule, fixed before any result: ``tune`` on an even hash, else ``report``."""
    return "tune" if int(hashlib.sha256(f"{ruler}:{case_id}".encode()).hexdigest()[:8], 16) % 2 == 0 else "report"


def corpus_key(repo: str, commit: str) -> str:
    return f"{repo.replace('/', '__')}@{commit[:12]}"


def language_of(path: str) -> str | None:
    return LANGUAGE.get(PurePosixPath(path).suffix.lower())


def answers_language(paths: list[str]) -> str:
    """The most common language of the answer files (code before prose; a tie: the first answer's)."""
    langs = [lang for lang in (language_of(p) for p in paths) if lang]
    code = [lang for lang in langs if lang not in PROSE] or langs
    if not code:
        return "other"
    counts = Counter(code)
    top = max(counts.values())
    return next(lang for lang in code if counts[lang] == top)


def main_language(sizes: dict[str, int]) -> str:
    """A corpus's main language: the code language with most bytes (as GitHub names a repository's
    language; ties by name). ``sizes``: path -> bytes."""
    counts: Counter[str] = Counter()
    for path, n in sizes.items():
        lang = language_of(path)
        if lang and lang not in PROSE:
            counts[lang] += n
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0] if counts else "other"


def from_swe_bench(record: dict[str, Any]) -> bool:
    """True when a record derives from a SWE-bench instance of a repository other than sympy."""
    if str(record.get("repo") or "").lower() == "sympy/sympy":
        return False
    meta = json.dumps(record.get("metadata") or {}, sort_keys=True)
    return bool(SWE_BENCH.search(str(record.get("id") or "")) or re.search(r"swe[-_ ]?bench|princeton-nlp", meta, re.I))


# --------------------------------------------------------------------------- a raw case


@dataclass
class Raw:
    """A case before its corpus is fixed: the repository and commit it was written against."""

    ruler: str
    id: str
    repo: str
    commit: str  # a commit id, or for sverklo a tag until resolved
    style: str
    q: str
    answers: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def _dedupe(paths: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for p in paths:
        p = p.get("path") if isinstance(p, dict) else p
        if p and str(p) not in out:
            out.append(str(p))
    return out


def arb_gold(rec: dict[str, Any]) -> list[str]:
    """ARB's own target files (its ``baseline.target_gold_files``): explicit ``gold.files``, else per task
    ``related_tests`` (code2test), ``must_context_files``/``context_files`` then ``root_cause_files``
    (comment2context), ``root_cause_files`` (trace2code), with ``related_tests`` as the last resort."""
    gold = rec.get("gold") or {}
    if gold.get("no_gold") is True:
        return []
    explicit = _dedupe(gold.get("files") or [])
    if explicit:
        return explicit
    task = rec.get("task_type")
    if task == "code2test":
        return _dedupe(gold.get("related_tests") or [])
    if task == "comment2context":
        ctx = _dedupe(gold.get("must_context_files") or gold.get("context_files") or [])
        if ctx:
            return ctx
    return _dedupe(gold.get("root_cause_files") or []) or _dedupe(gold.get("related_tests") or [])


def arb_spans(rec: dict[str, Any]) -> dict[str, tuple[list[int], str | None]]:
    """``gold_spans``/``gold_blocks`` when a record has them: path -> ([start, end], symbol)."""
    out: dict[str, tuple[list[int], str | None]] = {}
    for key in ("gold_spans", "gold_blocks"):
        for s in rec.get(key) or (rec.get("gold") or {}).get(key) or []:
            try:
                start, end = int(s["start_line"]), int(s["end_line"])
            except (KeyError, TypeError, ValueError):
                continue
            if s.get("path") and 0 < start <= end and s["path"] not in out:
                out[str(s["path"])] = ([start, end], s.get("symbol") or None)
    return out


def arb_question(rec: dict[str, Any]) -> str:
    """The query text a person had, per task (ARB's evaluator feeds the whole ``query`` object as JSON).

    code2test: the pull request's title and body and the file it changed (ARB's ``changed_file``,
    not an answer); comment2context: the review comment and its diff hunk, without the commented
    file's path, which is the answer in every v0.1 record; trace2code: the failure log
    (``raw_signal``); abstention: the issue text."""
    q = rec.get("query") or {}
    task = rec.get("task_type")
    if task == "code2test":
        parts = [q.get("pr_title") or "", q.get("pr_body") or ""]
        if q.get("changed_file"):
            parts.append(f"Changed file: {q['changed_file']}")
    elif task == "comment2context":
        parts = [f"Review comment (pull request: {q.get('pr_title') or ''}):", q.get("review_comment") or "",
                 q.get("diff_hunk_context") or ""]
    elif task == "trace2code":
        parts = [q.get("raw_signal") or ""]
    else:
        parts = [q.get("text") or ""]
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def arb_raw(rec: dict[str, Any]) -> Raw:
    task = str(rec["task_type"])
    spans = arb_spans(rec)
    answers = [{"path": p, "lines": spans[p][0] if p in spans else None, "name": spans[p][1] if p in spans else None}
               for p in arb_gold(rec)]
    meta = rec.get("metadata") or {}
    extra = {"source_url": meta.get("pr_url") or meta.get("source_url")}
    if task == "abstention":
        extra["abstention_kind"] = "counterfactual" if meta.get("source_repo") else "natural"
        extra["reason"] = (rec.get("gold") or {}).get("reason")
    return Raw(ARB_RULERS[task], str(rec["id"]), str(rec["repo"]), str(rec["base_commit"]), ARB_STYLES[task],
               arb_question(rec), answers, extra)


def sverklo_raw(task: dict[str, Any], repo: str, ref: str) -> Raw:
    """A bench:swe task: its question, its required evidence files (``line_range`` kept when given)."""
    answers: list[dict[str, Any]] = []
    for ev in task.get("required_evidence") or []:
        lines = [int(ev["line_range"][0]), int(ev["line_range"][1])] if ev.get("line_range") else None
        if not any(a["path"] == ev["file"] and a["lines"] == lines for a in answers):
            answers.append({"path": str(ev["file"]), "lines": lines, "name": ev.get("symbol")})
    return Raw(SVERKLO_RULER, str(task["id"]), repo, ref, "question", str(task["question"]).strip(), answers,
               {"dataset": task.get("dataset"), "ref": ref})


# --------------------------------------------------------------------------- corpus selection


def commit_rank(repo: str, commit: str, raws: list[Raw]) -> tuple[int, int, str]:
    """Order of a repository's base commits: most answerable cases, most cases, then sha256 of
    ``<owner/name>@<commit>`` (a fixed, content-free tie-break)."""
    here = [r for r in raws if r.repo == repo and r.commit == commit]
    return (-sum(r.answerable for r in here), -len(here), hashlib.sha256(f"{repo}@{commit}".encode()).hexdigest())


def select_commits(raws: list[Raw], sizes: dict[tuple[str, str], int | None], per_repo: int) -> dict[str, list[str]]:
    """Per repository the kept base commits: among those whose tree is known and has at most
    ``MAX_FILES`` files, the first ``per_repo`` by ``commit_rank``."""
    kept: dict[str, list[str]] = {}
    for repo in sorted({r.repo for r in raws}):
        commits = sorted({r.commit for r in raws if r.repo == repo}, key=lambda c: commit_rank(repo, c, raws))
        ok = [c for c in commits if (n := sizes.get((repo, c))) is not None and n <= MAX_FILES]
        if ok:
            kept[repo] = ok[:per_repo]
    return kept


def place(raws: list[Raw], kept: dict[str, list[str]]) -> tuple[list[Raw], Counter[str]]:
    """Cases at a kept commit stay; an unanswerable case at another commit of a kept repository
    moves to that repository's first kept commit (``moved_from`` keeps its own); the rest are
    dropped, counted by reason."""
    out: list[Raw] = []
    dropped: Counter[str] = Counter()
    for r in raws:
        commits = kept.get(r.repo)
        if not commits:
            dropped[f"{r.ruler}: repository has no corpus"] += 1
        elif r.commit in commits:
            out.append(r)
        elif not r.answerable:
            out.append(Raw(r.ruler, r.id, r.repo, commits[0], r.style, r.q, r.answers, {**r.extra, "moved_from": r.commit}))
        else:
            dropped[f"{r.ruler}: base commit not kept"] += 1
    return out, dropped


def finish(r: Raw, tree: set[str] | dict[str, int], corpus_language: str) -> tuple[dict[str, Any] | None, int]:
    """The case as OUTSIDE.md writes it, with answers whose file the corpus lacks taken out:
    (case or None when no answer is left of an answerable one, number of answers taken out)."""
    answers = [a for a in r.answers if a["path"] in tree]
    lost = len(r.answers) - len(answers)
    if r.answerable and not answers:
        return None, lost
    language = answers_language([a["path"] for a in answers]) if answers else corpus_language
    case = {"ruler": r.ruler, "id": r.id, "corpus": corpus_key(r.repo, r.commit), "language": language,
            "style": r.style, "q": r.q, "answerable": bool(answers), "answers": answers, "half": half(r.ruler, r.id)}
    case.update({k: v for k, v in r.extra.items() if v is not None})
    if lost:
        case["answers_absent"] = lost
    return case, lost


# --------------------------------------------------------------------------- pins


def pin_drift(entry: dict[str, Any] | None, repo: str, commit: str, digests: dict[str, str]) -> list[str]:
    """What differs between a ruler's lock entry and what was read now (nothing for a new ruler)."""
    if not entry:
        return []
    out = []
    if entry.get("source_repo") != repo or entry.get("source_commit") != commit:
        out.append(f"source {entry.get('source_repo')}@{entry.get('source_commit')} in the lock, {repo}@{commit} now")
    locked = entry.get("source_files") or {}
    for path in sorted(set(locked) | set(digests)):
        if locked.get(path) != digests.get(path):
            out.append(f"{path}: sha256 {str(locked.get(path))[:12]} in the lock, {str(digests.get(path))[:12]} now")
    return out


def corpus_drift(entry: dict[str, Any] | None, fingerprint: str, files: int) -> list[str]:
    if not entry or not entry.get("fingerprint"):
        return []
    if entry["fingerprint"] != fingerprint or entry.get("files") != files:
        return [f"fingerprint {entry['fingerprint'][:19]} ({entry.get('files')} files) in the lock, "
                f"{fingerprint[:19]} ({files} files) now"]
    return []
