"""Shared CLI plumbing: the repository root, config with ``-c`` overrides, JSON output.

Errors are not handled here: commands raise, and :mod:`paqad.cli.errors` phrases them once,
around dispatch.
"""

from __future__ import annotations

import difflib
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from paqad import config, git
from paqad.errors import UsageError


class HelpfulGroup(click.Group):
    """A command group whose ``--help`` lists each command's whole first sentence (wrapped, never
    cut with "..."), and whose unknown command names the one that was probably meant."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=400)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            if close:
                ctx.fail(f"No such command {name!r}; did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)


class LazyGroup(HelpfulGroup):
    """A group with subcommands named in ``lazy`` ("name" -> "module:attribute") that are imported
    only when asked for (click's documented lazy-loading pattern), so ``paqad rag search`` does not
    load the modules of ``rag history`` or ``rag refresh-context``."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, attr = self.lazy[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


@dataclass
class AppContext:
    """What the top-level group parsed: where the repository is and the ``-c`` overrides."""

    root_option: str | None
    overrides: dict[str, str] = field(default_factory=dict)

    _checked: Path | None = field(default=None, init=False, repr=False)

    def locate(self) -> Path:
        """The repository: ``--root`` (or the current folder), widened to its git work tree.

        Only the doors that report configuration errors in-band (``paqad agent``, ``paqad mcp``)
        call this directly; every other command goes through :meth:`root`.
        """
        start = Path(self.root_option or ".").resolve()
        if not start.is_dir():
            raise UsageError(f"--root {self.root_option}: not a directory")
        top = git.toplevel(start)
        kind = git.git_dir_kind(start) if top is None else None
        if kind == "bare":
            raise UsageError(f"{start} is a bare git repository: it has no work tree to index; run paqad in a clone of it")
        if kind is not None:
            raise UsageError(f"{start} is inside a git dir (.git): run paqad in the work tree it belongs to")
        return top or start

    def root(self) -> Path:
        """The repository, once its settings (files, ``PAQAD_*``, ``-c``) are known to be valid.

        Every command refuses a broken configuration before it does anything, whether or not it
        reads the setting that is broken: one rule (git does the same with a bad config file), so
        a typo in the local ``config.yaml`` or ``-c`` is one ``paqad: error:`` line and exit 2 everywhere,
        never a half-done command. ``config set`` included: fix a broken file by editing it.
        """
        if self._checked is None:
            root = self.locate()
            config.load(root, self.overrides)
            self._checked = root
        return self._checked

    def config(self) -> config.Config:
        """The settings, read afresh (a command may have just changed them, as ``rag init`` does).

        Called before :meth:`root`, the one load that checks them is also the one returned: a
        request that needs only its settings (``rag search``) reads them once."""
        if self._checked is None:
            root = self.locate()
            cfg = config.load(root, self.overrides)
            self._checked = root
            return cfg
        return config.load(self._checked, self.overrides)


def migrate_setup(root: Path) -> None:
    """Move an older setup's per-developer files out of the work tree and rewrite paqad's git shims
    an older version wrote; each thing done is one ``paqad:`` line on stderr, said once (what moved
    is not there the next time). ``hooks install``, ``rag init`` and ``rag update`` call it."""
    from paqad import trust  # lazy: only when a setup is migrated (a first run after an upgrade)
    from paqad.hooks import gitshims  # lazy: 17 modules, only when a setup is migrated

    for line in trust.migrate(root):
        click.echo(f"paqad: {line}", err=True)
    if gitshims.refresh(root):
        click.echo("paqad: rewrote the git hook shims of an older paqad (they read state inside the work tree)", err=True)


def parse_overrides(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="-c")
        out[key.strip()] = value
    return out


def emit_json(data: object) -> None:
    """``data`` as indented JSON on stdout (a value JSON cannot hold is written as its text)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
