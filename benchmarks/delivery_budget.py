#!/usr/bin/env python3
"""What reaches the agent: recall of the labelled files within a token budget of the text the
prompt hook actually returns, on the semble benchmark.

    python -m benchmarks delivery_budget --half A [--hybrid] [--set context.MAX_PASSAGES=3 ...] [--budgets 500,1000,2000,4000]

For each query, in one process per run: ``paqad.delivery.refresh.refresh`` with the prompt (what
the prompt hook runs: depth choice, search, and the delivery table; lexical, or with ``--hybrid``
the default settings with the packaged model, on private copies under
``.cache/delivery-hybrid/``, so the lexical indexes of ``semble.py`` stay as they are), then
``context.render_for_hook`` at Claude Code's 10,000-character limit: the exact text a host puts
before the model. That text is cut at each budget, counted in tokens of the WordPiece
tokenizer shipped with paqad's default model (``tokenizers``, offline; tiktoken fetches its
encodings at run time and fails here; a WordPiece count of English and code runs near a BPE
count, so budgets are comparable in size, not token for token). A target file counts as
delivered within a budget (``recall@B``) when a passage of it, with its code, starts in the cut
text (each passage is headed ``### path:Lstart-end``), and as *named* (``named@B``) when its path
appears there at all, a bare pointer included. Recall is the mean share of a query's targets delivered, macro-averaged over
repositories as ``semble.py`` does; ``tokens`` is the median length of the whole delivered text.

``--set context.NAME=V`` changes a delivery constant (``paqad.delivery.context``) for the run; a
search constant is changed per request by ``python -m benchmarks ablate --try`` on every ruler.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import semble
from paqad import config
from paqad.delivery import context, refresh
from paqad.embed.local import MINILM
from paqad.index import store
from paqad.index.writing import build

HERE = Path(__file__).resolve().parent
LIMIT = 10_000  # Claude Code's additionalContext cap (paqad.hooks.hosts.claude.LIMIT)
LEXICAL = {"rag_embedding_provider": "none"}
WORK_HYBRID = HERE / ".cache" / "delivery-hybrid"


def set_delivery_const(spec: str) -> None:
    """``context.NAME=V``: a delivery constant for this run (the hook path reads it from the module)."""
    name, _, value = spec.partition("=")
    module, _, const = name.partition(".")
    if module != "context" or not hasattr(context, const):
        sys.exit(f"delivery_budget: --set takes context.NAME=V (paqad.delivery.context); {name!r} is not one "
                 "(search constants: python -m benchmarks ablate --try)")
    old = getattr(context, const)
    setattr(context, const, value.lower() in ("1", "true", "yes") if isinstance(old, bool) else type(old)(value))


def private_copy(src: Path, dst: Path) -> Path:
    """``src`` copied to ``dst`` without its ``.paqad`` (once), so an index built there is its own."""
    if not dst.is_dir():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: [".paqad"] if Path(d) == src else [])
    return dst


def ensure_index(root: Path, overrides: dict[str, str]) -> None:
    """Build ``root``'s index, or bring it up to date (a version change rebuilds it)."""
    cfg = config.load(root, cli_overrides=overrides, environ={})
    if store.current_path(root) is None:
        build.build_full(root, cfg)
    else:
        build.update(root, cfg)


def tokenizer() -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(MINILM.tokenizer.locate()))
    tok.no_truncation()  # the file truncates at 128 tokens for the model; a count must not
    tok.no_padding()
    return tok


def cut(tok: Any, text: str, budget: int) -> str:
    """``text`` up to its ``budget``-th token (by character offsets, so paths stay whole)."""
    enc = tok.encode(text, add_special_tokens=False)
    if len(enc.offsets) <= budget:
        return text
    return text[: enc.offsets[budget - 1][1]]


def rows(names: list[str], budgets: list[int], hybrid: bool = False) -> list[dict[str, Any]]:
    tok = tokenizer()
    overrides: dict[str, str] = {} if hybrid else dict(LEXICAL)
    tasks = semble.load_tasks(semble.load_specs())
    out: list[dict[str, Any]] = []
    for name in names:
        root = semble.CACHE / "repos" / name
        if not root.is_dir():
            continue
        if hybrid:
            root = private_copy(root, WORK_HYBRID / "repos" / name)
        ensure_index(root, overrides)
        # a private copy was indexed but never `rag init`-ed: retrieval is on for the hook's path
        cfg = config.load(root, cli_overrides={**overrides, "rag_enabled": "true"}, environ={})
        for t in (t for t in tasks if t["repo"] == name):
            report = refresh.refresh(root, cfg, prompt=t["query"], sync=False)
            text = context.render_for_hook(context.Delivery.from_dict(report.delivery), LIMIT) if report.delivery else ""
            files = [p for p, _, _ in t["targets"]]
            row: dict[str, Any] = {"repo": name, "language": t["language"], "category": t["category"], "qid": t["qid"],
                                   "case": (report.delivery or {}).get("case"), "tokens": len(tok.encode(text, add_special_tokens=False).ids)}
            for b in budgets:
                shown = cut(tok, text, b)
                code = "\n".join(line for line in shown.splitlines() if line.startswith("### "))
                row[f"recall@{b}"] = sum(1 for f in files if _delivered(f, code)) / max(1, len(files))
                row[f"named@{b}"] = sum(1 for f in files if _delivered(f, shown)) / max(1, len(files))
            out.append(row)
    return out


def _delivered(target: str, text: str) -> bool:
    """A target path (repository-relative, upstream's) appears in the text, either way round as
    ``semble.py`` matches paths (the index holds paths relative to the benchmark root)."""
    parts = target.split("/")
    return any("/".join(parts[i:]) in text for i in range(len(parts)))


def summary(rs: list[dict[str, Any]], names: list[str], budgets: list[int]) -> dict[str, Any]:
    s: dict[str, Any] = {}
    for key in ("recall", "named"):
        for b in budgets:
            s[f"{key}@{b}"] = round(semble.macro([dict(r, ndcg10=r[f"{key}@{b}"]) for r in rs], names)["overall"], 4)
    s["tokens_median"] = statistics.median(r["tokens"] for r in rs) if rs else 0
    cases: dict[str, int] = {}
    for r in rs:
        cases[str(r["case"])] = cases.get(str(r["case"]), 0) + 1
    s["cases"] = cases
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=("A", "B"), default=None)
    ap.add_argument("--repos", default=None)
    ap.add_argument("--budgets", default="500,1000,2000,4000")
    ap.add_argument("--set", action="append", default=[], help="context.CONST=value: a delivery constant (paqad.delivery.context)")
    ap.add_argument("--rows", default=None)
    ap.add_argument("--hybrid", action="store_true", help="the default settings (packaged model) instead of lexical")
    args = ap.parse_args(argv)
    for spec in args.set:
        set_delivery_const(spec)
    split = json.loads(semble.SPLIT.read_text())
    names = split[args.half] if args.half else (args.repos.split(",") if args.repos else split["A"] + split["B"])
    budgets = [int(x) for x in args.budgets.split(",")]
    t0 = time.time()
    rs = rows(names, budgets, args.hybrid)
    print(json.dumps({"point": " ".join(args.set) or "as shipped", "hybrid": args.hybrid, **summary(rs, names, budgets), "wall_s": round(time.time() - t0, 1)}), flush=True)
    if args.rows:
        Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
