"""Issue localization figures for ``all_rulers``: file Acc@1/Acc@5, file R@10, function Acc@5.

Asked of every case whose ``style`` is ``issue`` (SWE-bench Lite sympy, ``d4j-reports``): the whole
text as the query, ungated (``rag probe``), top 50 units. The file ranking is the order in which
files first appear among those units (``swebench.py``'s rule). File Acc@k: a gold file among the
first k files; R@10: the share of the gold files among the first 10 files. Function Acc@5: a
function or method unit among the top 5 units lies in a gold file and has a gold function's
qualified name or overlaps its span (``swebench.function_hit``); cases without a gold function are
left out of that column. Gold files are every answer's path; gold functions the answers with lines.
"""

from __future__ import annotations

from typing import Any

TOP = 50
ISSUE_STYLES = frozenset({"issue"})


def wants(case: Any) -> bool:
    return case.style in ISSUE_STYLES and bool(case.answers)


def first_files(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def scores(answers: list[dict[str, Any]], units: list[dict[str, Any]]) -> dict[str, Any]:
    """One case's figures from its ranked units (``path``, ``kind``, ``qualified_name``, lines)."""
    gold = list(dict.fromkeys(a["path"] for a in answers))
    files = first_files([u["path"] for u in units])
    rank = next((i for i, f in enumerate(files, 1) if f in gold), None)
    fns = [a for a in answers if a.get("lines")]
    fn_rank = None
    for i, u in enumerate(units[:5], 1):
        if u["kind"] not in ("function", "method"):
            continue
        if any(u["path"] == g["path"] and (u["qualified_name"] == g.get("name") or
                                           (u["start_line"] <= g["lines"][1] and g["lines"][0] <= u["end_line"])) for g in fns):
            fn_rank = i
            break
    return {"file_rank": rank, "acc1": rank == 1, "acc5": rank is not None and rank <= 5,
            "r10": round(sum(f in gold for f in files[:10]) / len(gold), 4),
            "fn_acc5": (fn_rank is not None) if fns else None, "fn_rank": fn_rank,
            "files": files[:10]}


def localize(case: Any, cfg: Any, root: Any, params: Any = None) -> dict[str, Any]:
    from paqad.index.reader import Index
    from paqad.search import pipeline
    from paqad.search.request import SearchRequest

    req = SearchRequest.from_settings(cfg, root, case.q, top_n=TOP, gate=False, budget_chars=10**9, source_chars=0,
                                      params=params)
    resp = pipeline.run(Index.shared(root), req)
    units = [{"path": r.path, "kind": r.kind, "qualified_name": r.qualified_name, "start_line": r.start_line,
              "end_line": r.end_line} for r in resp.results]
    return scores(case.answers, units)


def table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: per ruler and half, the localization figures (rows without ``loc`` ignored)."""
    have = [r for r in rows if r.get("loc")]
    if not have:
        return []
    out = ["", "Issue localization (ungated, top 50 units; files in first-appearance order):", "",
           "| ruler | half | n | file Acc@1 | file Acc@5 | file R@10 | n with a gold function | function Acc@5 |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for ruler in sorted({r["ruler"] for r in have}):
        for half in ("tune", "report", "all"):
            rs = [r["loc"] for r in have if r["ruler"] == ruler and (half == "all" or r.get("half") == half)]
            if not rs:
                continue
            fn = [x["fn_acc5"] for x in rs if x["fn_acc5"] is not None]

            def pct(xs: list[Any]) -> str:
                return f"{100 * sum(xs) / len(xs):.1f}" if xs else "-"

            out.append(f"| {ruler} | {half} | {len(rs)} | {pct([x['acc1'] for x in rs])} | {pct([x['acc5'] for x in rs])} | "
                       f"{pct([x['r10'] for x in rs])} | {len(fn)} | {pct(fn)} |")
    return out
