"""What ``rag_last_changed`` costs a delivery (issue 35, item 3): tokens added and time, on a clone with its history.

    python -m benchmarks last_changed_cost --repo /work/.mirror/pallets+flask/repo --semble-repo flask

``--repo`` is a clone (or a bare mirror) with its history; it is cloned into a temp folder and
checked out at its HEAD, with a fresh per-developer folder: a lexical index and the history store
(``paqad.history.build.update``) are built there. Then, for each of the semble ruler's queries for
``--semble-repo`` (the corpus's own questions; the clone is newer than the ruler's snapshot, which
does not matter for a cost), the prompt hook's delivery (``paqad.delivery.refresh.refresh``, then
``context.render_for_hook`` at Claude Code's 10,000 characters) with the setting off and on, both
counted in tokens of the WordPiece tokenizer shipped with paqad's default model (as
``delivery_budget.py`` counts), and the time of :func:`paqad.delivery.context.add_last_changed` on
that delivery, with the per-file cache emptied (a cold process) and warm. ``rag search --json``'s
extra is counted the same way over its 20 results. Then ``--blame-lines`` random lines of the
tracked text files: does the walk over the stored hunks name the commit ``git blame`` names? Raw rows go to
``benchmarks/.cache/last_changed_cost.json``, the summary to ``benchmarks/summaries/last_changed_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import semble
from benchmarks.delivery_budget import LIMIT, tokenizer
from paqad import config
from paqad.delivery import context, refresh
from paqad.history import build as history
from paqad.history import lastchanged
from paqad.index.writing import build

HERE = Path(__file__).resolve().parent


def _one(root: Path, query: str, cfg_off: config.Config, cfg_on: config.Config, tok: Any) -> dict[str, Any]:
    count = lambda text: len(tok.encode(text, add_special_tokens=False).ids)  # noqa: E731
    off = refresh.refresh(root, cfg_off, prompt=query, sync=False)
    on = refresh.refresh(root, cfg_on, prompt=query, sync=False)
    text_off = context.render_for_hook(context.Delivery.from_dict(off.delivery), LIMIT) if off.delivery else ""
    text_on = context.render_for_hook(context.Delivery.from_dict(on.delivery), LIMIT) if on.delivery else ""
    delivery = context.Delivery.from_dict(off.delivery) if off.delivery else None
    timings = []
    for cold in (True, False):
        if cold:
            lastchanged._files.clear()
        started = time.perf_counter()
        if delivery is not None:
            context.add_last_changed(root, delivery)
        timings.append((time.perf_counter() - started) * 1000)
    said = [p.last_changed for p in (delivery.passages if delivery else []) if p.text is not None]
    results = [{"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"]} for r in _search(root, query)]
    lastchanged.annotate(root, results)
    json_extra = sum(count(json.dumps({"last_changed": r["last_changed"]})[1:-1]) + 1 for r in results)  # the key, its value, a comma
    return {"query": query, "case": (off.delivery or {}).get("case"), "tokens_off": count(text_off), "tokens_on": count(text_on),
            "passages_with_code": len(said), "lines_said": sum(1 for s in said if s), "ms_cold": round(timings[0], 2),
            "ms_warm": round(timings[1], 2), "search_results": len(results), "search_json_extra_tokens": json_extra}


def _search(root: Path, query: str) -> list[dict[str, Any]]:
    from paqad.search import pipeline

    return [{"path": r.path, "start_line": r.start_line, "end_line": r.end_line} for r in pipeline.search(root, query, top_n=20).results]


def blame_agreement(root: Path, samples: int, seed: int = 35) -> dict[str, Any]:
    """Lines drawn at random from the tracked files: the commit the stored hunks' walk names
    (:func:`paqad.history.lines.walk`) against the one ``git blame -L N,N HEAD`` names."""
    import random

    from paqad.history import lines
    from paqad.index import history as store

    rng = random.Random(seed)
    files = [f for f in subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
             if f.endswith((".py", ".rst", ".md", ".txt", ".toml", ".cfg", ".html"))]
    same = asked = 0
    with store.opened(history.history_path(root)) as con:
        shas = dict(con.execute("SELECT cid, sha FROM commits").fetchall())
        for _ in range(samples):
            rel = rng.choice(files)
            count = len((root / rel).read_text(encoding="utf-8", errors="replace").splitlines())
            if count == 0:
                continue
            line = rng.randint(1, count)
            blame = subprocess.run(["git", "blame", "--porcelain", "-L", f"{line},{line}", "HEAD", "--", rel], cwd=root, capture_output=True,
                                   text=True, check=True).stdout.split(" ", 1)[0]
            mine = shas.get(next(lines.walk(line, line, store.file_hunks(con, rel)), -1))
            asked, same = asked + 1, same + (mine == blame)
    return {"lines": asked, "same_as_git_blame": same, "share": round(same / max(asked, 1), 3)}


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 2) if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone or bare mirror with its history")
    parser.add_argument("--semble-repo", required=True, help="whose semble queries to ask (flask, requests, ...)")
    parser.add_argument("--blame-lines", type=int, default=300, help="random lines whose last commit is checked against git blame (0: none)")
    args = parser.parse_args()
    queries = [t["query"] for t in semble.load_tasks(semble.load_specs()) if t["repo"] == args.semble_repo]
    tok = tokenizer()
    with tempfile.TemporaryDirectory(prefix="last-changed-") as tmp:
        root, os.environ["PAQAD_DATA_DIR"] = Path(tmp) / "repo", str(Path(tmp) / "data")
        subprocess.run(["git", "clone", "-q", str(args.repo.resolve()), str(root)], check=True, timeout=900)
        cfg_off = config.load(root, cli_overrides={"rag_embedding_provider": "none", "rag_enabled": "true"}, environ={})
        cfg_on = config.load(root, cli_overrides={"rag_embedding_provider": "none", "rag_enabled": "true", "rag_last_changed": "true"}, environ={})
        build.build_full(root, cfg_off)
        built = history.update(root)
        rows = [_one(root, q, cfg_off, cfg_on, tok) for q in queries]
        agreement = blame_agreement(root, args.blame_lines) if args.blame_lines else None
    delivered = [r for r in rows if r["passages_with_code"]]
    added = [r["tokens_on"] - r["tokens_off"] for r in delivered]
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(), "repo": str(args.repo),
           "commits": built.read, "history_build_s": built.seconds, "queries": len(rows), "deliveries_with_code": len(delivered),
           "tokens_added_median": statistics.median(added) if added else 0, "tokens_added_max": max(added, default=0),
           "tokens_off_median": _median(delivered, "tokens_off"), "tokens_added_per_passage": round(sum(added) / max(sum(r["passages_with_code"] for r in delivered), 1), 1),
           "lines_said_share": round(sum(r["lines_said"] for r in delivered) / max(sum(r["passages_with_code"] for r in delivered), 1), 3),
           "ms_cold_median": _median(delivered, "ms_cold"), "ms_warm_median": _median(delivered, "ms_warm"),
           "search_json_extra_tokens_median": _median(rows, "search_json_extra_tokens"), "blame_agreement": agreement}
    (HERE / ".cache").mkdir(exist_ok=True)
    (HERE / ".cache" / f"last_changed_cost-{args.semble_repo}.json").write_text(json.dumps({**out, "rows": rows}, indent=1))
    (HERE / "summaries" / f"last_changed_cost-{args.semble_repo}.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
