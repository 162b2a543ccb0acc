"""``feature-off-vs-on``, in numbered steps: copy the index, pick and mask the docstring questions,
add the unanswerable and team questions, ask both arms, score, decide (see the package docstring)."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.config import Config
from paqad.eligibility import collect
from paqad.errors import ConfigError, IndexCorruptError, PaqadError, UsageError
from paqad.evaluation import MODES, EvalCannotRun, arms, masked, report, teamfile
from paqad.evaluation import questions as qmod
from paqad.evaluation.questions import Question
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

DEFAULT_LIMIT = 40
DEFAULT_SEED = 0
MIN_ANSWERABLE = 5
TOP_FILES_SHOWN = 5


@dataclass
class EvalReport:
    """Everything ``paqad rag eval --json`` prints."""

    mode: str
    root: str
    seed: int
    limit: int
    index: report.IndexFacts
    sources: dict[str, int]
    metrics: dict[str, report.ArmMetrics]
    verdict: report.Verdict
    masked_units: int = 0
    not_masked: list[str] = field(default_factory=list)
    unanswerable_dropped: list[str] = field(default_factory=list)
    questions: list[report.Row] = field(default_factory=list)
    seconds: float = 0.0
    schema_version: int = 1

    @property
    def exit_code(self) -> int:
        return int(self.verdict.exit_code)

    def to_dict(self) -> JSONObject:
        """The JSON ``rag eval --json`` prints (each arm's metrics and each row in its own words)."""
        metrics: JSONObject = {key: m.to_dict() for key, m in self.metrics.items()}
        return {**asdict(self), "metrics": metrics, "questions": [q.to_dict() for q in self.questions]}


def run(root: Path, cfg: Config, mode: str = MODES[0], limit: int = DEFAULT_LIMIT, seed: int = DEFAULT_SEED) -> EvalReport:
    """Run the evaluation; raises UsageError/ConfigError (exit 2) or EvalCannotRun (exit 3)."""
    if mode not in MODES:
        raise UsageError(f"unknown --mode {mode!r}; choose from {', '.join(MODES)}")
    started = time.perf_counter()
    try:
        live = _live_index(root)
        with masked.scratch_root(root) as scratch:
            out = _run_in(root, cfg, live, scratch, limit, seed)
    except (UsageError, ConfigError, EvalCannotRun):
        raise
    except (PaqadError, sqlite3.DatabaseError, OSError) as exc:
        raise EvalCannotRun(f"the evaluation could not run: {exc}") from exc
    out.mode, out.seconds = mode, round(time.perf_counter() - started, 2)
    return out


def _live_index(root: Path) -> Path:
    path = store.current_path(root)
    if path is None:
        raise EvalCannotRun(f"no index in {root}: run `paqad rag init` first (the evaluation asks a copy of it)")
    return path


def _run_in(root: Path, cfg: Config, live: Path, scratch: Path, limit: int, seed: int) -> EvalReport:
    # Step 1: a snapshot of the live index, and the documented units in it.
    copy = masked.copy_index(live, scratch)
    try:
        units, meta, unit_ids = _read_units(scratch)
    except IndexCorruptError as exc:  # name the live index, not the copy, in the fix
        raise EvalCannotRun(str(exc).replace(str(copy), str(live))) from exc
    # Step 2: the team's questions first, so a malformed file stops the run before any work.
    team = teamfile.load(root, unit_ids.__contains__)
    # Step 3: sample docstring questions and mask their docstrings in the copy (and the grep view).
    picked = qmod.sample(qmod.docstring_candidates(units), seed)[:limit]
    by_file: dict[str, list[StoredUnit]] = {}
    for unit, _para, _q in picked:
        by_file.setdefault(unit.path, []).append(unit)
    elig = collect.Eligibility(root, cfg.rag_max_file_size)
    masked_texts, failed = masked.apply_masks(root, cfg, copy, by_file, elig)
    docs = [qmod.docstring_question(i, u, q) for i, (u, _p, q) in enumerate((p for p in picked if p[0].id not in failed), 1)]
    # Step 4: the files the grep loop reads (masked the same way) and the unanswerable subjects.
    files = _grep_view(elig, masked_texts)
    nones, dropped = qmod.unanswerable(files.values())
    test_set = docs + nones + team
    answerable = sum(1 for q in test_set if q.answerable)
    if answerable < MIN_ANSWERABLE:
        raise EvalCannotRun(
            f"only {answerable} answerable question(s) (need {MIN_ANSWERABLE}): too few documented functions or classes "
            f"whose docstring survives removing identifiers; add questions in {teamfile.path_of(root).relative_to(root)}"
        )
    filled = masked.fill_vectors(scratch, cfg)
    # Step 5: ask both arms, score, decide.
    rows = _ask_all(test_set, arms.GrepLoop(files), arms.PaqadArm(root, scratch, cfg))
    off, on = report.metrics(rows, "off"), report.metrics(rows, "on")
    decided = report.verdict(off, on)
    return EvalReport(
        mode=MODES[0], root=str(root), seed=seed, limit=limit,
        index={"file": str(live), "generation": store.generation_of(live), "units": int(meta.get("n_units", "0")),
               "embedding_provider": meta.get("embedding_provider") or "none",
               "masked_units_without_vectors": filled.pending if filled is not None else None},
        sources={src: sum(1 for q in test_set if q.source == src) for src in ("docstring", "unanswerable", "team")},
        metrics={"off": off, "on": on},
        verdict=decided,
        masked_units=len(picked) - len(failed), not_masked=sorted(failed), unanswerable_dropped=dropped, questions=rows,
    )


#: What a docstring question needs of a unit.
_DOC_FIELDS = ("id", "path", "name", "language", "kind", "start_line", "end_line", "docstring", "part", "is_test")


def _read_units(scratch: Path) -> tuple[list[StoredUnit], dict[str, str], set[str]]:
    """The copy's documented code units (first parts, not tests), its meta and every unit id."""
    index = Index.open(scratch)
    try:
        units = index.all_units(_DOC_FIELDS)
        meta = index.meta().values
    finally:
        index.close()
    docs = [u for u in units if u.docstring != "" and u.part == 1 and not u.is_test and u.kind in qmod.CODE_KINDS]
    return docs, meta, {u.id for u in units}


def _grep_view(elig: collect.Eligibility, masked_texts: dict[str, str]) -> dict[str, str]:
    """Path → text of every file paqad indexes, with the masked texts in place of the originals."""
    out: dict[str, str] = {}
    for rel in elig.listed:
        decision, text = elig.decide(rel)
        if decision.kept and text is not None:
            out[rel] = masked_texts.get(rel, text)
    return out


def _ask_all(test_set: list[Question], off: arms.GrepLoop, on: arms.PaqadArm) -> list[report.Row]:
    def scored(q: Question, ans: arms.ArmAnswer) -> report.ArmRow:
        return report.ArmRow(ans.rank_of(q.answers) if q.answers else None, ans.silent, ans.chars, ans.files[:TOP_FILES_SHOWN], ans.detail)

    return [
        report.Row(q.id, q.source, q.text, q.answers, q.unit, q.accepted, scored(q, off.ask(q.text)), scored(q, on.ask(q.text)))
        for q in test_set
    ]
