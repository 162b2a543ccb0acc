"""Prose and data parsers: Markdown and reStructuredText sections, YAML/JSON keys, whole documents,
and the Python ``ast`` parser's exact spans."""

from __future__ import annotations

from paqad.parse import parse_file

MD = """Intro line before any heading.

# Title
Some text.

## Install
```sh
# not a heading
pip install x
```

# Usage
Run it.
"""

RST = """Configuration
=============

Intro.

Basics
------

Text about basics.

Environment
-----------

Text about env.
"""

PY = '''"""Module doc."""

import os


@decorator
def top(a, b=1):
    """Add things."""
    return helper(a) + b


class Box(Base, mixins.Mixin):
    """A box."""

    size = 3

    def open(self):
        return os.path.join(self.size)

    @property
    def size2(self):
        return self.size

    @size2.setter
    def size2(self, value):
        self.size = value
'''


def _spans(units):
    return [(u.kind, u.qualified_name, u.start_line, u.end_line) for u in units]


def test_markdown_sections_and_fences():
    units = parse_file("README.md", MD, "markdown", "markdown")
    assert _spans(units) == [
        ("document", "README.md", 1, 1),
        ("section", "Title", 3, 4),
        ("section", "Title > Install", 6, 10),
        ("section", "Usage", 12, 13),
    ]


def test_rst_sections_with_heading_trail():
    units = parse_file("docs/config.rst", RST, "rst", "rst")
    assert _spans(units) == [
        ("section", "Configuration", 1, 4),
        ("section", "Configuration > Basics", 6, 9),
        ("section", "Configuration > Environment", 11, 14),
    ]
    assert all(u.language == "rst" for u in units)


def test_yaml_and_json_top_level_keys():
    y = parse_file("ci.yaml", "# comment\nname: build\njobs:\n  test:\n    runs: x\nname: dup\n", "yaml", "yaml")
    assert _spans(y) == [("module", "", 1, 1), ("key", "name", 2, 2), ("key", "jobs", 3, 5), ("key", "name@2", 6, 6)]
    j = parse_file("package.json", '{\n  "name": "x",\n  "scripts": {\n    "a": "b, c"\n  }\n}\n', "json", "json")
    assert [u.qualified_name for u in j if u.kind == "key"] == ["name", "scripts"]


def test_python_units_exact_spans_docstrings_calls_bases():
    units = parse_file("pkg/box.py", PY, "python-ast", "python")
    assert _spans(units) == [
        ("module", "", 1, 3),
        ("function", "top", 7, 9),
        ("class", "Box", 12, 26),
        ("method", "Box.open", 17, 18),
        ("method", "Box.size2", 21, 22),
        ("method", "Box.size2@2", 25, 26),
    ]
    top = units[1]
    assert top.signature == "def top(a, b=1):" and top.docstring == "Add things." and top.calls == ["helper"]
    assert units[2].bases == ["Base", "mixins.Mixin"]
    assert units[3].calls == ["join"]
    assert "import os" in units[0].text and "@decorator" not in units[0].text
    assert units[0].imports == ["os"]


def test_python_syntax_error_falls_back_to_one_document():
    units = parse_file("bad.py", "def broken(:\n    pass\n" + "x = 1\n" * 5, "python-ast", "python")
    assert _spans(units) == [("document", "bad.py", 1, 7)]


def test_long_units_split_with_overlap_keep_identity():
    body = "\n".join(f"    x{i} = {i}" for i in range(400))
    units = parse_file("long.py", f"def long_one():\n{body}\n", "python-ast", "python", max_lines=150)
    parts = [u for u in units if u.qualified_name == "long_one"]
    assert len(parts) == 3 and [p.part for p in parts] == [1, 2, 3]
    assert parts[0].start_line == 1 and parts[-1].end_line == 401
    assert parts[1].start_line <= parts[0].end_line  # overlap
    assert len({p.id for p in parts}) == 3
