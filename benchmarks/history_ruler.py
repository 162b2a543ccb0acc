"""The history ruler (benchmarks/rulers/HISTORY.md): pull-request titles asked of the commit history.

    python -m benchmarks history_ruler --repo /tmp/hist-sympy [--window 10000] [--half report]

Builds the cases by the fixed rule in ``benchmarks/rulers/HISTORY.md`` from a clone with its
history, indexes the newest ``--window`` commits with ``paqad.history`` in a temp per-developer
folder, and scores paqad, plain BM25 over the raw messages and ``git log --grep``. Raw rows go to
``benchmarks/.cache/history_ruler.json``, the summary to ``benchmarks/summaries/history_ruler.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.outside_convert import half
from paqad.history import build, search

HERE = Path(__file__).resolve().parent
MERGE = re.compile(r"Merge pull request #\d+ from \S+")
IDENTIFIER = re.compile(r"[\d_.()\[\]`=/:<>]|.[A-Z]")
TOP = 10


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=1800).stdout


def question_of(title: str) -> str:
    words = [w.strip(",;!?'\"*") for w in re.sub(r"#\d+", " ", title).split()]
    return " ".join(w for w in words if w and not IDENTIFIER.search(w))


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


def cases(repo: Path, window: int) -> list[dict]:
    out = []
    indexed = set(_git(repo, "rev-list", f"--max-count={window}", "HEAD").split())  # what build.update(limit=window) reads
    log = _git(repo, "log", "--first-parent", "--merges", f"--max-count={window}", "--format=%x00%H %P%x00%B", "HEAD")
    for sha_parents, message in zip(*[iter(log.split("\0")[1:])] * 2, strict=True):
        sha, *parents = sha_parents.split()
        first, _, body = message.strip().partition("\n")
        title = body.strip().split("\n")[0].strip() if MERGE.fullmatch(first.strip()) else ""
        if len(parents) != 2 or not title or sha not in indexed:
            continue
        question = question_of(title)
        answers = [a for a in _git(repo, "rev-list", "--no-merges", f"{parents[0]}..{parents[1]}").split() if a in indexed]
        subjects = {_fold(s) for s in _git(repo, "log", "--no-walk", "--format=%s", *answers).splitlines()} if answers else set()
        if len(question.split()) >= 3 and answers and _fold(title) not in subjects:
            out.append({"merge": sha, "title": title, "question": question, "answers": answers, "half": half(f"history-{repo.name}", sha)})
    return out


def plain_bm25(repo: Path, window: int) -> Callable[[str], list[str]]:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE m USING fts5(sha UNINDEXED, msg)")
    log = _git(repo, "log", "--no-merges", f"--max-count={window}", "--format=%x00%H%x00%B", "HEAD").split("\0")[1:]
    con.executemany("INSERT INTO m VALUES (?, ?)", zip(log[0::2], log[1::2], strict=True))

    def ask(q: str) -> list[str]:
        words = {w for w in re.findall(r"\w+", q.lower())}
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in sorted(words))
        return [r[0] for r in con.execute("SELECT sha FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT ?", (match, TOP))]

    return ask


def git_grep(repo: Path) -> Callable[[str], list[str]]:
    """Over the whole history, newest first: what the agent's ``git log --grep`` would list."""

    def ask(q: str) -> list[str]:
        words = sorted({w for w in re.findall(r"\w+", q) if len(w) >= 4}, key=lambda w: (-len(w), w))
        for picked in (words[:2], words[:1]):
            if picked:
                found = _git(repo, "log", "--no-merges", "-i", "--all-match", *[f"--grep={w}" for w in picked], f"-n{TOP}",
                             "--format=%H", "HEAD").split()
                if found:
                    return found
        return []

    return ask


def paqad_search(repo: Path, merges: set[str]) -> Callable[[str], list[str]]:
    def ask(q: str) -> list[str]:
        return [f.commit.sha for f in search.search(repo, q, TOP * 5) if f.commit.sha not in merges][:TOP]

    return ask


def score(rows: list[dict], method: str, which: str) -> dict:
    picked = [r for r in rows if which == "all" or r["half"] == which]
    ranks = [r["ranks"][method] for r in picked]
    n = max(len(ranks), 1)
    return {"cases": len(ranks), "hit@1": round(sum(k == 1 for k in ranks) / n, 3), "hit@10": round(sum(k is not None for k in ranks) / n, 3),
            "mrr@10": round(sum(1 / k for k in ranks if k) / n, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone with its history (e.g. sympy)")
    parser.add_argument("--window", type=int, default=10000, help="the newest commits indexed and searched")
    parser.add_argument("--max-cases", type=int, default=300, help="at most this many cases, newest merges first (0: all)")
    parser.add_argument("--methods", default="paqad,plain_bm25,git_grep", help="which methods to score, comma-separated")
    args = parser.parse_args()
    repo = args.repo.resolve()
    found = cases(repo, args.window)
    found = found[: args.max_cases] if args.max_cases else found
    with tempfile.TemporaryDirectory(prefix="history-ruler-") as data:
        os.environ["PAQAD_DATA_DIR"] = data
        build.update(repo, limit=args.window)
        merges = set(_git(repo, "rev-list", "--merges", f"--max-count={args.window}", "HEAD").split())
        makers = {"paqad": lambda: paqad_search(repo, merges), "plain_bm25": lambda: plain_bm25(repo, args.window), "git_grep": lambda: git_grep(repo)}
        methods = {name: makers[name]() for name in args.methods.split(",")}
        for case in found:
            answers = set(case["answers"])
            case["ranks"] = {}
            for name, ask in methods.items():
                got = ask(case["question"])
                case["ranks"][name] = next((i + 1 for i, sha in enumerate(got) if sha in answers), None)
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(), "repo": str(args.repo), "window": args.window,
           "scores": {half_: {m: score(found, m, half_) for m in methods} for half_ in ("tune", "report")}}
    (HERE / ".cache").mkdir(exist_ok=True)
    raw = "history_ruler.json" if set(methods) == set(makers) else f"history_ruler-{'-'.join(methods)}.json"
    (HERE / ".cache" / raw).write_text(json.dumps({**out, "cases": found}, indent=1))
    if set(methods) == set(makers):  # a partial run leaves the published summary alone
        (HERE / "summaries" / "history_ruler.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
