"""The one search pipeline every door calls: analyse → lexical candidates → evidence → results.

``search`` applies the evidence gate and may return no results with a diagnosis; ``probe``
returns the top candidates before any gate, for debugging. Neither writes to the index.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from paqad.errors import IndexCorruptError
from paqad.index import store
from paqad.search import evidence as evidence_mod
from paqad.search import lexical, query as query_mod

RESULT_SCHEMA_VERSION = 1
DEFAULT_BUDGET_CHARS = 12_000


@dataclass
class Result:
    id: str
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    signature: str
    start_line: int
    end_line: int
    score: float
    signals: dict[str, float]
    matched_terms: dict[str, str]
    docstring: str = ""
    source: str | None = None
    source_truncated: bool = False


@dataclass
class SearchResponse:
    query: str
    answered: bool
    results: list[Result] = field(default_factory=list)
    diagnosis: dict | None = None
    evidence: dict = field(default_factory=dict)
    omitted_for_budget: int = 0
    candidates: int = 0
    elapsed_ms: float = 0.0
    mode: str = "lexical"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["schema_version"] = RESULT_SCHEMA_VERSION
        return data


def search(
    root: Path,
    text: str,
    top_n: int = 20,
    source_chars: int = 1200,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    gate: bool = True,
) -> SearchResponse:
    """Answer ``text`` from the index at ``root``; with ``gate`` off this is ``probe``."""
    started = time.perf_counter()
    con = store.reader(root)
    try:
        return _search(con, text, top_n, source_chars, budget_chars, gate, started)
    except sqlite3.DatabaseError as exc:
        store.forget_reader(root)
        raise IndexCorruptError(f"index read failed ({exc}); {store.REBUILD_HINT}") from exc


def _search(con: sqlite3.Connection, text: str, top_n: int, source_chars: int, budget: int, gate: bool, started: float) -> SearchResponse:
    n_units = int(store.get_meta(con).get("n_units", "0"))
    analyzed = query_mod.analyze(con, text, n_units)
    scored = lexical.score(con, analyzed)
    ranked = scored.ranked
    ev = evidence_mod.assess(analyzed, scored)
    resp = SearchResponse(query=text, answered=ev.passed or not gate, candidates=scored.total, evidence=_evidence_summary(ev))
    if gate and not ev.passed:
        resp.diagnosis = ev.diagnosis()
    else:
        top = _dedupe_parts(con, ranked, top_n)
        scored.explain(top)
        resp.results = _results(con, top, ranked[0].bm25f if ranked else 1.0)
        resp.omitted_for_budget = _attach_sources(con, resp.results, source_chars, budget)
    resp.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return resp


def _evidence_summary(ev: evidence_mod.Evidence) -> dict:
    return {"passed": ev.passed, "reason": ev.reason, "coverage": ev.coverage, "concentration": ev.concentration, "long_query": ev.long_query}


DROP_CONTAINERS = True


def _dedupe_parts(con: sqlite3.Connection, ranked: list[lexical.Candidate], top_n: int) -> list[lexical.Candidate]:
    """Keep the best-scoring part of a split unit, and drop a container (a class, a module part)
    ranked below a unit it contains: its text would repeat a passage already delivered.
    A more specific unit ranked below its container is kept: it is the sharper passage."""
    out: list[lexical.Candidate] = []
    seen: set = set()
    spans: dict[str, list[tuple[int, int]]] = {}
    for cand in ranked:
        if len(out) >= top_n:
            break
        row = con.execute("SELECT path, qualified_name, kind, parts, start_line, end_line FROM units WHERE uid = ?", (cand.uid,)).fetchone()
        if row is None:
            continue
        path, start, end = row[0], row[4], row[5]
        key = (path, row[1], row[2]) if row[3] > 1 else cand.uid
        contains = any(start <= a and b <= end and (a, b) != (start, end) for a, b in spans.get(path, []))
        if key in seen or (DROP_CONTAINERS and contains):
            continue
        seen.add(key)
        spans.setdefault(path, []).append((start, end))
        out.append(cand)
    return out


_COLUMNS = "id, path, language, kind, name, qualified_name, signature, start_line, end_line, docstring"


def _results(con: sqlite3.Connection, cands: list[lexical.Candidate], top_score: float) -> list[Result]:
    out = []
    for cand in cands:
        row = con.execute(f"SELECT {_COLUMNS} FROM units WHERE uid = ?", (cand.uid,)).fetchone()
        if row is None:
            continue
        signals = {"bm25f": round(cand.bm25f, 4), "bm25f_ratio": round(cand.bm25f / top_score, 4) if top_score else 0.0, "relevance": cand.relevance}
        out.append(
            Result(
                id=row[0], path=row[1], language=row[2], kind=row[3], name=row[4], qualified_name=row[5], signature=row[6],
                start_line=int(row[7]), end_line=int(row[8]), docstring=row[9][:400], score=cand.relevance, signals=signals,
                matched_terms=dict(sorted(cand.matched.items())),
            )
        )
    return out


def _attach_sources(con: sqlite3.Connection, results: list[Result], per_result: int, budget: int) -> int:
    """Each result's source once, trimmed to ``per_result`` chars, until ``budget`` is spent."""
    omitted = 0
    for res in results:
        if per_result <= 0:
            break
        if budget <= 0:
            omitted += 1
            continue
        (text,) = con.execute("SELECT text FROM units WHERE id = ?", (res.id,)).fetchone()
        limit = min(per_result, budget)
        res.source = text[:limit]
        res.source_truncated = len(text) > limit
        budget -= len(res.source)
    return omitted


def status(root: Path) -> dict:
    """Index facts for ``rag status``: generation, counts, languages, build times, versions."""
    path = store.current_path(root)
    if path is None:
        return {"built": False}
    con = store.connect(path, readonly=True)
    try:
        meta = store.get_meta(con)
        files = con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files").fetchone()
        langs = dict(con.execute("SELECT language, COUNT(*) FROM units GROUP BY language ORDER BY 2 DESC").fetchall())
        kinds = dict(con.execute("SELECT kind, COUNT(*) FROM units GROUP BY kind ORDER BY 2 DESC").fetchall())
    except sqlite3.DatabaseError as exc:
        raise IndexCorruptError(f"index {path} is unreadable ({exc}); {store.REBUILD_HINT}") from exc
    finally:
        con.close()
    return {
        "built": True,
        "index_file": str(path.relative_to(root)),
        "index_bytes": path.stat().st_size,
        "files": files[0],
        "source_bytes": files[1],
        "units": int(meta.get("n_units", "0")),
        "units_by_language": langs,
        "units_by_kind": kinds,
        "built_at": meta.get("built_at"),
        "updated_at": meta.get("updated_at"),
        "embedding_provider": meta.get("embedding_provider"),
        "vectors": "none (lexical only)",
        "active_packs": json.loads(meta.get("active_packs", "[]")),
        "versions": {k: meta.get(k) for k in ("schema_version", "tokenizer_version", "parser_version", "paqad_version")},
    }
