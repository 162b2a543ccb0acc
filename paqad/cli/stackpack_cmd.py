"""``paqad stackpack``: list, show and scaffold stack packs.

Thin commands over :mod:`paqad.eligibility.stackpacks`: each parses its arguments, calls the library
and renders text or ``--json``; a library error is phrased by :mod:`paqad.cli.errors` (one line,
exit 2 for a bad pack or name). Registered in ``paqad/cli/app.py``'s ``COMMANDS``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import click
import yaml

from paqad import git
from paqad.cli.common import AppContext, HelpfulGroup
from paqad.eligibility import scaffold, stackpacks
from paqad.errors import UsageError


def _repo_root() -> Path:
    """The git work tree around the current folder (``--root`` when given), else the folder."""
    ctx = click.get_current_context(silent=True)
    app = ctx.find_object(AppContext) if ctx else None
    if app is not None:
        return app.root()
    return git.toplevel(Path.cwd()) or Path.cwd()


def _candidate_paths(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files, for suffix detection; [] outside git."""
    try:
        return git.listed_files(root)
    except git.GitError:
        return []


class PackSummary(TypedDict):
    """One row of ``paqad stackpack list`` (its ``--json`` objects)."""

    name: str
    description: str
    detected: bool
    always: bool
    active: bool
    languages: list[str]
    suffixes: list[str]
    named_files: list[str]
    origin: str


def _pack_summary(pack: stackpacks.StackPack, detected: set[str], active: set[str]) -> PackSummary:
    return {
        "name": pack.name,
        "description": pack.description,
        "detected": pack.name in detected,
        "always": pack.always,
        "active": pack.name in active,
        "languages": list(pack.languages),
        "suffixes": list(pack.suffixes),
        "named_files": list(pack.file_names),
        "origin": pack.origin,
    }


def render_list(summaries: list[PackSummary]) -> str:
    """A fixed-width table: name, detected (yes / no / always), languages, suffixes and names."""
    rows = [("NAME", "DETECTED", "LANGUAGES", "FILES")]
    for s in summaries:
        state = "always" if s["always"] else ("yes" if s["detected"] else "no")
        rows.append((s["name"], state, " ".join(s["languages"]), " ".join(s["suffixes"] + s["named_files"])))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3] for r in rows]
    if not any(s["detected"] for s in summaries):
        lines.append("(no stack detected: every pack is used)")
    return "\n".join(line.rstrip() for line in lines)


def render_pack(pack: stackpacks.StackPack, as_json: bool) -> str:
    """The pack in its file form: YAML that loads back as a pack, or JSON with its origin."""
    if as_json:
        return json.dumps({**pack.to_dict(), "origin": pack.origin}, indent=2)
    body = yaml.safe_dump(pack.to_dict(), sort_keys=False, default_flow_style=None, width=100)
    return f"# origin: {pack.origin}\n{body}".rstrip("\n")


@click.group("stackpack", cls=HelpfulGroup)
def stackpack() -> None:
    """List, show and scaffold stack packs (which files paqad reads, and how).

    Example: paqad stackpack list
    """


@stackpack.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(as_json: bool) -> None:
    """List every stack pack with whether this repository uses it.

    Example: paqad stackpack list --json
    """
    root = _repo_root()
    packs = stackpacks.load_packs(root)
    detected = set(stackpacks.detect(root, packs, _candidate_paths(root)))
    active = {p.name for p in stackpacks.active_packs(packs, detected)}
    summaries = [_pack_summary(p, detected, active) for p in packs.values()]
    if as_json:
        click.echo(json.dumps({"detected": sorted(detected), "active": sorted(active), "packs": summaries}, indent=2))
    else:
        click.echo(render_list(summaries))


@stackpack.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def show_cmd(name: str, as_json: bool) -> None:
    """Print one stack pack as YAML (a user pack shows its override).

    Example: paqad stackpack show python
    """
    packs = stackpacks.load_packs(_repo_root())
    if name not in packs:
        raise UsageError(f"no stack pack named {name!r}; choose from: {', '.join(packs)}")
    click.echo(render_pack(packs[name], as_json))


@stackpack.command("new")
@click.argument("name")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print the new pack instead of writing it.")
def new_cmd(name: str, to_stdout: bool) -> None:
    """Scaffold a new pack in .paqad/stackpacks/ (never overwrites).

    Writes .paqad/stackpacks/NAME.yaml with every key explained in a comment.

    Example: paqad stackpack new nim
    """
    if to_stdout:
        click.echo(scaffold.scaffold(name), nl=False)
        return
    root = _repo_root()
    target = scaffold.write_user_pack(root, name)
    click.echo(f"wrote {target.relative_to(root).as_posix()}")
