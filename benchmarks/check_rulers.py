#!/usr/bin/env python3
"""Validate the benchmark rulers in ``benchmarks/rulers/*.yaml`` (see rulers/FORMAT.md).

Usage:
    python -m benchmarks check_rulers [RULER.yaml ...]
    python -m benchmarks check_rulers --overlap RULER.yaml ID   # show shared words for one question

Checks, per ruler file:
- header fields (corpus, version, fingerprint, root, questions) are present and agree with
  ``benchmarks/corpora.lock.json``; ``refusal.yaml`` names known ``corpora`` and has no answers;
- question ids are unique, ``q``/``style``/``answers`` are present, style is one of
  plain | paraphrase | chinese, chinese questions contain CJK text;
- every answer's file exists under the corpus root, its ``lines`` span is inside the file, and the
  line at ``start`` begins a declaration. For Python files the span must be exactly one
  function/class (``def``/``class`` line through its last line, decorators excluded, as ``ast``
  reports it); other languages are checked leniently (warnings only);
- ``paraphrase`` questions share no content word with any of their answers (name, signature,
  docstring, body). Words are found by splitting identifiers on ``_`` and camelCase, lowercasing,
  dropping words of <= 2 letters, numbers and a short list of English function words. Besides
  exact words, a crude suffix-stripping stem is compared too (``cookies`` ~ ``cookie``,
  ``handler`` ~ ``handle``), which is stricter than the rule requires;
- ``plain`` questions that spell out one of the answer's identifiers (``snake_case``,
  ``camelCase``) get a warning.

Exit status 0 when there are no errors (warnings are printed but do not fail).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

from paqad.evaluation.questions import FUNCTION_WORDS

HERE = Path(__file__).resolve().parent
RULERS = HERE / "rulers"
CACHE = HERE / ".cache" / "corpora"
LOCK = HERE / "corpora.lock.json"

STYLES = {"plain", "paraphrase", "chinese"}

# Function words only (content words must stay in): the same list as the grep loop's.
STOPWORDS = FUNCTION_WORDS

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
IDENT = re.compile(r"[A-Za-z0-9_]+")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

DECL_PY = re.compile(r"^\s*(async\s+def|def|class)\s+\w")
DECL_OTHER = re.compile(
    r"^\s*(export\s|default\s|async\s|function\b|func\b|type\s|class\s|interface\s|enum\s|"
    r"const\s|let\s|var\s|abstract\s|public\s|private\s|protected\s|static\s|declare\s|"
    r"module\s|namespace\s|struct\s|impl\b|fn\s|pub\s|def\s)"
)


# --------------------------------------------------------------------------- words


def words(text: str) -> set[str]:
    out: set[str] = set()
    for ident in IDENT.findall(text):
        for part in ident.split("_"):
            for w in CAMEL.findall(part):
                w = w.lower()
                if len(w) <= 2 or w.isdigit() or w in STOPWORDS:
                    continue
                out.add(w)
    return out


def stem(w: str) -> str:
    for suf in ("ing", "ers", "er", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def overlap(question: str, answer_text: str) -> tuple[set[str], set[str]]:
    """(exact shared words, extra words that share only a stem)."""
    qw, aw = words(question), words(answer_text)
    exact = qw & aw
    a_stems = {stem(w) for w in aw}
    by_stem = {w for w in qw - exact if stem(w) in a_stems}
    return exact, by_stem


# --------------------------------------------------------------------------- python units


def python_units(source: str) -> dict[int, list[tuple[int, str]]]:
    """start line -> [(end line, qualified name)] for every def/class (decorators excluded)."""
    units: dict[int, list[tuple[int, str]]] = {}
    tree = ast.parse(source)

    def walk(node: ast.AST, prefix: str) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + ch.name
                units.setdefault(ch.lineno, []).append((ch.end_lineno or ch.lineno, q))
                walk(ch, q + ".")
            else:
                walk(ch, prefix)

    walk(tree, "")
    return units


def is_heading(lines: list[str], i: int, suffix: str) -> bool:
    """Markdown ``#`` heading or reStructuredText underlined/overlined title at 0-based i."""
    line = lines[i]
    if suffix in (".md", ".markdown"):
        return line.lstrip().startswith("#")
    if suffix in (".rst", ".txt"):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"([=\-~^\"'`#*+:.])\1{2,}\s*", nxt):
            return True
        return bool(re.fullmatch(r"([=\-~^\"'`#*+:.])\1{2,}\s*", line))
    return False


# --------------------------------------------------------------------------- checking


class Report:
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def err(self, where: str, msg: str) -> None:
        self.errors.append(f"ERROR   {where}: {msg}")

    def warn(self, where: str, msg: str) -> None:
        self.warnings.append(f"warning {where}: {msg}")


_file_cache: dict[Path, list[str] | None] = {}
_units_cache: dict[Path, dict[int, list[tuple[int, str]]] | None] = {}


def read_lines(p: Path) -> list[str] | None:
    if p not in _file_cache:
        try:
            _file_cache[p] = p.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            _file_cache[p] = None
    return _file_cache[p]


def units_for(p: Path) -> dict[int, list[tuple[int, str]]] | None:
    if p not in _units_cache:
        try:
            _units_cache[p] = python_units(p.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            _units_cache[p] = None
    return _units_cache[p]


def check_answer(rep: Report, where: str, root: Path, ans: dict) -> str | None:
    """Validate one answer; return the text of its span (for the paraphrase check)."""
    if not isinstance(ans, dict):
        rep.err(where, "answer is not a mapping")
        return None
    for key in ("path", "lines", "name"):
        if key not in ans:
            rep.err(where, f"answer lacks '{key}'")
    path, span = ans.get("path"), ans.get("lines")
    if not isinstance(path, str) or not path:
        return None
    if path.startswith("/") or "\\" in path or ".." in Path(path).parts:
        rep.err(where, f"path must be POSIX and relative to the corpus root: {path!r}")
        return None
    fp = root / path
    if not fp.is_file():
        rep.err(where, f"no such file in corpus: {path}")
        return None
    lines = read_lines(fp)
    if lines is None:
        rep.err(where, f"cannot read {path} as UTF-8 text")
        return None
    if (not isinstance(span, list) or len(span) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
        rep.err(where, f"lines must be [start, end] integers, got {span!r}")
        return None
    start, end = span
    if not (1 <= start <= end <= len(lines)):
        rep.err(where, f"span {span} outside {path} (1..{len(lines)})")
        return None
    first = lines[start - 1]
    suffix = fp.suffix.lower()
    if suffix == ".py":
        if not DECL_PY.match(first):
            rep.err(where, f"{path}:{start} does not begin a def/class: {first.strip()[:60]!r}")
        else:
            units = units_for(fp)
            if units is None:
                rep.err(where, f"cannot parse {path}")
            else:
                cands = units.get(start, [])
                ends = [e for e, _ in cands]
                if not cands:
                    rep.err(where, f"{path}:{start} is not where a def/class node starts")
                elif end not in ends:
                    rep.err(where, f"{path}:{start} unit ends at line {ends[0]}, ruler says {end}")
                else:
                    qname = next(q for e, q in cands if e == end)
                    if ans.get("name") and ans["name"] != qname:
                        rep.warn(where, f"name {ans['name']!r} but the unit is {qname!r}")
    elif suffix in (".md", ".markdown", ".rst"):
        if not is_heading(lines, start - 1, suffix):
            rep.warn(where, f"{path}:{start} is not a heading line: {first.strip()[:60]!r}")
    else:
        if not DECL_OTHER.match(first):
            rep.warn(where, f"{path}:{start} may not begin a declaration: {first.strip()[:60]!r}")
    return "\n".join(lines[start - 1:end]) + "\n" + str(ans.get("name", ""))


def check_ruler(path: Path, lock: dict, rep: Report) -> Counter:
    styles: Counter = Counter()
    where0 = path.relative_to(HERE.parent).as_posix() if path.is_relative_to(HERE.parent) else str(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        rep.err(where0, f"invalid YAML: {e}")
        return styles
    if not isinstance(doc, dict):
        rep.err(where0, "top level must be a mapping")
        return styles
    for key in ("corpus", "version", "fingerprint", "root", "questions"):
        if key not in doc:
            rep.err(where0, f"missing header field '{key}'")
    corpus = doc.get("corpus")
    refusal = corpus == "refusal"
    root: Path | None = None
    if refusal:
        corpora = doc.get("corpora")
        if not isinstance(corpora, list) or not corpora:
            rep.err(where0, "refusal ruler needs a non-empty 'corpora' list")
        else:
            for name in corpora:
                if name not in lock:
                    rep.err(where0, f"refusal corpora names unknown corpus {name!r}")
    elif corpus is not None:
        entry = lock.get(corpus)
        if entry is None:
            rep.err(where0, f"corpus {corpus!r} is not in corpora.lock.json")
        else:
            for key in ("version", "fingerprint", "root"):
                if key in doc and str(doc[key]) != str(entry.get(key)):
                    rep.err(where0, f"{key} {doc[key]!r} != lock {entry.get(key)!r}")
            root = CACHE / entry["root"]
            if not root.is_dir():
                rep.err(where0, f"corpus not fetched ({root}); run: "
                                f"python -m benchmarks corpora fetch {corpus}")
                root = None
        if path.stem != corpus:
            rep.warn(where0, f"file name should be {corpus}.yaml")

    questions = doc.get("questions") or []
    if not isinstance(questions, list):
        rep.err(where0, "questions must be a list")
        return styles
    seen: set[str] = set()
    for i, q in enumerate(questions):
        where = f"{where0}#{i}"
        if not isinstance(q, dict):
            rep.err(where, "question is not a mapping")
            continue
        qid = q.get("id")
        if qid is not None:
            where = f"{where0}:{qid}"
        for key in ("id", "q", "style", "answers"):
            if key not in q:
                rep.err(where, f"missing '{key}'")
        if qid in seen:
            rep.err(where, "duplicate id")
        seen.add(qid)
        text, style = q.get("q"), q.get("style")
        if not isinstance(text, str) or not text.strip():
            rep.err(where, "'q' must be a non-empty string")
            text = ""
        if style not in STYLES:
            rep.err(where, f"style {style!r} not in {sorted(STYLES)}")
        styles[style] += 1
        if style == "chinese" and not CJK.search(text):
            rep.err(where, "chinese question has no Chinese characters")
        answers = q.get("answers")
        if not isinstance(answers, list):
            rep.err(where, "'answers' must be a list")
            continue
        if refusal:
            if answers:
                rep.err(where, "refusal questions must have answers: []")
            continue
        if not answers:
            rep.err(where, "no accepted answers")
            continue
        if root is None:
            continue
        for j, ans in enumerate(answers):
            span_text = check_answer(rep, f"{where}/answer{j}", root, ans)
            if span_text is None:
                continue
            if style == "paraphrase":
                exact, by_stem = overlap(text, span_text)
                if exact:
                    rep.err(where, f"paraphrase shares {sorted(exact)} with answer {j} "
                                   f"({ans.get('name')})")
                if by_stem:
                    rep.err(where, f"paraphrase shares word stems {sorted(by_stem)} with "
                                   f"answer {j} ({ans.get('name')})")
            elif style == "plain":
                idents = {m for m in IDENT.findall(span_text)
                          if len(m) > 3 and ("_" in m.strip("_") or re.search(r"[a-z][A-Z]", m))}
                spelled = sorted(m for m in IDENT.findall(text) if m in idents)
                if spelled:
                    rep.warn(where, f"plain question spells out identifiers {spelled}")
    return styles


def show_overlap(ruler: Path, qid: str, lock: dict) -> int:
    doc = yaml.safe_load(ruler.read_text(encoding="utf-8"))
    root = CACHE / lock[doc["corpus"]]["root"]
    for q in doc["questions"]:
        if q["id"] != qid:
            continue
        print(f"q: {q['q']}\nquestion words: {sorted(words(q['q']))}")
        for ans in q["answers"]:
            lines = (root / ans["path"]).read_text(encoding="utf-8").splitlines()
            s, e = ans["lines"]
            text = "\n".join(lines[s - 1:e]) + "\n" + ans.get("name", "")
            exact, by_stem = overlap(q["q"], text)
            print(f"  {ans['name']}: exact={sorted(exact)} stem={sorted(by_stem)}")
        return 0
    print(f"no question {qid}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Validate benchmark rulers.")
    ap.add_argument("rulers", nargs="*", type=Path)
    ap.add_argument("--overlap", nargs=2, metavar=("RULER", "ID"))
    ap.add_argument("-q", "--quiet", action="store_true", help="hide warnings")
    args = ap.parse_args(argv)
    lock = json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}
    if args.overlap:
        return show_overlap(Path(args.overlap[0]), args.overlap[1], lock)
    files = [p.resolve() for p in args.rulers] or sorted(RULERS.glob("*.yaml"))
    if not files:
        print("no rulers found", file=sys.stderr)
        return 1
    rep = Report()
    summary = []
    for f in files:
        styles = check_ruler(f, lock, rep)
        total = sum(styles.values())
        summary.append(f"{f.name:20s} {total:4d} questions  " + "  ".join(
            f"{s}={styles.get(s, 0)}" for s in ("plain", "paraphrase", "chinese")))
    if not args.quiet:
        for w in rep.warnings:
            print(w)
    for e in rep.errors:
        print(e)
    print("\n".join(summary))
    print(f"{len(rep.errors)} errors, {len(rep.warnings)} warnings")
    return 1 if rep.errors else 0


if __name__ == "__main__":
    sys.exit(main())
