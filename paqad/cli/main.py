"""``paqad`` (alias ``paqad-ai``): the top-level group and the registry of command groups."""

from __future__ import annotations

import click

from paqad import __version__
from paqad.cli.common import AppContext, parse_overrides
from paqad.cli.config_cmd import config_group
from paqad.cli.rag_cmd import rag_group
from paqad.cli.refresh_cmd import refresh_context
from paqad.cli.hooks_cmd import hook_group, hooks_group
from paqad.cli.stackpack_cmd import stackpack


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paqad")
@click.option("--root", metavar="DIR", help="Repository to work on (default: the git work tree around the current folder).")
@click.option("-c", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a setting for this command only.")
@click.pass_context
def cli(ctx: click.Context, root: str | None, overrides: tuple[str, ...]) -> None:
    """Local code retrieval for AI coding agents.

    Example: paqad rag init && paqad rag search "where is the session cookie signed"
    """
    ctx.obj = AppContext(root, parse_overrides(overrides))


rag_group.add_command(refresh_context)
cli.add_command(rag_group)
cli.add_command(config_group)
cli.add_command(stackpack)
cli.add_command(hooks_group)
cli.add_command(hook_group)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code (0 ok, 2 usage/config, 1 other)."""
    try:
        cli.main(args=argv, prog_name="paqad", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return 2 if isinstance(exc, click.UsageError) or exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0
