"""Scoring both arms and the verdict that sets the exit code.

Per arm, over the answerable questions: **hit@1** and **hit@5** (the share whose accepted file is
the first, or among the first five, distinct files the arm hands over) and **silent (answerable)**;
over the unanswerable ones: **silence** (the share it stayed silent on); over all: **chars/q**.

The verdict compares counts (both arms answer the same questions):

- *lowers quality*: on has fewer hits@5 than off, or (when there are unanswerable questions)
  fewer silences;
- *adds characters without raising hits*: on's total characters exceed off's while neither its
  hits@1 nor its hits@5 exceed off's.

Retrieval **pays** (exit 0) when neither holds; otherwise it **does not pay** (exit 1), with the
reasons.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol, TypedDict

from paqad.evaluation import EXIT_DOES_NOT_PAY, EXIT_PAYS

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

ARMS = {"off": "grep loop (retrieval off)", "on": "paqad (retrieval on)"}


@dataclass
class ArmMetrics:
    answerable: int = 0
    unanswerable: int = 0
    hits1: int = 0
    hits5: int = 0
    silent_answerable: int = 0
    silences: int = 0
    chars: int = 0
    questions: int = 0

    @property
    def hit1(self) -> float | None:
        return self.hits1 / self.answerable if self.answerable else None

    @property
    def hit5(self) -> float | None:
        return self.hits5 / self.answerable if self.answerable else None

    @property
    def silence(self) -> float | None:
        return self.silences / self.unanswerable if self.unanswerable else None

    @property
    def chars_per_question(self) -> float | None:
        return self.chars / self.questions if self.questions else None

    def to_dict(self) -> JSONObject:
        rates = {"hit@1": self.hit1, "hit@5": self.hit5, "silence": self.silence,
                 "silent_answerable": self.silent_answerable / self.answerable if self.answerable else None,
                 "chars_per_question": self.chars_per_question}
        return {**{k: (round(v, 4) if v is not None else None) for k, v in rates.items()}, "counts": asdict(self)}


@dataclass
class ArmRow:
    """One arm's answer to one question, scored (its ``detail`` is merged into the JSON row)."""

    rank: int | None
    silent: bool
    chars: int
    files: list[str]
    detail: JSONObject = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        return {"rank": self.rank, "silent": self.silent, "chars": self.chars, "files": self.files, **self.detail}


@dataclass
class Row:
    """One question and both arms' answers (a row of ``questions`` in ``rag eval --json``)."""

    id: str
    source: str
    question: str
    answers: list[str]
    unit: str | None
    accepted: list[str]
    off: ArmRow
    on: ArmRow

    def arm(self, name: str) -> ArmRow:
        return self.off if name == "off" else self.on

    def to_dict(self) -> JSONObject:
        return {"id": self.id, "source": self.source, "question": self.question, "answers": self.answers, "unit": self.unit,
                "accepted": self.accepted, "off": self.off.to_dict(), "on": self.on.to_dict()}


def metrics(rows: list[Row], arm: str) -> ArmMetrics:
    """Aggregate one arm over the per-question rows (see ``compare._ask_all``)."""
    m = ArmMetrics()
    for row in rows:
        ans = row.arm(arm)
        m.questions += 1
        m.chars += ans.chars
        if row.answers:
            rank = ans.rank
            m.answerable += 1
            m.hits1 += int(rank == 1)
            m.hits5 += int(rank is not None and rank <= 5)
            m.silent_answerable += int(ans.silent)
        else:
            m.unanswerable += 1
            m.silences += int(ans.silent)
    return m


@dataclass
class Verdict:
    pays: bool
    exit_code: int
    reasons: list[str] = field(default_factory=list)


def verdict(off: ArmMetrics, on: ArmMetrics) -> Verdict:
    """Does retrieval pay? (the rule in the module docstring)."""
    reasons = []
    if on.hits5 < off.hits5:
        reasons.append(f"retrieval lowers hit@5 ({_rate(off.hit5)} off, {_rate(on.hit5)} on)")
    if on.unanswerable and on.silences < off.silences:
        reasons.append(f"retrieval lowers silence on unanswerable questions ({_rate(off.silence)} off, {_rate(on.silence)} on)")
    if on.chars > off.chars and on.hits1 <= off.hits1 and on.hits5 <= off.hits5:
        reasons.append(
            f"retrieval adds characters ({_chars(off.chars_per_question)} → {_chars(on.chars_per_question)} per question) "
            "without raising hit@1 or hit@5"
        )
    if reasons:
        return Verdict(False, EXIT_DOES_NOT_PAY, reasons)
    gains = [f"hit@1 {_rate(off.hit1)} → {_rate(on.hit1)}", f"hit@5 {_rate(off.hit5)} → {_rate(on.hit5)}"]
    if on.unanswerable:
        gains.append(f"silence {_rate(off.silence)} → {_rate(on.silence)}")
    gains.append(f"chars/q {_chars(off.chars_per_question)} → {_chars(on.chars_per_question)}")
    return Verdict(True, EXIT_PAYS, ["retrieval pays: " + ", ".join(gains)])


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _chars(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(off: ArmMetrics, on: ArmMetrics) -> str:
    """The two arms side by side, as text."""
    head = f"{'arm':31s} {'hit@1':>6s} {'hit@5':>6s} {'silence':>8s} {'silent(ans)':>11s} {'chars/q':>9s}"
    lines = [head]
    for key, m in (("off", off), ("on", on)):
        silent_ans = m.silent_answerable / m.answerable if m.answerable else None
        lines.append(
            f"{key + ': ' + ARMS[key]:31s} {_rate(m.hit1):>6s} {_rate(m.hit5):>6s} {_rate(m.silence):>8s} "
            f"{_rate(silent_ans):>11s} {_chars(m.chars_per_question):>9s}"
        )
    return "\n".join(lines)


class IndexFacts(TypedDict):
    """The index a run asked (``index`` in ``rag eval --json``)."""

    file: str
    generation: int
    units: int
    embedding_provider: str
    masked_units_without_vectors: int | None


class Report(Protocol):
    """What :func:`render_text` reads of a ``compare.EvalReport``."""

    mode: str
    root: str
    seconds: float
    index: IndexFacts
    sources: dict[str, int]
    metrics: dict[str, ArmMetrics]
    verdict: Verdict
    not_masked: list[str]
    unanswerable_dropped: list[str]


def render_text(rep: Report) -> str:
    """The human report of a ``compare.EvalReport``: the test set, the two arms, the verdict."""
    src, idx = rep.sources, rep.index
    n_dropped = len(rep.unanswerable_dropped)
    dropped = f" ({n_dropped} built-in subject{'s' if n_dropped != 1 else ''} dropped: {'they occur' if n_dropped != 1 else 'it occurs'} here)" if n_dropped else ""
    unmasked = f"; {len(rep.not_masked)} sampled units skipped (docstring could not be masked)" if rep.not_masked else ""
    off, on = rep.metrics["off"], rep.metrics["on"]
    lines = [
        f"paqad rag eval --mode {rep.mode}: {rep.root} (index generation {idx['generation']}, {idx['units']} units, "
        f"embeddings: {idx['embedding_provider']}; {rep.seconds:.1f}s)",
        f"test set: {src['docstring']} docstring questions (their docstrings masked){unmasked}, "
        f"{src['unanswerable']} unanswerable{dropped}, {src['team']} from .paqad/eval.yaml",
        "",
        table(off, on),
        "",
    ]
    lines.extend(rep.verdict.reasons)
    code = rep.verdict.exit_code
    lines.append(f"exit {code}: " + ("retrieval pays" if code == EXIT_PAYS else "retrieval does not pay"))
    return "\n".join(lines)
