"""Pure scoring logic for benchmarks/score.py: the HIT RULE, per-question rows, metrics, tables.

Kept free of I/O and of any retriever so the arithmetic can be tested on known outcomes
(tests/bench_smoke_test.py) and so every retriever is judged by exactly the same code.
The HIT RULE is the one in benchmarks/rulers/FORMAT.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# One definition of the grep loop's words, the package's: `paqad rag eval` and the scorer agree.
from paqad.evaluation.questions import FUNCTION_WORDS, content_words  # noqa: F401

# --------------------------------------------------------------------------- data


class Passage(NamedTuple):
    """One result a retriever hands back: a span of a file and the characters it shows for it."""

    path: str
    start: int
    end: int
    chars: int = 0


@dataclass
class Answer:
    """What a retriever says to one question. ``payload_chars`` overrides the per-passage sum
    for retrievers that only report one budgeted block for the whole answer (the peer)."""

    results: list[Passage]
    silent: bool
    payload_chars: int | None = None

    @property
    def chars(self) -> int:
        return self.payload_chars if self.payload_chars is not None else sum(p.chars for p in self.results)


class Expected(NamedTuple):
    """One accepted answer from a ruler: path relative to the corpus root, 1-based inclusive span."""

    path: str
    start: int
    end: int


@dataclass
class Question:
    """A ruler question; ``refusal`` questions have no accepted answer and grade silence."""

    id: str
    q: str
    style: str
    answers: list[Expected] = field(default_factory=list)
    refusal: bool = False


def questions_from_ruler(ruler: dict[str, Any]) -> list[Question]:
    """Turn a parsed ruler (rulers/FORMAT.md) into Questions; ``corpus: refusal`` marks them all."""
    refusal = ruler.get("corpus") == "refusal"
    out = []
    for item in ruler.get("questions") or []:
        answers = [Expected(a["path"], int(a["lines"][0]), int(a["lines"][1])) for a in item.get("answers") or []]
        out.append(Question(str(item["id"]), str(item["q"]), str(item.get("style", "plain")), answers, refusal))
    return out


# --------------------------------------------------------------------------- the HIT RULE


def span_len(start: int, end: int) -> int:
    return max(0, end - start + 1)


def unit_hit(res: Passage | tuple, exp: Expected) -> bool:
    """FORMAT.md: same path, overlap >= half the shorter span, result <= 4 x answer + 20 lines.

    The length cap is what stops a whole-file result from counting as finding a 10-line function.
    """
    path, start, end = res[0], int(res[1]), int(res[2])
    if path != exp.path:
        return False
    overlap = span_len(max(start, exp.start), min(end, exp.end))
    shorter = min(span_len(start, end), span_len(exp.start, exp.end))
    if overlap == 0 or 2 * overlap < shorter:
        return False
    return span_len(start, end) <= 4 * span_len(exp.start, exp.end) + 20


def file_hit(res: Passage | tuple, exp: Expected) -> bool:
    """File level: the paths are equal, whatever the span."""
    return res[0] == exp.path


def first_rank(results: list, expected: list[Expected], k: int, unit: bool = True) -> int | None:
    """1-based rank of the first result in the top ``k`` that hits any accepted answer, else None."""
    rule = unit_hit if unit else file_hit
    for rank, res in enumerate(results[:k], 1):
        if any(rule(res, exp) for exp in expected):
            return rank
    return None


# --------------------------------------------------------------------------- rows


def question_row(q: Question, corpus: str, retriever: str, ans: Answer, k: int, elapsed_ms: float) -> dict[str, Any]:
    """The JSONL record of one (question, corpus, retriever): everything the metrics need, and
    enough of the answer (top 3) to see why it changed between two runs."""
    return {
        "id": q.id,
        "corpus": corpus,
        "style": q.style,
        "retriever": retriever,
        "refusal": q.refusal,
        "silent": ans.silent,
        "unit_rank": None if q.refusal else first_rank(ans.results, q.answers, k, unit=True),
        "file_rank": None if q.refusal else first_rank(ans.results, q.answers, k, unit=False),
        "top3": [[p[0], int(p[1]), int(p[2])] for p in ans.results[:3]],
        "n_results": len(ans.results),
        "chars": ans.chars,
        "ms": round(elapsed_ms, 2),
    }


# --------------------------------------------------------------------------- metrics


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _at(rank: int | None, n: int) -> float:
    return 1.0 if rank is not None and rank <= n else 0.0


def _rr(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate rows. Hit metrics over answerable rows, silence over refusal rows, chars and
    latency over all rows. A metric with no rows to average is None (printed as '-')."""
    ans = [r for r in rows if not r["refusal"]]
    ref = [r for r in rows if r["refusal"]]
    out: dict[str, Any] = {"n": len(ans), "n_refusal": len(ref)}
    for level in ("unit", "file"):
        ranks = [r[f"{level}_rank"] for r in ans]
        out[f"{level}_hit1"] = _mean([_at(x, 1) for x in ranks])
        out[f"{level}_hit3"] = _mean([_at(x, 3) for x in ranks])
        out[f"{level}_mrr"] = _mean([_rr(x) for x in ranks])
        out[f"{level}_wrong"] = _mean([float(not r["silent"] and r[f"{level}_rank"] is None) for r in ans])
    out["silent_answerable"] = _mean([float(r["silent"]) for r in ans])
    out["silence"] = _mean([float(r["silent"]) for r in ref])
    out["chars"] = _mean([float(r["chars"]) for r in rows])
    out["ms"] = _mean([float(r["ms"]) for r in rows])
    return out


def group(rows: Iterable[dict[str, Any]], keys: tuple[str, ...]) -> dict[tuple, list[dict[str, Any]]]:
    """Rows bucketed by the values of ``keys`` (e.g. ("retriever", "corpus")), in first-seen order."""
    out: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(r[key] for key in keys), []).append(r)
    return out


# --------------------------------------------------------------------------- tables

COLUMNS = (
    ("n", "n / refusal"),
    ("unit_hit1", "unit hit@1"),
    ("unit_hit3", "unit hit@3"),
    ("unit_mrr", "unit MRR"),
    ("file_hit1", "**file hit@1**"),
    ("file_hit3", "**file hit@3**"),
    ("file_mrr", "**file MRR**"),
    ("unit_wrong", "answered-wrong (unit)"),
    ("file_wrong", "answered-wrong (file)"),
    ("silent_answerable", "silent (answerable)"),
    ("silence", "silence (refusal)"),
    ("chars", "chars/q"),
    ("ms", "ms/q"),
)


def _cell(key: str, m: dict[str, Any]) -> str:
    if key == "n":
        return f"{m['n']} / {m['n_refusal']}"
    value = m[key]
    if value is None:
        return "-"
    if key == "chars":
        return f"{value:,.0f}"
    if key == "ms":
        return f"{value:,.1f}"
    return f"{value:.3f}"


def metrics_table(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> str:
    """A Markdown table with one line per distinct value of ``keys``, metric columns after them.
    File-level columns are bolded in the header so file-only retrievers compare at a glance."""
    head = [*keys, *(label for _, label in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for values, bucket in group(rows, keys).items():
        m = metrics(bucket)
        lines.append("| " + " | ".join([*map(str, values), *(_cell(key, m) for key, _ in COLUMNS)]) + " |")
    return "\n".join(lines)


def pivot_table(rows: list[dict[str, Any]], key: str, label: str) -> str:
    """One metric, retrievers down and corpora across (plus 'all'): the at-a-glance comparison."""
    corpora = list(group(rows, ("corpus",)))
    head = ["retriever", *(c[0] for c in corpora), "all"]
    lines = [f"**{label}**", "", "| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for (name,), bucket in group(rows, ("retriever",)).items():
        by_corpus = group(bucket, ("corpus",))
        cells = [_cell(key, metrics(by_corpus.get(c, []))) for c in corpora] + [_cell(key, metrics(bucket))]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- diff


def _key(r: dict[str, Any]) -> tuple[str, str]:
    return (r["corpus"], r["id"])


def _outcome(r: dict[str, Any]) -> str:
    if r["refusal"]:
        return "silent" if r["silent"] else "answered"
    if r["silent"]:
        return "silent"
    return f"unit@{r['unit_rank'] or '-'} file@{r['file_rank'] or '-'}"


def diff_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    """One line per (corpus, question) whose outcome differs between two runs (each file holds
    one retriever, so A and B may be two retrievers or two versions of one), including questions
    present in only one of them."""
    left, right = {_key(r): r for r in a}, {_key(r): r for r in b}
    lines = []
    for key in sorted(set(left) | set(right)):
        ra, rb = left.get(key), right.get(key)
        oa = _outcome(ra) if ra else "(absent)"
        ob = _outcome(rb) if rb else "(absent)"
        if oa != ob:
            lines.append(f"{key[0]:9s} {key[1]:14s} {oa:22s} -> {ob}")
    return lines
