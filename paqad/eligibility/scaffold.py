"""``paqad stackpack new``: a new pack's YAML with every key explained, written never over one.

Kept apart from :mod:`paqad.eligibility.stackpacks` (loading, detection, resolution): authoring
runs once per pack, the rest on every index build.
"""

from __future__ import annotations

import os
from pathlib import Path

from paqad.eligibility.pack_schema import DEFAULT_MODULE_DEPTH, NAME_RE
from paqad.eligibility.stackpacks import USER_PACK_DIR
from paqad.errors import UsageError
from paqad.parse import parser_names

_SCAFFOLD = """\
# Stack pack "{name}" for paqad. Guide: docs/stackpacks.md
# Lives in .paqad/stackpacks/{name}.yaml; a pack named like a built-in replaces that built-in.
# Every key is checked: an unknown key or a bad value is an error naming this file and the key.
# Check it with: paqad stackpack show {name}

# name: must equal the file name without .yaml.
name: {name}

# description: one line, shown by `paqad stackpack list`.
description: {name} sources

# always: true to use this pack in every repository, whatever was detected (like markdown).
always: false

# files: which files this pack reads, by suffix. Suffixes are written lower-case with the dot and
# matched against the lower-cased file name, longest first (".d.ts" before ".ts").
#   language: recorded on every unit (lower-case word).
#   parser:   one of {parsers}.
#             "text" always works; "tree-sitter" needs a grammar paqad ships.
#   grammar:  handed to the parser (for tree-sitter: the grammar, e.g. typescript or tsx).
files:
  - suffixes: [".{name}"]
    language: {name}
    parser: text
    grammar: {name}

# named_files: files matched by exact, case-sensitive name (Dockerfile, Gemfile). Same keys as
# a files rule, with names instead of suffixes, e.g.
#   - names: [Buildfile]
#     language: {name}
#     parser: text
#     grammar: {name}
named_files: []

# exclude_dirs: folder names never indexed, at any depth, while this pack is active.
exclude_dirs: []

# test_patterns: gitwildmatch patterns (as in .gitignore) marking test files, e.g. "*_test.x", "tests/".
test_patterns: []

# markers: names (or globs like "*.proj") of files or folders at the repository root that detect
# this stack. A file that only this pack claims also detects it.
markers: []

# module_depth: how many leading path parts name a module (src/app/x.y -> src/app with 2).
module_depth: {depth}
"""


def check_pack_name(name: str) -> None:
    """Raise :class:`UsageError` unless ``name`` can name a pack (and its file)."""
    if not NAME_RE.match(name):
        raise UsageError(f"invalid stack pack name {name!r}: use lower-case letters, digits, '-' or '_'")


def scaffold(name: str) -> str:
    """The YAML text of a new, valid pack called ``name``, every key explained in a comment."""
    check_pack_name(name)
    return _SCAFFOLD.format(name=name, parsers=", ".join(parser_names()), depth=DEFAULT_MODULE_DEPTH)


def write_user_pack(repo_root: str | os.PathLike[str], name: str) -> Path:
    """Write ``.paqad/stackpacks/NAME.yaml`` from :func:`scaffold`; never overwrite an existing one."""
    text = scaffold(name)
    target = Path(repo_root) / USER_PACK_DIR / f"{name}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{USER_PACK_DIR}/{name}.yaml already exists; edit it or remove it first") from None
    return target
