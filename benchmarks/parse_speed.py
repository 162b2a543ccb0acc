"""Print how long the tree-sitter parser takes on a ~2,000-line file per language (no asserts).

Run: ``python -m benchmarks parse_speed [lines]``. The file is each language's
test fixture repeated until it reaches the line count, so it is realistic code with many
declarations (repeats become ``name@2`` overloads, which also exercises that path).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from paqad.parse import treesitter

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "languages"
GRAMMAR_BY_SUFFIX = {
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".c": "c",
    ".cpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
}
ROUNDS = 5


def generated(fixture: Path, target_lines: int) -> str:
    """The fixture repeated to about ``target_lines`` lines (PHP keeps a single ``<?php``)."""
    text = fixture.read_text(encoding="utf-8")
    body = text.replace("<?php", "", 1) if fixture.suffix == ".php" else text
    copies = max(1, target_lines // max(1, text.count("\n")))
    return text + "\n" + "\n".join([body] * (copies - 1))


def time_one(path: str, text: str, grammar: str) -> tuple[float, int]:
    """Best of ``ROUNDS`` wall-clock parses (the first also loads the grammar, so it is excluded)."""
    units = treesitter.parse(path, text, grammar)
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        treesitter.parse(path, text, grammar)
        best = min(best, time.perf_counter() - start)
    return best, len(units)


def main(target_lines: int = 2000) -> None:
    print(f"{'grammar':<11} {'lines':>6} {'units':>6} {'ms':>8} {'lines/s':>10}")
    for fixture in sorted(FIXTURES.glob("*/*")):
        grammar = GRAMMAR_BY_SUFFIX.get(fixture.suffix)
        if grammar is None:
            continue
        text = generated(fixture, target_lines)
        seconds, units = time_one(fixture.name, text, grammar)
        lines = text.count("\n") + 1
        print(f"{grammar:<11} {lines:>6} {units:>6} {seconds * 1000:>8.1f} {lines / seconds:>10.0f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m benchmarks parse_speed", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lines", nargs="?", type=int, default=2000, help="lines per file (default 2000)")
    main(ap.parse_args().lines)
