"""How large `paqad mcp`'s tool replies are, measured through the official MCP SDK's stdio client.

    python -m benchmarks mcp_reply_size --root DIR [--questions benchmarks/rulers/flask.yaml] [--limit 20] [--json OUT]

``DIR`` must already be indexed (``paqad rag init``). For each question it calls the ``search``
and ``research`` tools with their defaults (the 12,000-character source budget) and records, per
reply, in characters:

* ``wire``: the ``CallToolResult`` as the SDK serialises it onto stdout (what crosses the pipe);
* ``text``: the text content blocks (what a host that forwards ``content`` hands the model);
* ``structured``: ``structuredContent`` as compact JSON (what a host that forwards only
  ``structuredContent`` hands the model: Claude Code, Codex, Copilot CLI);
* ``seen``: the larger of the two, i.e. what the model reads under either host policy;
* ``source``: the characters of code in the reply (the part the budget bounds).

Prints one JSON object with min / median / max per tool and field. Uses the ``paqad`` console
script next to the running interpreter (or ``PAQAD_EXE``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import anyio
import yaml

DEFAULT_QUESTIONS = [
    "where is the session cookie signed",
    "how are secrets redacted before indexing",
    "where does the MCP server answer a tool call",
    "how is the index rebuilt when it is corrupt",
    "where are git hooks installed",
    "how are long units split into parts",
    "how does the prompt hook stay within its budget",
    "where are BM25F field weights defined",
]


def _exe() -> str:
    return os.environ.get("PAQAD_EXE") or str(Path(sys.executable).with_name("paqad"))


def _questions(path: str | None, limit: int) -> list[str]:
    if not path:
        return DEFAULT_QUESTIONS[:limit]
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return [q["q"] for q in data["questions"] if not q.get("unanswerable")][:limit]


def _source_chars(structured: dict[str, Any]) -> int:
    return sum(len(r.get("source") or "") for r in structured.get("results") or [])


def measure(root: Path, questions: list[str]) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    rows: dict[str, list[dict[str, int]]] = {"search": [], "research": []}

    async def run() -> None:
        params = StdioServerParameters(command=_exe(), args=["mcp", "--root", str(root)], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for q in questions:
                for tool in rows:
                    result = await client.call_tool(tool, {"query": q})
                    wire = result.model_dump_json(by_alias=True, exclude_none=True)
                    text = "".join(getattr(b, "text", "") for b in result.content)
                    structured = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")) if result.structured_content else ""
                    rows[tool].append({
                        "wire": len(wire), "text": len(text), "structured": len(structured), "seen": max(len(text), len(structured)),
                        "source": _source_chars(result.structured_content or {}), "answered": int(bool((result.structured_content or {}).get("answered"))),
                    })

    anyio.run(run)
    return {tool: _summary(r) for tool, r in rows.items()}


def _summary(rows: list[dict[str, int]]) -> dict[str, Any]:
    out: dict[str, Any] = {"replies": len(rows), "answered": sum(r["answered"] for r in rows)}
    for key in ("wire", "text", "structured", "seen", "source"):
        values = [r[key] for r in rows if r["answered"]] or [0]
        out[key] = {"min": min(values), "median": int(statistics.median(values)), "max": max(values)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="an indexed repository")
    ap.add_argument("--questions", help="a ruler YAML file (its answerable questions); default: a built-in list about paqad itself")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--json", dest="out", help="also write the figures here")
    args = ap.parse_args()
    figures = {"root": args.root, "questions": args.questions or "built-in", **measure(Path(args.root).resolve(), _questions(args.questions, args.limit))}
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
