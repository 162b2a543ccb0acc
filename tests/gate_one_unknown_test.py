"""The one-unknown-word relief of the evidence gate, and its second branch: a short query that
misses the coverage bar by one word the repository never uses is answered when its best passage
holds at least three of the query's words as written, while two unknown words stay refused."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import pipeline
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


def test_one_unknown_word_below_the_relief_coverage_is_refused(common_words):
    """The words-in-best-passage arm of the relief went (it moved no ruler): coverage decides."""
    resp = pipeline.search(common_words.root, "cache ledger token rotation")
    assert not resp.answered
    assert resp.diagnosis["reason"] == "too_little_of_the_query_matched"
    assert resp.diagnosis["absent_terms"] == ["rotation"]


def test_two_unknown_words_stay_refused(common_words):
    resp = pipeline.search(common_words.root, "cache ledger token rotation quota")
    assert not resp.answered
    assert resp.diagnosis["reason"] == "too_little_of_the_query_matched"
