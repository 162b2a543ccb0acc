"""The one-unknown-word relief of the evidence gate, and its second branch: a short query that
misses the coverage bar by one word the repository never uses is answered when its best passage
holds at least three of the query's words as written, while two unknown words stay refused."""

from __future__ import annotations

import pytest

from paqad import config, tokenize
from paqad.index.writing import build
from paqad.search import evidence, pipeline
from paqad.search.params import SearchParams
from testing.env import LEXICAL

TARGET = '''def settle_cached_ledger_tokens(book):
    """Settle the cache of ledger tokens the book still holds."""
    return [t for t in book.cache if t.ledger and t.token]
'''


@pytest.fixture(scope="module")
def common_words(tmp_path_factory):
    """2,000 functions; "cache", "ledger" and "token" each sit in a ninth of them (common, yet
    under the ubiquity share), together in one function only, so a query of the three beside an
    unknown word falls under the coverage bar (0.48 < 0.5) while one passage holds all three."""
    from testing.repos import Repo

    repo = Repo.init(tmp_path_factory.mktemp("gate") / "repo")
    words = ("cache", "ledger", "token", "alpha", "beta", "gamma", "delta", "omega", "sigma")
    for m in range(40):
        funcs = [
            f"def {words[(m * 50 + j) % 9]}_step_{m}_{j}(value):\n    '''Apply rule {j}.'''\n    return value + {j}\n"
            for j in range(50)
        ]
        repo.write(f"pkg/mod_{m}.py", "\n\n".join(funcs))
    repo.write("pkg/settle.py", TARGET)
    repo.commit("corpus")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_one_unknown_word_beside_three_words_of_one_passage_is_answered(common_words):
    resp = pipeline.search(common_words.root, "cache ledger token rotation")
    assert resp.answered, resp.diagnosis
    assert resp.results[0].qualified_name == "settle_cached_ledger_tokens"
    assert resp.evidence["coverage"] < evidence.ONE_UNKNOWN_COVERAGE_BAR


def test_without_the_words_branch_the_same_query_is_refused(common_words):
    off = SearchParams.of({"evidence.ONE_UNKNOWN_MIN_WORDS_IN_BEST": 99})
    resp = pipeline.search(common_words.root, "cache ledger token rotation", params=off)
    assert not resp.answered
    assert resp.diagnosis["reason"] == "too_little_of_the_query_matched"
    assert resp.diagnosis["absent_terms"] == ["rotation"]


def test_two_unknown_words_stay_refused(common_words):
    resp = pipeline.search(common_words.root, "cache ledger token rotation quota")
    assert not resp.answered
    assert resp.diagnosis["reason"] == "too_little_of_the_query_matched"


def test_an_identifier_split_into_parts_is_one_word():
    assert tokenize.words("HTTPException handle handle") == [("http", "exception", "httpexception"), ("handl",)]
    assert evidence.words_in_best("how does HTTPException handle refunds", {"http", "exception", "httpexception", "handl"}) == 2
