"""The evidence gate and a repository's central name: a word in nearly every unit's body is
ubiquitous by document frequency, yet a query naming the declaration it names must be answered;
the same common word beside a subject the repository never mentions must still be refused."""

from __future__ import annotations

import json

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import evidence, pipeline, ranking
from testing.env import LEXICAL

BASKET = '''class Basket:
    """The shopping basket every checkout step passes around."""

    def __init__(self, owner):
        self.owner = owner
        self.lines = []

    def add(self, sku, quantity):
        self.lines.append((sku, quantity))
'''


@pytest.fixture
def central(repo):
    """21 modules, 500 functions: a third of them take and use a ``Basket``, so "basket" is in
    over a third of the units (ubiquitous: more than ``query.UBIQUITY``) while only the class and
    one function per module are named after it."""
    repo.write("store/basket.py", BASKET)
    for i in range(20):
        funcs = [f"def basket_summary_{i}(basket):\n    '''Summarise the lines of module {i}.'''\n    return len(basket.lines)\n"]
        funcs += [
            f"def step_{i}_{j}(basket, amount):\n    '''Apply rule {j} to the amount.'''\n    basket.add('sku-{j}', amount)\n    return amount * {j}\n"
            if j % 3 == 0
            else f"def step_{i}_{j}(total, amount):\n    '''Apply rule {j} to the amount.'''\n    return total + amount * {j}\n"
            for j in range(24)
        ]
        repo.write(f"store/rules_{i}.py", "from store.basket import Basket\n\n\n" + "\n\n".join(funcs))
    repo.commit("store")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_a_central_name_is_answered(central):
    resp = pipeline.search(central.root, "Basket")
    assert resp.answered, resp.diagnosis
    assert resp.results[0].qualified_name == "Basket"
    assert resp.results[0].path == "store/basket.py"


def test_without_name_evidence_the_central_name_was_refused(central, monkeypatch):
    """What the change fixes: the former gate refused the lookup as only ubiquitous words (with
    the ranking stack's declared-name lookup off too: it is name evidence of its own)."""
    monkeypatch.setattr(evidence, "NAMED_ENABLED", False)
    monkeypatch.setattr(ranking, "DEFINITION_BOOST", 0.0)
    resp = pipeline.search(central.root, "Basket")
    assert not resp.answered
    assert resp.diagnosis["reason"] == "only_ubiquitous_terms_matched"
    assert resp.diagnosis["ubiquitous_terms"] == ["basket"]


@pytest.mark.parametrize("query", ["Basket video transcoding", "how does basket handle CUDA GPU kernels", "basket payroll withholding"])
def test_a_nonsense_subject_sharing_one_common_word_is_refused(central, query):
    resp = pipeline.search(central.root, query)
    assert not resp.answered, resp.results[:1]
    assert resp.results == []
    assert resp.diagnosis["reason"] == "too_little_of_the_query_matched"
    assert "basket" in resp.diagnosis["distinctive_terms"]  # the name counted, and still not enough


def test_the_cli_door_answers_the_name_and_keeps_the_diagnosis_shape(central, paqad_cli):
    env = {"PAQAD_RAG_EMBEDDING_PROVIDER": "none"}
    out = paqad_cli("rag", "search", "--json", "--", "Basket", cwd=central.root, env=env)
    data = json.loads(out.stdout)
    assert data["answered"] and data["results"][0]["qualified_name"] == "Basket"
    out = paqad_cli("rag", "search", "--json", "--", "Basket video transcoding", cwd=central.root, env=env)
    data = json.loads(out.stdout)
    assert not data["answered"]
    assert set(data["diagnosis"]) >= {"reason", "coverage", "concentration", "distinctive_terms", "ubiquitous_terms", "hint", "bars"}


@pytest.mark.parametrize(
    "query", ["Basket", "basket", "Basket video transcoding", "the basket lines", "kubernetes helm", "amount of basket rule", "step rule amount"]
)
def test_the_early_refusal_agrees_with_full_scoring(central, query):
    """The pipeline refuses some queries before reading postings; names must not change its verdict:
    it must equal the gate computed after full scoring."""
    from paqad.index.reader import Index
    from paqad.search import lexical
    from paqad.search import query as query_mod

    index = Index.open(central.root)
    analyzed = query_mod.analyze(index, query, index.meta().n_units)
    full = evidence.assess(analyzed, lexical.score(index, analyzed), index)
    resp = pipeline.search(central.root, query)
    assert resp.answered == full.passed
    if not resp.answered:
        assert resp.diagnosis["reason"] == full.reason


def test_a_common_word_that_is_a_ranked_unit_s_whole_name_is_answered(repo):
    """express's bare ``response``: the word is in over a third of the units' bodies (ubiquitous) and
    in the name of one unit only, the module ``response.js`` (one name among dozens of bodies is
    under ``NAMED_MIN_OWN_SHARE``, so ``named_terms`` does not count it). The word *is* that unit's
    whole name, and it ranks among the best 50: ``EXACT_NAMES`` counts it as evidence. Without it
    the lookup was refused (semble's express with the default model, Dec 8)."""
    from paqad.search.params import SearchParams

    verbs = ("send", "json", "status", "links", "format", "cookie", "location", "redirect")
    repo.write("lib/response.js", "var res = Object.create(http.ServerResponse.prototype);\n\n" + "\n\n".join(
        f"res.{v} = function {v}(value) {{\n  this.set('{v}', value);\n  return this;\n}};\n" for v in verbs) + "\nmodule.exports = res;\n")
    for i in range(7):  # 70 handlers, a third of them hold a response
        repo.write(f"lib/router/layer_{i}.js", "\n\n".join(
            f"function handle_{i}_{j}(req, res, next) {{\n  var response = res;\n  return next(response);\n}}\n" if j % 3 == 0
            else f"function handle_{i}_{j}(req, res, next) {{\n  return next(req.params[{j}]);\n}}\n" for j in range(10)))
    repo.write("lib/express.js", "var res = require('./response');\n\nexports.response = res;\n")
    repo.commit("express")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    resp = pipeline.search(repo.root, "response")
    assert resp.answered, resp.diagnosis
    assert resp.results[0].path == "lib/response.js"
    off = pipeline.search(repo.root, "response", params=SearchParams.of({"evidence.EXACT_NAMES": False}))
    assert not off.answered and off.diagnosis["reason"] == "only_ubiquitous_terms_matched", off.diagnosis
    assert off.diagnosis["ubiquitous_terms"] == ["respons"]
