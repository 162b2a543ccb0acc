"""Search across repositories: this repository's *workspace* of other local repositories.

Why: an agent working in a service cannot otherwise ask where a shared library or another service
implements something. ``paqad workspace add ../shared-lib`` records a member (per developer, in
``state/workspace.json`` of the per-developer folder); ``paqad rag search --workspace`` asks every
member's own index with that member's own ranking settings (its eligibility and secrets rules
built that index), but never lets a member's settings choose where the query goes: a setting that
would send it off this machine (a remote embedding provider, an endpoint, a reranking service) is
taken from this repository's settings instead (:func:`member_config`), so a member whose settings
differ is searched lexically or with the local model. It merges the answers by their calibrated score, which is comparable across indexes: it
is the same [0, 1] evidence scale in each. Every result says which repository it comes from
(``Result.repository``); paths stay relative to that repository.

Members are asked in parallel (``MAX_PARALLEL`` threads), each within
``rag_workspace_member_timeout``: one slow or stuck member costs that timeout, never the answer
of the others.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from paqad import config, git, workspace
from paqad.errors import PaqadError, UsageError
from paqad.index import store
from paqad.index.reader import Index
from paqad.search import pipeline
from paqad.search.pipeline import Result, SearchResponse
from paqad.search.request import SearchRequest
from paqad.settings import SETTINGS
from paqad.workspaces import cloned

FILE = "workspace.json"
MAX_MEMBERS = 64
MAX_PARALLEL = 8  # members asked at once


def _path(root: Path) -> Path:
    return workspace.state_dir(root) / FILE


def _load(root: Path) -> dict[str, object]:
    try:
        data = json.loads(_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def members(root: Path) -> list[Path]:
    """The recorded members (absolute paths), in the order they were added. A damaged file is
    treated as an empty workspace (it holds nothing that cannot be added again)."""
    found = _load(root).get("members", [])
    return [Path(p) for p in found if isinstance(p, str) and p.startswith("/")][:MAX_MEMBERS] if isinstance(found, list) else []


def sources(root: Path) -> dict[Path, str]:
    """The URL each member given by URL was cloned from, by its clone's path (``paqad.workspaces.cloned``)."""
    found = _load(root).get("sources", {})
    if not isinstance(found, dict):
        return {}
    listed = set(members(root))
    return {Path(p): u for p, u in found.items() if isinstance(u, str) and Path(p) in listed}


def _save(root: Path, paths: list[Path], urls: dict[Path, str]) -> None:
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    data = {"version": 1, "members": [str(p) for p in paths], "sources": {str(p): u for p, u in urls.items() if p in paths}}
    workspace.atomic_write_text(_path(root), json.dumps(data, indent=2) + "\n")


def record(root: Path, top: Path, url: str | None = None) -> Path:
    """Add ``top`` (a work tree's top level) to the workspace, with the URL it was cloned from."""
    if top == root.resolve():
        raise UsageError(f"{top}: is this repository itself (it is always searched)")
    now, urls = members(root), sources(root)
    if top not in now and len(now) >= MAX_MEMBERS:
        raise UsageError(f"a workspace holds at most {MAX_MEMBERS} repositories")
    if url is not None:
        urls[top] = url
    _save(root, now if top in now else [*now, top], urls)
    return top


def add(root: Path, member: str) -> Path:
    """Record ``member``: a folder inside a git work tree (its top level is recorded), or a URL or
    bare repository, cloned into the user cache and indexed there (``paqad.workspaces.cloned``)."""
    if cloned.is_remote(member):
        return record(root, *cloned.add(member))
    path = Path(member).expanduser()
    if not path.is_dir():
        raise UsageError(f"{member}: not a folder, a URL or a bare repository (a workspace member is another git repository)")
    top = git.toplevel(path.resolve())
    if top is None:
        raise UsageError(f"{member}: not inside a git repository")
    top = top.resolve()
    if top == root.resolve():
        raise UsageError(f"{member}: is this repository itself (it is always searched)")
    return record(root, top)


def remove(root: Path, member: str) -> Path:
    now, urls = members(root), sources(root)
    path = Path(member).expanduser()
    target = next((m for m in now if m == path.resolve() or m.name == member or urls.get(m) == member), None)
    if target is None:
        raise UsageError(f"{member}: not in this workspace (see `paqad workspace list`)")
    _save(root, [m for m in now if m != target], urls)
    return target


def describe(root: Path) -> list[dict]:
    """Each member with whether it can answer (an index exists) — for ``workspace list``."""
    out = []
    urls = sources(root)
    for m in [root.resolve(), *members(root)]:
        ok = m.is_dir() and store.current_path(m) is not None
        out.append({"repository": m.name, "path": str(m), "self": m == root.resolve(), "indexed": ok, "url": urls.get(m)})
    return out


def member_config(theirs: config.Config, mine: config.Config) -> config.Config:
    """A member's settings with every setting that sends text off this machine taken from this
    repository's (``mine``): the user's own choice of where a query goes, never the member's.
    When the member's index was embedded by another provider, its vectors no longer match the
    query's, and the search falls back to lexical (the pipeline checks the model fingerprint)."""
    changes = {
        name: getattr(mine, name)
        for name, setting in SETTINGS.items()
        if setting.off_machine
        and getattr(theirs, name) != getattr(mine, name)
        and (setting.sends_off_machine(getattr(theirs, name)) or setting.sends_off_machine(getattr(mine, name)))
    }
    if not changes:
        return theirs
    sources = {**theirs.sources, **{name: mine.source(name) for name in changes}}
    return replace(theirs, **changes, sources=sources)


def _ask(member: Path, query: str, top_n: int | None, gate: bool, budget_chars: int | None, mine: config.Config) -> tuple[SearchResponse | None, dict, int | None]:
    """One member's own answer (its index, its settings with :func:`member_config`), its ``members``
    entry, and its top_n. Never raises for the member: a bad config or index is the entry's ``error``."""
    entry: dict = {"repository": member.name, "path": str(member)}
    try:
        if not member.is_dir() or store.current_path(member) is None:
            return None, {**entry, "status": "not indexed"}, None
        cfg = member_config(config.load(member), mine)
        request = SearchRequest.from_settings(cfg, member, query, top_n=top_n, gate=gate, budget_chars=budget_chars)
        resp = pipeline.run(Index.shared(member), request)
    except (PaqadError, sqlite3.Error, OSError) as exc:  # one member's bad config or index never fails the rest
        return None, {**entry, "status": "error", "reason": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}, None
    entry.update(status="answered" if resp.answered else "silent", reason=(resp.diagnosis or {}).get("reason"))
    return resp, entry, request.top_n


def _ask_all(targets: list[Path], ask: Callable[[Path], tuple[SearchResponse | None, dict, int | None]], timeout: float, parallel: int) -> list[tuple[SearchResponse | None, dict, int | None]]:
    """``ask`` for every target on up to ``parallel`` threads, in the targets' order. A member that
    has not answered ``timeout`` seconds after it started is reported ``timed out`` and its late
    answer ignored (its thread finishes on its own; nothing waits for it)."""
    started: dict[int, float] = {}
    finished: dict[int, float] = {}

    def run(i: int) -> tuple[SearchResponse | None, dict, int | None]:
        started[i] = time.monotonic()
        try:
            return ask(targets[i])
        finally:
            finished[i] = time.monotonic()

    pool = cf.ThreadPoolExecutor(max_workers=max(1, min(parallel, len(targets))), thread_name_prefix="paqad-workspace")
    futures = {pool.submit(run, i): i for i in range(len(targets))}
    out: dict[int, tuple[SearchResponse | None, dict, int | None]] = {}
    pending = set(futures)
    try:
        while pending:
            done, _ = cf.wait(pending, timeout=0.05, return_when=cf.FIRST_COMPLETED)
            now = time.monotonic()
            for f in done:
                i = futures[f]
                if finished.get(i, now) - started.get(i, now) <= timeout:
                    out[i] = f.result()
            late = {f for f in pending - done if futures[f] in started and now - started[futures[f]] > timeout}
            late |= {f for f in done if futures[f] not in out}
            for f in late:
                m = targets[futures[f]]
                out[futures[f]] = (None, {"repository": m.name, "path": str(m), "status": "timed out", "reason": f"no answer within {timeout:g} s"}, None)
            pending -= done | late
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [out[i] for i in range(len(targets))]


def search(
    root: Path,
    query: str,
    top_n: int | None = None,
    gate: bool = True,
    budget_chars: int | None = None,
    timeout: float | None = None,
    parallel: int = MAX_PARALLEL,
) -> SearchResponse:
    """One query over this repository and every indexed member, asked in parallel (threads: SQLite
    and numpy release the GIL; not each member's resident service, which would mean one process
    per member), each within ``timeout`` seconds (default: this repository's
    ``rag_workspace_member_timeout``); the merged response. Members without an index, with an
    error or past the timeout are listed in ``evidence["members"]``, never an error."""
    started = time.perf_counter()
    mine = config.load(root)
    if timeout is None:
        timeout = mine.rag_workspace_member_timeout
    targets = [root.resolve(), *members(root)]
    answers = _ask_all(targets, lambda m: _ask(m, query, top_n, gate, budget_chars, mine), timeout, parallel)
    results: list[Result] = []
    seen: list[dict] = []
    answered = False
    first: SearchResponse | None = None
    n = top_n
    for m, (resp, entry, member_top_n) in zip(targets, answers):
        seen.append(entry)
        if resp is None:
            continue
        n = n or member_top_n
        first = first or resp
        answered = answered or resp.answered
        results += [replace(r, repository=m.name) for r in resp.results]
    results.sort(key=lambda r: (-r.score, r.repository, r.path, r.start_line))
    out = SearchResponse(query=query, answered=answered, results=results[: n or 20])
    if budget_chars is not None:  # the budget is for the merged answer, not per member
        used = 0
        for r in out.results:
            used += len(r.source or "")
            if used > budget_chars and r.source is not None:
                r.source, out.omitted_for_budget = None, out.omitted_for_budget + 1
    if first is not None:
        out.mode = first.mode
    out.diagnosis = None if answered else {"reason": "no_member_answered", "members": seen}
    out.evidence = {"members": seen}
    out.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return out
