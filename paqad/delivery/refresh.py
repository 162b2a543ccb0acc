"""refresh-context, the worker: sync the index, build the query, choose the depth, search, deliver.

The query is the recorded prompt when there is one (``<per-developer folder>/state/prompt.json``, written by the
prompt hook before anything else), otherwise the working set: the subjects of the commits since
the merge-base with the base branch and the names of the files being changed.

The prompt hook's body, which runs this worker against the prompt's budget, is
:mod:`paqad.delivery.prompt`.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import config, git, workspace
from paqad.delivery import context, freshness
from paqad.delivery import depth as depth_mod
from paqad.errors import IndexMissingError, PaqadError
from paqad.index import store  # noqa: F401 - imported before a prompt's budget clock starts,
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline  # noqa: F401 - so the budget is spent searching, not importing
from paqad.search.request import SearchRequest

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.jsontypes import JSONObject

PROMPT_FILE = "prompt.json"
PROMPT_MAX_CHARS = context.STATE_QUERY_MAX_CHARS  # one cap for the recorded prompt and the kept query
QUERY_MAX_WORDS = 60
RANKED_KEPT = 10  # results kept in Report.ranked: what ``paqad report`` counts candidate misses against
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]+")
BELOW_FLOOR = "below_relief_floor"  # pipeline._diagnosis's reason for an answer whose passages all scored under the relief floor


@dataclass
class Report:
    """What one refresh did; ``paqad rag refresh-context --json`` prints it."""

    query: str = ""
    query_source: str = "none"  # prompt | working-set | none
    depth: dict = field(default_factory=dict)
    depth_steps: list[dict] = field(default_factory=list)
    synced: str | None = None  # what the index sync did, or why it was skipped
    results: int = 0
    usable: int = 0
    case: str = "skipped"
    delivery: dict | None = None
    context_file: str | None = None
    working_set: dict | None = None
    seconds: float = 0.0
    search_mode: str = ""  # hybrid | lexical (the search's own word for what answered)
    vector_note: str | None = None  # why a hybrid index answered lexically (the prompt's deadline)
    freshness: freshness.Stamped | None = None  # the index against the work tree when it answered
    ranked: list[dict] = field(default_factory=list)  # the top RANKED_KEPT results (path, lines, unit): the uptake record's candidates

    def to_dict(self) -> JSONObject:
        return asdict(self)


# ---- the recorded prompt ------------------------------------------------------------------


def prompt_path(root: Path) -> Path:
    return workspace.state_dir(root) / PROMPT_FILE


def record_prompt(root: Path, prompt: str, host: str = "", session_id: str = "") -> None:
    data = {"prompt": prompt[:PROMPT_MAX_CHARS], "host": host, "session_id": session_id, "recorded_at": time.time()}
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(prompt_path(root), json.dumps(data, ensure_ascii=False), durable=False)


def recorded_prompt(root: Path) -> str | None:
    try:
        text = json.loads(prompt_path(root).read_text(encoding="utf-8"))["prompt"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) and text.strip() else None


# ---- the query ---------------------------------------------------------------------------


def working_set_query(ws: git.WorkingSet) -> str:
    """Commit subjects and the words of the changed files' names, deduplicated, bounded."""
    words: list[str] = []
    for text in [*ws.subjects, *(Path(f).stem.replace("_", " ") for f in ws.files)]:
        words.extend(_WORDS.findall(text))
    seen: dict[str, None] = {}
    for word in words:
        seen.setdefault(word.lower(), None)
    return " ".join(list(seen)[:QUERY_MAX_WORDS])


def working_set(root: Path, base: str) -> git.WorkingSet:
    """The git working set minus paqad's own folder."""
    ws = git.working_set(root, base)
    for name in ("staged", "unstaged", "untracked", "committed"):
        setattr(ws, name, [f for f in getattr(ws, name) if not f.startswith(workspace.DIRNAME + "/")])
    return ws


# ---- the worker --------------------------------------------------------------------------


def _status(ws: git.WorkingSet) -> git.Status:
    """The ``git status`` the working set came from: the sync stamp and the freshness reuse it, so
    the prompt's warm path starts no git process for them."""
    return git.Status(ws.head, ws.staged, ws.unstaged, ws.untracked)


def _sync(root: Path, cfg: Config, lock_wait: float | None, status: git.Status | None = None) -> str:
    """Incremental index update. In the hot path (``lock_wait`` seconds) a writer that is still busy
    after the wait (a post-commit update, a rebuild) is not waited for: the index is searched as it is."""

    if lock_wait is not None and store.current_pointer(root).exists() is False:
        # No index yet: a first build takes far longer than a prompt's budget. The prompt is
        # answered at once (nothing, or the last context) and the background refresh builds.
        raise IndexMissingError("no index yet; the background refresh builds it")
    if lock_wait is not None and not _writer_free(root, lock_wait):
        return "skipped: another paqad process is writing the index"
    # The hot path never rebuilds a damaged index inside a prompt's budget: it stays silent and
    # the background refresh it starts does the repair (and logs it).
    # Nor does it embed: changed units' vectors are filled behind the prompt (see _live_answer),
    # and until then the search answers them lexically and counts them as pending.
    hot = lock_wait is not None
    report = build.update(root, cfg, repair=not hot, embed=not hot, status=status)
    pending = " (vectors pending)" if hot and cfg.rag_embedding_provider != "none" and (report.files_changed or report.files_removed) else ""
    return f"{report.mode}: {report.files_changed} changed, {report.files_removed} removed{pending}"


def _writer_free(root: Path, wait: float) -> bool:
    """True once no writer holds the index lock (waiting up to ``wait`` seconds)."""

    try:
        lock = build.writer_lock(root, timeout=max(0.0, wait))
        lock.acquire()
    except Exception:  # noqa: BLE001 - filelock.Timeout, or a lock API that moved: treat as busy
        return False
    lock.release()
    return True


def _search(root: Path, query: str, top_n: int, cfg: Config | None = None, deadline: float | None = None) -> pipeline.SearchResponse:
    """The search with the repository's settings (floor, relief, reranking). ``deadline`` (monotonic)
    is the prompt hook's: reranking and the query embedding stop before it, so neither blocks the hook."""
    settings = config.load(root) if cfg is None else cfg
    return pipeline.run(Index.shared(root), SearchRequest.from_settings(settings, root, query, top_n=top_n, deadline=deadline))


def search_at_depth(
    search: Callable[[str, int], pipeline.SearchResponse], query: str, chosen: depth_mod.Depth, top_n: int,
) -> tuple[pipeline.SearchResponse, list[depth_mod.Depth]]:
    """Search at ``chosen`` depth, and once more a step deeper when too few passages are confident.

    The low-confidence tail after a confident answer (``fusion.TAIL_MIN``) does not count: it filled
    the list, so the deeper search only ever followed a silent gate (benchmarks/README.md, "The
    calibration at the hook door"). Nor is an answer a deeper search cannot change asked again
    (:func:`settled`). Returns the answer and the depths tried (the last one answered). The prompt
    hook's refresh and ``rag eval``'s paqad arm both deliver through this, so they widen the same way.
    """
    resp = search(query, chosen.top_n)
    steps = [chosen]
    if settled(resp):
        return resp, steps
    deeper = depth_mod.step_up(chosen, confident(resp), top_n)
    if deeper is not None:
        resp = search(query, deeper.top_n)
        steps.append(deeper)
    return resp, steps


def refresh(
    root: Path,
    cfg: Config,
    prompt: str | None = None,
    sync: bool = True,
    lock_wait: float | None = None,
    search: Callable[[Path, str, int], pipeline.SearchResponse] = _search,
    deadline: float | None = None,
) -> Report:
    """Sync, query, search (stepping up once if too little comes back) and deliver. Raises PaqadError subclasses."""
    started = time.perf_counter()
    if not cfg.rag_enabled:
        raise PaqadError("retrieval is off in this repository; run `paqad rag init` first")
    report = Report()
    prompt = prompt if prompt is not None else recorded_prompt(root)
    ws = working_set(root, cfg.rag_base_branch)
    report.working_set = ws.to_dict()
    top_n = cfg.rag_top_n
    chosen = depth_mod.choose(prompt, ws.files, top_n)
    report.query, report.query_source = (prompt, "prompt") if prompt is not None else (working_set_query(ws), "working-set")
    if not report.query.strip():
        chosen = depth_mod.Depth("none", 0, "no prompt recorded and nothing changed: nothing to look up")
    report.depth, report.depth_steps = chosen.to_dict(), [chosen.to_dict()]
    if chosen.level == "none":
        report.seconds = round(time.perf_counter() - started, 3)
        return report
    status = _status(ws) if ws.head is not None or ws.files else None  # None: git could not say; the stamp asks itself
    if sync:
        report.synced = _sync(root, cfg, lock_wait, status)
    report.freshness = freshness.describe(root, cfg, status)
    floor, threshold = cfg.rag_relief_floor, cfg.rag_similarity_threshold
    if search is _search:
        search = functools.partial(_search, cfg=cfg, deadline=deadline)
    resp, steps = search_at_depth(lambda q, n: search(root, q, n), report.query, chosen, top_n)
    chosen = steps[-1]
    report.depth, report.depth_steps = chosen.to_dict(), [step.to_dict() for step in steps]
    usable_count = usable(resp, floor)
    report.search_mode, report.vector_note = getattr(resp, "mode", ""), getattr(resp, "vector_note", None)
    reason = (resp.diagnosis or {}).get("reason") if not resp.answered else None
    delivery = context.select(root, report.query, resp.results, threshold, floor, reason=reason)
    delivery.freshness = report.freshness
    if cfg.rag_last_changed:  # off by default (issue 35, item 3)
        context.add_last_changed(root, delivery)
    report.context_file = str(context.deliver(root, delivery))
    report.results, report.usable, report.case, report.delivery = len(resp.results), usable_count, delivery.case, delivery.to_dict()
    report.ranked = [ranked(r) for r in resp.results[:RANKED_KEPT]]
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def ranked(result: context.Hit) -> dict:
    """One ranked result as the uptake record keeps it: path, line range and unit name, no text."""
    return {"path": str(result.path), "start": int(result.start_line), "end": int(result.end_line), "name": str(getattr(result, "qualified_name", "") or "")}


def usable(resp: pipeline.SearchResponse, floor: float) -> int:
    """Passages of ``resp`` that clear the relief floor (``Report.usable``)."""
    return sum(1 for r in resp.results if float(r.score) >= floor)


def confident(resp: pipeline.SearchResponse) -> int:
    """Passages of ``resp`` delivered with confidence, not as the low-confidence tail or relief (what the depth step-up counts)."""
    return sum(1 for r in resp.results if not r.low_confidence)


def settled(resp: pipeline.SearchResponse) -> bool:
    """True when a deeper search cannot bring a confident passage. The gate refused: its verdict
    reads nothing the depth changes (``pipeline._search``: the evidence and the vector test come
    before ``top_n``; past the hook's deadline a second search is late too). Or the answer is relief
    only (no passage confident): no passage scores above the query's confidence
    (``fusion.calibrate``: the best one scores it), and that is under the threshold (an answer on
    vector evidence alone). A silence below the relief floor is not settled: a reranker may have
    ordered the best passage past ``top_n``."""
    if not resp.answered:
        return (resp.diagnosis or {}).get("reason") != BELOW_FLOOR
    return bool(resp.results) and confident(resp) == 0
