"""The click application: the top-level ``paqad`` group and the registry of command groups.

:mod:`paqad.cli.main` (the console script) imports it for every command but the hook entry
points, which it hands to the stdlib-only :mod:`paqad.serve.hookclient` first."""

from __future__ import annotations

import importlib

import click

from paqad import __version__
from paqad.cli.common import AppContext, HelpfulGroup, parse_overrides
from paqad.cli.errors import error_handler

# Command name -> "module:attribute". Groups are imported only when their command runs, so a
# prompt hook (`paqad hook run`) does not pay for the search stack's imports, nor `paqad config`
# for tree-sitter. (click's documented lazy-loading pattern.)
COMMANDS = {
    "rag": "paqad.cli.rag_cmd:rag_group",
    "config": "paqad.cli.config_cmd:config_group",
    "stackpack": "paqad.cli.stackpack_cmd:stackpack",
    "hooks": "paqad.cli.hooks_cmd:hooks_group",
    "hook": "paqad.cli.hooks_cmd:hook_group",
    "describe": "paqad.cli.describe_cmd:describe_group",
    "bootstrap": "paqad.cli.bootstrap_cmd:bootstrap",
    "agent": "paqad.cli.agent_cmd:agent",
    "mcp": "paqad.cli.agent_cmd:mcp_group",
    "serve": "paqad.cli.serve_cmd:serve_group",
    "doctor": "paqad.cli.doctor_cmd:doctor",
    "report": "paqad.cli.report_cmd:report",
    "workspace": "paqad.cli.workspace_cmd:workspace_group",
}


class LazyGroup(HelpfulGroup):
    """A group whose subcommands are imported on first use, and dispatched inside the error handler."""

    def invoke(self, ctx: click.Context) -> None:
        """Run the group callback and the subcommand inside :func:`error_handler`: the one place a
        command's exception becomes a stderr line and an exit code (inside click's own handling,
        so ^C reaches the handler as KeyboardInterrupt rather than as click's ``Abort``).

        A command's return value is dropped: with ``standalone_mode=False`` click returns an
        ``Exit``'s code from ``main``, so the only value that comes back is an exit code.
        """
        with error_handler(lambda: ctx.params.get("root")):
            super().invoke(ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paqad")
@click.option("--root", metavar="DIR", help="Repository to work on (default: the git work tree around the current folder).")
@click.option("-c", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a setting for this command only.")
@click.pass_context
def cli(ctx: click.Context, root: str | None, overrides: tuple[str, ...]) -> None:
    """Local code retrieval for AI coding agents.

    Example: paqad rag init && paqad rag search "where is the session cookie signed"
    """
    ctx.obj = AppContext(root, parse_overrides(overrides))


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code (0 ok, 2 usage/config, 1 other, 130 ^C).

    Command errors are phrased by :func:`error_handler` during dispatch; what reaches here is
    click's own: a usage error (exit 2), ``ctx.exit(code)``, or an ``Abort`` (EOF at a prompt).
    """
    try:
        code = cli.main(args=argv, prog_name="paqad", standalone_mode=False)
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
    return code if isinstance(code, int) else 0
