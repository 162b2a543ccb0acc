"""What ``paqad mcp`` answers: a compact form of each action's result, as text and as structured content.

The JSON-lines door and ``rag search --json`` return the versioned search object (every signal,
the matched terms, the docstring beside the source): right for tools and tests, about twice the
source budget for a model to read. An MCP reply is read by a model, so it carries what the model
acts on, once: each passage's unit id, lines, kind, score and source (the source already holds
the signature and the docstring), the refusal's reason and hint, and for ``research`` the related
units with the edge path that led to them.

Hosts differ in which half of a tool result they hand the model: Claude Code, Codex, Copilot CLI
and OpenCode forward only ``structuredContent`` when it is present; Kimi Code, Open WebUI and
older clients forward only ``content``; Claude Desktop shows nothing when ``content`` is empty.
So both halves are complete and each is compact: ``structuredContent`` is the compact object,
the text is the same answer rendered as Markdown (fenced source, no JSON escaping). A model
reads one of them, never the full ``search --json`` object. Figures: benchmarks/README.md.

Each tool also declares an ``outputSchema`` (the structured half validates against it in the
tests) and ``ToolAnnotations``: everything but ``describe_put`` is read-only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp import types

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

from paqad.delivery import freshness

# ---- compact objects ----------------------------------------------------------------------------

FRESHNESS_KEYS = ("indexed_commit", "head", "behind", "uncommitted_covered", "age_seconds", "stale")
SHORT_COMMIT = 12


def compact_search(answer: dict) -> dict:
    """The search object reduced to what a model acts on (fields that say nothing are left out)."""
    out: dict[str, Any] = {"query": answer["query"], "answered": bool(answer["answered"]), "mode": answer.get("mode", "lexical")}
    out["results"] = [_passage(r) for r in answer.get("results") or []]
    if answer.get("omitted_for_budget"):
        out["omitted_for_budget"] = answer["omitted_for_budget"]
    if not answer["answered"] and answer.get("diagnosis"):
        out["not_answered"] = _refusal(answer["diagnosis"])
    for key in ("vectors_pending", "interim_vectors", "vector_note"):
        if answer.get(key):
            out[key] = answer[key]
    if answer.get("rerank"):
        rr = answer["rerank"]
        out["rerank"] = {k: rr.get(k) for k in ("mode", "reranked", "fallback") if rr.get(k) is not None}
    fresh = answer.get("freshness")
    if fresh and fresh.get("policy") != "silent":  # rag_stale_policy silent: nothing about it for the model
        out["freshness"] = compact_freshness(fresh)
    return out


def compact_freshness(fresh: dict) -> dict:
    """What a model needs of it: commits shortened (``--json`` and the protocol keep them whole),
    the age in whole seconds, ``synced_at`` left to the text line and ``refreshed`` said only when true."""
    out: dict[str, Any] = {k: fresh.get(k) for k in FRESHNESS_KEYS}
    for key in ("indexed_commit", "head"):
        out[key] = str(out[key])[:SHORT_COMMIT] if out[key] else out[key]
    if out["age_seconds"] is not None:
        out["age_seconds"] = round(out["age_seconds"])
    if fresh.get("refreshed"):
        out["refreshed"] = True
    return out


def _passage(r: dict) -> dict:
    p: dict[str, Any] = {"id": r["id"], "lines": [r["start_line"], r["end_line"]], "kind": r["kind"], "score": r["score"]}
    if r.get("repository"):  # a workspace search: which repository the passage is in
        p["repository"] = r["repository"]
    if r.get("low_confidence"):
        p["low_confidence"] = True
    if r.get("last_changed"):  # rag_last_changed (off by default)
        p["last_changed"] = r["last_changed"]
    if r.get("source") is not None:
        p["source"] = r["source"]
        if r.get("source_truncated"):
            p["truncated"] = True
    return p


def _refusal(d: dict) -> dict:
    out = {"reason": d.get("reason"), "hint": d.get("hint")}
    if d.get("absent_terms"):
        out["absent_terms"] = list(d["absent_terms"])[:12]
    if d.get("best_score") is not None:
        out["best_score"] = d["best_score"]
    return out


def compact_research(answer: dict) -> dict:
    out = compact_search(answer)
    out["related"] = [_related(n) for n in answer.get("related") or []]
    info = answer.get("expansion") or {}
    out["expansion"] = {"stopped": info.get("stopped"), "hops_run": info.get("hops_run", 0), "missing_terms": info.get("missing_terms", [])}
    return out


def _related(n: dict) -> dict:
    r: dict[str, Any] = {"id": n["id"], "kind": n.get("kind"), "hops": n.get("hops"), "via": n.get("evidence", "")}
    if n.get("start_line"):
        r["lines"] = [n["start_line"], n["end_line"]]
    if n.get("adds_evidence"):
        r["new_terms"] = n.get("new_terms", [])
    return r


# ---- text ----------------------------------------------------------------------------------------


def fence(text: str) -> str:
    """A Markdown code fence longer than any backtick run inside ``text``."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def search_text(c: dict) -> str:
    text = _search_text(c)
    if c.get("freshness"):
        text += "\n\n" + freshness.line(c["freshness"])
    return text


def _search_text(c: dict) -> str:
    if not c["answered"]:
        why = c.get("not_answered") or {}
        lines = [f"No passage answers {json.dumps(c['query'], ensure_ascii=False)} ({why.get('reason')}).", f"hint: {why.get('hint')}"]
        if why.get("absent_terms"):
            lines.append("not in this repository: " + ", ".join(why["absent_terms"]))
        return "\n".join(lines)
    n = len(c["results"])
    head = f"{n} passage{'s' if n != 1 else ''} for {json.dumps(c['query'], ensure_ascii=False)} ({c['mode']}); hints to verify in the live files."
    parts = [head]
    for p in c["results"]:
        path, _, name = p["id"].partition("::")
        flags = ", low confidence" if p.get("low_confidence") else ""
        where = f"[{p['repository']}] " if p.get("repository") else ""
        title = f"## {where}{path}:{p['lines'][0]}-{p['lines'][1]} {name} ({p['kind']}, score {p['score']:.2f}{flags})"
        title += f"\n{p['last_changed']}" if p.get("last_changed") else ""
        if "source" in p:
            body = p["source"].rstrip("\n") + ("\n…" if p.get("truncated") else "")
            f = fence(body)
            parts.append(f"{title}\n{f}\n{body}\n{f}")
        else:
            parts.append(title)
    if c.get("omitted_for_budget"):
        parts.append(f"({c['omitted_for_budget']} more without source: the budget was spent; `open` them by unit_id)")
    return "\n\n".join(parts)


def research_text(c: dict) -> str:
    parts = [search_text(c)]
    if c.get("related"):
        lines = ["Related through the code graph:"]
        for r in c["related"]:
            where = f":{r['lines'][0]}-{r['lines'][1]}" if r.get("lines") else ""
            new = f" adds {', '.join(r['new_terms'])}" if r.get("new_terms") else ""
            lines.append(f"- {r['id']}{where} ({r['kind']}, {r['hops']} hop{'s' if r['hops'] != 1 else ''}{new}): {r['via']}")
        parts.append("\n".join(lines))
    exp = c.get("expansion") or {}
    missing = f"; still missing: {', '.join(exp['missing_terms'])}" if exp.get("missing_terms") else ""
    parts.append(f"(expansion stopped: {exp.get('stopped')} after {exp.get('hops_run', 0)} hop(s){missing})")
    return "\n\n".join(parts)


def open_text(span: dict) -> str:
    head = f"{span['path']}:{span['start_line']}-{span['end_line']} of {span['total_lines']} lines"
    if span.get("next_start_line"):
        head += f" (truncated by {span.get('truncated_by')}; continue at start_line {span['next_start_line']})"
    f = fence(span["text"])
    return f"{head}\n{f}\n{span['text'].rstrip(chr(10))}\n{f}"


def json_text(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


# ---- per tool ------------------------------------------------------------------------------------

_OBJ: JSONObject = {"type": "object"}
_LINES: JSONObject = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
_PASSAGE: JSONObject = {
    "type": "object",
    "required": ["id", "lines", "kind", "score"],
    "properties": {
        "id": {"type": "string", "description": "unit id, path::qualified_name"}, "lines": _LINES, "kind": {"type": "string"},
        "score": {"type": "number"}, "source": {"type": "string"}, "truncated": {"type": "boolean"}, "low_confidence": {"type": "boolean"},
        "repository": {"type": "string", "description": "workspace search: the repository the passage is in"},
        "last_changed": {"type": "string", "description": "rag_last_changed: the last commit that touched these lines"},
    },
}
_SEARCH_PROPS: JSONObject = {
    "query": {"type": "string"}, "answered": {"type": "boolean"}, "mode": {"type": "string"},
    "results": {"type": "array", "items": _PASSAGE}, "omitted_for_budget": {"type": "integer"},
    "not_answered": {"type": "object", "properties": {"reason": {"type": ["string", "null"]}, "hint": {"type": ["string", "null"]}}},
    "vectors_pending": {"type": "integer"}, "interim_vectors": {"type": "boolean"}, "vector_note": {"type": "string"}, "rerank": _OBJ,
    "freshness": {
        "type": "object", "description": "the index against the work tree: the commit it reflects, HEAD, commits behind, uncommitted edits covered, age, stale",
        "required": ["indexed_commit", "head", "behind", "uncommitted_covered", "age_seconds", "stale"],
        "properties": {
            "indexed_commit": {"type": ["string", "null"]}, "head": {"type": ["string", "null"]}, "behind": {"type": ["integer", "null"]},
            "uncommitted_covered": {"type": ["boolean", "null"]}, "age_seconds": {"type": ["number", "null"]}, "stale": {"type": "boolean"},
            "synced_at": {"type": ["number", "null"]}, "refreshed": {"type": "boolean"},
        },
    },
}
SEARCH_SCHEMA: JSONObject = {"type": "object", "required": ["query", "answered", "mode", "results"], "properties": _SEARCH_PROPS}
RESEARCH_SCHEMA: JSONObject = {
    "type": "object",
    "required": ["query", "answered", "mode", "results", "related", "expansion"],
    "properties": {
        **_SEARCH_PROPS,
        "related": {"type": "array", "items": {"type": "object", "required": ["id", "hops", "via"], "properties": {"id": {"type": "string"}, "hops": {"type": "integer"}, "via": {"type": "string"}, "lines": _LINES}}},
        "expansion": {"type": "object", "required": ["stopped"], "properties": {"stopped": {"type": ["string", "null"]}, "missing_terms": {"type": "array", "items": {"type": "string"}}}},
    },
}
OPEN_SCHEMA: JSONObject = {
    "type": "object",
    "required": ["path", "start_line", "end_line", "total_lines", "text", "truncated"],
    "properties": {
        "path": {"type": "string"}, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}, "total_lines": {"type": "integer"},
        "text": {"type": "string"}, "truncated": {"type": "boolean"}, "truncated_by": {"type": ["string", "null"]}, "next_start_line": {"type": ["integer", "null"]},
    },
}
_SCHEMAS: dict[str, JSONObject] = {
    "search": SEARCH_SCHEMA, "research": RESEARCH_SCHEMA, "open": OPEN_SCHEMA,
    "neighbors": {"type": "object", "required": ["unit_id", "neighbors"], "properties": {"unit_id": {"type": "string"}, "neighbors": {"type": "array", "items": _OBJ}}},
    "describe_pending": {"type": "object", "required": ["total", "units"], "properties": {"total": {"type": "integer"}, "units": {"type": "array", "items": _OBJ}}},
    "describe_put": {"type": "object", "required": ["id", "content_hash", "stored"], "properties": {"id": {"type": "string"}, "content_hash": {"type": "string"}, "stored": {"type": "boolean"}}},
    "stats": {"type": "object", "required": ["protocol_version", "paqad_version", "root", "index", "session"], "properties": {"protocol_version": {"type": "integer"}, "index": _OBJ, "session": _OBJ}},
}
_TITLES = {
    "search": "Search the repository", "research": "Search and follow the code graph", "neighbors": "Code-graph neighbours of a unit",
    "open": "Read a span of a file", "describe_pending": "Units awaiting a description", "describe_put": "Store a unit description",
    "stats": "Index and session facts",
}
Renderer = Callable[[dict], tuple[dict, str]]


def _search(result: dict) -> tuple[dict, str]:
    c = compact_search(result)
    return c, search_text(c)


def _research(result: dict) -> tuple[dict, str]:
    c = compact_research(result)
    return c, research_text(c)


_RENDER: dict[str, Renderer] = {"search": _search, "research": _research, "open": lambda r: (r, open_text(r))}


def output_schema(tool: str) -> JSONObject:
    return _SCHEMAS[tool]


def tool_annotations(tool: str) -> types.ToolAnnotations:
    """Read-only tools on a closed world (the repository); ``describe_put`` writes one entry of the
    committed sidecar: not read-only, not destructive (it adds or replaces that unit's own
    description, nothing else), idempotent (the same call twice leaves the same file)."""
    writes = tool == "describe_put"
    return types.ToolAnnotations(
        title=_TITLES.get(tool), read_only_hint=not writes, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def reply(tool: str, result: dict) -> types.CallToolResult:
    """The tool result: the compact object as ``structuredContent`` and its text rendering."""
    render = _RENDER.get(tool)
    structured, text = render(result) if render else (result, json_text(result))
    structured = json.loads(json_text(structured))  # plain JSON types only (a Path, a tuple)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=False)
