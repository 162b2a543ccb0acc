"""The history ruler (benchmarks/rulers/HISTORY.md): pull-request titles asked of the commit history.

    python -m benchmarks history_ruler --repo /tmp/hist-sympy [--window 10000] [--pickaxe-cases 40]

Builds the cases by the fixed rule in ``benchmarks/rulers/HISTORY.md`` from a clone with its
history, indexes the newest ``--window`` commits with ``paqad.history`` and the work tree (lexical)
in a temp per-developer folder, and scores paqad, plain BM25 over the raw messages, ``git log
--grep`` and, on the first ``--pickaxe-cases`` report-half cases, ``git log -S``: commits, and the
current units their lines are in (``--units``). Raw rows go to ``benchmarks/.cache/history_ruler.json``,
the summary to ``benchmarks/summaries/history_ruler.json``.
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
from paqad import config
from paqad.history import build, gitlog, lines, search
from paqad.index import history as store
from paqad.index.writing import build as index_build

HERE = Path(__file__).resolve().parent
MERGE = re.compile(r"Merge pull request #\d+ from \S+")
IDENTIFIER = re.compile(r"[\d_.()\[\]`=/:<>]|.[A-Z]")
TOP = 10
PICKAXE_TIMEOUT_S = 120.0


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


def git_pickaxe(repo: Path) -> Callable[[str], list[str]]:
    """``git log -S WORD -n 10`` over the whole history, newest first, the question's longest word
    (four letters or more), then the next when it lists nothing: what an agent types. A query past
    PICKAXE_TIMEOUT_S lists nothing."""

    def ask(q: str) -> list[str]:
        for word in sorted({w for w in re.findall(r"\w+", q) if len(w) >= 4}, key=lambda w: (-len(w), w))[:2]:
            try:
                found = subprocess.run(["git", "log", "--no-merges", f"-S{word}", f"-n{TOP}", "--format=%H", "HEAD"], cwd=repo,
                                       capture_output=True, text=True, check=True, timeout=PICKAXE_TIMEOUT_S).stdout.split()
            except subprocess.TimeoutExpired:
                return []
            if found:
                return found
        return []

    return ask


def paqad_search(repo: Path, merges: set[str]) -> Callable[[str], list[str]]:
    def ask(q: str) -> list[str]:
        return [f.commit.sha for f in search.search(repo, q, TOP * 5) if f.commit.sha not in merges][:TOP]

    return ask


def score(rows: list[dict], method: str, which: str, key: str = "ranks") -> dict:
    picked = [r for r in rows if (which == "all" or r["half"] == which) and method in r.get(key, {})]
    ranks = [r[key][method] for r in picked]
    n = max(len(ranks), 1)
    out = {"cases": len(ranks), "hit@1": round(sum(k == 1 for k in ranks) / n, 3), "hit@10": round(sum(k is not None for k in ranks) / n, 3),
           "mrr@10": round(sum(1 / k for k in ranks if k) / n, 3)}
    seconds = [r["seconds"][method] for r in picked if method in r.get("seconds", {})]
    if seconds and key == "ranks":
        out["median_s"] = round(sorted(seconds)[len(seconds) // 2], 3)
    return out


class Units:
    """Commits to the current units their lines are in: paqad's way (the stored hunks carried through
    the later stored commits) and the ruler's gold (``git diff -U0 A HEAD``: git's own alignment of
    the commit's tree with HEAD's), over one lexical index of the work tree at HEAD."""

    def __init__(self, repo: Path, con: sqlite3.Connection) -> None:
        self.repo, self.con = repo, con
        self.cache: dict[str, store.StoredCommit] = {}
        self.spans: dict[str, list] = {}

    def _units(self, now: dict[str, list[lines.Span]]) -> list[str]:
        missing = {p for p in now if p not in self.spans}
        if missing:
            got = search._spans(self.repo, missing)
            self.spans.update({p: got.get(p, []) for p in missing})
        return search.units_touched(now, {p: self.spans[p] for p in now})

    def commits(self, shas: list[str]) -> list[store.StoredCommit]:
        missing = [s for s in shas if s not in self.cache]
        self.cache.update({c.sha: c for c in store.commits_by_sha(self.con, missing)})
        return [self.cache[s] for s in shas if s in self.cache]

    def paqad(self, shas: list[str], top: int | None = TOP) -> list[str]:
        """The units of ``shas``' lines now, commit by commit, each unit once, at most ``top``."""
        out: list[str] = []
        for commit in self.commits(shas):
            out += [u for u in self._units(search.carried(self.con, commit)) if u not in out]
        return out[:top]

    def gold(self, shas: list[str]) -> set[str]:
        out: set[str] = set()
        for commit in self.commits(shas):
            later = gitlog.Commit(commit.sha, 0, "")
            diff = _git(self.repo, "diff", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
                        commit.sha, "HEAD", "--", *commit.hunks) if commit.hunks else ""
            gitlog.read_diff(diff.encode(), later)
            now = {p: spans for p, h in commit.hunks.items() if (spans := lines.forward(lines.written(h), later.hunks.get(p, [])))}
            out.update(self._units(now))
        return out


def _unit_rank(units: Units, got: list[str], gold: set[str]) -> int | None:
    return next((i + 1 for i, u in enumerate(units.paqad(got)) if u in gold), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone with its history (e.g. sympy), its work tree at HEAD")
    parser.add_argument("--window", type=int, default=10000, help="the newest commits indexed and searched")
    parser.add_argument("--max-cases", type=int, default=300, help="at most this many cases, newest merges first (0: all)")
    parser.add_argument("--methods", default="paqad,plain_bm25,git_grep,git_pickaxe", help="which methods to score, comma-separated")
    parser.add_argument("--pickaxe-cases", type=int, default=40, help="git log -S runs on this many report-half cases, newest first")
    parser.add_argument("--no-units", action="store_true", help="score commits only (no lexical index of the work tree)")
    args = parser.parse_args()
    repo = args.repo.resolve()
    found = cases(repo, args.window)
    found = found[: args.max_cases] if args.max_cases else found
    pickaxe = {c["merge"] for c in [c for c in found if c["half"] == "report"][: args.pickaxe_cases]}
    with tempfile.TemporaryDirectory(prefix="history-ruler-") as data:
        os.environ["PAQAD_DATA_DIR"] = data
        build.update(repo, limit=args.window)
        if not args.no_units:
            index_build.build_full(repo, config.load(repo, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
        merges = set(_git(repo, "rev-list", "--merges", f"--max-count={args.window}", "HEAD").split())
        makers = {"paqad": lambda: paqad_search(repo, merges), "plain_bm25": lambda: plain_bm25(repo, args.window), "git_grep": lambda: git_grep(repo),
                  "git_pickaxe": lambda: git_pickaxe(repo)}
        methods = {name: makers[name]() for name in args.methods.split(",")}
        with store.opened(build.history_path(repo)) as con:
            units = None if args.no_units else Units(repo, con)
            for case in found:
                _ask(case, methods, units, case["merge"] in pickaxe)
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(), "repo": str(args.repo), "window": args.window,
           "pickaxe_cases": len(pickaxe), "scores": {h: {m: score(found, m, h) for m in methods} for h in ("tune", "report")}}
    if units is not None:
        out["unit_scores"] = {h: {m: score(found, m, h, "unit_ranks") for m in methods} for h in ("tune", "report")}
        out["unit_carry"] = _carry_agreement(found)
    (HERE / ".cache").mkdir(exist_ok=True)
    raw = "history_ruler.json" if set(methods) == set(makers) else f"history_ruler-{'-'.join(methods)}.json"
    (HERE / ".cache" / raw).write_text(json.dumps({**out, "cases": found}, indent=1))
    if set(methods) == set(makers):  # a partial run leaves the published summary alone
        (HERE / "summaries" / "history_ruler.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


def _ask(case: dict, methods: dict[str, Callable[[str], list[str]]], units: Units | None, pickaxe: bool) -> None:
    """Rank the answer among each method's commits (and, with ``units``, the gold units among theirs)."""
    answers = set(case["answers"])
    gold = units.gold(case["answers"]) if units is not None else set()
    if units is not None:
        case["gold_units"], case["paqad_answer_units"] = sorted(gold), sorted(units.paqad(case["answers"], None))
    case["ranks"], case["unit_ranks"], case["seconds"] = {}, {}, {}
    for name, ask in methods.items():
        if name == "git_pickaxe" and not pickaxe:
            continue
        started = time.perf_counter()
        got = ask(case["question"])
        case["seconds"][name] = round(time.perf_counter() - started, 3)
        case["ranks"][name] = next((i + 1 for i, sha in enumerate(got) if sha in answers), None)
        if units is not None and gold:
            case["unit_ranks"][name] = _unit_rank(units, got, gold)


def _carry_agreement(rows: list[dict]) -> dict:
    """How far paqad's carried units of the answer commits agree with the gold (git diff A HEAD)."""
    scored = [r for r in rows if r.get("gold_units")]
    same = sum(set(r["paqad_answer_units"]) == set(r["gold_units"]) for r in scored)
    inter = sum(len(set(r["paqad_answer_units"]) & set(r["gold_units"])) for r in scored)
    union = sum(len(set(r["paqad_answer_units"]) | set(r["gold_units"])) for r in scored)
    return {"cases_with_gold_units": len(scored), "cases_without": len(rows) - len(scored), "same_units": same,
            "jaccard_pooled": round(inter / max(union, 1), 3)}


if __name__ == "__main__":
    main()
