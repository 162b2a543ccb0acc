#!/usr/bin/env python3
"""Build ruler ``docstring``: functions' first doc sentences asked against copies without them.

Usage (from the repo root):
    python -m benchmarks docstring_ruler [--mirrors DIR] [--no-clone] [--repos owner/name,...]

The rule is fixed (issue 32; the case format is benchmarks/rulers/OUTSIDE.md). The repositories,
each at a pinned commit and sub-folder, are listed in ``benchmarks/rulers/docstring_repos.json``,
committed before any case was built. For each one:

1. its tree at the commit (``sub_folder`` is the corpus root) is written from a git directory:
   ``<mirrors>/<owner>+<name>/repo`` (as the workplace's fetch tool lays them), else a clone from
   GitHub (``benchmarks/semble.py``'s ``git_dir_for``);
2. every function and method paqad's own parser finds (``paqad.parse.python_ast`` for Python,
   ``paqad.parse.treesitter`` for the rest) in a source file outside tests, examples, vendored,
   generated, docs, benchmark and script folders, with a doc comment of its own (a Python
   docstring; a ``/** */`` block directly above in JavaScript, TypeScript and Java; ``//`` lines
   directly above in Go, ``///`` lines in Rust), is a candidate unless it is a declaration without
   code (a one-line or brace-less span, a Python body of nothing but the docstring, ``pass`` or
   ``...``) or a trivial accessor (a ``get``/``set``/``is``/``has`` name or a Python property or
   setter, 5 lines or fewer);
3. its question is the first sentence of the first paragraph of that documentation with the markup
   taken out (``{@link X label}``, ``{@code x}``, HTML, reST roles, Markdown links, backticks,
   emphasis), a leading copy of the function's own name dropped (Go's ``NewFoo returns ...`` asks
   ``returns ...``); kept when it has at least 5 content words (``check_rulers.words``) and at most
   40 words, and does not begin with ``Deprecated``; a sentence found twice in a repository
   (case and spacing aside) is dropped in every copy;
4. per repository the ``per_repo`` candidates with the smallest
   ``sha256("docstring:<owner/name>:<path>:<qualified name>")`` are the cases;
5. the corpus ``benchmarks/.cache/outside/corpora/<owner>__<name>@<12 hex>-nodoc/`` is that tree
   with the sampled functions' whole doc comments replaced by blank lines (a Python docstring that
   was the body's only statement becomes ``...`` on its first line), committed once with fixed
   author and dates; every changed Python file must still parse, and every sampled function must be
   found again at the same start line;
6. a case answers with the function's span in that copy (1-based inclusive, as the parser reports
   it) and its qualified name; ``style`` is ``docstring-paraphrase`` when the question shares no
   content word, nor a stem (``check_rulers.overlap``), with the function's name and signature,
   else ``docstring``; ``half`` is OUTSIDE.md's rule.

Writes ``benchmarks/.cache/outside/cases/docstring.jsonl`` and this ruler's keys of
``benchmarks/outside.lock.json`` (other keys are kept as they are).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import html
import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import corpora, outside_convert  # fingerprint, one-commit git init; OUTSIDE.md's half rule
from benchmarks.check_rulers import overlap, words  # the content-word rule of our own rulers
from benchmarks.semble import git_dir_for, has_commit, write_tree  # git directories, trees
from paqad.parse import python_ast, treesitter
from paqad.parse.ts_nodes import clean_comment

HERE = Path(__file__).resolve().parent

RULER = "docstring"
REPOS = HERE / "rulers" / "docstring_repos.json"
OUTSIDE = HERE / ".cache" / "outside"
CASES = OUTSIDE / "cases" / f"{RULER}.jsonl"
LOCK = HERE / "outside.lock.json"
BY = "docstring_ruler.py"  # marks this script's corpus entries in the shared lock
MIN_CONTENT_WORDS, MAX_WORDS, ACCESSOR_LINES = 5, 40, 5

# suffix -> (paqad grammar, case language)
GRAMMAR = {".py": ("python", "python"), ".js": ("javascript", "javascript"), ".mjs": ("javascript", "javascript"),
           ".cjs": ("javascript", "javascript"), ".jsx": ("javascript", "javascript"),
           ".ts": ("typescript", "typescript"), ".mts": ("typescript", "typescript"), ".tsx": ("tsx", "typescript"),
           ".go": ("go", "go"), ".rs": ("rust", "rust"), ".java": ("java", "java")}
SKIP_DIRS = frozenset({
    "test", "tests", "testing", "testdata", "testutil", "__tests__", "spec", "specs", "example", "examples",
    "_examples", "demo", "demos", "sample", "samples", "vendor", "vendored", "_vendor", "third_party",
    "thirdparty", "generated", "node_modules", "bench", "benches", "benchmark", "benchmarks", "fuzz", "doc",
    "docs", "scripts", "tools"})
SKIP_FILE = re.compile(r"(^test_.*\.py|_test\.py|^conftest\.py|_test\.go|\.(test|spec)\.[mc]?[jt]sx?|\.d\.ts"
                       r"|\.min\.js|Tests?\.java|TestCase\.java|^tests?\.rs)$")
GENERATED = re.compile(r"code generated|do not edit|@generated|auto-?generated|automatically generated", re.I)
VENDORED = re.compile(r"^[\w-]+\.(com|org|net|io|in|dev)$")  # Go's internal/github.com/x/y copies
ACCESSOR = re.compile(r"^_*(get|set|is|has)(?=[A-Z_]|$)")


@dataclass
class Candidate:
    path: str           # relative to the corpus root, POSIX
    language: str
    name: str           # qualified name as the parser reports it
    start: int          # the declaration's span in the original file
    end: int
    doc: tuple[int, int]  # the doc comment's (docstring's) lines, 1-based inclusive
    only_statement: bool  # Python: the docstring is the body's only statement
    signature: str
    q: str
    eligible: bool = True  # False: counted for duplicates only (no code, an accessor, a shared line)


# --------------------------------------------------------------------------- sentences


ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|resp|incl|esp|Inc|Dr|Mr|No)\.", re.I)
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
BLOCK_TAG = re.compile(r"<(?:p|ul|ol|li|pre|table|dl|h\d|blockquote)\b[^>]*>", re.I)  # Javadoc's summary ends there
ARTICLES = frozenset({"the", "a", "an", "this", "that", "these", "those", "all", "each", "any", "some", "given"})


def clean_markup(text: str) -> str:
    """Inline documentation markup out of one paragraph, whitespace collapsed."""
    pieces = re.split(r"(\{@[^}]*\})", text)  # HTML tags out, but not inside {@code List<T>}
    text = "".join(p if i % 2 else re.sub(r"</?[A-Za-z][^>]*>", "", p) for i, p in enumerate(pieces))
    text = re.sub(r"\{@(?:link|linkplain)\s+[^}\s(]+(?:\([^)]*\))?\s+([^}]+)\}", r"\1", text)
    text = re.sub(r"\{@\w+\s*([^}]*)\}", r"\1", text)  # {@link X}, {@code x}, {@literal x}
    text = html.unescape(text)
    text = re.sub(r":[\w-]+(?::[\w-]+)?:`~([^`<]*?\.)?([^`.<]+)`", r"\2", text)  # :meth:`~a.b` -> b
    text = re.sub(r":[\w-]+(?::[\w-]+)?:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)  # :class:`X`, :ref:`t <x>`
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # [text](url)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)  # [text][ref]
    text = re.sub(r"\[(`[^\]`]+`)\]", r"\1", text)  # Rust intra-doc [`Foo`]
    text = re.sub(r"(?<!\w)\[([A-Za-z_][\w.]*)\](?![(\[])", r"\1", text)  # Go doc links [Conn], Rust [Foo]
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__)(\S.*?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(\S[^*]*?)\*(?!\w)", r"\1", text)
    return " ".join(text.split())


def first_paragraph(doc: str) -> str:
    """Lines up to the first blank one, a tag (``@param``), a heading or a doctest."""
    out: list[str] = []
    for line in doc.strip().splitlines():
        s = line.strip()
        if not s or s.startswith(("@", "# ", ">>>", "```", ":param", ":return", ":raises")):
            break
        out.append(s)
    return " ".join(out)


def first_sentence(doc: str, name: str = "") -> str:
    """The cleaned first sentence of ``doc`` (markers already stripped), without a leading ``name``."""
    if re.search(r"inheritdoc", doc, re.I):
        return ""
    text = clean_markup(BLOCK_TAG.split(first_paragraph(doc), 1)[0])
    guarded = ABBREV.sub(lambda m: m.group(0).replace(".", "\0"), text)
    end = SENTENCE_END.search(guarded)
    sentence = (guarded[: end.start()] if end else guarded).replace("\0", ".").strip().rstrip(":;,")
    short = name.rsplit(".", 1)[-1].split("@", 1)[0]
    first, _, rest = sentence.partition(" ")
    if short and rest and rest.split(" ", 1)[0].lower() not in ARTICLES and re.sub(r"(\(\))?('s)?[,:]?$", "", first) in (short, name.split("@", 1)[0]):
        sentence = rest
    return sentence


def keep_sentence(sentence: str) -> bool:
    return (bool(sentence) and len(sentence.split()) <= MAX_WORDS and len(words(sentence)) >= MIN_CONTENT_WORDS
            and not sentence.lower().startswith("deprecated"))


def is_paraphrase(question: str, name: str, signature: str) -> bool:
    """No content word, nor a stem, shared with the function's name and signature."""
    exact, by_stem = overlap(question, f"{name}\n{signature}")
    return not exact and not by_stem


# --------------------------------------------------------------------------- doc comments


def comment_above(lines: list[str], start: int, language: str) -> tuple[int, int] | None:
    """1-based inclusive lines of the doc comment that ends right above line ``start``."""
    i = start - 2
    if i < 0:
        return None
    if language in ("go", "rust"):
        mark = "///" if language == "rust" else "//"
        j = i
        while j >= 0 and lines[j].lstrip().startswith(mark) and not lines[j].lstrip().startswith("////"):
            j -= 1
        block = [ln.strip() for ln in lines[j + 1 : i + 1]]
        if j == i or any(b.startswith(("//go:", "//+build", "//nolint", "//lint:")) for b in block):
            return None
        return j + 2, i + 1
    if not lines[i].rstrip().endswith("*/"):
        return None
    j = i
    while j >= 0 and "/*" not in lines[j]:
        j -= 1
    if j < 0 or not lines[j].lstrip().startswith("/**") or lines[j].lstrip().startswith("/**/"):
        return None
    return j + 1, i + 1


def doc_text(lines: list[str], span: tuple[int, int]) -> str:
    return clean_comment("\n".join(lines[span[0] - 1 : span[1]]))


def has_code(lines: list[str], start: int, end: int) -> bool:
    """A declaration with a braced body (not a trait/interface/abstract method or an overload
    signature): more than one line, the last one closing a brace."""
    return end > start and re.search(r"\}[;,)]*;?$", lines[end - 1].strip()) is not None


def trivial_accessor(short: str, start: int, end: int, decorators: list[str]) -> bool:
    accessor = bool(ACCESSOR.match(short)) or any(d == "property" or d.endswith(".setter") for d in decorators)
    return accessor and end - start + 1 <= ACCESSOR_LINES


def skip_path(rel: str, head: str) -> bool:
    parts = rel.split("/")
    if any(p.startswith(".") or VENDORED.match(p) or SKIP_DIRS & set(re.split(r"[-_]", p)) for p in parts[:-1]):
        return True
    return bool(SKIP_FILE.search(parts[-1])) or bool(GENERATED.search(head))


# --------------------------------------------------------------------------- candidates


def python_candidates(rel: str, text: str) -> list[Candidate]:
    try:
        tree = ast.parse(text)
        units = python_ast.parse(rel, text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    nodes = {n.lineno: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    lines = text.split("\n")
    out = []
    for u in units:
        node = nodes.get(u.start_line)
        if node is None or u.kind not in ("function", "method") or not node.body:
            continue
        doc = node.body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            continue
        rest = node.body[1:]
        no_code = not rest or all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                                              and s.value.value is Ellipsis) for s in rest)
        decorators = [ast.unparse(d) for d in node.decorator_list]
        eligible = not (no_code or not docstring_alone(lines, doc) or doc.lineno == node.lineno
                        or trivial_accessor(u.name, u.start_line, u.end_line, decorators))
        q = first_sentence(ast.get_docstring(node, clean=True) or "", u.qualified_name)
        out.append(Candidate(rel, "python", u.qualified_name, u.start_line, u.end_line,
                             (doc.lineno, doc.end_lineno or doc.lineno), not rest, u.signature, q, eligible))
    return out


def docstring_alone(lines: list[str], doc: ast.stmt) -> bool:
    """The docstring's lines hold nothing else (so blanking them removes only the docstring)."""
    first = lines[doc.lineno - 1].encode()
    last = lines[(doc.end_lineno or doc.lineno) - 1].encode()
    after = last[doc.end_col_offset or 0 :].decode(errors="replace").strip()
    return not first[: doc.col_offset].strip() and (not after or after.startswith("#"))


def other_candidates(rel: str, text: str, grammar: str, language: str) -> list[Candidate]:
    try:
        units = treesitter.parse(rel, text, grammar)
    except (LookupError, ValueError, RecursionError):
        return []
    lines = text.split("\n")
    out = []
    for u in units:
        if u.kind not in ("function", "method") or any(p in ("test", "tests") for p in u.qualified_name.split(".")):
            continue
        span = comment_above(lines, u.start_line, language)
        if span is None:
            continue
        eligible = has_code(lines, u.start_line, u.end_line) and not trivial_accessor(u.name, u.start_line, u.end_line, [])
        q = first_sentence(doc_text(lines, span), u.qualified_name)
        out.append(Candidate(rel, language, u.qualified_name, u.start_line, u.end_line, span, False, u.signature, q,
                             eligible))
    return out


def candidates(root: Path) -> list[Candidate]:
    found: list[Candidate] = []
    for rel, path in sorted(corpora.iter_files(root)):
        spec = GRAMMAR.get(Path(rel).suffix)
        if spec is None or path.is_symlink():
            continue
        try:
            text = path.read_bytes().decode("utf-8")  # no newline translation: blank_docs writes these bytes
        except (OSError, UnicodeDecodeError):
            continue
        if skip_path(rel, "\n".join(text.split("\n", 10)[:10])):
            continue
        grammar, language = spec
        found += python_candidates(rel, text) if grammar == "python" else other_candidates(rel, text, grammar, language)
    return found


def dedupe_and_filter(found: list[Candidate]) -> list[Candidate]:
    """Drop a sentence found twice among all documented functions (every copy), then the functions
    that are not eligible and the sentences the length rule refuses."""
    def key(c: Candidate) -> str:
        return " ".join(c.q.lower().split()).rstrip(".")
    counts = Counter(key(c) for c in found if c.q)
    return [c for c in found if c.eligible and c.q and counts[key(c)] == 1 and keep_sentence(c.q)]


def sample_key(repo: str, c: Candidate) -> str:
    return hashlib.sha256(f"{RULER}:{repo}:{c.path}:{c.name}".encode()).hexdigest()


def half(case_id: str) -> str:
    return outside_convert.half(RULER, case_id)


# --------------------------------------------------------------------------- removal


def blank_docs(text: str, docs: list[tuple[int, int, bool]]) -> str:
    """Lines ``a..b`` of each doc comment made blank (a line keeps its ``\\r``); ``only`` (a Python
    docstring that was its body's only statement) leaves ``...`` at the docstring's indentation."""
    lines = text.split("\n")
    for a, b, only in docs:
        indent = re.match(r"[ \t]*", lines[a - 1])
        for k in range(a - 1, b):
            lines[k] = "\r" if lines[k].endswith("\r") else ""
        if only and indent is not None:
            lines[a - 1] = indent.group(0) + "..." + lines[a - 1]
    return "\n".join(lines)


def locate(rel: str, text: str, found: list[Candidate]) -> dict[str, tuple[int, int]] | None:
    """Each candidate's span in ``text`` (a blanked file), or None when one is lost or moved."""
    grammar = GRAMMAR[Path(rel).suffix][0]
    try:
        units = python_ast.parse(rel, text) if grammar == "python" else treesitter.parse(rel, text, grammar)
    except (SyntaxError, ValueError, RecursionError, LookupError):
        return None
    spans = {u.qualified_name: (u.start_line, u.end_line) for u in units}
    out = {}
    for c in found:
        span = spans.get(c.name)
        if span is None or span[0] != c.start:
            return None
        out[c.name] = span
    return out


def choose(root: Path, pool: list[Candidate], n: int) -> tuple[list[Candidate], int]:
    """The first ``n`` of ``pool`` (in hash order) whose removal alone keeps the file parsing and the
    function where it was; also how many were passed over for failing that."""
    chosen: list[Candidate] = []
    passed = 0
    for c in pool:
        if len(chosen) == n:
            break
        text = (root / c.path).read_bytes().decode("utf-8")
        if locate(c.path, blank_docs(text, [(*c.doc, c.only_statement)]), [c]) is None:
            passed += 1
            continue
        chosen.append(c)
    return chosen, passed


def remove_docs(root: Path, chosen: list[Candidate]) -> dict[tuple[str, str], tuple[int, int]]:
    """Blank every chosen doc comment in place; the answer spans, checked in the blanked files."""
    spans: dict[tuple[str, str], tuple[int, int]] = {}
    for rel in sorted({c.path for c in chosen}):
        mine = [c for c in chosen if c.path == rel]
        path = root / rel
        text = blank_docs(path.read_bytes().decode("utf-8"), [(*c.doc, c.only_statement) for c in mine])
        located = locate(rel, text, mine)
        if located is None:
            raise SystemExit(f"{root.name}/{rel}: blanking {len(mine)} doc comments together lost a function")
        path.write_bytes(text.encode("utf-8"))
        spans.update({(rel, name): span for name, span in located.items()})
    return spans


# --------------------------------------------------------------------------- build


def corpus_key(repo: str, commit: str) -> str:
    return f"{repo.replace('/', '__')}@{commit[:12]}-nodoc"


def build_repo(spec: dict[str, Any], per_repo: int, mirrors: Path | None, clone: bool) -> tuple[list[dict], dict]:
    repo, commit, sub = spec["repo"], spec["commit"], spec.get("sub_folder") or ""
    gdir = git_dir_for(repo, mirrors, clone)
    if gdir is None or not has_commit(gdir, commit):
        raise SystemExit(f"{repo}: no git directory with {commit} (pass --mirrors DIR, or allow the clone)")
    key = corpus_key(repo, commit)
    dest = OUTSIDE / "corpora" / key
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    missing = write_tree(gdir, commit, sub or None, dest)
    source_fp, _ = corpora.fingerprint(dest)
    found = candidates(dest)
    pool = sorted(dedupe_and_filter(found), key=lambda c: sample_key(repo, c))
    chosen, passed = choose(dest, pool, per_repo)
    spans = remove_docs(dest, chosen)
    fp, n_files = corpora.fingerprint(dest)
    corpora.git_init_one_commit(dest, f"{repo}@{commit[:12]} {sub or '.'}: {len(chosen)} doc comments removed "
                                      f"(paqad docstring ruler)")
    cases = [case(repo, key, c, spans[(c.path, c.name)]) for c in chosen]
    entry = {"repo": repo, "commit": commit, "sub_folder": sub, "fingerprint": fp, "files": n_files,
             "fingerprint_before_removal": source_fp, "blobs_missing": missing, "documented": len(found),
             "eligible": len(pool), "docs_removed": len(chosen), "passed_over": passed, "by": BY,
             "source": RULER, "language": spec["language"], "rulers": [RULER]}
    return cases, {key: entry}


def case(repo: str, key: str, c: Candidate, span: tuple[int, int]) -> dict[str, Any]:
    case_id = f"{repo}:{c.path}:{c.name}"
    style = "docstring-paraphrase" if is_paraphrase(c.q, c.name, c.signature) else "docstring"
    return {"ruler": RULER, "id": case_id, "corpus": key, "language": c.language, "style": style, "q": c.q,
            "answerable": True, "answers": [{"path": c.path, "lines": [span[0], span[1]], "name": c.name}],
            "half": half(case_id)}


def counts(cases: list[dict]) -> dict[str, dict[str, int]]:
    def tally(field: str) -> dict[str, int]:
        return dict(sorted(Counter(str(c[field]) for c in cases).items()))
    by_repo = dict(sorted(Counter(c["id"].split(":", 1)[0] for c in cases).items()))
    return {"repo": by_repo, "language": tally("language"), "style": tally("style"), "half": tally("half")}


def update_lock(cases: list[dict], corpora_entries: dict[str, dict]) -> None:
    """Load, replace this ruler's keys, write: another script keeps other rulers in the same file."""
    lock = json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}
    rulers, corpora_lock = lock.setdefault("rulers", {}), lock.setdefault("corpora", {})
    for key in [k for k, v in corpora_lock.items() if v.get("by") == BY and k not in corpora_entries]:
        del corpora_lock[key]
    corpora_lock.update(corpora_entries)
    rulers[RULER] = {
        "source": "benchmarks/rulers/docstring_repos.json",
        "source_sha256": hashlib.sha256(REPOS.read_bytes()).hexdigest(),
        "script": "benchmarks/docstring_ruler.py", "corpora": sorted(corpora_entries), "cases": len(cases),
        "cases_sha256": hashlib.sha256(CASES.read_bytes()).hexdigest(), "counts": counts(cases)}
    lock["rulers"], lock["corpora"] = dict(sorted(rulers.items())), dict(sorted(corpora_lock.items()))
    LOCK.write_text(json.dumps(lock, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def table(cases: list[dict]) -> str:
    rows = ["| repository | language | cases | docstring | docstring-paraphrase | tune | report |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(c["id"].split(":", 1)[0], []).append(c)
    for name, cs in [*groups.items(), ("all", cases)]:
        lang = ",".join(sorted({c["language"] for c in cs})) if name != "all" else ""
        st, hv = Counter(c["style"] for c in cs), Counter(c["half"] for c in cs)
        rows.append(f"| {name} | {lang} | {len(cs)} | {st['docstring']} | {st['docstring-paraphrase']} | "
                    f"{hv['tune']} | {hv['report']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--mirrors", default="/work/.mirror",
                    help="folder of bare git directories <owner>+<name>/repo (default /work/.mirror); '' for none")
    ap.add_argument("--no-clone", action="store_true", help="never clone from GitHub")
    ap.add_argument("--repos", default="", help="owner/name,... to rebuild (others' cases are kept)")
    args = ap.parse_args(argv)
    listing = json.loads(REPOS.read_text(encoding="utf-8"))
    only = {r for r in args.repos.split(",") if r}
    mirrors = Path(args.mirrors) if args.mirrors else None
    old = [json.loads(x) for x in CASES.read_text(encoding="utf-8").splitlines()] if only and CASES.exists() else []
    cases = [c for c in old if c["id"].split(":", 1)[0] not in only]
    lock = json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}
    entries = {k: v for k, v in lock.get("corpora", {}).items()
               if only and v.get("by") == BY and v["repo"] not in only}
    for spec in listing["repos"]:
        if only and spec["repo"] not in only:
            continue
        built, entry = build_repo(spec, int(listing["per_repo"]), mirrors, not args.no_clone)
        cases += built
        entries.update(entry)
        (e,) = entry.values()
        print(f"{spec['repo']:26} documented={e['documented']:5} eligible={e['eligible']:5} cases={len(built):3} "
              f"passed_over={e['passed_over']} files={e['files']}", file=sys.stderr, flush=True)
    order = {s["repo"]: i for i, s in enumerate(listing["repos"])}
    cases.sort(key=lambda c: (order.get(c["id"].split(":", 1)[0], 99), c["id"]))
    CASES.parent.mkdir(parents=True, exist_ok=True)
    CASES.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    update_lock(cases, entries)
    print(table(cases))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
