"""``paqad mcp``: the agent operations as MCP tools over stdio, with the official ``mcp`` SDK (2.x).

Built on the SDK's low-level ``Server`` (constructor handlers, the 2.x API) rather than the
decorator-based ``MCPServer``: each tool's ``inputSchema`` is generated from the same ``Param``
declarations that validate JSON-lines requests, so the two doors cannot disagree about a limit.
The tools are the protocol's actions minus ``hello`` (MCP's own ``tools/list`` does its job).

A tool call answers with a compact form of the result (``paqad.agent.mcp_render``: as
``structuredContent`` and as Markdown text, each tool with an ``outputSchema`` and annotations);
any failure (bad arguments, no index, a path outside the repository) is a tool error
(``isError: true``) whose text is ``<code>: <message>``, never a protocol error or a crash.
Operations run in a worker thread so a slow search does not stall the stdio loop; the session
lock runs them one at a time.

The session ends cleanly (exit 0, no crash log) however the client goes: end of input, a closed
stdout (``BrokenPipeError`` on the next reply), or SIGTERM / SIGHUP / SIGINT from a host that
shuts its servers down (the MCP stdio transport's documented shutdown: close stdin, then SIGTERM).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from paqad import __version__
from paqad.agent import mcp_hook, mcp_render
from paqad.agent.ops import ACTIONS, OpError, Session

if TYPE_CHECKING:
    from paqad.jsontypes import JSON

SERVER_NAME = "paqad"
TOOLS = tuple(name for name in ACTIONS if name != "hello")
INSTRUCTIONS = (
    "paqad answers questions about this repository from a local index. Call `search` first with the "
    "question in words or identifiers; `research` also follows the code graph; `open` reads a span of a "
    "live file. Passages are hints: verify them in the files before relying on them."
)


SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
HANGUPS = (BrokenPipeError, ConnectionResetError)


def tool_list(hook_tool: bool = False) -> list[types.Tool]:
    """The agent operations; with ``hook_tool``, also Claude Code's prompt hook (:mod:`paqad.agent.mcp_hook`)."""
    hook = [types.Tool(name=mcp_hook.TOOL, description=mcp_hook.DESCRIPTION, input_schema=mcp_hook.INPUT_SCHEMA)] if hook_tool else []
    return hook + [
        types.Tool(
            name=name, title=mcp_render.tool_annotations(name).title, description=ACTIONS[name].description, input_schema=ACTIONS[name].input_schema(),
            output_schema=mcp_render.output_schema(name), annotations=mcp_render.tool_annotations(name),
        )
        for name in TOOLS
    ]


#: The hook tool's answer for a work tree and the tool's arguments: the door hands in
#: ``paqad.serve.route.prompt_context`` (where a request runs is decided there, not here).
HookTool = Callable[[Path, "Mapping[str, JSON] | None"], str]


def call_hook(session: Session, arguments: Mapping[str, JSON] | None, answer: HookTool) -> types.CallToolResult:
    """The hook tool: the hook's stdout as the text (empty: paqad stays silent for this prompt)."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=answer(session.root, arguments))])


def call(session: Session, name: str, arguments: Mapping[str, JSON] | None) -> types.CallToolResult:
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
    return mcp_render.reply(name, result)


def build(session: Session, hook_tool: HookTool | None = None) -> Server:
    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(hook_tool is not None))

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        if hook_tool is not None and params.name == mcp_hook.TOOL:  # not under the session lock: a prompt never waits for a search
            return await anyio.to_thread.run_sync(call_hook, session, params.arguments, hook_tool)
        return await anyio.to_thread.run_sync(call, session, params.name, params.arguments)

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(session: Session, hook_tool: HookTool | None = None) -> str:
    """Serve until the client goes; returns how: ``eof`` or ``hangup`` (a signal ends the process)."""
    server = build(session, hook_tool)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_exit_on_signal)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        rest = group.split(HANGUPS)[1]
        if rest is not None:
            raise rest from None
        return "hangup"
    except HANGUPS:
        return "hangup"
    return "eof"


async def _exit_on_signal() -> None:
    """The host is shutting its servers down: end now, with 0. Not through cancellation: the
    SDK's stdin reader sits in a worker thread that no cancel reaches, and leaving the transport
    waits for it; a read-only index connection needs no closing."""
    with anyio.open_signal_receiver(*SIGNALS) as received:
        async for _ in received:
            sys.stderr.flush()
            os._exit(0)


def serve(session: Session, hook_tool: HookTool | None = None) -> int:
    """Serve until the client goes; 0 whichever way it went.

    A broken pipe (the host's end of stdout closed) surfaces once the SDK's transport has
    finished, i.e. when stdin closes too, as it does when a host exits. stdout is gone by then
    (the interpreter's own flush at exit would fail and print), so the session closes its index
    and the process ends without the interpreter's shutdown.
    """
    ended = anyio.run(_serve, session, hook_tool)
    session.close()
    if ended == "eof":
        return 0
    sys.stderr.flush()
    os._exit(0)
