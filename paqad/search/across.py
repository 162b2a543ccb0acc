"""Search across repositories: this repository's *workspace* of other local repositories.

Why: an agent working in a service cannot otherwise ask where a shared library or another service
implements something. ``paqad workspace add ../shared-lib`` records a member (per developer, in
``.paqad/state/workspace.json``, never committed); ``paqad rag search --workspace`` asks every
member's own index with that member's own settings (its eligibility and secrets rules built that
index), and merges the answers by their calibrated score, which is comparable across indexes: it
is the same [0, 1] evidence scale in each. Every result says which repository it comes from
(``Result.repository``); paths stay relative to that repository.

Not here yet: members given by URL (cloned into the user cache), and the workspace scope in the
agent protocol and MCP.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

from paqad import config, git, workspace
from paqad.errors import PaqadError, UsageError
from paqad.search import pipeline
from paqad.search.pipeline import Result, SearchResponse
from paqad.search.request import SearchRequest

FILE = "workspace.json"
MAX_MEMBERS = 64


def _path(root: Path) -> Path:
    return workspace.state_dir(root) / FILE


def members(root: Path) -> list[Path]:
    """The recorded members (absolute paths), in the order they were added. A damaged file is
    treated as an empty workspace (it holds nothing that cannot be added again)."""
    try:
        data = json.loads(_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = data.get("members", []) if isinstance(data, dict) else []
    return [Path(p) for p in found if isinstance(p, str) and p.startswith("/")][:MAX_MEMBERS]


def _save(root: Path, paths: list[Path]) -> None:
    workspace.state_dir(root).mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(_path(root), json.dumps({"version": 1, "members": [str(p) for p in paths]}, indent=2) + "\n")


def add(root: Path, member: str) -> Path:
    """Record ``member`` (a folder inside a git work tree; its top level is recorded)."""
    path = Path(member).expanduser()
    if not path.is_dir():
        raise UsageError(f"{member}: not a folder (a workspace member is another local git repository)")
    top = git.toplevel(path.resolve())
    if top is None:
        raise UsageError(f"{member}: not inside a git repository")
    top = top.resolve()
    if top == root.resolve():
        raise UsageError(f"{member}: is this repository itself (it is always searched)")
    now = members(root)
    if top not in now:
        if len(now) >= MAX_MEMBERS:
            raise UsageError(f"a workspace holds at most {MAX_MEMBERS} repositories")
        _save(root, [*now, top])
    return top


def remove(root: Path, member: str) -> Path:
    now = members(root)
    path = Path(member).expanduser()
    target = next((m for m in now if m == path.resolve() or m.name == member), None)
    if target is None:
        raise UsageError(f"{member}: not in this workspace (see `paqad workspace list`)")
    _save(root, [m for m in now if m != target])
    return target


def describe(root: Path) -> list[dict]:
    """Each member with whether it can answer (an index exists) — for ``workspace list``."""
    from paqad.index import store

    out = []
    for m in [root.resolve(), *members(root)]:
        ok = m.is_dir() and store.current_path(m) is not None
        out.append({"repository": m.name, "path": str(m), "self": m == root.resolve(), "indexed": ok})
    return out


def search(root: Path, query: str, top_n: int | None = None, gate: bool = True, budget_chars: int | None = None) -> SearchResponse:
    """One query over this repository and every indexed member; the merged response. Members
    without an index are listed in ``diagnosis["members"]`` as skipped, never an error."""
    from paqad.index import store
    from paqad.index.reader import Index

    started = time.perf_counter()
    results: list[Result] = []
    seen: list[dict] = []
    answered = False
    first: SearchResponse | None = None
    n = top_n
    for m in [root.resolve(), *members(root)]:
        if not m.is_dir() or store.current_path(m) is None:
            seen.append({"repository": m.name, "path": str(m), "status": "not indexed"})
            continue
        try:
            cfg = config.load(m)
            request = SearchRequest.from_settings(cfg, m, query, top_n=top_n, gate=gate, budget_chars=budget_chars)
            n = n or request.top_n
            resp = pipeline.run(Index.shared(m), request)
        except (PaqadError, sqlite3.Error, OSError) as exc:  # one member's bad config or index never fails the rest
            seen.append({"repository": m.name, "path": str(m), "status": "error", "reason": str(exc).splitlines()[0] if str(exc) else type(exc).__name__})
            continue
        first = first or resp
        seen.append({"repository": m.name, "path": str(m), "status": "answered" if resp.answered else "silent",
                     "reason": (resp.diagnosis or {}).get("reason")})
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
