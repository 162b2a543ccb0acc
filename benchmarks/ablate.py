#!/usr/bin/env python3
"""Leave-one-out ablation of the search's tuned constants over every ruler (issue 32, item 3).

    python -m benchmarks ablate [--group NAME ...] [--ruler NAME ...] [--half tune|report|all]
                                [--limit-corpora [RULER=]N ...] [--resample 200]
    python -m benchmarks ablate --rescore ROWS.jsonl     # the table of saved rows
    python -m benchmarks ablate --list                   # the groups and what neutral means
    python -m benchmarks ablate --count                  # numeric constants and switches in paqad/search/

Each group is one or more constants of ``paqad.search.params.KNOBS`` set together to their
*neutral* value (the one that turns their effect off) through the request's ``SearchParams``: no
module global is set. The corpora and indexes are ``all_rulers.py``'s (lexical settings, the
cache under ``.cache/all_rulers/data/lexical``); each corpus is opened once and every case asked,
gated and ungated, under the shipped constants and under each group. Rows (one per case and
group) go to ``.cache/results/ablate/<stamp>.jsonl``.

The figures are pooled as ``all_rulers`` pools them, each ruler weighing the same (the mean of the
rulers' figures, ``all_rulers_table.macro``): NDCG@10 ungated, hit@1 gated (a silence is a miss),
the target among the delivered passages at all (the low-confidence tail and relief count), and
answered share over answerable cases, silence over unanswerable ones, and what an answer costs
(tokens of its passages, characters / 4). Beside ``rag search``, the hook door
(``hook_door.py``; ``--no-hook`` leaves it out): what the prompt hook would deliver for the case
through its own depth, delivery table and rendering (the confident passages when there are any),
scored as the target delivered with its code, the target named (code or pointer), silence on
unanswerable cases, and tokens per case. A group's change is its
pooled figure minus the shipped one; the noise is a paired bootstrap over cases (resampled
within each ruler, ``--resample`` times): the 95 % interval of that difference. A group whose
interval holds 0 on every column does not move the pooled figure beyond its noise.
``--model`` asks with the default settings (hybrid, the packaged model; the indexes under
``.cache/all_rulers/data/default``, built by ``all_rulers`` without ``--lexical``) and adds the
vector side's groups (``fusion``: blend, vector bars, relief), which act only on an index with
vectors. ``--try module.NAME=V1,V2`` measures other values of one constant the same way (a
curve, each point against the shipped value): the way a constant is chosen, on every ruler's tune
half at once. Index-time constants (``paqad.index``) are out of scope.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import all_rulers, hook_door
from benchmarks import all_rulers_cases as cases_mod
from benchmarks import all_rulers_table as table

HERE = Path(__file__).resolve().parent

RESULTS = HERE / ".cache" / "results" / "ablate"
RAG_COLUMNS = ("ndcg_ungated", "hit1_gated", "delivered", "answered", "silence", "tokens")
COLUMNS = (*RAG_COLUMNS, *hook_door.COLUMNS)

#: Named groups: constants that act together are switched off together (say why in the name's note).
GROUPS: dict[str, tuple[str, ...]] = {
    # query analysis
    "ubiquity": ("query.UBIQUITY",),
    "min_ubiquitous_df": ("query.MIN_UBIQUITOUS_DF",),
    "score_cutoff": ("query.SCORE_CUTOFF",),
    "max_scored_terms": ("query.MAX_SCORED_TERMS",),
    "derive": ("query.DERIVE",),  # with DERIVED_MIN_ROOT, DERIVED_TAIL (they only bound it); VARIANTS reads derived() too
    "variants": ("query.VARIANTS",),  # with VARIANT_WEIGHT, LONG_QUERY_WORDS (its weight and its length bar)
    "drop_absent_function_words": ("query.DROP_ABSENT_FUNCTION_WORDS",),
    # evidence gate
    "coverage_bar": ("evidence.COVERAGE_BAR",),  # the one-unknown relief only relaxes it: off with it
    "concentration_bar": ("evidence.CONCENTRATION_BAR",),
    "absence_weight": ("evidence.ABSENCE_FULL_WEIGHT_UNITS",),
    "one_unknown_word": ("evidence.ONE_UNKNOWN_WORD",),  # with its three bars
    "long_query_bars": ("evidence.LONG_QUERY_TERMS",),  # with LONG_MIN_MATCHED, LONG_MIN_IN_ONE_UNIT
    "named": ("evidence.NAMED_ENABLED",),  # with NAMED_MAX_SHARE, NAMED_MIN_OWN_SHARE
    "named_weight_cap": ("evidence.NAMED_WEIGHT_CAP",),
    "named_max_terms": ("evidence.NAMED_MAX_TERMS",),
    "exact_names": ("evidence.EXACT_NAMES",),  # express's bare ``response`` (tests/gate_names_test.py; semble, default model)
    # ranking signals
    "ranking_all": ("ranking.ENABLED",),  # every signal at once: a reference, not a candidate
    "definition": ("ranking.DEFINITION_BOOST",),  # the lookup; its shares below
    "definition_stem_bonus": ("ranking.DEFINITION_STEM_BONUS",),  # dapper's SqlMapper.cs (tests/ranking_test.py)
    "embedded_scale": ("ranking.EMBEDDED_SCALE",),  # symbols inside a sentence; reports decide it (undecided)
    "part_one_bonus": ("ranking.PART_ONE_BONUS",),  # nlohmann's adl_serializer (tests/ranking_test.py; semble, default model)
    "continuation_scale": ("ranking.CONTINUATION_SCALE",),  # a split class's head answers its name (semble, default model)
    "stem_file": ("ranking.STEM_FILE_SCALE",),  # a bare name on the file named after it (dapper's SqlMapper.cs)
    "path_words": ("ranking.PATH_BOOST",),  # with PATH_MIN_SHARE, paths.*
    "path_min_share": ("ranking.PATH_MIN_SHARE",),
    "compound_paths": ("paths.COMPOUND_PATHS",),
    "prefix_min": ("paths.PREFIX_MIN",),
    "coherence": ("ranking.COHERENCE_BOOST",),
    "diversity": ("ranking.DIVERSITY",),  # with DIVERSITY_WIDEN, TOP_FILE_FREE
    "top_file_free": ("ranking.TOP_FILE_FREE",),
    "central": ("ranking.CENTRAL_BOOST",),  # with CENTRAL_SHARE
    "type_bonus": ("ranking.TYPE_BONUS",),  # with TYPE_KINDS: gin's Engine struct (tests/ranking_test.py; semble, default model)
    "older_copy": ("ranking.OLDER_COPY_PRIOR",),  # with paths.OLDER_COPY_MIN_SHARED
    "title": ("ranking.TITLE_SCALE", "ranking.TITLE_PATHS"),  # with TITLE_SPREAD: the report title, both uses
    "title_spread": ("ranking.TITLE_SPREAD",),
    "pointers": ("reports.POINTER_BOOST",),
    "callees": ("reports.CALLEE_BOOST",),  # with CALLEE_MAX
    "report_calls": ("shape.REPORT_CALLS",),
    "report_shape": ("shape.TOP_FILE_MIN_WORDS",),  # no query is a report: every report signal off
    "drop_containers": ("pipeline.DROP_CONTAINERS",),
    # an issue text delivered files first (paqad.search.issues; issue 32, item 5)
    "issues": ("issues.ENABLED",),  # the whole path: with MIN_LINES (what is an issue) and POOL
    "issue_per_file": ("issues.PER_FILE",),
    "issue_aux_prior": ("issues.AUX_PRIOR",),
    # calibrated score and floor (they act on lexical answers too)
    "confidence_gain": ("fusion.LEXICAL_CONF_GAIN",),
    "behind_slope": ("fusion.BEHIND_SLOPE",),
    "tail": ("fusion.TAIL_MIN",),
}

#: The vector side's groups (``--model``): they change nothing on a lexical index.
VECTOR_GROUPS: dict[str, tuple[str, ...]] = {
    "blend": ("fusion.BLEND_LEXICAL",),  # the lexical order alone: vectors only add candidates
    "weak_blend": ("fusion.WEAK_COVERAGE",),  # with BLEND_LEXICAL_WEAK (the share it switches to)
    "report_blend": ("fusion.BLEND_LEXICAL_REPORT",),
    "vector_evidence": ("fusion.VECTOR_TOP_BAR", "fusion.VECTOR_PARTIAL_BAR"),  # no answer on vectors at all
    "vector_margin": ("fusion.VECTOR_MARGIN_BAR",),
    "vector_partial": ("fusion.VECTOR_PARTIAL_BAR",),  # with VECTOR_PARTIAL_COVERAGE (its coverage bar)
    "vector_veto": ("fusion.VECTOR_VETO_BAR",),
    "relief_max": ("fusion.RELIEF_MAX",),
}
ALL_GROUPS = {**GROUPS, **VECTOR_GROUPS}


def params_of(group: str | None) -> Any:
    """The request's parameters for a group (its constants neutral) or a ``--try`` point (``module.NAME=V``)."""
    from paqad.search.params import SearchParams

    if group is None:
        return SearchParams()
    if "=" in group:
        key, value = group.split("=", 1)
        return SearchParams.of({key: parse_value(key, value)})
    return SearchParams.neutral(list(ALL_GROUPS[group]))


def parse_value(key: str, text: str) -> float | int | bool:
    """``text`` as the type of the shipped constant ``key`` (``module.NAME`` of ``paqad.search``)."""
    import importlib

    from paqad.search.params import KNOBS

    if key not in KNOBS:
        raise SystemExit(f"ablate: not a tuned search constant: {key} (paqad.search.params.KNOBS)")
    module, name = key.split(".", 1)
    shipped = getattr(importlib.import_module(f"paqad.search.{module}"), name)
    if isinstance(shipped, bool):
        return text.strip().lower() in ("1", "true", "yes", "on")
    return int(text) if isinstance(shipped, int) else float(text)


def try_points(specs: list[str]) -> list[str]:
    """``module.NAME=V1,V2`` -> the points ``module.NAME=V1``, ``module.NAME=V2`` (values checked)."""
    out = []
    for spec in specs:
        key, _, values = spec.partition("=")
        for v in values.split(","):
            parse_value(key, v)
            out.append(f"{key}={v.strip()}")
    return out


def ask(root: Path, cfg: Any, q: str, gate: bool, params: Any) -> Any:
    from paqad.index.reader import Index
    from paqad.search import pipeline
    from paqad.search.request import SearchRequest

    return pipeline.run(Index.shared(root), SearchRequest.from_settings(cfg, root, q, top_n=all_rulers.K, gate=gate, params=params))


def row_of(case: Any, root: Path, cfg: Any, group: str | None, hook: bool = True) -> dict[str, Any]:
    params = params_of(group)
    gated = ask(root, cfg, case.q, True, params)
    probe = ask(root, cfg, case.q, False, params)
    chars = sum(len(r.source or "") for r in gated.results) if gated.answered else 0
    return {
        **case.head(), "group": group or "shipped",
        "answered": bool(gated.answered),
        "tokens": round(chars / 4),  # as all_rulers counts them: what the delivered passages cost
        "gated": all_rulers.ranks_of(case, all_rulers.spans(gated)) if gated.answered else {"unit_rank": None, "file_rank": None, "ndcg10": 0.0},
        "ungated": all_rulers.ranks_of(case, all_rulers.spans(probe)),
        **({"hook": hook_door.deliver(case, root, cfg, params)} if hook else {}),
    }


def prepared(selected: cases_mod.Selection, data: Path, overrides: dict[str, str]) -> Iterator[tuple[str, list[cases_mod.Case], Path, Any]]:
    """Each corpus of ``selected`` indexed under ``data`` (its PAQAD_DATA_DIR, set here): (key, its
    cases, its root, its settings). A corpus that fails to prepare is reported and skipped: one
    broken corpus must not end a long run. ``ablate``, ``ablate_index`` and ``uptake_prior`` share it."""
    os.environ["PAQAD_DATA_DIR"] = str(data.resolve())
    for key, cs in selected.by_corpus().items():
        try:
            root, identity = all_rulers.working_copy(selected.corpora[key], all_rulers.CACHE / "work")
            cfg, _ = all_rulers.prepare(root, identity, overrides, data)
        except Exception as exc:  # noqa: BLE001
            print(f"  {key}: PREPARE FAILED: {exc}", file=sys.stderr)
            continue
        yield key, cs, root, cfg


def append_rows(out: Path, rows: list[dict[str, Any]]) -> None:
    with out.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def run(selected: cases_mod.Selection, groups: list[str], out: Path, model: bool = False, hook: bool = True) -> list[dict[str, Any]]:
    overrides: dict[str, str] = {} if model else dict(all_rulers.LEXICAL)
    data = all_rulers.CACHE / "data" / all_rulers.settings_key(overrides)
    rows: list[dict[str, Any]] = []
    for key, cs, root, cfg in prepared(selected, data, overrides):
        started = time.perf_counter()
        got = []
        for group in [None, *groups]:
            for case in cs:
                try:
                    got.append(row_of(case, root, cfg, group, hook))
                except Exception as exc:  # noqa: BLE001
                    got.append({**case.head(), "group": group or "shipped", "error": f"{type(exc).__name__}: {exc}"[-300:]})
        append_rows(out, got)
        rows += got
        print(f"  {key:40s} {len(cs):4d} cases x {len(groups) + 1}, {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return rows


# --------------------------------------------------------------------------- pooling and noise


def pooled(by_ruler: dict[str, list[dict[str, Any]]]) -> dict[str, float | None]:
    """Rulers equal: ``rag search``'s figures (``all_rulers_table.macro``) and the hook door's, each
    the mean of the rulers that have it."""
    m = table.macro({r: table.metrics(rs) for r, rs in by_ruler.items()})
    hooks = [hook_door.metrics(rs) for rs in by_ruler.values()]
    out: dict[str, float | None] = {k: m[k] for k in RAG_COLUMNS}
    for k in hook_door.COLUMNS:
        values = [h[k] for h in hooks if h[k] is not None]
        out[k] = sum(values) / len(values) if values else None
    return out


def compare(rows: list[dict[str, Any]], group: str, resample: int, min_cases: int = 1, seed: int = 32) -> dict[str, Any]:
    """The pooled change of ``group`` against the shipped constants, with a paired bootstrap 95 %
    interval; rulers with fewer than ``min_cases`` cases are left out (a resampled single case
    has no variance, yet weighs as much as a whole ruler)."""
    base: dict[str, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    alt: dict[str, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        (base if r["group"] == "shipped" else alt if r["group"] == group else {}).setdefault(r["ruler"], {})[(r["corpus"], r["id"])] = r
    keys = {ru: sorted(set(base[ru]) & set(alt.get(ru, {}))) for ru in base}
    keys = {ru: k for ru, k in keys.items() if len(k) >= max(1, min_cases)}

    def diff(pick: dict[str, list[tuple[str, str]]]) -> dict[str, float | None]:
        a = pooled({ru: [base[ru][k] for k in ks] for ru, ks in pick.items()})
        b = pooled({ru: [alt[ru][k] for k in ks] for ru, ks in pick.items()})
        out: dict[str, float | None] = {}
        for c in COLUMNS:
            x, y = a[c], b[c]
            out[c] = None if x is None or y is None else y - x
        return out

    point = diff(keys)
    rng = random.Random(seed)
    boots: dict[str, list[float]] = {c: [] for c in COLUMNS}
    for _ in range(resample):
        d = diff({ru: [ks[rng.randrange(len(ks))] for _ in ks] for ru, ks in keys.items()})
        for c in COLUMNS:
            v = d[c]
            if v is not None:
                boots[c].append(v)
    out: dict[str, Any] = {"group": group, "n": sum(len(k) for k in keys.values())}
    for c in COLUMNS:
        xs = sorted(boots[c])
        lo, hi = (xs[int(0.025 * len(xs))], xs[min(len(xs) - 1, int(0.975 * len(xs)))]) if xs else (None, None)
        out[c] = (point[c], lo, hi)
    out["moves"] = any(lo is not None and (lo > 0 or hi < 0) for _, lo, hi in (out[c] for c in COLUMNS))
    return out


def _cell(v: tuple[float | None, float | None, float | None], tokens: bool = False) -> str:
    p, lo, hi = v
    if p is None:
        return "-"
    mark = " *" if lo is not None and hi is not None and (lo > 0 or hi < 0) else ""
    if tokens:
        return f"{p:+.0f} [{lo:+.0f}, {hi:+.0f}]{mark}"
    return f"{p:+.4f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def render(rows: list[dict[str, Any]], resample: int, min_cases: int = 1) -> str:
    from paqad.search.params import KNOBS

    groups = [g for g in dict.fromkeys(r["group"] for r in rows) if g != "shipped"]
    shipped = _by_ruler([r for r in rows if r["group"] == "shipped"])
    small = sorted(f"{ru} ({len(rs)})" for ru, rs in shipped.items() if len(rs) < min_cases)
    base = pooled({ru: rs for ru, rs in shipped.items() if len(rs) >= min_cases})
    lines = [
        f"{len(shipped) - len(small)} rulers, {sum(len(rs) for rs in shipped.values() if len(rs) >= min_cases)} cases"
        + (f"; left out, under {min_cases} cases: {', '.join(small)}" if small else ""),
        "shipped constants, rulers equal: " + ", ".join(f"{c} {base[c]:.4f}" for c in COLUMNS if base[c] is not None),
        "",
        "| group (constants set to neutral) | n cases | NDCG@10 ungated | hit@1 gated | target delivered | answered | silence | tokens / answer"
        " | hook: target delivered | hook: target named | hook: silence | hook: tokens / case | moves |",
        "|" + " --- |" * (len(COLUMNS) + 3),
    ]
    for g in groups:
        res = compare(rows, g, resample, min_cases)
        knobs = f"`{g}`" if "=" in g else ", ".join(f"`{k}`={KNOBS[k].neutral}" for k in ALL_GROUPS.get(g, ()))
        lines.append(f"| {g}: {knobs} | {res['n']} | " + " | ".join(_cell(res[c], c.endswith("tokens")) for c in COLUMNS) + f" | {'yes' if res['moves'] else 'no'} |")
    lines.append("")
    lines.append(f"change = pooled figure with the group neutral minus shipped; [95 % paired bootstrap over cases, {resample} resamples]; "
                 "* = the interval excludes 0.")
    return "\n".join(lines)


def read_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Rows of several runs, the last of each (group, corpus, case) kept."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out[(r["group"], r["corpus"], r["id"])] = r
    return list(out.values())


def _by_ruler(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["ruler"]].append(r)
    return out


def count_constants() -> tuple[list[str], list[str]]:
    """Module-level UPPER_CASE names of ``paqad/search/*.py`` bound to a number (or an arithmetic
    of numbers: ``8 << 20``) and to a bool: the count issue 32 asks to bring down."""
    import ast

    numeric: list[str] = []
    switches: list[str] = []
    for path in sorted((HERE.parent / "paqad" / "search").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target, value = (node.targets[0], node.value) if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
                (node.target, node.value) if isinstance(node, ast.AnnAssign) else (None, None))
            if not isinstance(target, ast.Name) or not target.id.isupper() or value is None:
                continue
            name = f"{path.stem}.{target.id}"
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                switches.append(name)
            elif isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                numeric.append(name)
            elif isinstance(value, (ast.UnaryOp, ast.BinOp)) and all(
                    isinstance(n, ast.Constant) for n in ast.walk(value) if isinstance(n, ast.expr) and not isinstance(n, (ast.UnaryOp, ast.BinOp))):
                numeric.append(name)
    return numeric, switches


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", default=[], help="only this group (repeatable; default every group)")
    ap.add_argument("--model", action="store_true", help="default settings (hybrid, packaged model), and the vector side's groups")
    ap.add_argument("--try", dest="tries", action="append", default=[], metavar="MODULE.NAME=V1,V2",
                    help="other values of one constant instead of the groups (repeatable)")
    ap.add_argument("--ruler", action="append", default=[], metavar="NAME", help="only this ruler (repeatable; glob ok)")
    ap.add_argument("--half", choices=("tune", "report", "all"), default="tune")
    ap.add_argument("--limit-corpora", action="append", default=[], metavar="[RULER=]N")
    ap.add_argument("--sympy-git", default="/work/.mirror/sympy+sympy/repo")
    ap.add_argument("--resample", type=int, default=200)
    ap.add_argument("--rescore", metavar="ROWS", nargs="+", help="saved rows (several files: a case asked twice counts once)")
    ap.add_argument("--no-hook", action="store_true", help="leave out the hook door (what the prompt hook delivers: benchmarks/hook_door.py)")
    ap.add_argument("--min-cases", type=int, default=5, help="leave out rulers with fewer cases in the half (default 5)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--count", action="store_true", help="count the numeric constants and switches of paqad/search/")
    args = ap.parse_args(argv)
    if args.count:
        numeric, switches = count_constants()
        print(f"{len(numeric)} numeric constants, {len(switches)} switches in paqad/search/")
        print("\n".join(numeric + switches))
        return 0
    if args.list:
        from paqad.search.params import KNOBS

        for g, keys in ALL_GROUPS.items():
            print(f"{g:28s} " + "; ".join(f"{k}={KNOBS[k].neutral} ({KNOBS[k].means})" for k in keys))
        return 0
    if args.rescore:
        rows = read_rows([Path(p) for p in args.rescore])
        if args.half != "all":
            rows = [r for r in rows if r["half"] == args.half]
        print(render(rows, args.resample, args.min_cases))
        return 0
    groups = try_points(args.tries) if args.tries else args.group or list(ALL_GROUPS if args.model else GROUPS)
    unknown = [g for g in groups if g not in ALL_GROUPS and "=" not in g]
    if unknown:
        ap.error(f"unknown group: {', '.join(unknown)} (--list)")
    selected = cases_mod.load_all(args.ruler, cases_mod.parse_limits(args.limit_corpora), Path(args.sympy_git))
    if args.half != "all":
        selected.cases = [c for c in selected.cases if c.half == args.half]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + ".jsonl")
    print(f"{len(selected.cases)} cases x {len(groups) + 1} settings; rows: {out}; load {os.getloadavg()}", file=sys.stderr)
    started = time.perf_counter()
    rows = run(selected, groups, out, args.model, not args.no_hook)
    print(f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()}", file=sys.stderr)
    print(render(rows, args.resample, args.min_cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
