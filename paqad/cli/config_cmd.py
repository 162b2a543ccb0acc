"""``paqad config list | get KEY | set KEY VALUE``."""

from __future__ import annotations

import click

from paqad import config as config_mod
from paqad.cli.common import AppContext, HelpfulGroup, emit_json
from paqad.settings import SETTINGS


@click.group("config", cls=HelpfulGroup)
def config_group() -> None:
    """Show and change settings (defaults < .paqad/configs/* < your own config.yaml < PAQAD_* < -c).

    Example: paqad config set rag_top_n 30
    """


@config_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def config_list(app: AppContext, as_json: bool) -> None:
    """List every setting, its value and where the value came from.

    Example: paqad config list --json
    """
    cfg = app.config()
    rows = [{"key": k, "value": v.value, "source": v.source, "help": SETTINGS[k].help} for k, v in cfg.items()]
    if as_json:
        emit_json(rows)
        return
    width = max(len(k) for k in SETTINGS)
    for r in rows:
        click.echo(f"{r['key']:<{width}}  {_show(r['value']):<8}  ({r['source']})")


@config_group.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def config_get(app: AppContext, key: str, as_json: bool) -> None:
    """Print one setting's value.

    Example: paqad config get rag_top_n
    """
    cfg = app.config()
    if key not in SETTINGS:
        config_mod.load(app.root(), {key: ""})  # raises the ConfigError that names the key and suggests one
    if as_json:
        emit_json({"key": key, "value": cfg[key], "source": cfg.source(key)})
    else:
        click.echo(_show(cfg[key]))


@config_group.command("set")
@click.argument("key")
@click.argument("value")
@click.option("--team", is_flag=True, help="Write to the committed .paqad/configs/team.yaml instead of your own config.yaml (outside the repository).")
@click.pass_obj
def config_set(app: AppContext, key: str, value: str, team: bool) -> None:
    """Validate and store a setting (local by default).

    Example: paqad config set rag_max_file_size 300000
    """
    path = config_mod.set_value(app.root(), key, value, team)
    shown = path.relative_to(app.root()) if path.is_relative_to(app.root()) else path
    click.echo(f"{key} = {value} (written to {shown})")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
