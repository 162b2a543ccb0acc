"""refresh-context, the worker: sync the index, build the query, choose the depth, search, deliver.

The query is the recorded prompt when there is one (``.paqad/state/prompt.json``, written by the
prompt hook before anything else), otherwise the working set: the subjects of the commits since
the merge-base with the base branch and the names of the files being changed.

``answer_prompt`` is the prompt hook's body: record the prompt first, then run ``refresh`` in a
worker thread joined with the budget. If it finishes, the context matches this prompt. If it
cannot (no index yet, too slow), the last delivery goes out marked with its age and the prompt it
answered, and a background refresh starts (the runner's ``refresh-context`` action: detached,
single-flight, logged). Whatever happens, it returns within the budget and never raises.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from paqad import context, depth as depth_mod, gitwork, workspace
from paqad.errors import IndexCorruptError, IndexMissingError, LockedError, PaqadError
from paqad.index import build  # noqa: F401 - imported before a prompt's budget clock starts,
from paqad.search import pipeline  # noqa: F401 - so the budget is spent searching, not importing

PROMPT_FILE = "prompt.json"
PROMPT_MAX_CHARS = 4000
QUERY_MAX_WORDS = 60
DEFAULT_BUDGET_S = 1.5
BUDGET_MARGIN_S = 0.15  # kept back for rendering, printing and exiting
SEARCH_RESERVE_S = 0.4  # a busy index writer is waited for until this much budget is left for the search
RERANK_RESERVE_S = 0.3  # reranking stops this long before the deadline, leaving time to deliver
EMBED_RESERVE_S = 0.3  # the query embedding (a model load in a fresh process) gives up this long before the deadline
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]+")


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

    def to_dict(self) -> dict:
        return asdict(self)


# ---- the recorded prompt ------------------------------------------------------------------


def prompt_path(root: Path) -> Path:
    return workspace.state_dir(root) / PROMPT_FILE


def record_prompt(root: Path, prompt: str, host: str = "", session_id: str = "") -> None:
    data = {"prompt": prompt[:PROMPT_MAX_CHARS], "host": host, "session_id": session_id, "recorded_at": time.time()}
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(prompt_path(root), json.dumps(data, ensure_ascii=False))


def recorded_prompt(root: Path) -> str | None:
    try:
        text = json.loads(prompt_path(root).read_text(encoding="utf-8"))["prompt"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) and text.strip() else None


# ---- the query ---------------------------------------------------------------------------


def working_set_query(ws: gitwork.WorkingSet) -> str:
    """Commit subjects and the words of the changed files' names, deduplicated, bounded."""
    words: list[str] = []
    for text in [*ws.subjects, *(Path(f).stem.replace("_", " ") for f in ws.files)]:
        words.extend(_WORDS.findall(text))
    seen: dict[str, None] = {}
    for word in words:
        seen.setdefault(word.lower(), None)
    return " ".join(list(seen)[:QUERY_MAX_WORDS])


def working_set(root: Path, base: str) -> gitwork.WorkingSet:
    """The git working set minus paqad's own folder."""
    ws = gitwork.working_set(root, base)
    for name in ("staged", "unstaged", "untracked", "committed"):
        setattr(ws, name, [f for f in getattr(ws, name) if not f.startswith(workspace.DIRNAME + "/")])
    return ws


# ---- the worker --------------------------------------------------------------------------


def _sync(root: Path, cfg: Any, lock_wait: float | None) -> str:
    """Incremental index update. In the hot path (``lock_wait`` seconds) a writer that is still busy
    after the wait (a post-commit update, a rebuild) is not waited for: the index is searched as it is."""
    from paqad.index import build

    if lock_wait is not None and not _writer_free(root, lock_wait):
        return "skipped: another paqad process is writing the index"
    # The hot path never rebuilds a damaged index inside a prompt's budget: it stays silent and
    # the background refresh it starts does the repair (and logs it).
    # Nor does it embed: changed units' vectors are filled behind the prompt (see _live_answer),
    # and until then the search answers them lexically and counts them as pending.
    hot = lock_wait is not None
    report = build.update(root, cfg, repair=not hot, embed=not hot)
    pending = " (vectors pending)" if hot and cfg["rag_embedding_provider"] != "none" and (report.files_changed or report.files_removed) else ""
    return f"{report.mode}: {report.files_changed} changed, {report.files_removed} removed{pending}"


def _writer_free(root: Path, wait: float) -> bool:
    """True once no writer holds the index lock (waiting up to ``wait`` seconds)."""
    from paqad.index import build

    try:
        lock = build.writer_lock(root, timeout=max(0.0, wait))
        lock.acquire()
    except Exception:  # noqa: BLE001 - filelock.Timeout, or a lock API that moved: treat as busy
        return False
    lock.release()
    return True


def _search(root: Path, query: str, top_n: int, cfg: Any = None, deadline: float | None = None) -> Any:
    """The search with the repository's settings (floor, relief, reranking). ``deadline`` (monotonic)
    is the prompt hook's: reranking stops there and keeps the fused order, so it never blocks the hook."""
    from paqad.search import pipeline
    from paqad.search.rerank import RerankConfig

    if cfg is None:
        return pipeline.search(root, query, top_n=top_n)
    return pipeline.search(
        root, query, top_n=top_n, threshold=float(cfg["rag_similarity_threshold"]), relief_floor=float(cfg["rag_relief_floor"]),
        rerank=RerankConfig.from_config(root, cfg, deadline=None if deadline is None else deadline - RERANK_RESERVE_S),
        deadline=None if deadline is None else deadline - EMBED_RESERVE_S,
    )


def refresh(
    root: Path,
    cfg: Any,
    prompt: str | None = None,
    sync: bool = True,
    lock_wait: float | None = None,
    search: Callable[[Path, str, int], Any] = _search,
    deadline: float | None = None,
) -> Report:
    """Sync, query, search (stepping up once if too little comes back) and deliver. Raises PaqadError subclasses."""
    started = time.perf_counter()
    if not cfg["rag_enabled"]:
        raise PaqadError("retrieval is off in this repository; run `paqad rag init` first")
    report = Report()
    prompt = prompt if prompt is not None else recorded_prompt(root)
    ws = working_set(root, cfg["rag_base_branch"])
    report.working_set = ws.to_dict()
    top_n = int(cfg["rag_top_n"])
    chosen = depth_mod.choose(prompt, ws.files, top_n)
    report.query, report.query_source = (prompt, "prompt") if prompt is not None else (working_set_query(ws), "working-set")
    if not report.query.strip():
        chosen = depth_mod.Depth("none", 0, "no prompt recorded and nothing changed: nothing to look up")
    report.depth, report.depth_steps = chosen.to_dict(), [chosen.to_dict()]
    if chosen.level == "none":
        report.seconds = round(time.perf_counter() - started, 3)
        return report
    if sync:
        report.synced = _sync(root, cfg, lock_wait)
    floor, threshold = float(cfg["rag_relief_floor"]), float(cfg["rag_similarity_threshold"])
    if search is _search:
        search = functools.partial(_search, cfg=cfg, deadline=deadline)
    resp = search(root, report.query, chosen.top_n)
    usable = _usable(resp, floor)
    deeper = depth_mod.step_up(chosen, usable, top_n)
    if deeper is not None:
        chosen, resp = deeper, search(root, report.query, deeper.top_n)
        usable = _usable(resp, floor)
        report.depth = chosen.to_dict()
        report.depth_steps.append(chosen.to_dict())
    report.search_mode, report.vector_note = getattr(resp, "mode", ""), getattr(resp, "vector_note", None)
    reason = (resp.diagnosis or {}).get("reason") if not resp.answered else None
    delivery = context.select(root, report.query, resp.results, threshold, floor, reason=reason)
    report.context_file = str(context.deliver(root, delivery))
    report.results, report.usable, report.case, report.delivery = len(resp.results), usable, delivery.case, delivery.to_dict()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _usable(resp: Any, floor: float) -> int:
    return sum(1 for r in resp.results if float(r.score) >= floor)


# ---- the prompt hook's body ------------------------------------------------------------------


@dataclass
class Answer:
    """What the prompt hook hands the host: the text (None = print nothing) and how it got it."""

    text: str | None
    path: str  # live | stale | skipped | silent
    detail: str = ""


def answer_prompt(
    root: Path,
    cfg: Any,
    prompt: str,
    limit: int,
    budget: float = DEFAULT_BUDGET_S,
    host: str = "",
    session_id: str = "",
    spawn_refresh: Callable[[Path], None] | None = None,
) -> Answer:
    """Record the prompt, then answer it within ``budget`` seconds, or hand over the last delivery."""
    deadline = time.monotonic() + max(0.0, budget - BUDGET_MARGIN_S)
    if depth_mod.is_trivial(prompt):  # an acknowledgement must not replace the request it acknowledges
        return Answer(None, "skipped", "trivial prompt")
    record_prompt(root, prompt, host, session_id)  # first: a background refresh answers *this* prompt
    spawn = spawn_refresh or start_background_refresh
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["report"] = refresh(root, cfg, prompt, sync=True, lock_wait=max(0.0, deadline - time.monotonic() - SEARCH_RESERVE_S), deadline=deadline)
        except BaseException as exc:  # noqa: BLE001 - reported through the box
            box["error"] = exc

    worker = threading.Thread(target=work, name="paqad-prompt", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if "report" in box:
        return _live_answer(root, box["report"], limit, spawn)
    error = box.get("error")
    if error is not None and not isinstance(error, (IndexMissingError, LockedError)):
        spawn(root)  # a corrupt index or a failure: the logged background run says what went wrong
        return Answer(None, "silent", f"{type(error).__name__}: {error}")
    spawn(root)
    return _stale_answer(root, limit, "no index yet" if error is not None else "over budget")


def _live_answer(root: Path, report: Report, limit: int, spawn: Callable[[Path], None]) -> Answer:
    if report.delivery is None:
        return Answer(None, "skipped", report.depth.get("reason", ""))
    if report.synced and (report.synced.startswith("skipped") or report.synced.endswith("(vectors pending)")):
        spawn(root)  # answered from the index as it is; bring it (and its vectors) up to date behind the prompt
    detail = f"{report.case} ({report.search_mode}{'; model over budget' if report.vector_note else ''})" if report.search_mode else report.case
    return Answer(context.render_for_hook(context.Delivery.from_dict(report.delivery), limit), "live", detail)


def _stale_answer(root: Path, limit: int, why: str) -> Answer:
    last = context.last_delivery(root)
    if last is None:
        return Answer(None, "stale", f"{why}; no earlier context to hand over")
    return Answer(context.render_for_hook(last, limit, context.stale_note(last)), "stale", why)


def start_background_refresh(root: Path) -> None:
    """The runner's detached, single-flight ``refresh-context`` action; never raises."""
    try:
        from paqad import runner

        runner.run_background(root, "prompt-submit", "refresh-context")
    except Exception:  # noqa: BLE001
        pass


BUDGET_ENV = "PAQAD_HOOK_BUDGET"  # seconds; overrides the setting (benchmarks force the stale path with 0)


def budget_of(cfg: Any, environ: dict[str, str] | None = None) -> float:
    """The prompt-hook budget in seconds: ``PAQAD_HOOK_BUDGET``, else ``rag_prompt_budget``, else 1.5."""
    raw = (os.environ if environ is None else environ).get(BUDGET_ENV)
    try:
        return max(0.0, float(raw)) if raw is not None else float(cfg["rag_prompt_budget"])
    except (KeyError, TypeError, ValueError):
        return DEFAULT_BUDGET_S
