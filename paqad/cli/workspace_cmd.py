"""``paqad workspace add|list|remove``: the other local repositories ``rag search --workspace`` asks."""

from __future__ import annotations

import click

from paqad.cli.common import AppContext, emit_json

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("workspace")
def workspace_group() -> None:
    """Other local repositories searched with `paqad rag search --workspace` (per developer,
    never committed; each member answers from its own index, with its own rules).

    Example: paqad workspace add ../shared-lib
    """


@workspace_group.command("add")
@click.argument("path")
@click.pass_obj
def workspace_add(app: AppContext, path: str) -> None:
    """Add the git repository at PATH (run `paqad rag init` there to make it answer).

    Example: paqad workspace add ../billing-service
    """
    from paqad.search import across

    app.config()  # the settings are checked first, as by every command
    top = across.add(app.root(), path)
    click.echo(f"added {top}")


@workspace_group.command("remove")
@click.argument("path")
@click.pass_obj
def workspace_remove(app: AppContext, path: str) -> None:
    """Remove a member, by path or by its folder name.

    Example: paqad workspace remove shared-lib
    """
    from paqad.search import across

    app.config()
    click.echo(f"removed {across.remove(app.root(), path)}")


@workspace_group.command("list")
@JSON_OPT
@click.pass_obj
def workspace_list(app: AppContext, as_json: bool) -> None:
    """This repository and its members, and whether each has an index.

    Example: paqad workspace list --json
    """
    from paqad.search import across

    app.config()
    rows = across.describe(app.root())
    if as_json:
        emit_json({"schema_version": 1, "members": rows})
        return
    for r in rows:
        note = "" if r["indexed"] else "  (no index: run `paqad rag init` there)"
        click.echo(f"{r['repository']:<24} {r['path']}{'  (this repository)' if r['self'] else ''}{note}")
