"""The one error handler around CLI dispatch, in tiers.

Commands raise; this module phrases. A :class:`~paqad.errors.PaqadError` is something the user
can act on: one ``paqad: error: ...`` line on stderr and the error's ``exit_code`` (2 usage or
configuration, 1 other). ^C is ``paqad: interrupted`` and exit 130 (128 + SIGINT, the shell's
convention). Anything else is a bug in paqad: its traceback goes to ``.paqad/logs/crash.log`` of
the repository the command worked on (``--root``), as Markdown ready to paste into an issue, and
stderr gets one line pointing there. click's own exceptions (usage errors, ``ctx.exit``) and
``SystemExit`` pass through untouched: click and :func:`paqad.cli.app.main` already phrase them.
"""

from __future__ import annotations

import contextlib
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from paqad import __version__, git, workspace
from paqad.errors import PaqadError

INTERRUPTED_EXIT = 130
CRASH_LOG = "crash.log"
_REQUIREMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
# Not errors: click's control flow and its usage errors, which click and main() phrase themselves.
_CLICK_FLOW = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort)


def one_line(exc: BaseException) -> str:
    """The message on one line: a multi-line message must not break "one line on stderr"."""
    return " ".join(str(exc).split())


@contextlib.contextmanager
def error_handler(root_option: Callable[[], str | None]) -> Iterator[None]:
    """Turn whatever the command raises into one stderr line and the documented exit code.

    ``root_option`` is asked only after a crash (the ``--root`` value is parsed after this
    handler is entered), to put the crash log in the repository the command was working on.
    """
    try:
        yield
    except _CLICK_FLOW:
        raise
    except PaqadError as exc:
        click.echo(f"paqad: error: {one_line(exc)}", err=True)
        raise click.exceptions.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        click.echo("paqad: interrupted", err=True)
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None
    except BrokenPipeError:
        raise  # the reader went away (`paqad ... | head`): click silences it and exits 1
    except Exception as exc:  # noqa: BLE001 - the unexpected tier: a bug, logged for a report
        where = write_crash_log(crash_root(root_option()), exc)
        click.echo(f"paqad: unexpected error: {type(exc).__name__}: {one_line(exc)} (details in {where})", err=True)
        raise click.exceptions.Exit(1) from None


def crash_root(root_option: str | None) -> Path:
    """The repository a crashed command worked on: ``--root`` (its git work tree), else the cwd's."""
    start = Path(root_option) if root_option else Path.cwd()
    if not start.is_dir():
        start = Path.cwd()
    try:
        return git.toplevel(start.resolve()) or start.resolve()
    except Exception:  # noqa: BLE001 - git itself failing must not hide the crash being reported
        return start.resolve()


def write_crash_log(root: Path, exc: BaseException) -> str:
    """Append the crash report to ``.paqad/logs/crash.log`` under ``root``; return where it went.

    A folder paqad never set up (no ``.paqad/``) is not written to: the report goes to a temp
    file instead, and if even that fails, to stderr ("the traceback above").
    """
    text = crash_report(exc)
    targets = [workspace.logs_dir(root) / CRASH_LOG] if workspace.paqad_dir(root).is_dir() else []
    targets.append(Path(tempfile.gettempdir()) / f"paqad-crash-{time.strftime('%Y%m%dT%H%M%S')}.log")
    for target in targets:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as handle:
                handle.write(text)
            return str(target)
        except OSError:
            continue
    sys.stderr.write(text)
    return "the traceback above"


def crash_report(exc: BaseException) -> str:
    """Versions, the command and the traceback, as Markdown for an issue."""
    import platform  # crash-report only
    import sqlite3

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return (
        f"## paqad {__version__} crashed at {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n\n"
        f"- command: `{' '.join(['paqad', *sys.argv[1:]])}`\n"
        f"- Python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}, SQLite {sqlite3.sqlite_version}\n"
        f"- dependencies: {_dependency_versions()}\n\n"
        f"```\n{tb}```\n\n"
    )


def _dependency_versions() -> str:
    """``name version`` of each installed runtime dependency paqad declares."""
    import importlib.metadata  # only when writing a crash report: not on every command's path

    try:
        requires = importlib.metadata.requires("paqad") or []
    except importlib.metadata.PackageNotFoundError:
        return "unknown (paqad is not installed as a distribution)"
    out = []
    for req in requires:
        match = _REQUIREMENT_NAME.match(req)
        if match is None or "extra ==" in req:
            continue
        try:
            out.append(f"{match.group(0)} {importlib.metadata.version(match.group(0))}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{match.group(0)} missing")
    return ", ".join(out)
