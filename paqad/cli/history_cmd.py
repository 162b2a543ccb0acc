"""``paqad rag history``: the commits whose messages answer a question, and the units they touched.

Registered on the ``rag`` group in ``paqad/cli/app.py``, as ``refresh-context`` is.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from paqad.cli.common import AppContext, emit_json

if TYPE_CHECKING:
    from paqad.history import search

UNITS_SHOWN = 5


def render(found: list[search.Found]) -> str:
    if not found:
        return "no commit message answers this"
    lines = []
    for f in found:
        c = f.commit
        lines.append(f"{c.sha[:10]} {f.to_dict()['date']}  {c.subject}  (score {c.score:.2f})")
        more = f" (+{len(f.units) - UNITS_SHOWN} more)" if len(f.units) > UNITS_SHOWN else ""
        lines.append("    units: " + (", ".join(f.units[:UNITS_SHOWN]) + more if f.units else "none in the current index"))
    return "\n".join(lines)


@click.command("history")
@click.argument("question", required=False)
@click.option("--limit", default=10, show_default=True, help="How many commits to show.")
@click.option("--max-commits", type=int, default=None, help="On the first build, read at most this many of the newest commits.")
@click.option("--no-update", is_flag=True, help="Search the history as stored; do not append the new commits first.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def rag_history(app: AppContext, question: str | None, limit: int, max_commits: int | None, no_update: bool, as_json: bool) -> None:
    """Search the commit history: the commits whose messages answer QUESTION, with the units they touched.

    The history is indexed offline beside the index: each commit's message (secrets masked) and
    the lines it touched (never in a secrets file; a commit that touched only secrets files is left
    out). The first run reads the whole history, later runs append the new commits. Without
    QUESTION, only that update runs. Units are the current index's that hold the lines the commit
    wrote, carried through the later commits and renames to where they are now (approximate
    across parallel branches). With rag_last_changed on, delivered passages name their last commit.

    Example: paqad rag history "why does the retry loop wait two seconds"
    """
    from paqad.history import build, search  # lazy: each rag command loads only its own stack

    root = app.root()
    report = None if no_update else build.update(root, limit=max_commits)
    if question is None:
        if as_json:
            emit_json(dataclasses.asdict(report) if report else {})
        elif report is not None:
            click.echo(f"history: {report.added} commits added ({report.read} read, {report.dropped_secrets} left out:"
                       f" secrets files only) in {report.seconds} s ({report.path})")
        return
    found = search.search(root, question, limit)
    if as_json:
        emit_json({"query": question, "results": [f.to_dict() for f in found], "update": dataclasses.asdict(report) if report else None})
    else:
        click.echo(render(found))
