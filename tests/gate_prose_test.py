"""A refusal says what is true about the query's words: words this repository uses only in
comments and documentation are not "words used everywhere" (issue 32: a docstring sentence was
refused as ``only_ubiquitous_terms_matched`` with ``ubiquitous_terms: []``)."""

from __future__ import annotations

import json

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import pipeline
from testing.env import LEXICAL

SENTENCE = "Compute how long to wait before the next attempt after a failed request."
NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "omicron", "sigma"]


@pytest.fixture
def documented(repo):
    """Twelve functions; one docstring is the sentence, whose words occur nowhere else and in no name
    (and no word of it is in every unit)."""
    funcs = []
    for i, name in enumerate(NAMES):
        doc = SENTENCE if i == 3 else f"Return {name}."
        funcs.append(f'def {name}_{i}(x):\n    """{doc}"""\n    return x + {i}\n')
    repo.write("mod.py", "\n\n".join(funcs))
    repo.commit("mod")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_prose_only_words_are_named_as_such(documented):
    resp = pipeline.search(documented.root, SENTENCE)
    assert not resp.answered
    d = resp.diagnosis
    assert d["reason"] == "only_prose_words_matched", json.dumps(d)
    assert d["ubiquitous_terms"] == []
    assert {"wait", "attempt", "request"} <= set(d["prose_terms"])
    assert "everywhere" not in d["hint"] and "comments and documentation" in d["hint"]


def test_the_terminal_says_the_same(documented, paqad_cli):
    out = paqad_cli("rag", "search", SENTENCE, cwd=documented.root, env=LEXICAL)
    data = json.loads(paqad_cli("rag", "search", "--json", SENTENCE, cwd=documented.root, env=LEXICAL).stdout)
    assert not data["answered"]
    assert "only_prose_words_matched" in out.stdout
    assert "Only in comments and documentation here:" in out.stdout and "wait" in out.stdout
    assert "Used almost everywhere" not in out.stdout


def test_words_used_everywhere_beside_prose_words_get_a_hint_naming_both(repo):
    """The refusal of issue 32's kind with a word used everywhere ("the") among the prose words:
    the reason stays "only ubiquitous", and the hint does not claim all the words are everywhere."""
    funcs = [f'def {name}_{i}(x):\n    """{SENTENCE if i == 3 else f"Return the {name}."}"""\n    return x\n' for i, name in enumerate(NAMES)]
    repo.write("mod.py", "\n\n".join(funcs))
    repo.commit("mod")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    d = pipeline.search(repo.root, SENTENCE).diagnosis
    assert d["reason"] == "only_ubiquitous_terms_matched" and d["ubiquitous_terms"] == ["the"]
    assert "wait" in d["prose_terms"] and "comments and documentation" in d["hint"]
