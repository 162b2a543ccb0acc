"""``paqad mcp``: the agent operations as MCP tools over stdio, with the official ``mcp`` SDK (2.x).

Built on the SDK's low-level ``Server`` (constructor handlers, the 2.x API) rather than the
decorator-based ``MCPServer``: each tool's ``inputSchema`` is generated from the same ``Param``
declarations that validate JSON-lines requests, so the two doors cannot disagree about a limit.
The tools are the protocol's actions minus ``hello`` (MCP's own ``tools/list`` does its job).

A tool call answers with the result as JSON text and as ``structuredContent``; any failure
(bad arguments, no index, a path outside the repository) is a tool error (``isError: true``)
whose text is ``<code>: <message>``, never a protocol error or a crash. Operations run in a worker
thread so a slow search does not stall the stdio loop; the session lock runs them one at a time.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from paqad import __version__
from paqad.agent.ops import ACTIONS, OpError, Session

SERVER_NAME = "paqad"
TOOLS = tuple(name for name in ACTIONS if name != "hello")
INSTRUCTIONS = (
    "paqad answers questions about this repository from a local index. Call `search` first with the "
    "question in words or identifiers; `research` also follows the code graph; `open` reads a span of a "
    "live file. Passages are hints: verify them in the files before relying on them."
)


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=ACTIONS[name].description, input_schema=ACTIONS[name].input_schema()) for name in TOOLS]


def call(session: Session, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """One tool call, answered in-band whatever the arguments are."""
    try:
        if name not in TOOLS:
            raise OpError("unknown_action", f"unknown tool {name[:60]!r}; one of: {', '.join(TOOLS)}")
        args = arguments or {}
        reserved = [k for k in ("id", "action") if k in args]
        if reserved:
            raise OpError("bad_params", f"unknown parameter {reserved[0]!r}")
        result = session.call(name, args)
    except OpError as exc:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{exc.code}: {exc.message}")], is_error=True)
    text = json.dumps(result, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text), is_error=False)


def build(session: Session) -> Server:
    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(call, session, params.name, params.arguments)

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(session: Session) -> None:
    server = build(session)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(session: Session) -> int:
    """Serve until the client closes stdin; returns the exit code."""
    anyio.run(_serve, session)
    return 0
