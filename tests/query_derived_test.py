"""The query's derivational fallback: a word the index never uses in the asker's form is looked
up in the index's own forms of it ("serialization" → the code's "serialize"), on a small real
repository, through the real index and the search door."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline, query
from paqad.search.params import SearchParams
from testing.env import LEXICAL
from testing.repos import Repo

PARAMS = '''\
"""Query strings for outgoing requests."""


def serialize_params(params: dict) -> str:
    """Serialize the parameters of a URL query, sorted by key."""
    return "&".join(f"{key}={params[key]}" for key in sorted(params))


def execute_hooks(hooks: list, request: object) -> object:
    """Execute every registered hook on the request, in order."""
    for hook in hooks:
        request = hook(request)
    return request
'''
OTHER = '''\
"""Unrelated helpers, so that the words above are rare in this repository."""


def general_total(values: list) -> int:
    return sum(values)


def pad_width(text: str, width: int) -> str:
    return text.ljust(width)
'''


@pytest.fixture(scope="module")
def params(tmp_path_factory) -> Repo:
    repo = Repo.init(tmp_path_factory.mktemp("derived") / "repo")
    repo.write("client/params.py", PARAMS)
    repo.write("client/other.py", OTHER)
    repo.commit("params")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_an_absent_derived_form_finds_the_word_the_code_uses(params):
    index = Index.shared(params.root)
    assert index.terms(["serialization"]) == {}  # the code never says it this way
    found = query.derived(index, "serialization")
    assert found is not None and found.term == "serializ"  # serialize / serialize_params
    assert query.derived(index, "execution").term == "execut"


def test_short_roots_and_unrelated_words_stay_absent(params):
    index = Index.shared(params.root)
    assert query.derived(index, "ionic") is None  # stripping "ic" or "ion" leaves under five letters
    assert query.derived(index, "ledgerization") is None  # the root "ledger" occurs nowhere
    analyzed = query.analyze(index, "mortgage amortization", index.meta().n_units)
    assert all(t.status == "absent" for t in analyzed.terms)


def test_search_answers_through_the_derived_form_and_not_without_it(params):
    q = "query parameter serialization"
    answered = pipeline.search(params.root, q)
    assert answered.answered and answered.results[0].name == "serialize_params"
    assert "serializ" in answered.results[0].matched_terms
    refused = pipeline.search(params.root, q, params=SearchParams.of({"query.DERIVE": False}))  # "query" and "parameter" alone occur here in docstrings only
    assert not refused.answered and refused.results == [] and refused.diagnosis["reason"] == "only_prose_words_matched"


def test_an_absent_function_word_is_left_out_and_a_present_one_is_kept(params):
    index = Index.shared(params.root)
    text = "how hooks execute across the request"
    analyzed = query.analyze(index, text, index.meta().n_units)
    statuses = {t.term: t.status for t in analyzed.terms}
    assert "across" not in statuses  # a preposition this repository never uses says nothing
    assert "the" in statuses  # used in the docstrings: the corpus judges it like any word
    assert statuses["hook"] != "absent" and statuses["request"] != "absent"



def test_an_absent_function_word_no_longer_refuses_an_answerable_question(tmp_path):
    # 600 more units, so that an absent word weighs fully (evidence.ABSENCE_FULL_WEIGHT_UNITS)
    repo = Repo.init(tmp_path / "repo")
    repo.write("client/params.py", PARAMS)
    for f in range(3):
        repo.write(f"client/pad{f}.py", "\n\n".join(f"def pad_{f}_{i}(value):\n    return value + {i}\n" for i in range(200)))
    repo.commit("params")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    q = "serialize query params whether or not"
    before = pipeline.search(repo.root, q, params=SearchParams.of({"query.DROP_ABSENT_FUNCTION_WORDS": False}))
    assert not before.answered and before.diagnosis["reason"] == "too_little_of_the_query_matched"
    assert {"whether", "or", "not"} <= set(before.diagnosis["absent_terms"])
    after = pipeline.search(repo.root, q)
    assert after.answered and after.results[0].name == "serialize_params"
