"""The one error handler around CLI dispatch, in tiers.

Commands raise; this module phrases. A :class:`~paqad.errors.PaqadError` is something the user
can act on: one ``paqad: error: ...`` line on stderr and the error's ``exit_code`` (2 usage or
configuration, 1 other). ^C is ``paqad: interrupted`` and exit 130 (128 + SIGINT, the shell's
convention). Anything else is a bug in paqad: its traceback goes to ``crash.log`` in the logs folder
(``workspace.logs_dir``) of the repository the command worked on (``--root``), as Markdown ready
to paste into an issue, and stderr gets one line pointing there. click's own exceptions (usage
errors, ``ctx.exit``) and ``SystemExit`` pass through untouched: click and
:func:`paqad.cli.app.main` already phrase them.

A report is private (issue 31, finding 12): it is written 0600 and opened without following a
symlink; where no repository takes it, it goes to a new file (``O_EXCL``) in ``crash/`` of the
user's cache folder (``paqad.workspace.cache_dir``, 0700), never to the shared temp
folder, where another user could read it, predict its name or plant a symlink in its place. The
command line in it has its secrets masked (:func:`masked_argv`): a ``-c`` setting whose name
says key, token, secret, password, store or DSN, the value after ``--password`` and its kin, a
URL's password, and whatever :func:`paqad.redaction.redact` recognises.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
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
    """Append the crash report to ``crash.log`` in ``root``'s logs folder; return where it went.

    A folder paqad never set up (no ``.paqad/``) is not written to: the report goes to a new file
    in the user's cache folder instead, and if even that fails, to stderr ("the traceback above").
    """
    text = crash_report(exc)
    if workspace.paqad_dir(root).is_dir():
        target = workspace.logs_dir(root) / CRASH_LOG
        if _write_private(target, text, append=True):
            return str(target)
    folder = _user_crash_dir()
    if folder is not None:
        target = folder / f"paqad-crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
        if _write_private(target, text, append=False):
            return str(target)
    sys.stderr.write(text)
    return "the traceback above"


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _write_private(target: Path, text: str, append: bool) -> bool:
    """Write ``text`` to ``target`` 0600 without following a symlink there; False when it cannot.

    ``append`` adds to an existing file of ours (made 0600 if it was wider); otherwise the file
    must be new (``O_EXCL``)."""
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | (os.O_APPEND if append else os.O_EXCL)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, flags, 0o600)
    except OSError:  # a symlink there (ELOOP), a name taken (EEXIST), no room, no permission
        return False
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or (info.st_mode & 0o170000) != 0o100000:
            return False  # not a regular file of ours (a FIFO, another user's file)
        if info.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8", "replace"))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _user_crash_dir() -> Path | None:
    """``crash/`` in the user's cache folder, 0700 and ours, or None (no home, a stranger's folder)."""
    try:
        from paqad.workspace import cache_dir  # on a crash only: it imports filelock

        folder = cache_dir() / "crash"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except (OSError, RuntimeError):  # RuntimeError: Path.home() with no home to find
        return None
    if (info.st_mode & 0o170000) != 0o040000 or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


# A ``-c`` setting, or an option, whose name says it holds a credential.
_SECRET_NAME = re.compile(r"(?i)(key|token|secret|passw|pwd|credential|auth|dsn|store|cookie)")
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)[^/@\s]*(?=@)")
_KV_PASSWORD = re.compile(r"(?i)(?P<head>\bpassword\s*=\s*)\S+")
MASK = "***"


def masked_argv(argv: list[str]) -> list[str]:
    """``argv`` fit for a report: values that may be credentials replaced by ``***``.

    ``-c NAME=VALUE`` (also ``-cNAME=VALUE``) keeps the name and masks a secret-sounding name's
    value; an option named like a secret (``--password``, ``--token``, ``--api-key``) has its
    value masked, attached (``--password=x``) or the next word; a URL keeps all but its password;
    ``password=...`` in a libpq string is masked; the rest goes through ``redaction.redact``."""
    from paqad import redaction  # on a crash only

    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if arg.startswith("--") and _SECRET_NAME.search(arg.split("=", 1)[0]):
            if "=" in arg:
                out.append(arg.split("=", 1)[0] + "=" + MASK)
            else:
                out.append(arg)
                mask_next = True
            continue
        if arg == "-c" or arg.startswith("--config"):
            out.append(arg)
            continue
        out.append(_masked_value(arg, redaction.redact))
    return out


def _masked_value(arg: str, redact: Callable[[str], str]) -> str:
    prefix, body = ("-c", arg[2:]) if arg.startswith("-c") and "=" in arg else ("", arg)
    name, eq, value = body.partition("=")
    if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name) and _SECRET_NAME.search(name):
        return f"{prefix}{name}={MASK}"
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, body)
    text = _KV_PASSWORD.sub(lambda m: m.group("head") + MASK, text)
    return prefix + redact(text)


def crash_report(exc: BaseException) -> str:
    """Versions, the command and the traceback, as Markdown for an issue."""
    import platform  # crash-report only
    import sqlite3  # lazy: every command loads this module; sqlite3 (a C extension) only to phrase a crash

    from paqad import redaction  # lazy: 7 modules, only to phrase a crash

    tb = redaction.redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return (
        f"## paqad {__version__} crashed at {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n\n"
        f"- command: `{' '.join(['paqad', *masked_argv(sys.argv[1:])])}`\n"
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
