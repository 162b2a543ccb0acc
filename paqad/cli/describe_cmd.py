"""``paqad describe ...``: status, pending, put, promote (agent-written descriptions)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from paqad import describe
from paqad.cli.common import AppContext, HelpfulGroup, emit_json
from paqad.errors import UsageError
from paqad.index.reader import Index
from paqad.index.sidecar import MAX_DESCRIPTION_CHARS

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("describe", cls=HelpfulGroup)
def describe_group() -> None:
    """Descriptions an agent writes per unit, kept in paqad.descriptions.json (committed).

    A description joins the unit's search fields and its embedding while the code it describes
    is unchanged; `paqad rag update` applies new ones.

    Example: paqad describe pending --limit 5 --json
    """


@describe_group.command("status")
@JSON_OPT
@click.pass_obj
def describe_status(app: AppContext, as_json: bool) -> None:
    """How many units are described, stale (their code changed) or pending.

    Example: paqad describe status --json
    """
    data = describe.status(Index.shared(app.root()))
    if as_json:
        emit_json(data)
        return
    click.echo(
        f"described {data['described']}/{data['total']} units ({data['share']:.0%}); "
        f"stale {data['stale']}, pending {data['pending']}"
    )
    if data["unknown_ids"] or data["invalid_entries"]:
        click.echo(f"ignored in {data['sidecar']}: {data['unknown_ids']} unknown ids, {data['invalid_entries']} invalid entries")


@describe_group.command("pending")
@click.option("--limit", type=click.IntRange(0, 10_000), default=20, show_default=True, help="Units to list.")
@click.option("--offset", type=click.IntRange(0, None), default=0, show_default=True, help="Units to skip.")
@JSON_OPT
@click.pass_obj
def describe_pending(app: AppContext, limit: int, offset: int, as_json: bool) -> None:
    """Units without a valid description, most useful first (undocumented, public, most called,
    largest), with a source excerpt to describe each from.

    Example: paqad describe pending --limit 5 --json
    """
    data = describe.pending(Index.shared(app.root()), limit, offset)
    if as_json:
        emit_json(data)
        return
    click.echo(f"{data['total']} units pending")
    for unit in data["units"]:
        flag = " (stale)" if unit["stale"] else ""
        click.echo(f"{unit['id']}  {unit['kind']}  lines {unit['start_line']}-{unit['end_line']}  --hash {unit['content_hash']}{flag}")


@describe_group.command("put")
@click.argument("unit_id", metavar="ID")
@click.argument("text", required=False)
@click.option("--file", "file_", type=click.Path(dir_okay=False, path_type=Path), help="Read the description from this file.")
@click.option("--hash", "content_hash", metavar="H", help="The content_hash the description was written for (refused if the code changed).")
@JSON_OPT
@click.pass_obj
def describe_put(app: AppContext, unit_id: str, text: str | None, file_: Path | None, content_hash: str | None, as_json: bool) -> None:
    """Store the description of unit ID: TEXT, --file F, or standard input.

    Example: paqad describe put "src/cart.py::Cart.total" "Sums line items after discounts and tax." --hash 3f2a9c0d1e2b4a5f
    """
    body = _text_from(text, file_)
    data = describe.put(app.root(), unit_id, body, content_hash)
    emit_json(data) if as_json else click.echo(f"stored the description of {data['id']} ({data['content_hash']}); `paqad rag update` applies it")


def _text_from(text: str | None, file_: Path | None) -> str:
    if text is not None and file_ is not None:
        raise UsageError("give the description as TEXT or --file, not both")
    if file_ is not None:
        try:
            return file_.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--file {file_}: cannot read ({exc})") from exc
    if text is not None:
        return text
    if sys.stdin.isatty():
        raise UsageError("give the description as TEXT, --file F, or on standard input")
    return sys.stdin.read(MAX_DESCRIPTION_CHARS * 8)


@describe_group.command("promote")
@JSON_OPT
@click.pass_obj
def describe_promote(app: AppContext, as_json: bool) -> None:
    """Print a unified diff that writes the descriptions into docstrings or doc comments.

    Nothing is written: review the diff, then apply it.

    Example: paqad describe promote | git apply
    """
    diff = describe.promote(app.root())
    if as_json:
        emit_json({"diff": diff, "files": diff.count("\ndiff --git ") + diff.startswith("diff --git ")})
    else:
        click.echo(diff, nl=False)
