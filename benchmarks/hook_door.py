"""The hook door of a ruler case: what the prompt hook would deliver for its question (issue 32, item 3).

The prompt hook's refresh (``paqad.delivery.refresh.refresh``) chooses a depth from the prompt,
searches (``refresh.search_at_depth``: the repository's ``rag_top_n``, once more three times deeper
when fewer than ``depth.MIN_CONFIDENT`` passages are confident and the gate did not refuse), turns the answer into the
delivered block by the delivery table (``context.select``: the confident passages, the best
``MAX_PASSAGES`` with their code and pointers for the rest; low-confidence ones only when none is
confident) and renders it within the host's limit (``context.render_for_hook``, Claude Code's
10,000 characters). :func:`deliver` calls those same functions for a case, with the request's
``SearchParams`` in force, as a clean work tree (no changed files: the depth comes from the
prompt) and with no deadline (a loaded machine must not decide what is delivered).

Scored per case: the target among the passages delivered with their code (``delivered``: the
case's rule, unit under the HIT RULE when it gives lines, else file), or among those and the
pointers (``named``); whether anything was delivered at all (``said``: on an unanswerable case,
the door's silence is ``not said``); the rendered text's tokens (characters / 4, dark notes
included: what the prompt costs). :func:`metrics` pools them per ruler as ``all_rulers_table``
does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import all_rulers

COLUMNS = ("hook_delivered", "hook_named", "hook_silence", "hook_tokens")


def deliver(case: Any, root: Path, cfg: Any, params: Any) -> dict[str, Any]:
    """The prompt hook's delivery for ``case.q`` under ``params``: the fields ``metrics`` reads."""
    from paqad.delivery import context, refresh
    from paqad.delivery import depth as depth_mod
    from paqad.hooks.hosts import claude
    from paqad.index.reader import Index
    from paqad.search import pipeline
    from paqad.search.request import SearchRequest

    def search(q: str, n: int) -> Any:
        return pipeline.run(Index.shared(root), SearchRequest.from_settings(cfg, root, q, top_n=n, params=params))

    top_n = cfg.rag_top_n
    chosen = depth_mod.choose(case.q, [], top_n)
    if chosen.level == "none":
        return {"case": "skipped", "delivered": False, "named": False, "said": False, "bodies": 0, "pointers": 0, "tokens": 0}
    resp, steps = refresh.search_at_depth(search, case.q, chosen, top_n)
    reason = (resp.diagnosis or {}).get("reason") if not resp.answered else None
    block = context.select(root, case.q, resp.results, cfg.rag_similarity_threshold, cfg.rag_relief_floor, reason=reason)
    text = context.render_for_hook(block, claude.LIMIT)
    bodies = [p for p in block.passages if p.text is not None and f"### {p.span} " in text]
    pointers = [p for p in block.passages if p.text is None and f"- {p.span}" in text]
    found = _found(case, bodies)
    return {
        "case": str(block.case), "depth": steps[-1].level,
        "delivered": found, "named": found or _found(case, pointers), "said": bool(bodies or pointers),
        "bodies": len(bodies), "pointers": len(pointers), "tokens": round(len(text) / 4),
    }


def _found(case: Any, passages: list[Any]) -> bool:
    if not passages or not case.answers:
        return False
    got = all_rulers.ranks_of(case, [(p.path, int(p.start_line), int(p.end_line)) for p in passages])
    rank = got["unit_rank"] if case.level == "unit" else got["file_rank"]
    return rank is not None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def metrics(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """One ruler's hook figures: target delivered with its code and named at all (answerable cases),
    silence (unanswerable), tokens per case (every case). None where no row carries the hook."""
    ok = [r for r in rows if not r.get("error") and r.get("hook")]
    ans = [r["hook"] for r in ok if r["answerable"]]
    una = [r["hook"] for r in ok if not r["answerable"]]
    return {
        "hook_delivered": _mean([float(h["delivered"]) for h in ans]),
        "hook_named": _mean([float(h["named"]) for h in ans]),
        "hook_silence": _mean([float(not h["said"]) for h in una]),
        "hook_tokens": _mean([float(h["tokens"]) for h in (*ans, *una)]),
    }
