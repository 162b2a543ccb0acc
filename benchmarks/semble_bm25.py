#!/usr/bin/env python3
"""The "BM25 raw" arm of the semble benchmark, re-implemented from the description of upstream's
pipeline (MinishLab/semble at 8d737aba, ``src/semble/index/*``, ``tokens.py``, ``search.py``): the
calibration arm of ``benchmarks/semble.py``, which runs it in its own venv (chonkie 1.6.2,
bm25s 0.3.3, tree-sitter grammar wheels).

Reads ``{"root": DIR, "queries": [...], "k": 10}`` on stdin, prints
``{"results": [[[path, start, end], ...], ...], "ms": [...], "chunks": N, "files": N, "index_s": S}``.

What it does, step by step (upstream's behaviour, our code):
- files: walk ``root``; skip the folders upstream always skips (VCS, caches, virtualenvs,
  ``node_modules``, ``dist``, ``build``, ...), and whatever the root's own ``.gitignore`` matches;
  keep upstream's code suffixes only (no Markdown/YAML/TOML/JSON);
- chunks: chonkie's ``CodeChunker(language=..., chunk_size=1500)`` (1,500 characters) with the file's
  language; on any failure, or no chunk, windows of 50 lines overlapping by 5. Chunk lines are
  1-based, the end line being that of the chunk's last character;
- BM25 text: the chunk plus the file stem twice plus its last three folder names;
- tokens: runs of ``[A-Za-z_][A-Za-z0-9_]*``, lowercased; a compound (snake_case or camelCase)
  also yields its parts;
- ranking: ``bm25s.BM25()`` defaults; the top 10 chunks by score, zero scores dropped.

Upstream's pinned ``tree-sitter-language-pack`` 1.4.1 downloads its grammars at first use; this
machine has no such download, so a stand-in module hands chonkie the parsers of the PyPI grammar
wheels (``tree-sitter-python`` ...). Grammar versions may differ from the pack's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import types
import typing
from pathlib import Path

SUFFIX_LANGUAGE = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".rb": "ruby", ".php": "php",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".swift": "swift", ".scala": "scala",
    ".sbt": "scala", ".ex": "elixir", ".exs": "elixir", ".dart": "dart", ".lua": "lua", ".sql": "sql",
    ".sh": "bash", ".bash": "bash", ".zig": "zig", ".hs": "haskell",
}
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache",
             ".pytest_cache", ".ruff_cache", ".cache", ".semble", "dist", "build", ".eggs"}
# grammar wheel module and its language function, per chonkie language name
GRAMMARS = {
    "python": ("tree_sitter_python", "language"), "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"), "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"), "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"), "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"), "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"), "csharp": ("tree_sitter_c_sharp", "language"),
    "swift": ("tree_sitter_swift", "language"), "scala": ("tree_sitter_scala", "language"),
    "bash": ("tree_sitter_bash", "language"), "lua": ("tree_sitter_lua", "language"),
    "haskell": ("tree_sitter_haskell", "language"), "elixir": ("tree_sitter_elixir", "language"),
    "zig": ("tree_sitter_zig", "language"),
}
FALLBACKS: dict[str, int] = {}


def install_grammar_standin() -> None:
    import importlib

    import tree_sitter

    cache: dict[str, object] = {}

    def get_parser(name: str):  # noqa: ANN202
        if name not in GRAMMARS:
            raise LookupError(name)
        if name not in cache:
            mod, fn = GRAMMARS[name]
            cache[name] = tree_sitter.Language(getattr(importlib.import_module(mod), fn)())
        return tree_sitter.Parser(cache[name])

    m = types.ModuleType("tree_sitter_language_pack")
    m.get_parser = get_parser  # type: ignore[attr-defined]
    m.SupportedLanguage = typing.Literal[tuple(GRAMMARS)]  # type: ignore[attr-defined]
    sys.modules["tree_sitter_language_pack"] = m


WORD = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    out: list[str] = []
    for w in WORD.findall(text):
        low = w.lower()
        parts = [p for p in low.split("_") if p] if "_" in w else [p.lower() for p in CAMEL.findall(w)]
        out.append(low)
        if len(parts) > 1:
            out.extend(parts)
    return out


def files_under(root: Path):  # noqa: ANN201
    from pathspec import GitIgnoreSpec

    gi = root / ".gitignore"
    spec = GitIgnoreSpec.from_lines(gi.read_text(encoding="utf-8", errors="ignore").splitlines()) if gi.is_file() else None
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS
                       and not (spec and spec.match_file((rel / d).as_posix() + "/"))]
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            if p.suffix.lower() in SUFFIX_LANGUAGE and not (spec and spec.match_file((rel / fn).as_posix())):
                yield p


def line_windows(text: str) -> list[tuple[str, int, int]]:
    lines = text.splitlines(keepends=True)
    out, i = [], 0
    while i < len(lines):
        j = min(i + 50, len(lines))
        body = "".join(lines[i:j])
        if body.strip():
            out.append((body, i + 1, j))
        i = j - 5 if j < len(lines) else j
    return out


def chunks_of(text: str, language: str) -> list[tuple[str, int, int]]:
    from chonkie.chunker import CodeChunker

    if not text.strip():
        return []
    try:
        raw = CodeChunker(language=language, chunk_size=1500).chunk(text)
    except Exception:  # upstream falls back on any failure
        FALLBACKS[language] = FALLBACKS.get(language, 0) + 1
        return line_windows(text)
    out = []
    for c in raw:
        if not c.text.strip():
            continue
        last = max(c.end_index - 1, c.start_index)
        out.append((c.text, text.count("\n", 0, c.start_index) + 1, text.count("\n", 0, last) + 1))
    return out or line_windows(text)


def main() -> int:
    job = json.load(sys.stdin)
    root = Path(job["root"]).resolve()
    k = int(job.get("k", 10))
    install_grammar_standin()
    import bm25s
    import numpy as np

    t0 = time.perf_counter()
    chunks: list[tuple[str, int, int]] = []
    docs: list[list[str]] = []
    n_files = 0
    for p in files_under(root):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        n_files += 1
        rel = p.relative_to(root)
        extra = " ".join([rel.stem, rel.stem, " ".join([x for x in rel.parent.parts if x not in (".", "/")][-3:])])
        for body, s, e in chunks_of(text, SUFFIX_LANGUAGE[p.suffix.lower()]):
            chunks.append((rel.as_posix(), s, e))
            docs.append(tokens(f"{body} {extra}"))
    index = bm25s.BM25()
    index.index(docs, show_progress=False)
    index_s = time.perf_counter() - t0
    results, ms = [], []
    for q in job["queries"]:
        t1 = time.perf_counter()
        qt = tokens(q)
        hits: list[list] = []
        if qt and chunks:
            scores = index.get_scores(qt)
            order = np.argsort(-scores, kind="stable")[:k] if k < len(scores) else np.argsort(-scores, kind="stable")
            hits = [[*chunks[i]] for i in order if scores[i] > 0]
        ms.append(round((time.perf_counter() - t1) * 1000, 3))
        results.append(hits)
    json.dump({"results": results, "ms": ms, "chunks": len(chunks), "files": n_files, "index_s": round(index_s, 2),
               "fallbacks": FALLBACKS}, sys.stdout)
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(prog="python -m benchmarks semble_bm25", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()  # the job comes on stdin
    sys.exit(main())
