"""Every ruler as cases of ``rulers/OUTSIDE.md``'s shape, and the corpora they are asked against.

Shared by ``all_rulers.py`` (kept apart so the loading and the half rule are tested without a search).
A case: ruler, id, corpus key, language, style, q, answerable, answers (``path``, ``lines`` a 1-based
inclusive span or None for a file-only answer, ``name``), half. The half is fixed by rule for every
ruler, ours included: ``tune`` when ``int(sha256(f"{ruler}:{id}").hexdigest()[:8], 16)`` is even.
``refusal.yaml`` is the ruler ``refusal``: one case per (question, corpus it names), so the same
question has the same half on every corpus.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import corpora, outside_convert, score, semble, swebench

HERE = Path(__file__).resolve().parent

OURS = ("flask", "requests", "cobra", "rxjs")
MAIN_LANGUAGE = {"flask": "python", "requests": "python", "cobra": "go", "rxjs": "typescript"}
OUTSIDE = HERE / ".cache" / "outside"
OUTSIDE_LOCK = HERE / "outside.lock.json"
SWE_RULER = "swebench-sympy"
EXT_LANGUAGE = {".py": "python", ".go": "go", ".ts": "typescript", ".tsx": "typescript", ".js": "javascript", ".mjs": "javascript",
                ".rst": "rst", ".md": "markdown"}


def half_of(ruler: str, case_id: str) -> str:
    """OUTSIDE.md's rule, for every ruler (one definition: ``outside_convert.half``)."""
    return outside_convert.half(ruler, case_id)


@dataclass
class Case:
    ruler: str
    id: str
    corpus: str
    language: str
    style: str
    q: str
    answers: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        return bool(self.answers)

    @property
    def half(self) -> str:
        return half_of(self.ruler, self.id)

    @property
    def level(self) -> str | None:
        """What the ranks of this case are read at: ``unit`` when an answer gives lines, else ``file``."""
        if not self.answers:
            return None
        return "unit" if any(a.get("lines") for a in self.answers) else "file"

    def head(self) -> dict[str, Any]:
        return {"ruler": self.ruler, "id": self.id, "corpus": self.corpus, "language": self.language, "style": self.style,
                "half": self.half, "answerable": self.answerable, "level": self.level, "n_answers": len(self.answers), **self.extra}


def case_from_dict(d: dict[str, Any]) -> Case:
    """One line of an OUTSIDE.md case file (its own ``half`` is recomputed by the rule)."""
    answers = [{"path": str(a["path"]), "lines": [int(a["lines"][0]), int(a["lines"][1])] if a.get("lines") else None, "name": a.get("name")}
               for a in d.get("answers") or []]
    if bool(d.get("answerable", bool(answers))) != bool(answers):
        raise ValueError(f"{d.get('ruler')}:{d.get('id')}: answerable={d.get('answerable')} but {len(answers)} answers")
    return Case(str(d["ruler"]), str(d["id"]), str(d["corpus"]), str(d.get("language") or "?"), str(d.get("style") or "?"), str(d["q"]), answers)


def load_case_file(path: Path) -> list[Case]:
    return [case_from_dict(json.loads(x)) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@dataclass
class CorpusSource:
    """A corpus to copy: its key, its identity (a ``sha256:`` fingerprint, or ``git:<commit>`` for a
    checkout made from a git directory) and how to write it into a folder."""

    key: str
    identity: str
    materialise: Callable[[Path], None]
    files: int = 0  # when known: a quick run (--limit-corpora) takes the smaller corpora first


def copier(src: Path) -> Callable[[Path], None]:
    def copy(dst: Path) -> None:
        shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: [".paqad"] if Path(d) == src else [])

    return copy


def wanted(ruler: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(ruler, p) for p in patterns)


@dataclass
class Selection:
    cases: list[Case] = field(default_factory=list)
    corpora: dict[str, CorpusSource] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def by_corpus(self) -> dict[str, list[Case]]:
        out: dict[str, list[Case]] = {}
        for c in self.cases:
            out.setdefault(c.corpus, []).append(c)
        return out

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cases:
            out[c.ruler] = out.get(c.ruler, 0) + 1
        return out

    def limit(self, limits: dict[str, int]) -> None:
        """Only ``limits[pattern]`` corpora of each ruler (the first pattern that matches it; ``*`` for a
        bare N; none: all): those an earlier
        ruler already keeps first (refusal.yaml on flask when the flask ruler is in), then the
        smaller (files, then key; SWE-bench's in date order)."""
        keep: set[tuple[str, str]] = set()
        for ruler in self.counts():
            keys = list(dict.fromkeys(c.corpus for c in self.cases if c.ruler == ruler))
            keys = sorted(keys, key=lambda k: (all(k != kk for _, kk in keep), (self.corpora[k].files, k) if ruler != SWE_RULER else (0, "")))
            n = next((v for p, v in limits.items() if fnmatch.fnmatchcase(ruler, p)), len(keys))
            keep |= {(ruler, k) for k in keys[:n]}
        self.cases = [c for c in self.cases if (c.ruler, c.corpus) in keep]
        used = {c.corpus for c in self.cases}
        self.corpora = {k: v for k, v in self.corpora.items() if k in used}


# --------------------------------------------------------------------------- our rulers


def answer_language(answers: list[dict[str, Any]], default: str) -> str:
    langs = [EXT_LANGUAGE.get(Path(a["path"]).suffix) for a in answers]
    code = [x for x in langs if x and x not in ("rst", "markdown")]
    return code[0] if code else next((x for x in langs if x), default)


def ours(sel: Selection, patterns: list[str]) -> None:
    lock = corpora.load_lock()
    fetched = []
    for name in OURS:
        src = corpora.CACHE / lock[name]["root"]
        if not (src / ".git").is_dir():
            if wanted(name, patterns) or wanted("refusal", patterns):
                sel.skipped.append(f"{name}: not fetched; run `python benchmarks/corpora.py fetch {name}`")
            continue
        fetched.append(name)
        sel.corpora[name] = CorpusSource(name, lock[name]["fingerprint"], copier(src), int(lock[name].get("files") or 0))
        if not wanted(name, patterns):
            continue
        for item in score.load_yaml(score.RULERS / f"{name}.yaml").get("questions") or []:
            answers = [{"path": a["path"], "lines": [int(a["lines"][0]), int(a["lines"][1])], "name": a.get("name")} for a in item.get("answers") or []]
            sel.cases.append(Case(name, str(item["id"]), name, answer_language(answers, MAIN_LANGUAGE[name]), str(item.get("style", "plain")),
                                  str(item["q"]), answers))
    if wanted("refusal", patterns):
        refusal = score.load_yaml(score.RULERS / "refusal.yaml")
        for name in [n for n in refusal.get("corpora") or [] if n in fetched]:
            for item in refusal.get("questions") or []:
                sel.cases.append(Case("refusal", str(item["id"]), name, MAIN_LANGUAGE[name], str(item.get("style", "plain")), str(item["q"])))


# --------------------------------------------------------------------------- semble


def semble_cases(sel: Selection, patterns: list[str]) -> None:
    fetch = "python benchmarks/semble.py fetch --mirrors /work/.mirror"
    if not (semble.CACHE / "upstream" / "repos.json").exists():
        sel.skipped.append(f"semble: not fetched; run `{fetch}`")
        return
    lock = json.loads(semble.LOCK.read_text())["repos"]
    absent: list[str] = []
    for t in semble.load_tasks(semble.load_specs()):
        name, root = t["repo"], semble.CACHE / "repos" / t["repo"]
        entry = lock.get(name) or {}
        if not entry.get("used") or not (root / ".git").is_dir():
            absent += [] if name in absent else [name]
            continue
        key = f"semble/{name}"
        sel.corpora.setdefault(key, CorpusSource(key, str(entry["fingerprint"]), copier(root), int(entry.get("files") or 0)))
        answers = [{"path": p, "lines": [s, e] if s is not None and e is not None else None, "name": None} for p, s, e in t["targets"]]
        sel.cases.append(Case("semble", t["qid"], key, t["language"], t["category"], t["query"], answers))
    if absent:
        sel.skipped.append(f"semble: {len(absent)} repositories not fetched, their queries left out ({', '.join(absent[:8])}"
                           f"{', ...' if len(absent) > 8 else ''}); run `{fetch} NAME ...` after bringing their git directories")
    if wanted("semble-probes", patterns):
        probe_cases(sel)


def probe_cases(sel: Selection) -> None:
    """semble_probes.py's unanswerable probes (ours, made by rule from each repository) as ruler ``semble-probes``."""
    from benchmarks import semble_probes

    if not semble_probes.PROBES.exists():
        sel.skipped.append("semble-probes: not generated; run `python benchmarks/semble_probes.py generate`")
        return
    try:
        probes = semble_probes.load_probes()
    except SystemExit as exc:
        sel.skipped.append(f"semble-probes: {exc}")
        return
    for name, ps in probes.items():
        key = f"semble/{name}"
        if key in sel.corpora:
            lang = json.loads(semble.LOCK.read_text())["repos"][name]["language"]
            sel.cases += [Case("semble-probes", str(p["pid"]), key, lang, "abstention", str(p["query"]), extra={"kind": p.get("kind")}) for p in ps]


# --------------------------------------------------------------------------- SWE-bench Lite sympy


def swe_cases(sel: Selection, sympy_git: Path) -> None:
    if not (sympy_git / "HEAD").exists() and not (sympy_git / ".git").exists():
        sel.skipped.append(f"{SWE_RULER}: no git directory of sympy at {sympy_git}; bring github:sympy/sympy (the fetch tool, "
                           "or `git clone --bare https://github.com/sympy/sympy`) and pass --sympy-git DIR")
        return
    ruler = json.loads(swebench.RULER.read_text(encoding="utf-8"))
    for inst in sorted(ruler["instances"], key=lambda x: (x.get("created_at") or "", x["instance_id"])):  # date order: each index seeds the next
        base = inst["base_commit"]
        key = f"sympy__sympy@{base[:12]}"
        sel.corpora.setdefault(key, CorpusSource(key, f"git:{base}", swe_checkout(str(sympy_git), inst)))
        answers = [{"path": g["path"], "lines": [g["start_line"], g["end_line"]], "name": g["qualified_name"]} for g in inst["gold_functions"]]
        covered = {a["path"] for a in answers}
        answers += [{"path": p, "lines": None, "name": None} for p in inst["gold_files"] if p not in covered]
        sel.cases.append(Case(SWE_RULER, inst["instance_id"], key, "python", "issue", inst["problem_statement"], answers))


def swe_checkout(sympy_git: str, inst: dict[str, Any]) -> Callable[[Path], None]:
    def make(dst: Path) -> None:
        root, _ = swebench.checkout(sympy_git, inst)
        shutil.move(str(root), str(dst))

    return make


# --------------------------------------------------------------------------- rulers by other authors


def outside_cases(sel: Selection, patterns: list[str]) -> None:
    files = sorted((OUTSIDE / "cases").glob("*.jsonl"))
    if not files:
        sel.skipped.append("outside rulers: no benchmarks/.cache/outside/cases/*.jsonl; run benchmarks/outside.py and "
                           "benchmarks/docstring_ruler.py (rulers/OUTSIDE.md)")
        return
    lock = json.loads(OUTSIDE_LOCK.read_text()) if OUTSIDE_LOCK.exists() else {}
    missing: dict[str, int] = {}
    for path in files:
        if not wanted(path.stem, patterns):
            continue
        for case in load_case_file(path):
            src = OUTSIDE / "corpora" / case.corpus
            entry = (lock.get("corpora") or {}).get(case.corpus) or {}
            if case.corpus not in sel.corpora and entry.get("lazy"):  # written from its git directory when first asked
                sel.corpora[case.corpus] = CorpusSource(case.corpus, f"git:{entry['commit']}", lazy_writer(case.corpus, entry), int(entry["files"]))
            if case.corpus not in sel.corpora:
                if not (src / ".git").is_dir():
                    missing[case.corpus] = missing.get(case.corpus, 0) + 1
                    continue
                entry = (lock.get("corpora") or {}).get(case.corpus) or {}
                fp, n = (entry["fingerprint"], int(entry.get("files") or 0)) if entry.get("fingerprint") else corpora.fingerprint(src)
                sel.corpora[case.corpus] = CorpusSource(case.corpus, str(fp), copier(src), n)
            sel.cases.append(case)
    for key, n in missing.items():
        sel.skipped.append(f"outside corpus {key}: not fetched, {n} cases left out; run benchmarks/outside.py (rulers/OUTSIDE.md)")


def lazy_writer(key: str, entry: dict[str, Any]) -> Callable[[Path], None]:
    def write(dst: Path) -> None:
        from benchmarks import outside

        outside.lazy_corpus(key, entry, dst)

    return write


def parse_limits(values: list[str]) -> dict[str, int]:
    """``--limit-corpora`` values: ``N`` (every ruler) or ``RULER=N`` (a glob: ``arb-*=2``); a named
    ruler's limit wins over a bare N, whatever their order."""
    out: dict[str, int] = {}
    for v in values:
        ruler, _, n = v.rpartition("=")
        out[ruler or "*"] = int(n)
    return dict(sorted(out.items(), key=lambda kv: kv[0] == "*"))


def load_all(patterns: list[str], limits: dict[str, int], sympy_git: Path) -> Selection:
    """Every ruler the patterns select (all when none), its corpora, and a line per ruler left out."""
    sel = Selection()
    if any(wanted(n, patterns) for n in (*OURS, "refusal")):
        ours(sel, patterns)
    if wanted("semble", patterns) or wanted("semble-probes", patterns):
        semble_cases(sel, patterns)
        if not wanted("semble", patterns):
            sel.cases = [c for c in sel.cases if c.ruler != "semble"]
    if wanted(SWE_RULER, patterns):
        swe_cases(sel, sympy_git)
    outside_cases(sel, patterns)
    if limits:
        sel.limit(limits)
    used = {c.corpus for c in sel.cases}
    sel.corpora = {k: v for k, v in sel.corpora.items() if k in used}
    return sel
