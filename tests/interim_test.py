"""Interim vectors (``paqad.index.embedding.interim``): while the default model embeds a new index, stand-in
vectors from its distilled table serve hybrid search; once the model's vectors cover the index
the stand-in's table is dropped. Real repositories, the real packaged models, the real index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from paqad import config
from paqad.index import store
from paqad.index.embedding import interim
from paqad.index.status import status
from paqad.index.writing import build
from paqad.search import pipeline
from testing.repos import CARDS, Repo

QUESTION = "resend a payment after a transient error"  # no word of it is in the code


def _helpers(n: int) -> str:
    """``n`` small functions: enough units that the model's fill takes more than one batch."""
    return "\n\n".join(f"def helper_{i}(value):\n    \"\"\"Scale value by {i}.\"\"\"\n    return value * {i}\n" for i in range(n))


@pytest.fixture
def shop(repo: Repo) -> Repo:
    repo.write("shop/cards.py", CARDS)
    repo.write("shop/helpers.py", _helpers(70))
    repo.commit("shop")
    return repo


def _cfg(repo: Repo, **extra: str) -> config.Config:
    return config.load(repo.root, cli_overrides={"rag_embedding_provider": "local", **extra}, environ={})


def _interim_rows(repo: Repo) -> int | None:
    path = store.current_path(repo.root)
    assert path is not None
    con = sqlite3.connect(path)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (interim.TABLE,)).fetchone():
            return None
        return int(con.execute(f"SELECT COUNT(*) FROM {interim.TABLE}").fetchone()[0])
    finally:
        con.close()


def test_stand_in_vectors_serve_while_the_model_embeds_then_make_way(shop: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interim, "MIN_UNITS", 20)  # the shop has ~75 units, the shipped bar is 256
    seen: list[tuple[pipeline.SearchResponse, dict, int | None]] = []

    def during_fill(done: int, total: int) -> None:
        if not seen:  # after the model's first batch of 64: most units still lack its vector
            seen.append((pipeline.search(shop.root, QUESTION, gate=False), status(shop.root), _interim_rows(shop)))

    report = build.build_full(shop.root, _cfg(shop), progress=during_fill)
    assert seen, "the model's fill took one batch only: the shop is too small for this test"
    mid, mid_status, mid_rows = seen[0]
    assert report.interim_vectors == report.units == mid_rows
    assert mid.mode == "hybrid" and mid.interim_vectors and mid.vectors_pending > 0
    assert mid.results[0].name == "retry_charge"  # found by meaning, through the stand-in's vectors
    assert mid_status["interim_model"] == "minilm-static" and "stand-in vectors serve" in mid_status["vectors"]
    # the model's vectors are complete: the interim table and its meta are gone, MiniLM answers
    assert report.vectors is not None and report.vectors.pending == 0
    assert _interim_rows(shop) is None
    after = pipeline.search(shop.root, QUESTION, gate=False)
    assert after.mode == "hybrid" and not after.interim_vectors and after.vectors_pending == 0
    assert after.results[0].name == "retry_charge"
    assert status(shop.root)["interim_model"] is None


def test_no_stand_in_for_a_fill_the_model_does_quickly_or_when_switched_off(shop: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    report = build.build_full(shop.root, _cfg(shop))  # ~75 units: under the shipped bar
    assert report.interim_vectors == 0 and _interim_rows(shop) is None
    monkeypatch.setattr(interim, "MIN_UNITS", 20)
    report = build.build_full(shop.root, _cfg(shop))  # every vector now comes from the user cache
    assert report.interim_vectors == 0 and report.vectors is not None and report.vectors.embedded == 0
    shop.write("shop/more.py", _helpers(90).replace("helper_", "more_"))
    shop.commit("more")
    off = build.build_full(shop.root, _cfg(shop, rag_embedding_interim="false"))
    assert off.interim_vectors == 0 and off.vectors is not None and off.vectors.embedded >= 90
    static = build.build_full(shop.root, _cfg(shop, rag_embedding_model="minilm-static"))
    assert static.interim_vectors == 0  # the fast model needs no stand-in


def test_an_update_keeps_the_stand_in_vectors_of_exactly_the_live_units(shop: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interim, "MIN_UNITS", 20)
    cfg = _cfg(shop)
    build.build_full(shop.root, cfg, embed=False)  # lexical now, the vectors later
    assert interim.fill(shop.root, cfg, build.writer_lock(shop.root)) == _units(shop)
    early = pipeline.search(shop.root, QUESTION, gate=False)
    assert early.interim_vectors and early.results[0].name == "retry_charge"
    (shop.root / "shop/helpers.py").unlink()
    shop.write("shop/refunds.py", 'def refund_order(order):\n    """Give the customer their money back."""\n    return order.total\n')
    shop.commit("refunds instead of helpers")
    build.update(shop.root, cfg, embed=False)
    assert _interim_rows(shop) == _units(shop) - 1  # the removed file's rows went; the new file's are made next
    report = build.update(shop.root, cfg)
    assert report.interim_vectors == 1 and report.vectors is not None and report.vectors.pending == 0
    assert _interim_rows(shop) is None


def test_a_stand_in_the_index_names_but_paqad_lacks_is_ignored(shop: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crafted index is untrusted input: an unknown stand-in model name must not break search."""
    monkeypatch.setattr(interim, "MIN_UNITS", 20)
    cfg = _cfg(shop)
    build.build_full(shop.root, cfg, embed=False)
    interim.fill(shop.root, cfg, build.writer_lock(shop.root))
    path = store.current_path(shop.root)
    assert path is not None
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE meta SET value = 'no-such-model' WHERE key = ?", (interim.META_MODEL,))
    con.close()
    resp = pipeline.search(shop.root, "retry charge card", gate=False)
    assert resp.mode == "lexical" and not resp.interim_vectors and resp.results[0].name == "retry_charge"


def _units(repo: Repo) -> int:
    path = store.current_path(repo.root)
    assert path is not None
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    finally:
        con.close()


def test_the_interim_state_answers_exactly_as_an_index_built_with_the_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """So the stand-in's measured figures (benchmarks/README.md, "A static model") are what a user
    gets while the model embeds: same vectors, same bars, same veto."""
    monkeypatch.setattr(interim, "MIN_UNITS", 20)
    repos = []
    for name in ("interim", "static"):
        r = Repo.init(tmp_path / name)
        r.write("shop/cards.py", CARDS)
        r.write("shop/helpers.py", _helpers(30))
        r.commit("shop")
        repos.append(r)
    waiting, static = repos
    build.build_full(waiting.root, _cfg(waiting), embed=False)
    assert interim.fill(waiting.root, _cfg(waiting), build.writer_lock(waiting.root)) > 0
    build.build_full(static.root, _cfg(static, rag_embedding_model="minilm-static"))
    for question in (QUESTION, "retry charge", "scale a value", "how do I bake sourdough bread"):
        for gate in (True, False):
            a, b = (pipeline.search(r.root, question, gate=gate) for r in (waiting, static))
            assert a.interim_vectors and not b.interim_vectors
            assert (a.answered, a.evidence.get("reason")) == (b.answered, b.evidence.get("reason")), question
            assert [(x.id, x.score) for x in a.results] == [(x.id, x.score) for x in b.results], question
