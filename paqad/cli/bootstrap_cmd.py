"""``paqad bootstrap``: index the repository, then say what would improve retrieval on it.

The advice is computed by :func:`paqad.bootstrap.advise` (from what the build saw); this command
builds, asks for it and renders it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from paqad import config as config_mod
from paqad import workspace
from paqad.bootstrap import advise, reason_label
from paqad.cli.common import AppContext, emit_json
from paqad.config import Config
from paqad.index.writing import build

__all__ = ["bootstrap", "render", "reason_label"]


def _build(root: Path, cfg: Config) -> build.BuildReport:
    workspace.ensure(root)
    config_mod.set_value(root, "rag_enabled", "true")
    return build.update(root, cfg)


@click.command("bootstrap")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def bootstrap(app: AppContext, as_json: bool) -> None:
    """Index this repository (switching retrieval on), then say what would improve retrieval here.

    Example: paqad bootstrap --json
    """
    root = app.root()
    cfg = app.config()
    report = _build(root, cfg)
    data = advise(root, cfg, report).to_dict()
    data["build"] = dataclasses.asdict(report)
    if as_json:
        emit_json(data)
    else:
        click.echo(render(data))


def render(data: dict) -> str:
    idx, desc = data["index"], data["descriptions"]
    lines = [f"Indexed {idx['files']} files, {idx['units']} units ({idx['mode']}): " + ", ".join(f"{k} {v}" for k, v in idx["languages"].items())]
    if "error" not in desc:
        lines.append(f"Descriptions: {desc['described']}/{desc['total']} declarations described ({desc['share']:.0%}), {desc['stale']} stale")
    for language, info in data["languages_without_grammar"].items():
        lines.append(f"No grammar: {language}, {info['files']} files indexed as text (e.g. {', '.join(info['examples'])})")
    for language, info in data["files_without_declarations"].items():
        lines.append(f"No declarations found: {info['files']} {language} files (e.g. {', '.join(info['examples'])})")
    for name, group in data["skipped"].items():
        lines.append(f"Skipped by the {name} filter: {group['files']} files")
        for label, entry in group["reasons"].items():
            example = f" (e.g. {', '.join(entry['examples'])})" if entry["examples"] else ""
            lines.append(f"  {entry['files']:5d}  {label}{example}")
    if data["next"]:
        lines.append("Next:")
        lines.extend(f"  {n['command']}\n      {n['why']}" for n in data["next"])
    return "\n".join(lines)
