"""What the hooks' door delivers for an issue text: SWE-bench Lite sympy through ``rag search``.

    python benchmarks/swebench_gated.py [--set SETTING=VALUE ...]

``swebench.py`` scores the ranking (gate off, top 50 units). This asks the same 77 issues through
the request the default settings make (``SearchRequest.from_settings``: the gate, the confidence
floor, ``rag_top_n``), lexical, on the checkouts and indexes a ``swebench.py --keep`` run left in
``benchmarks/.cache/swebench/<instance>/``, and prints file Acc@1 / Acc@5 over the delivered
passages, how many issues were answered, and how many passages a delivered answer holds; and
what reached the agent at all: the share of issues with a gold file anywhere among the delivered
passages, and of issues with gold functions, with one of them delivered as its own passage
(``swebench.function_hit`` over every delivered passage).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchmarks.swebench import function_hit
from paqad import config
from paqad.index.reader import Index
from paqad.search import pipeline
from paqad.search.request import SearchRequest

HERE = Path(__file__).resolve().parent

RULER = HERE / "rulers" / "swebench" / "sympy.json"
CHECKOUTS = HERE / ".cache" / "swebench"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    overrides = {"rag_embedding_provider": "none", **dict(kv.split("=", 1) for kv in args.set)}
    n = acc1 = acc5 = answered = passages = file_any = fn_any = fn_text = n_fn = 0
    sizes: list[int] = []
    refused: list[str] = []
    for inst in json.loads(RULER.read_text(encoding="utf-8"))["instances"]:
        root = CHECKOUTS / inst["instance_id"]
        if not (root / ".paqad").is_dir():
            continue
        cfg = config.load(root, cli_overrides=overrides, environ={})
        resp = pipeline.run(Index.shared(root), SearchRequest.from_settings(cfg, root, inst["problem_statement"]))
        Index.forget(root)
        n += 1
        files = list(dict.fromkeys(r.path for r in resp.results))
        gold = set(inst["gold_files"])
        acc1 += bool(gold & set(files[:1]))
        acc5 += bool(gold & set(files[:5]))
        file_any += bool(gold & set(files))
        if inst["gold_functions"]:
            n_fn += 1
            units = [{"path": r.path, "kind": r.kind, "qualified_name": r.qualified_name, "start_line": r.start_line, "end_line": r.end_line} for r in resp.results]
            fn_any += function_hit(units, inst["gold_functions"], k=len(units)) is not None
            fn_text += any(_shown(r, g) for r in resp.results for g in inst["gold_functions"])
        if resp.answered:
            answered += 1
            sizes.append(len(resp.results))
            passages += sum(r.low_confidence for r in resp.results)
        else:
            refused.append(f"{inst['instance_id']} ({(resp.diagnosis or {}).get('reason')})")
    if not n:
        sys.exit(f"no kept checkouts under {CHECKOUTS}: run `python benchmarks/swebench.py --sympy-git PATH --keep` first")
    print(f"{n} issues through `rag search` ({overrides}): file Acc@1 {100 * acc1 / n:.1f}, Acc@5 {100 * acc5 / n:.1f}; "
          f"answered {answered}; passages per answer median {statistics.median(sizes) if sizes else 0}, "
          f"{passages} of them low-confidence; refused: {', '.join(refused) or 'none'}")
    print(f"delivered at all: a gold file in {100 * file_any / n:.1f}% of issues; a gold function as its own passage in "
          f"{100 * fn_any / max(1, n_fn):.1f}% of the {n_fn} issues with one, and some of a gold function's lines in the source "
          f"text delivered (any passage, as trimmed to rag_source_chars) in {100 * fn_text / max(1, n_fn):.1f}%")
    return 0


def _shown(res, gold: dict) -> bool:
    """Some of ``gold``'s lines are in the source text delivered with ``res`` (trimmed as delivered)."""
    if res.path != gold["path"] or not res.source:
        return False
    last = res.start_line + res.source.count("\n")
    return res.start_line <= gold["end_line"] and gold["start_line"] <= last


if __name__ == "__main__":
    raise SystemExit(main())
