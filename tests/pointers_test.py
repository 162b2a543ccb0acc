"""Pointers in a query (paths, traceback frames, dotted modules) and their match against indexed paths."""

from __future__ import annotations

import pytest

from paqad.search import pointers

PATHS = ("sympy/core/basic.py", "sympy/printing/mathematica.py", "sympy/printing/__init__.py", "src/flask/app.py",
         "x.py", "a/x.py", "sympy/polys/__init__.py", "docs/index.md")


@pytest.mark.parametrize("text, want", [
    ('  File "/usr/lib/python3/site-packages/sympy/core/basic.py", line 1035, in subs', {"sympy/core/basic.py"}),
    ("see src/flask/app.py:812 for the handler", {"src/flask/app.py"}),
    ("the printer in sympy.printing.mathematica drops floats", {"sympy/printing/mathematica.py"}),
    ("sympy.polys.ring_series is not it, but sympy.polys is", set()),  # a package named by dotted path needs 3+ parts
    ("x.py is ambiguous here", set()),
    ("e.g. 1.0e-4 and foo.bar() are not files", set()),
    ("https://example.com/a/b.html is a URL", set()),
    ("read docs/index.md", {"docs/index.md"}),
])
def test_resolve(text, want):
    assert set(pointers.resolve(pointers.extract(text), pointers.PathTable(PATHS))) == want


def test_a_frame_keeps_its_line_and_function():
    (ptr,) = pointers.extract('File "pkg/mod.py", line 12, in run')
    assert (ptr.path, ptr.line, ptr.name) == ("pkg/mod.py", 12, "run")


def test_a_long_log_is_bounded():
    text = "\n".join(f'  File "pkg/m{i}.py", line {i}, in f{i}' for i in range(500))
    assert len(pointers.extract(text)) == pointers.MAX_POINTERS


def test_a_pytest_frame_names_its_function():
    (ptr,) = pointers.extract("sympy/core/expr.py:124: in __eq__\n    other = sympify(other)")
    assert (ptr.path, ptr.line, ptr.name) == ("sympy/core/expr.py", 124, "__eq__")
