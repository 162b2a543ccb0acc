"""``paqad doctor``: is every installed agent host really wired? One line per finding, with its fix."""

from __future__ import annotations

import sys

import click

from paqad.cli.common import AppContext, emit_json


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def doctor(app: AppContext, as_json: bool) -> None:
    """Run each installed host's hook command as the host would, with its recorded input, and check
    the output's shape, size and time, which paqad ran, and whether the host will run the hook.

    Exits 1 when something is broken. Example: paqad doctor --json
    """
    from paqad.hooks import doctor as doctor_mod

    findings = doctor_mod.check(app.root())
    data = doctor_mod.to_json(findings)
    if as_json:
        emit_json(data)
    else:
        for finding in findings:
            click.echo(finding.line())
    if not data["ok"]:
        sys.exit(1)
