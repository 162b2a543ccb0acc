"""The documentation's generated pages (docs/reference/) are what the code generates, and complete.

The CLI reference and the settings page are written by ``docs/gen_reference.py`` from the click
commands and the settings registry; a command, option or setting changed without running it
fails here, with the command to run.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click

from paqad.cli.main import cli
from paqad.settings import SETTINGS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        out.append((*prefix, name))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, (*prefix, name)))
    return out


def test_the_committed_pages_are_what_the_code_generates():
    gen = _generator()
    diffs = {}
    for name, make in gen.PAGES.items():
        committed = (DOCS / "reference" / name).read_text(encoding="utf-8")
        made = make()
        if committed != made:
            diffs[name] = "".join(list(difflib.unified_diff(committed.splitlines(True), made.splitlines(True), "committed", "generated", n=1))[:40])
    assert not diffs, f"docs/reference/{sorted(diffs)} differ from the code: run python docs/gen_reference.py\n" + "\n".join(diffs.values())


def test_every_command_has_a_section_with_an_example_in_the_cli_reference():
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## (paqad[^\n]*)\n(.*?)(?=^## |\Z)", page, re.S | re.M))
    paths = _commands(cli)
    assert len(paths) > 30
    missing = [" ".join(p) for p in paths if "Example:" not in sections.get("paqad " + " ".join(p), "")]
    assert not missing, f"commands without a section holding an example in docs/reference/cli.md: {missing}"


def test_every_setting_is_on_the_settings_page_with_its_default():
    page = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", page, re.M)}
    assert set(rows) == set(SETTINGS), set(rows) ^ set(SETTINGS)
    for key, item in SETTINGS.items():
        assert item.help and item.help[:40].replace("|", "\\|") in rows[key], key
