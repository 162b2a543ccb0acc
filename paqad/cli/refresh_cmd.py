"""``paqad rag refresh-context``: the worker the hooks start, also usable by hand.

Registered on the ``rag`` group in ``paqad/cli/app.py``:
``rag_group.add_command(refresh_context)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from paqad.cli.common import AppContext, emit_json

if TYPE_CHECKING:
    from paqad.delivery import refresh


def render_report(report: refresh.Report) -> str:
    lines = [f"query ({report.query_source}): {report.query[:200]!r}" if report.query else "query: none"]
    lines.append(f"depth: {report.depth.get('level')} (top {report.depth.get('top_n')}): {report.depth.get('reason')}")
    if report.synced:
        lines.append(f"index: {report.synced}")
    if report.context_file:
        lines.append(f"delivered: {report.case}, {len((report.delivery or {}).get('passages', []))} item(s) of {report.results} results -> {report.context_file}")
    else:
        lines.append("delivered: nothing (no retrieval needed)")
    return "\n".join(lines)


@click.command("refresh-context")
@click.option("--prompt", default=None, help="Answer this text instead of the recorded prompt or the working set.")
@click.option("--no-sync", is_flag=True, help="Search the index as it is; do not update it first.")
@click.option("--no-drift", is_flag=True, help="Skip the (throttled) base-branch drift check.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with the depth chosen and why.")
@click.pass_obj
def refresh_context(app: AppContext, prompt: str | None, no_sync: bool, no_drift: bool, as_json: bool) -> None:
    """Sync the index, build the query, search, and write <per-developer folder>/context/session-context.md.

    The query is the last prompt a hook recorded, otherwise the working set (changed files and
    the commits since the base branch).

    Example: paqad rag refresh-context --json
    """
    root = app.root()
    # Imported here, not at the top: `paqad rag update` shares this command group and must not
    # pay for the search stack that `paqad.delivery.refresh` front-loads.
    from paqad.delivery import drift, refresh

    report = refresh.refresh(root, app.config(), prompt=prompt, sync=not no_sync)
    moved = None if no_drift else drift.check(root, app.config(), files=(report.working_set or {}).get("files"))
    if as_json:
        return emit_json({**report.to_dict(), "drift": moved.to_dict() if moved else None})
    click.echo(render_report(report))
    if moved is not None:
        click.echo(f"base drift: {moved.status}" + (f" ({moved.reason})" if moved.reason else ""))
