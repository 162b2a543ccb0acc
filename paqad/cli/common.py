"""Shared CLI plumbing: the repository root, config with ``-c`` overrides, JSON output, errors."""

from __future__ import annotations

import json
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from paqad import __version__, config, git, workspace
from paqad.errors import PaqadError, UsageError


@dataclass
class AppContext:
    """What the top-level group parsed: where the repository is and the ``-c`` overrides."""

    root_option: str | None
    overrides: dict[str, str] = field(default_factory=dict)

    def root(self) -> Path:
        start = Path(self.root_option or ".").resolve()
        if not start.is_dir():
            raise UsageError(f"--root {self.root_option}: not a directory")
        return git.toplevel(start) or start

    def config(self) -> config.Config:
        return config.load(self.root(), self.overrides)


def parse_overrides(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="-c")
        out[key.strip()] = value
    return out


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def run_guarded(fn, *args: Any, **kwargs: Any) -> Any:
    """Turn library errors into one stderr line and the documented exit code."""
    try:
        return fn(*args, **kwargs)
    except PaqadError as exc:
        click.echo(f"paqad: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except git.GitError as exc:
        click.echo(f"paqad: error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("paqad: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # the unexpected tier: log the traceback, print one line
        where = _write_crash_log(exc)
        click.echo(f"paqad: unexpected error: {type(exc).__name__}: {exc} (details in {where})", err=True)
        sys.exit(1)


def _write_crash_log(exc: BaseException) -> str:
    text = f"# paqad {__version__} crash at {time.strftime('%Y-%m-%dT%H:%M:%S')}\n\n```\n{traceback.format_exc()}```\n"
    root = git.toplevel(Path.cwd()) or Path.cwd()
    target = workspace.logs_dir(root) / "crash.log"
    try:
        if workspace.paqad_dir(root).is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as handle:
                handle.write(text)
            return str(target)
    except OSError:
        pass
    sys.stderr.write(text)
    return "the traceback above"
