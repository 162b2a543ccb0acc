"""``paqad doctor``: is every installed agent host really wired? One line per finding, with its fix."""

from __future__ import annotations

import sys

import click

from paqad.cli.common import AppContext, emit_json
from paqad.hooks import doctor as doctor_mod


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def doctor(app: AppContext, as_json: bool) -> None:
    """Run each installed host's hook command as the host would, with its recorded input, and check
    the output's shape, size and time, which paqad ran, and whether the host will run the hook.
    The prompt replay asks a question picked from the index: delivering nothing for it is an
    error. Then, per host, how the last prompts were answered (live, weak, stale, nothing,
    failed; from the last 50 prompt-hook lines of hooks.log), a warning when many missed.

    Exits 1 when something is broken. Example: paqad doctor --json
    """
    findings = doctor_mod.check(app.root())
    data = doctor_mod.to_json(findings)
    if as_json:
        emit_json(data)
    else:
        for finding in findings:
            click.echo(finding.line())
    if not data["ok"]:
        sys.exit(1)
