"""Delivery: turn search results into the ``## Retrieved context`` section and hook stdout.

The section of ``session-context.md`` (in the work tree's per-developer folder) follows one table, where H = results scoring
at or above ``rag_similarity_threshold`` and L = results between ``rag_relief_floor`` and it:

    1 to 5 in H         those passages, each up to 1,200 characters, with path and line span
    more than 5 in H    the best 5 with their code, then up to 12 ``path:Lstart-end`` pointers with
                        the unit's name for the rest, checked against the live file
    none in H, some L   up to 2 passages from L, labelled low-confidence
    none in H or L      nothing, with the best score seen ("dark")

Everything read back from the index is untrusted: a path reaches the disk only through
``workspace.join_within``, a span is kept only if the live file still has those lines (a pointer
past the end of a shrunken file is clipped or dropped), and a path or name reaches a heading or a
pointer line only through :func:`paqad.textsafe.escape` (a newline in a committed file name must
not forge a line of its own). The score compared is the
result's ``score`` (documented in [0, 1]; the lexical relevance until the semantic work lands).

Under the query line, one line says how fresh the index is (:mod:`paqad.delivery.freshness`;
kept with the delivery, so a context handed over later still says which index answered it).

The file is rewritten atomically under a lock, replacing only our section, so other writers
(``## Base drift``) keep theirs. The last delivery is also kept as ``<per-developer folder>/state/context.json``
so a prompt hook that cannot answer in time can hand it over, marked with its age and the prompt
it answered.
"""

from __future__ import annotations

import enum
import json
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import filelock

from paqad import workspace
from paqad.textsafe import escape

if TYPE_CHECKING:
    from paqad.delivery.freshness import Stamped
    from paqad.jsontypes import JSONObject

SECTION = "## Retrieved context"
MAX_PASSAGES = 5
PASSAGE_CHARS = 1200
MAX_POINTERS = 12
MAX_LOW = 2
# With more confident passages than MAX_PASSAGES, the best ones still come with their code and the
# rest as pointers: on semble's half A, bare pointers delivered the code of 31 % of the labelled
# files within 1,000 tokens, the best five with code and pointers 82 %, three 79 %
# (benchmarks/delivery_budget.py; benchmarks/README.md "What reaches the agent").
BODIES_WITH_POINTERS = MAX_PASSAGES
CONTEXT_FILE = "session-context.md"
STATE_FILE = "context.json"
# Characters of the query kept in context.json: the recorded prompt's own cap
# (``paqad.delivery.refresh.PROMPT_MAX_CHARS``), so a handover compares like with like.
STATE_QUERY_MAX_CHARS = 4000
HINT = "These are hints from paqad's index, not the truth: verify each one in the live file before relying on it."
FILE_HEADER = "# Session context\n\nWritten by paqad (`paqad rag refresh-context`); regenerated on every refresh.\n"


class DeliveryCase(enum.StrEnum):
    """Which row of the delivery table a query landed in (``case`` in context.json and reports)."""

    PASSAGES = "passages"  # 1 to MAX_PASSAGES confident passages, with their text
    POINTERS = "pointers"  # more confident passages than that: path:Lstart-end pointers only
    LOW_CONFIDENCE = "low-confidence"  # none confident; a few above the relief floor, marked so
    DARK = "dark"  # nothing above the relief floor: nothing is said
    SKIPPED = "skipped"  # nothing to look up (a trivial prompt, no query)


CASES = tuple(DeliveryCase)


class Hit(Protocol):
    """A search result as delivery reads it (:class:`paqad.search.pipeline.Result` has these)."""

    @property
    def path(self) -> str: ...

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...

    @property
    def score(self) -> float: ...


@dataclass
class Passage:
    """One delivered span; ``text`` is None for a pointer."""

    path: str
    start_line: int
    end_line: int
    score: float
    text: str | None = None
    truncated: bool = False
    name: str = ""  # the unit's qualified name: what a pointer says is there
    last_changed: str = ""  # "last changed in 3f2a1c9 (date): subject" (rag_last_changed; paqad.history.lastchanged)

    @property
    def span(self) -> str:
        """``path:Lstart-end`` for a heading or a pointer line: the path escaped (a newline in a
        committed file name must not start a line of its own in what the agent reads)."""
        return f"{escape(self.path)}:L{self.start_line}-{self.end_line}"


@dataclass
class Delivery:
    """What was delivered for one query, and why."""

    case: str  # a DeliveryCase
    query: str
    passages: list[Passage] = field(default_factory=list)
    best_score: float | None = None
    threshold: float = 0.0
    floor: float = 0.0
    reason: str | None = None  # why dark or skipped, when known
    generated_at: float = field(default_factory=time.time)
    freshness: Stamped | None = None  # the index against the work tree (paqad.delivery.freshness)

    def to_dict(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Delivery:
        passages = [Passage(**p) for p in data.get("passages", [])]
        return cls(**{**data, "passages": passages})


# ---- selection ----------------------------------------------------------------------------


def select(root: Path, query: str, results: Iterable[Hit], threshold: float, floor: float, reason: str | None = None) -> Delivery:
    """Apply the delivery table to search results (anything with path/start_line/end_line/score/source)."""
    ranked = list(results)
    best = max((float(r.score) for r in ranked), default=None)
    high = [r for r in ranked if float(r.score) >= threshold]
    low = [r for r in ranked if floor <= float(r.score) < threshold]
    out = Delivery(DeliveryCase.DARK, query, best_score=best, threshold=threshold, floor=floor, reason=reason)
    if 1 <= len(high) <= MAX_PASSAGES:
        out.case, out.passages = DeliveryCase.PASSAGES, _live(root, high, MAX_PASSAGES, bodies=True)
    elif len(high) > MAX_PASSAGES:
        bodies = _live(root, high, BODIES_WITH_POINTERS, bodies=True) if BODIES_WITH_POINTERS else []
        shown = {(p.path, p.start_line) for p in bodies}
        rest = [r for r in high if (str(r.path), int(r.start_line)) not in shown]
        out.case, out.passages = DeliveryCase.POINTERS, bodies + _live(root, rest, MAX_POINTERS, bodies=False)
    elif low:
        out.case, out.passages = DeliveryCase.LOW_CONFIDENCE, _live(root, low, MAX_LOW, bodies=True)
    if not out.passages:
        out.case = DeliveryCase.DARK
    return out


def add_last_changed(root: Path, delivery: Delivery) -> None:
    """Give each passage with code the last commit that touched its lines (``rag_last_changed``)."""
    from paqad.history import lastchanged  # lazy: only when the setting is on

    shown = [p for p in delivery.passages if p.text is not None]
    for passage, line in zip(shown, lastchanged.for_spans(root, [(p.path, p.start_line, p.end_line) for p in shown]), strict=True):
        passage.last_changed = line


def _live(root: Path, results: list[Hit], limit: int, bodies: bool) -> list[Passage]:
    out: list[Passage] = []
    for res in results:
        if len(out) >= limit:
            break
        passage = live_passage(root, res, bodies)
        if passage is not None:
            out.append(passage)
    return out


def live_passage(root: Path, res: Hit, body: bool) -> Passage | None:
    """The result's span checked against the live file (confined to the repo); None when gone."""
    lines = _live_lines(root, str(res.path))
    start = int(res.start_line)
    if lines is None or start < 1 or start > len(lines):
        return None
    end = min(max(int(res.end_line), start), len(lines))
    passage = Passage(str(res.path), start, end, round(float(res.score), 4), name=str(getattr(res, "qualified_name", "") or ""))
    if body:
        text = "".join(lines[start - 1 : end])
        passage.text, passage.truncated = text[:PASSAGE_CHARS], len(text) > PASSAGE_CHARS
    return passage


def _live_lines(root: Path, rel: str) -> list[str] | None:
    """The live file's lines with secret shapes masked (``paqad.redaction``, as the index has them),
    or None: gone, unreadable, or a path ``open`` would refuse (the index is untrusted: a crafted
    row naming ``.env`` or ``.git/config`` must not reach the agent). A warm process reuses them
    while the path reaches the same unchanged file (``paqad.search.live.kept_view``): redacting
    whole files was a quarter of a warm prompt's CPU (benchmarks/README.md, "Query cost")."""
    from paqad import confinement, redaction  # with the eligibility rules: only when delivering, not on every hook start
    from paqad.search import live  # as above: a hook event that delivers nothing never loads it

    def read() -> list[str] | None:
        try:
            path, _ = confinement.readable(root, rel)
            return redaction.redact(path.read_text(encoding="utf-8", errors="replace"), rel).splitlines(keepends=True)
        except (OSError, confinement.ConfinementError):
            return None

    return live.kept_view(root, rel, "delivery", read)


# ---- rendering ----------------------------------------------------------------------------


def render_body(delivery: Delivery, max_passages: int | None = None) -> str:
    """The section body (no heading): what the agent reads, in the file and on hook stdout."""
    shown = delivery.passages if max_passages is None else delivery.passages[:max_passages]
    head = f"For: {_quote(delivery.query)}"
    if delivery.case == DeliveryCase.SKIPPED:
        return f"{head}\nNo retrieval for this prompt ({delivery.reason or 'nothing to look up'}).\n"
    head += _freshness_line(delivery.freshness)
    if delivery.case == DeliveryCase.DARK:
        best = "none" if delivery.best_score is None else f"{delivery.best_score:.2f}"
        why = f" ({delivery.reason})" if delivery.reason else ""
        return (
            f"{head}\nNothing in the index answers this well enough: best score {best}, below the relief floor "
            f"{delivery.floor:.2f}{why}. Search the code directly.\n"
        )
    parts = [head, HINT]
    label = "LOW CONFIDENCE, " if delivery.case == DeliveryCase.LOW_CONFIDENCE else ""
    for p in (q for q in shown if q.text is not None):
        cut = " (truncated)" if p.truncated else ""
        body, fence = (p.text or "").rstrip(), _fence(p.text or "")
        note = f"{p.last_changed}\n" if p.last_changed else ""
        parts.append(f"### {p.span} ({label}score {p.score:.2f}){cut}\n{note}{fence}\n{body}\n{fence}")
    pointers = [p for p in shown if p.text is None]
    if pointers:
        parts.append(f"{len(pointers)} {'more ' if len(pointers) < len(shown) else ''}places match strongly; open the ones that fit:")
        parts.extend(f"- {p.span}{f' `{escape(p.name)}`' if p.name else ''} (score {p.score:.2f})" for p in pointers)
    if len(shown) < len(delivery.passages):
        parts.append(f"({len(delivery.passages) - len(shown)} more: `paqad rag search` with the same words lists them)")
    return "\n\n".join(parts) + "\n"


def render_for_hook(delivery: Delivery, limit: int, stale_note: str | None = None) -> str:
    """The same text for a host's stdout, within ``limit`` characters: drop whole passages first."""
    prefix = f"{SECTION} (paqad)\n\n" + (f"{stale_note}\n\n" if stale_note else "")
    for keep in range(len(delivery.passages), -1, -1):
        text = prefix + render_body(delivery, keep)
        if len(text) <= limit:
            return text
    return text[: max(0, limit - 1)] + "…"


def _freshness_line(fresh: Stamped | None) -> str:
    """The index's freshness as one line under the query (none under ``rag_stale_policy: silent``)."""
    from paqad.delivery import freshness  # lazy: it loads the index writer, which a hook event that delivers nothing never needs

    return "\n" + freshness.line(fresh) if fresh and freshness.shown(fresh) else ""


def _quote(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return '"' + (flat if len(flat) <= limit else flat[: limit - 1] + "…") + '"'


def stale_note(delivery: Delivery, now: float | None = None) -> str:
    """How old a delivery is and which prompt it answered (for the stale path)."""
    from paqad.delivery.freshness import age_text  # as _freshness_line: only when there is something to say

    age = max(0.0, (now or time.time()) - delivery.generated_at)
    return f"STALE: paqad could not answer this prompt in time; this is the context from {age_text(age)} ago, for {_quote(delivery.query)}. A refresh is running."


# ---- the files ------------------------------------------------------------------------------


def context_path(root: Path) -> Path:
    return workspace.context_dir(root) / CONTEXT_FILE


def state_path(root: Path) -> Path:
    return workspace.state_dir(root) / STATE_FILE


def replace_section(text: str, heading: str, body: str) -> str:
    """``text`` with the ``heading`` section (up to the next ``## ``) replaced by ``body``, or appended."""
    lines = text.splitlines(keepends=True)
    heads = _headings(lines)
    start = next((i for i in heads if lines[i].rstrip("\n") == heading), None)
    block = f"{heading}\n\n{body.rstrip()}\n\n"
    if start is None:
        return (text.rstrip("\n") + "\n\n" + block) if text.strip() else FILE_HEADER + "\n" + block
    end = next((i for i in heads if i > start), len(lines))
    return "".join(lines[:start]) + block + "".join(lines[end:])


def _headings(lines: list[str]) -> list[int]:
    """Indexes of ``## `` lines outside fenced code (a passage may itself contain Markdown headings)."""
    out, fence = [], ""
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
            if not fence:
                fence = mark
            elif mark.startswith(fence) and not stripped[len(mark):].strip():
                fence = ""
        elif not fence and line.startswith("## "):
            out.append(i)
    return out


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text``."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    return "`" * max(3, max(runs, default=0) + 1)


def write_section(root: Path, heading: str, body: str) -> Path:
    """Replace one section of session-context.md atomically, under a lock shared by all writers."""
    path = context_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(workspace.state_dir(root) / "context.lock"), timeout=10):
        try:
            old = path.read_text(encoding="utf-8")
        except OSError:
            old = ""
        workspace.atomic_write_text(path, replace_section(old, heading, body), durable=False)  # regenerated by the next prompt
    return path


def deliver(root: Path, delivery: Delivery) -> Path:
    """Write the section and remember the delivery for the stale path."""
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    path = write_section(root, SECTION, render_body(delivery))
    state = delivery.to_dict()
    state["query"] = delivery.query[:STATE_QUERY_MAX_CHARS]  # a 1 MB prompt is not kept whole
    workspace.atomic_write_text(state_path(root), json.dumps(state, ensure_ascii=False), durable=False)
    return path


def last_delivery(root: Path) -> Delivery | None:
    """The last delivery written, or None when there is none or it is unreadable."""
    try:
        return Delivery.from_dict(json.loads(state_path(root).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return None
