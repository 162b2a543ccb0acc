"""``paqad agent`` (the JSON-lines protocol) and ``paqad mcp`` (the MCP server, ``install``, ``uninstall``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click

from paqad.cli.common import AppContext, HelpfulGroup, emit_json
from paqad.errors import UsageError

if TYPE_CHECKING:
    from paqad.agent.ops import Session

ROOT_OPT = click.option("--root", "root_opt", metavar="DIR", default=None, help="Repository to serve (default: the global --root, else the git work tree around the current folder).")
MCP_MISSING = "paqad mcp needs the MCP Python SDK: pip install 'paqad[mcp]' (or: pip install 'mcp>=2.3,<3')"


def _session(app: AppContext, root_opt: str | None) -> Session:
    """The session for the repository; a bad ``--root`` fails here, before the session starts
    (one line, exit 2). The settings are not checked here: once the session runs, a broken
    configuration is an in-band ``config_error`` reply per request, so fixing the file mends a
    running session."""
    from paqad.agent.ops import Session
    from paqad.serve import doors

    session = Session(AppContext(root_opt or app.root_option, app.overrides).locate(), app.overrides)
    session.remote = doors.agent_remote(session.root, app.overrides)  # the warm service first, when there is one
    return session


def _protect_stdout() -> BinaryIO:
    """The real stdout for replies; anything else that prints (a library, a warning) goes to stderr,
    so a stray line can never corrupt the protocol stream."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    return out


@click.command("agent")
@ROOT_OPT
@click.pass_context
def agent(ctx: click.Context, root_opt: str | None) -> None:
    """Serve the JSON-lines agent protocol on stdin/stdout: one JSON request per line, one reply per line.

    Actions: hello, search, research, neighbors, open, describe_pending, describe_put, stats.
    Bad input gets an in-band error reply; end of input ends the session.

    Example: echo '{"id": 1, "action": "search", "query": "where are retries scheduled"}' | paqad agent
    """
    from paqad.agent import protocol

    session = _session(ctx.obj, root_opt)
    ctx.exit(protocol.serve(session, sys.stdin.buffer, _protect_stdout()))


@click.group("mcp", cls=HelpfulGroup, invoke_without_command=True)
@ROOT_OPT
@click.option("--hook-tool", is_flag=True, help="Also offer Claude Code's prompt hook as the tool prompt_context, for a hook of type mcp_tool (opt-in; see paqad.agent.mcp_hook).")
@click.pass_context
def mcp_group(ctx: click.Context, root_opt: str | None, hook_tool: bool) -> None:
    """Serve the agent operations as MCP tools over stdio (with no subcommand), or register the
    server with agent hosts (install, uninstall).

    Example: paqad mcp install --host all
    """
    ctx.meta["paqad_mcp_root"] = root_opt
    if ctx.invoked_subcommand is not None:
        return
    try:
        from paqad.agent import mcp_server
    except ImportError as exc:
        raise UsageError(MCP_MISSING) from exc
    session = _session(ctx.obj, root_opt)
    # No stdout guard here: the SDK's stdio transport serves the wire from a private duplicate
    # of fd 1 and points fd 1 itself at stderr while it runs.
    ctx.exit(mcp_server.serve(session, hook_tool))


HOST_OPT = click.option("--host", "hosts", default="all", metavar="LIST", help="Hosts, comma-separated: claude, codex, cursor, vscode, all (default: all).")
JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _root(ctx: click.Context) -> Path:
    app: AppContext = ctx.obj
    return AppContext(ctx.meta.get("paqad_mcp_root") or app.root_option, app.overrides).root()


def _report(ctx: click.Context, states: list[dict], as_json: bool) -> None:
    """The hosts' states; exit 1 (after the table) when a host's file could not be merged."""
    if as_json:
        emit_json({"hosts": states})
        return
    for s in states:
        note = f"  ({s['note']})" if s.get("note") else ""
        click.echo(f"{s['host']:<8} {s['action']:<10} {s['path']}{note}")
    if any(s["action"] == "error" for s in states):
        ctx.exit(1)


@mcp_group.command("install")
@HOST_OPT
@JSON_OPT
@click.pass_context
def mcp_install(ctx: click.Context, hosts: str, as_json: bool) -> None:
    """Register `paqad mcp` with agent hosts in this repository: Claude Code (.mcp.json), Codex
    (.codex/config.toml), Cursor (.cursor/mcp.json), VS Code (.vscode/mcp.json).

    Merges into each file keeping your entries and their order; running it again changes nothing;
    a file paqad cannot parse is reported and left untouched.

    Example: paqad mcp install --host claude,cursor
    """
    from paqad.hooks import mcp_install as inst

    root = _root(ctx)
    names = inst.host_names(hosts)
    states = [inst.install(root, name).to_dict() for name in names]
    _report(ctx, states, as_json)


@mcp_group.command("uninstall")
@HOST_OPT
@JSON_OPT
@click.pass_context
def mcp_uninstall(ctx: click.Context, hosts: str, as_json: bool) -> None:
    """Remove paqad's MCP entry from each host's config (the file is restored byte for byte when
    nobody edited it since; otherwise only the paqad entry goes).

    Example: paqad mcp uninstall --host all
    """
    from paqad.hooks import mcp_install as inst

    root = _root(ctx)
    names = inst.host_names(hosts)
    states = [inst.uninstall(root, name).to_dict() for name in names]
    _report(ctx, states, as_json)

