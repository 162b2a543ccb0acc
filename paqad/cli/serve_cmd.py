"""``paqad serve`` (run the work tree's resident process), ``paqad serve status``, ``paqad serve stop``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, cast

import click

from paqad.channel import client, paths
from paqad.cli.common import AppContext, HelpfulGroup, emit_json

if TYPE_CHECKING:
    from paqad.channel.wire import ServiceInfo

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("serve", cls=HelpfulGroup, invoke_without_command=True)
@click.pass_context
def serve_group(ctx: click.Context) -> None:
    """Serve this work tree from the user's resident paqad process (with no subcommand): become
    that process in the foreground, or hand the work tree to the one already running.

    The doors (prompt hooks, rag search, paqad agent, paqad mcp) start it on demand and fall back
    to answering in-process whenever it is absent. One process serves every work tree of the user
    (one query model); a work tree is released after rag_serve_idle_timeout seconds without a
    request, and the process ends with the last one, or past rag_serve_memory_cap MB. Each work
    tree has its Unix socket in the user's runtime folder, never a TCP port.

    Example: paqad serve status
    """
    if ctx.invoked_subcommand is not None:
        return
    from paqad.serve import server  # lazy: `serve status` and `serve stop` need the channel only, not the service's modules

    app: AppContext = ctx.obj
    code = server.serve(app.root(), app.config())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # worker threads (an abandoned search, a job) must not keep the process alive


@serve_group.command("status")
@JSON_OPT
@click.pass_obj
def serve_status(app: AppContext, as_json: bool) -> None:
    """Is this work tree's service running: pid, version, uptime, requests, memory, socket; and
    whether a runtime folder is refused (another user's, open to others, a symlink), with the fix.

    Example: paqad serve status --json
    """
    root = app.root()
    found = paths.for_root(root)
    outcome = client.request(root, "status", reply_timeout=2.0)
    # our own service's status (ServiceInfo), read back from the wire
    info = cast("ServiceInfo | None", (outcome.reply or {}).get("info") if outcome.answered else None)
    refused = paths.refused_problem(root)  # said here and by `paqad doctor`; the hooks only log it, once
    data = {
        "running": info is not None, "why": None if info else outcome.why, "socket": str(found.socket) if found else None, "service": info,
        "runtime_refused": {"what": refused[0], "fix": refused[1]} if refused else None,
    }
    if as_json:
        return emit_json(data)
    if refused:
        click.echo(f"warning: {refused[0]} — fix: {refused[1]}")
    if info is None:
        click.echo(f"not running ({outcome.why}); socket would be {data['socket']}")
        return
    click.echo(
        f"running: pid {info['pid']}, paqad {info['version']}, up {info['uptime_s']:.0f}s, {info['requests']} requests, "
        f"{info['rss_mb']:.0f} MB (cap {info['memory_cap_mb']}), idle timeout {info['idle_timeout_s']:g}s, "
        f"{len(info.get('work_trees') or [info['root']])} work trees in this process\nsocket: {info['socket']}"
    )


@serve_group.command("stop")
@JSON_OPT
@click.pass_obj
def serve_stop(app: AppContext, as_json: bool) -> None:
    """Ask this work tree's service to exit, and wait until it has.

    Example: paqad serve stop
    """
    was = client.stop(app.root())
    if as_json:
        return emit_json({"stopped": was})
    click.echo("stopped" if was else "not running")
