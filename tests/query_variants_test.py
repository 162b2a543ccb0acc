"""Variants: a query word the index uses, whose code is written in another form of it
("validation" in a comment, the helpers named ``validate_*``), ranks that code through the other
form, and the other form is never evidence. A small real repository, the real index and door."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline, query
from testing.env import LEXICAL
from testing.repos import Repo

CHECKS = '''\
"""Input checks for the public API."""


def validate_range(value: int, low: int, high: int) -> int:
    """Raise when value lies outside low..high; return it otherwise."""
    if not low <= value <= high:
        raise ValueError(f"{value} outside {low}..{high}")
    return value


def validate_name(name: str) -> str:
    """Raise when name is empty or has spaces."""
    if not name or " " in name:
        raise ValueError(f"bad name {name!r}")
    return name
'''
NOTES = '''\
"""Release notes rendering.

The notes list each change; a change without a title fails validation of the notes file.
"""


def render_notes(changes: list) -> str:
    """The release notes as text, one change a line."""
    return "\\n".join(f"- {c}" for c in changes)


def count_changes(changes: list) -> int:
    """How many changes the notes hold."""
    return len(changes)
'''


@pytest.fixture(scope="module")
def checks(tmp_path_factory) -> Repo:
    repo = Repo.init(tmp_path_factory.mktemp("variants") / "repo")
    repo.write("api/checks.py", CHECKS)
    repo.write("api/notes.py", NOTES)
    for f in range(3):  # padding, so that the words above are rare
        repo.write(f"api/pad{f}.py", "\n\n".join(f"def pad_{f}_{i}(x):\n    return x + {i}\n" for i in range(20)))
    repo.commit("checks")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_a_present_word_brings_the_form_the_code_uses_as_a_rank_only_variant(checks):
    index = Index.shared(checks.root)
    analyzed = query.analyze(index, "input validation helpers", index.meta().n_units)
    statuses = {t.term: t.status for t in analyzed.terms}
    assert statuses["validation"] == "distinctive"  # the notes' docstring says it this way
    assert [(v.term, v.status) for v in analyzed.variants] == [("validat", "variant")]
    assert "validat" not in statuses  # evidence reads terms only
    assert "validat" in {t.term for t in analyzed.scored()}


def test_the_variant_ranks_the_code_named_in_the_other_form_first(checks, monkeypatch):
    q = "input validation helpers"
    ranked = pipeline.search(checks.root, q, gate=False)
    assert ranked.results[0].name.startswith("validate_"), [r.name for r in ranked.results]
    monkeypatch.setattr(query, "VARIANTS", False)
    plain = pipeline.search(checks.root, q, gate=False)
    assert plain.results[0].name != ranked.results[0].name, [r.name for r in plain.results]
    assert not plain.results[0].name.startswith("validate_")  # only the notes say "validation"


def test_reports_get_no_variants(checks):
    index = Index.shared(checks.root)
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
    long = "validation " + words  # a report: more distinct terms than query.LONG_QUERY_WORDS
    assert len(set(words.split())) + 1 >= query.LONG_QUERY_WORDS
    assert query.analyze(index, long, index.meta().n_units).variants == []


def test_a_bare_name_gets_no_variants_and_a_bare_word_does(checks):
    index = Index.shared(checks.root)
    n = index.meta().n_units
    assert query.analyze(index, "Validation_Rules", n).variants == []  # a name: looked up as written
    assert [v.term for v in query.analyze(index, "validation", n).variants] == ["validat"]
