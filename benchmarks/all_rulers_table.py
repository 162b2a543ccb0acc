"""The one table of ``all_rulers.py``: pure arithmetic over its rows (tested in tests/all_rulers_test.py).

Per group of rows: answerable / unanswerable counts; the share of answerable cases the gated search
answered (relief passages marked low_confidence count as an answer, as the hooks deliver them);
silence on the unanswerable; MRR@10 over the answered answerable cases (gated; a case's rank is
its unit rank under the HIT RULE when it gives lines, else its file rank); hit@1 gated (a silence
is a miss) and ungated over all answerable cases; NDCG@10 ungated (semble's definition); the
estimated tokens (characters / 4) delivered per answered case. Rows that carry an ``error`` are
counted apart and left out of every figure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = dict[str, Any]
COLUMNS = ("n", "answered", "silence", "mrr", "hit1_gated", "delivered", "hit1_ungated", "ndcg_ungated", "tokens")
HEAD = ("n answerable / unanswerable", "answered (answerable)", "silence (unanswerable)", "MRR over answered (gated)",
        "hit@1 gated", "target delivered (gated)", "hit@1 ungated", "NDCG@10 ungated", "tokens / answered")


def rank(row: Row, arm: str) -> int | None:
    """The case's rank in ``arm`` (gated/ungated) at its level: unit when it gives lines, else file."""
    got = row.get(arm) or {}
    return got.get("unit_rank") if row.get("level") == "unit" else got.get("file_rank")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def metrics(rows: list[Row]) -> dict[str, Any]:
    ok = [r for r in rows if not r.get("error")]
    ans = [r for r in ok if r["answerable"]]
    una = [r for r in ok if not r["answerable"]]
    answered = [r for r in ans if r["answered"]]

    def rr(r: Row) -> float:
        x = rank(r, "gated")
        return 1.0 / x if x else 0.0

    return {
        "n_answerable": len(ans), "n_unanswerable": len(una), "errors": len(rows) - len(ok),
        "answered": _mean([float(r["answered"]) for r in ans]),
        "silence": _mean([float(not r["answered"]) for r in una]),
        "mrr": _mean([rr(r) for r in answered]),
        "hit1_gated": _mean([float(r["answered"] and rank(r, "gated") == 1) for r in ans]),
        # the target among the passages delivered at all (confident and low-confidence: the tail and relief count)
        "delivered": _mean([float(bool(r["answered"] and rank(r, "gated"))) for r in ans]),
        "hit1_ungated": _mean([float(rank(r, "ungated") == 1) for r in ans]),
        "ndcg_ungated": _mean([float((r.get("ungated") or {}).get("ndcg10") or 0.0) for r in ans]),
        "tokens": _mean([float(r.get("tokens") or 0) for r in ok if r["answered"]]),
    }


def macro(per_ruler: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every ruler weighted equally: the mean of the rulers' figures (a ruler without a figure, e.g.
    silence where it has no unanswerable case, is left out of that column's mean)."""
    out: dict[str, Any] = {"n_rulers": len(per_ruler)}
    for key in COLUMNS[1:]:
        values = [m[key] for m in per_ruler.values() if m[key] is not None]
        out[key] = _mean(values)
    out["n_answerable"] = sum(m["n_answerable"] for m in per_ruler.values())
    out["n_unanswerable"] = sum(m["n_unanswerable"] for m in per_ruler.values())
    return out


def by(rows: list[Row], key: Callable[[Row], str]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return dict(sorted(out.items()))


def cell(key: str, m: dict[str, Any]) -> str:
    if key == "n":
        return f"{m['n_answerable']} / {m['n_unanswerable']}" + (f" ({m['n_rulers']} rulers)" if "n_rulers" in m else "")
    value = m.get(key)
    if value is None:
        return "-"
    return f"{value:,.0f}" if key == "tokens" else f"{value:.3f}"


def line(label: str, m: dict[str, Any]) -> str:
    return "| " + " | ".join([label, *(cell(k, m) for k in COLUMNS)]) + " |"


def half_rows(rows: list[Row], half: str) -> list[Row]:
    return rows if half == "all" else [r for r in rows if r.get("half") == half]


def figures(rows: list[Row], half: str) -> dict[str, Any]:
    """The table's figures: per ruler, per language, pooled (cases) and macro (rulers)."""
    rows = half_rows(rows, half)
    rulers = {name: metrics(rs) for name, rs in by(rows, lambda r: r["ruler"]).items()}
    return {"rulers": rulers, "languages": {lang: metrics(rs) for lang, rs in by(rows, lambda r: r["language"]).items()},
            "all": metrics(rows), "macro": macro(rulers)}


def table(rows: list[Row], half: str) -> str:
    """Per ruler, per language, then pooled: case-weighted and every ruler weighted equally."""
    f = figures(rows, half)
    out = ["| group | " + " | ".join(HEAD) + " |", "|" + " --- |" * (len(HEAD) + 1)]
    out += [line(f"ruler {name}", m) for name, m in f["rulers"].items()]
    out += [line(f"language {lang}", m) for lang, m in f["languages"].items()]
    out.append(line("**all, case-weighted**", f["all"]))
    out.append(line("**all, rulers weighted equally**", f["macro"]))
    return "\n".join(out)


def markdown(rows: list[Row], meta: dict[str, Any], half: str) -> str:
    """The whole page: provenance, the table, what was left out."""
    settings = meta.get("settings") or {}
    label = ", ".join(f"{k}={v}" for k, v in sorted(settings.items())) or "package defaults"
    load = meta.get("load_before")
    text = [f"# Every ruler, one command: {meta.get('date', meta.get('stamp', '?'))}, half **{half}**", "",
            f"`{meta.get('command', '?')}` · paqad {meta.get('paqad', '?')} at {meta.get('git', '?')} · settings: {label}"
            + (f" · load {load[0]:.2f} before, {meta['load_after'][0]:.2f} after ({meta.get('nproc')} cores)" if load and meta.get("load_after") else "")
            + (f" · wall {meta['wall_s']} s" if meta.get("wall_s") else ""), "",
            table(rows, half), ""]
    errors = [r for r in half_rows(rows, half) if r.get("error")]
    if errors:
        text += [f"{len(errors)} cases failed and are left out: " + ", ".join(f"{r['ruler']}:{r['id']}" for r in errors[:10]), ""]
    for skipped in meta.get("skipped") or []:
        text.append(f"- left out: {skipped}")
    text += ["", "MRR over answered: gated, over answerable cases the gate answered; a case's rank is its unit rank (HIT RULE) "
             "when its ruler gives lines, else its file rank. hit@1 and NDCG@10 over all answerable cases (a silence is a miss); "
             "NDCG@10 is semble's (every accepted answer a target, suffix paths for semble). tokens = delivered characters / 4, "
             f"per answered case. Rows: `.cache/results/all_rulers/{meta.get('stamp', '<stamp>')}.jsonl`."]
    return "\n".join(text) + "\n"
