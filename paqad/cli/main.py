"""``paqad`` (alias ``paqad-ai``): the console script's entry point, light enough for a hook.

Agent hosts run ``paqad hook run EVENT --host NAME`` on every prompt and git hooks run ``paqad hook
run EVENT`` on every commit, so this module imports nothing but the standard library: those exact
command lines go to :mod:`paqad.serve.hookclient`, which asks the work tree's resident service and
imports the full CLI only when it has to answer in-process. Everything else goes to the click
application, :mod:`paqad.cli.app` (``cli``, ``COMMANDS`` and ``LazyGroup`` are still readable
here, imported on first access).
"""

from __future__ import annotations

import sys

from paqad import localstate

TYPE_CHECKING = False  # no ``typing`` import at run time (~8 ms of a hook's budget)
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code (0 ok, 2 usage/config, 1 other, 130 ^C)."""
    localstate.one_blas_thread()  # before anything loads numpy (localstate is stdlib only)
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:2] == ["hook", "run"]:
        from paqad.serve import hookclient  # lazy: 11 modules, only for `hook run` (the rest of the CLI never loads it)

        if hookclient.handles(args):
            return hookclient.main(args)
    from paqad.cli import app  # lazy: click and the command registry: a hook the service answers never loads them

    return app.main(argv)


def __getattr__(name: str) -> Any:
    if name in ("cli", "COMMANDS", "LazyGroup"):
        from paqad.cli import app  # lazy: click and the command registry: a hook the service answers never loads them

        return getattr(app, name)
    raise AttributeError(name)
