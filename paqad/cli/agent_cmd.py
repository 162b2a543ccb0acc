"""``paqad agent`` (the JSON-lines protocol) and ``paqad mcp`` (the MCP server, ``install``, ``uninstall``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click

from paqad.cli.common import AppContext, HelpfulGroup, emit_json
from paqad.errors import PaqadError, UsageError
from paqad.serve import route

if TYPE_CHECKING:
    from paqad.agent.ops import Session  # lazy: the search stack (131 modules), not for `mcp install`

ROOT_OPT = click.option("--root", "root_opt", metavar="DIR", default=None, help="Repository to serve (default: the global --root, else the git work tree around the current folder).")


def mcp_missing() -> str:
    """What to run when the MCP SDK is missing: commands for this interpreter and paqad's install source."""
    from paqad import origin  # lazy: 38 modules, only for the MCP registration's launcher

    sdk = next(iter(origin.extra_requirements("mcp")), "mcp>=2.3,<3")
    return f"paqad mcp needs the MCP Python SDK: {origin.pip_install('mcp')} (or: {origin.pip_command(sdk)})"


def _session(app: AppContext, root_opt: str | None) -> Session:
    """The session for the repository; a bad ``--root`` fails here, before the session starts
    (one line, exit 2). The settings are not checked here: once the session runs, a broken
    configuration is an in-band ``config_error`` reply per request, so fixing the file mends a
    running session."""
    from paqad.agent.ops import Session  # lazy: the search stack (131 modules), not for `mcp install`

    session = Session(AppContext(root_opt or app.root_option, app.overrides).locate(), app.overrides)
    session.remote = route.agent_remote(session.root, app.overrides)  # the warm service first, when there is one
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
    from paqad.agent import protocol  # lazy: the search stack (132 modules), not for `mcp install`

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
        from paqad.agent import mcp_server  # lazy: the MCP SDK (552 modules), only for `paqad mcp`
    except ImportError as exc:
        raise UsageError(mcp_missing()) from exc
    session = _session(ctx.obj, root_opt)
    # No stdout guard here: the SDK's stdio transport serves the wire from a private duplicate
    # of fd 1 and points fd 1 itself at stderr while it runs.

    ctx.exit(mcp_server.serve(session, route.prompt_context if hook_tool else None))


HOST_OPT = click.option(
    "--host", "hosts", default=None, metavar="LIST", help="Hosts, comma-separated: claude, codex, cursor, vscode, gemini, qwen, droid, all (install's default: the hosts present here; uninstall's: all)."
)
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
def mcp_install(ctx: click.Context, hosts: str | None, as_json: bool) -> None:
    """Register `paqad mcp` with the agent hosts present here: Claude Code (.mcp.json), Codex
    (.codex/config.toml), Cursor (.cursor/mcp.json), VS Code (.vscode/mcp.json), Gemini CLI, Qwen
    Code, Droid. A host is present when the repository shows it or this machine has it (its CLI on
    PATH, its folder in your home); --host names hosts to register anyway.

    The entries run paqad's per-user launcher (written now, for this paqad), else paqad on PATH,
    like the hook commands. Refused (exit 1, nothing written) when the server could not start: no
    MCP SDK. Merges into each file keeping your entries and their order; running it again changes
    nothing; a file paqad cannot parse is reported and left untouched.

    Example: paqad mcp install --host claude,cursor
    """
    from paqad.hooks import mcp_install as inst  # lazy: 79 modules, only for `mcp install/uninstall`
    from paqad.hooks.hosts import launcher  # lazy: 40 modules, only for `mcp install`

    root = _root(ctx)
    names = inst.host_names(hosts) if hosts is not None else list(inst.HOSTS)
    missing = inst.cannot_start()  # this interpreter's SDK first: nothing is written without it
    if missing is None:
        launcher.write_shim()  # what the entries run first, as `paqad hooks install` writes it
        missing = inst.cannot_start()
    if missing is not None:
        raise PaqadError(missing)
    states: list[dict] = []
    for name in names:
        why = inst.present(root, name) if hosts is None else "named"
        if why is None:
            note = f"not found here or on this machine; --host {name} registers it anyway"
            states.append(inst.InstallState(name, inst.HOSTS[name].rel, "skipped", note).to_dict())
        else:
            states.append(inst.install(root, name).to_dict())
    _report(ctx, states, as_json)
    if not as_json and all(s["action"] == "skipped" for s in states):
        click.echo(f"no agent host found here or on this machine: nothing registered; name one with --host ({', '.join(inst.HOSTS)})", err=True)
        ctx.exit(1)


@mcp_group.command("uninstall")
@HOST_OPT
@JSON_OPT
@click.pass_context
def mcp_uninstall(ctx: click.Context, hosts: str | None, as_json: bool) -> None:
    """Remove paqad's MCP entry from each host's config (the file is restored byte for byte when
    nobody edited it since; otherwise only the paqad entry goes).

    Example: paqad mcp uninstall --host all
    """
    from paqad.hooks import mcp_install as inst  # lazy: 79 modules, only for `mcp install/uninstall`

    root = _root(ctx)
    names = inst.host_names(hosts or "all")
    states = [inst.uninstall(root, name).to_dict() for name in names]
    _report(ctx, states, as_json)

