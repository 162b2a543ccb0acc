"""``paqad workspace add|fetch|list|remove``: the other repositories ``rag search --workspace`` asks."""

from __future__ import annotations

import dataclasses

import click

from paqad.cli.common import AppContext, HelpfulGroup, emit_json

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("workspace", cls=HelpfulGroup)
def workspace_group() -> None:
    """Other local repositories searched with `paqad rag search --workspace` (per developer,
    never committed; each member answers from its own index, with its own rules).

    Example: paqad workspace add ../shared-lib
    """


@workspace_group.command("add")
@click.argument("path")
@click.pass_obj
def workspace_add(app: AppContext, path: str) -> None:
    """Add the git repository at PATH (run `paqad rag init` there to make it answer), or clone the
    one at a URL (or a bare repository) into the user cache and index it there.

    Example: paqad workspace add ../billing-service   (or: paqad workspace add https://git.example.com/team/shared-lib.git)
    """
    from paqad.search import across  # lazy: the search stack (118 modules), not for `workspace add/remove/list`
    from paqad.workspaces import cloned  # lazy: 91 modules, only for a member given by URL

    app.config()  # the settings are checked first, as by every command
    remote = cloned.is_remote(path)
    top = across.add(app.root(), path)
    click.echo(f"added {top}" + (f" (cloned from {path} and indexed; `paqad workspace fetch` brings it up to date)" if remote else ""))


@workspace_group.command("fetch")
@click.argument("name", required=False)
@JSON_OPT
@click.pass_obj
def workspace_fetch(app: AppContext, name: str | None, as_json: bool) -> None:
    """Fetch the members given by URL (or the one NAMEd) and update their indexes: the only time a
    workspace talks to their remotes (searching never does).

    Example: paqad workspace fetch shared-lib
    """
    from paqad.search import across  # lazy: the search stack (118 modules), not for `workspace add/remove/list`
    from paqad.workspaces import cloned  # lazy: 91 modules, only for a member given by URL

    app.config()
    done = cloned.fetch(across.sources(app.root()), name)
    if as_json:
        emit_json({"schema_version": 1, "fetched": [dataclasses.asdict(f) for f in done]})
        return
    if not done:
        click.echo("no member given by URL to fetch (`paqad workspace add URL` adds one)")
    for f in done:
        if f.error:
            click.echo(f"{f.repository}: not fetched ({f.error})")
        elif f.old == f.new:
            click.echo(f"{f.repository}: up to date at {(f.new or '')[:12]}")
        else:
            click.echo(f"{f.repository}: {(f.old or 'cloned again')[:12]} -> {(f.new or '')[:12]}, {max(f.changed_files, 0)} files re-indexed")


@workspace_group.command("remove")
@click.argument("path")
@click.pass_obj
def workspace_remove(app: AppContext, path: str) -> None:
    """Remove a member, by path or by its folder name.

    Example: paqad workspace remove shared-lib
    """
    from paqad.search import across  # lazy: the search stack (118 modules), not for `workspace add/remove/list`

    app.config()
    click.echo(f"removed {across.remove(app.root(), path)}")


@workspace_group.command("list")
@JSON_OPT
@click.pass_obj
def workspace_list(app: AppContext, as_json: bool) -> None:
    """This repository and its members, and whether each has an index.

    Example: paqad workspace list --json
    """
    from paqad.search import across  # lazy: the search stack (118 modules), not for `workspace add/remove/list`

    app.config()
    rows = across.describe(app.root())
    if as_json:
        emit_json({"schema_version": 1, "members": rows})
        return
    for r in rows:
        hint = "`paqad workspace fetch`" if r["url"] else "`paqad rag init` there"
        note = "" if r["indexed"] else f"  (no index: run {hint})"
        source = f"  from {r['url']}" if r["url"] else ""
        click.echo(f"{r['repository']:<24} {r['path']}{'  (this repository)' if r['self'] else ''}{source}{note}")
