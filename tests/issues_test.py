"""An issue text is delivered files first, tests and CI files out unless named (paqad.search.issues)."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import issues, pipeline
from paqad.search.params import SearchParams
from testing.env import LEXICAL

ISSUE = (
    "Invoice totals are wrong after a refund\n\n"
    "When an invoice has a refund line, the invoice total still counts the refunded amount, and the "
    "tax on the refund is added twice. Steps to reproduce: create an invoice with two lines, refund "
    "the second line, print the invoice total. Expected behaviour: the total without the refunded "
    "line and its tax. Seen on every invoice since the last release."
)
QUESTION = "where is the invoice total computed"


@pytest.fixture
def store(repo):
    # The fix is in billing/invoice.py; the test that reproduces the bug repeats the report's words.
    repo.write("billing/invoice.py", (
        "def invoice_total(invoice):\n    '''Sum the invoice lines, refunds included.'''\n"
        "    return sum(line.amount for line in invoice.lines)\n\n\n"
        "def refund_line(invoice, line):\n    '''Mark a line of an invoice refunded.'''\n    line.refunded = True\n\n\n"
        "def invoice_tax(invoice):\n    '''Tax of the invoice lines, the refund line too.'''\n"
        "    return sum(line.tax for line in invoice.lines)\n"
    ))
    repo.write("billing/currency.py", "def rounding(amount):\n    '''Round an amount to the currency's cents.'''\n    return round(amount, 2)\n")
    repo.write("tests/test_refunds.py", "\n\n".join(
        f"def test_refund_{i}():\n    '''An invoice total after a refund: refunded amount and refund tax counted once, the total without the refunded line.'''\n"
        f"    invoice = make_invoice(lines=2)\n    refund_line(invoice, invoice.lines[1])\n    assert invoice_total(invoice) == {i}\n"
        for i in range(4)
    ))
    repo.write(".github/ISSUE_TEMPLATE/bug.md", "# Bug report\n\nSteps to reproduce, expected behaviour, the invoice total you saw, the refund and tax lines.\n")
    repo.commit("billing")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def _paths(root, text, knobs=None):
    return [r.path for r in pipeline.search(root, text, top_n=10, gate=False, params=SearchParams.of(knobs or {})).results]


def test_an_issue_is_told_from_a_question_by_its_shape():
    assert issues.speaks(ISSUE)
    assert not issues.speaks(QUESTION)
    assert not issues.speaks(ISSUE.replace("\n\n", " ").replace("Steps to reproduce", "Then").replace("Expected behaviour", "Wanted"))
    assert not issues.speaks(ISSUE + "\n@@ -3,2 +3,2 @@\n-    return 1\n+    return 2\n")  # a review of a diff hunk
    assert issues.speaks("Crash on refund\n" + "Traceback (most recent call last):\n  File \"billing/invoice.py\", line 3\n" + ISSUE.split("\n\n")[1])


def test_an_issue_gets_its_source_file_first_and_tests_and_templates_after(store):
    got = _paths(store.root, ISSUE)
    off = _paths(store.root, ISSUE, {"issues.ENABLED": False})
    assert got[0] == "billing/invoice.py"
    assert off[0] != "billing/invoice.py"  # without the issue path the test that repeats the words wins
    firsts = list(dict.fromkeys(got))
    assert firsts.index("tests/test_refunds.py") > firsts.index("billing/invoice.py")
    assert got[:3] == ["billing/invoice.py"] * 3  # the file's functions together, before the next file


def test_a_test_file_the_issue_names_is_not_held_back(store):
    named = ISSUE + "\nThe failing case is in test_refunds.py."
    assert _paths(store.root, named)[0] == "tests/test_refunds.py"
    assert _paths(store.root, named, {"issues.AUX_PRIOR": 1.0})[0] == "tests/test_refunds.py"


def test_a_question_keeps_the_diversified_order(store):
    assert _paths(store.root, QUESTION) == _paths(store.root, QUESTION, {"issues.ENABLED": False})


def test_auxiliary_paths():
    for p in ("tests/test_x.py", "src/test/java/a/FooTest.java", "pkg/foo_test.go", ".github/workflows/ci.yml",
              ".github/ISSUE_TEMPLATE/bug.md", "requirements-dev.txt", "Dockerfile", "poetry.lock", "web/app.spec.ts"):
        assert issues.auxiliary(p), p
    for p in ("billing/invoice.py", "src/main/java/a/Foo.java", "docs/testing.md", "contest/score.py"):
        assert not issues.auxiliary(p), p


def test_the_best_files_functions_come_before_its_class_head(repo):
    # The class's head (its docstring) repeats the report's words; the fix is in one of its methods.
    repo.write("billing/invoice.py", (
        "class Invoice:\n    '''An invoice: lines, refund lines, the invoice total and the tax on refunded lines.\n\n"
        "    The invoice total counts every line; a refund line is refunded once, its tax too.'''\n\n"
        "    def total(self):\n        '''The invoice total, refunds included.'''\n        return sum(l.amount for l in self.lines)\n\n"
        "    def refund(self, line):\n        '''Refund a line of the invoice.'''\n        line.refunded = True\n\n"
        "    def tax(self):\n        '''Tax of the invoice lines.'''\n        return sum(l.tax for l in self.lines)\n"
    ))
    repo.write("billing/currency.py", "def rounding(amount):\n    '''Round an amount to the currency's cents.'''\n    return round(amount, 2)\n")
    repo.commit("billing")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    got = pipeline.search(repo.root, ISSUE, top_n=10, gate=False).results
    off = pipeline.search(repo.root, ISSUE, top_n=10, gate=False, params=SearchParams.of({"issues.ENABLED": False})).results
    kinds = [r.kind for r in got if r.path == "billing/invoice.py"]
    assert "class" in kinds and set(kinds[:kinds.index("class")]) == {"method"} and kinds.index("class") >= 3
    assert [r.kind for r in off][0] == "class"  # without the issue path the class's head comes first
