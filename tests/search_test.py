"""Search: ranking, the [0, 1] relevance score, evidence tests and their four reasons, query lengths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import evidence, pipeline
from testing.env import LEXICAL
from testing.repos import make_shop


@pytest.fixture
def shop(repo):
    make_shop(repo)
    for i in range(20):  # 500 units: enough for corpus statistics (and absences) to mean something
        funcs = [f"def helper_{i}_{j}(value):\n    '''Format the value {j} so that it is shown where the shop lists its prices.'''\n    return str(value)\n" for j in range(25)]
        repo.write(f"shop/util_{i}.py", "\n\n".join(funcs))
    repo.commit("more")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def test_plain_question_ranks_the_declaration_first(shop):
    resp = pipeline.search(shop.root, "where is the session cookie signed")
    assert resp.answered
    assert resp.results[0].id == "shop/sessions.py::sign_cookie"
    top = resp.results[0]
    assert (top.start_line, top.end_line) == (7, 10)
    assert top.source.startswith("def sign_cookie(")
    assert 0.0 <= top.score <= 1.0 and top.score == top.signals["calibrated"] and 0.0 <= top.signals["relevance"] <= 1.0
    assert set(top.matched_terms) >= {"sign", "cooki", "session"}


def test_identifier_split_matches_natural_words(shop):
    resp = pipeline.search(shop.root, "retry the charge")
    assert resp.results[0].name == "retry_charge"
    resp = pipeline.search(shop.root, "retryCharge")
    assert resp.results[0].name == "retry_charge"


@pytest.mark.parametrize(
    "query, reason",
    [
        ("kubernetes helm chart", "no_query_term_in_index"),
        ("the value for display", "only_ubiquitous_terms_matched"),
        ("compute the VAT on an invoice ledger before the refund", "too_little_of_the_query_matched"),
        ("refund attempts hmac", "matched_terms_are_scattered"),
    ],
)
def test_each_refusal_reason(shop, query, reason):
    resp = pipeline.search(shop.root, query)
    assert not resp.answered and resp.results == []
    diag = resp.diagnosis
    assert diag["reason"] == reason
    assert diag["reason"] in evidence.REASONS and diag["hint"]
    assert {"coverage", "concentration", "bars", "absent_terms", "distinctive_terms"} <= set(diag)
    probe = pipeline.search(shop.root, query, gate=False)
    assert probe.answered and probe.diagnosis is None


def test_long_bug_report_is_answered(shop):
    report = (
        "We are seeing customers double charged in production. Steps: open the checkout page, pay with a card, "
        "the processor times out and then the customer is charged twice. Expected: a single charge. "
        "Traceback (most recent call last):\n"
        '  File "/srv/app/shop/payments.py", line 27, in retry_charge\n'
        "    return gateway.charge(amount_cents, card_token)\n"
        '  File "/srv/app/shop/payments.py", line 11, in charge\n'
        '    return self._post("/charges", {"amount": amount_cents, "card": card_token})\n'
        "TimeoutError: processor unavailable\n" + "Some more context from the reporter about their environment, browser and locale. " * 30
    )
    assert len(report) > 2000
    resp = pipeline.search(shop.root, report)
    assert resp.answered, resp.diagnosis
    assert resp.evidence["long_query"]
    assert resp.results[0].name in {"retry_charge", "charge"}


def test_cjk_text_is_indexed_as_bigrams(repo):
    repo.write("docs/guide.md", "# 支付重试\n\n当支付处理器超时时，系统会自动重试扣款，并使用指数退避。\n\n# Other\n\nUnrelated English section about widgets and gadgets.\n")
    repo.write("src/a.py", "def unrelated_function():\n    return 'some english text that is long enough to be indexed'\n")
    repo.commit()
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    resp = pipeline.search(repo.root, "支付超时重试")
    assert resp.results and resp.results[0].name == "支付重试"


def test_source_budget_and_omitted(shop):
    resp = pipeline.search(shop.root, "charge card processor", top_n=5, source_chars=100, budget_chars=150)
    with_source = [r for r in resp.results if r.source]
    assert len(with_source) == 2 and len(with_source[0].source) == 100 and len(with_source[1].source) == 50
    assert resp.omitted_for_budget == len(resp.results) - 2
    assert with_source[0].source_truncated


def _age(path, seconds=3600):
    """Give ``path`` an mtime ``seconds`` ago (a file the warm process may keep); returns the mtime."""
    then = time.time_ns() - seconds * 1_000_000_000
    os.utime(path, ns=(then, then))
    return then


def test_a_kept_source_follows_an_edit_that_keeps_size_and_mtime(shop):
    """A warm process keeps the lines of the files it showed (issue 34); an edit of the same size
    with the mtime put back still shows (the file's ctime moved), as the live file reads."""
    path = shop.root / "shop/sessions.py"
    then = _age(path)
    first = pipeline.search(shop.root, "where is the session cookie signed").results[0]
    assert first.name == "sign_cookie" and "hexdigest()" in first.source
    path.write_text(path.read_text().replace("hexdigest()", "HEXDIGEST()"))
    os.utime(path, ns=(then, then))
    again = pipeline.search(shop.root, "where is the session cookie signed").results[0]
    assert again.name == "sign_cookie" and "HEXDIGEST()" in again.source and "hexdigest()" not in again.source


def test_a_kept_source_is_not_shown_through_a_symlink_swapped_in(shop, tmp_path):
    """A kept file replaced by a symlink out of the repository (same text) shows no source: the
    path reaches another file, so it is confined again and refused."""
    path = shop.root / "shop/sessions.py"
    _age(path)
    assert pipeline.search(shop.root, "where is the session cookie signed").results[0].source
    outside = tmp_path / "outside.py"
    outside.write_text(path.read_text())
    _age(outside)
    path.unlink()
    path.symlink_to(outside)
    again = pipeline.search(shop.root, "where is the session cookie signed").results[0]
    assert again.name == "sign_cookie" and again.source is None


def test_a_kept_file_with_a_secret_is_redacted_once_per_identity(shop, monkeypatch):
    """A result whose span holds a secret shows the masked lines; a warm process redacts that file
    once while it is unchanged (the whole file through the secret rules was an eighth of a warm
    lexical query when its masked lines were not kept), and again after an edit."""
    from paqad import redaction
    from paqad.search import live

    token = "ghp_" + "a1B2c3D4" * 4 + "zYxW"  # assembled: no whole token in this file
    path = shop.root / "shop/vault.py"
    path.write_text(f'def vault_unlock_token():\n    """Unlock the vault with the deploy token."""\n    return "{token}"\n')
    shop.commit("vault")
    build.build_full(shop.root, config.load(shop.root, environ=LEXICAL))
    then = _age(path)
    monkeypatch.setattr(live, "_SETTLE_NS", 0)  # the file's ctime is now: keep it all the same
    calls: list[str] = []
    real = redaction.redact
    monkeypatch.setattr(redaction, "redact", lambda text, rel=None: calls.append(str(rel)) or real(text, rel))
    for _ in range(3):
        top = pipeline.search(shop.root, "unlock the vault deploy token").results[0]
        assert top.name == "vault_unlock_token" and token not in top.source and "[REDACTED:github-token]" in top.source
    assert calls.count("shop/vault.py") == 1
    path.write_text(path.read_text().replace("deploy token", "deploy TOKEN"))
    os.utime(path, ns=(then, then))
    top = pipeline.search(shop.root, "unlock the vault deploy token").results[0]
    assert "deploy TOKEN" in top.source and token not in top.source and calls.count("shop/vault.py") == 2


def test_what_scoring_derives_from_a_posting_list_is_kept_for_its_generation(shop):
    """A warm process derives a term's identifier count, largest unit id and field credits once
    per index generation (issue 34: a fifth of the scoring step), and afresh after a rebuild."""
    import numpy  # noqa: F401 - loaded, as in a warm process: the numpy scorer runs

    question = "where is the session cookie signed"
    assert pipeline.search(shop.root, question).results[0].name == "sign_cookie"
    index = Index.shared(shop.root)
    tid = index.terms(["cooki"])["cooki"].tid
    first = index.cached("lexical-postings", dict).derived[tid]
    assert first.idents >= 1 and first.credit.size == index.terms(["cooki"])["cooki"].df
    pipeline.search(shop.root, question)
    assert index.cached("lexical-postings", dict).derived[tid] is first  # kept, not derived again
    shop.write("shop/jar.py", "def cookie_jar():\n    '''Keep every cookie of the session.'''\n    return []\n")
    shop.commit("jar")
    build.build_full(shop.root, config.load(shop.root, environ=LEXICAL))
    assert pipeline.search(shop.root, question).results[0].name == "sign_cookie"
    tid = index.terms(["cooki"])["cooki"].tid
    again = index.cached("lexical-postings", dict).derived[tid]
    assert again is not first and again.idents == first.idents + 1 and again.credit.size == first.credit.size + 1


def test_to_dict_is_asdict_with_the_schema_version(shop):
    """``to_dict`` builds what ``dataclasses.asdict`` gave (issue 34: it was a tenth of a search
    through the service), nested values copied, keys in the same order."""
    import dataclasses

    for q, gate in (("where is the session cookie signed", True), ("zzqx nothing here", True), ("refund a transaction", False)):
        resp = pipeline.search(shop.root, q, gate=gate)
        data, want = resp.to_dict(), {**dataclasses.asdict(resp), "schema_version": 1}
        assert json.dumps(data) == json.dumps(want)
        data["evidence"]["passed"] = "changed"
        assert resp.evidence["passed"] != "changed"


def test_json_shape_is_versioned(shop):
    data = pipeline.search(shop.root, "refund a transaction").to_dict()
    json.dumps(data)
    assert data["schema_version"] == 1
    keys = {"id", "path", "language", "kind", "name", "qualified_name", "signature", "start_line", "end_line", "score", "signals", "matched_terms", "source"}
    assert keys <= set(data["results"][0])


def test_the_plain_python_and_numpy_scorers_agree_exactly(repo):
    """A fresh process scores a small index without numpy; it must rank exactly as numpy does
    (benchmarks/check_scorers.py checks the same on every ruler question)."""
    from paqad.search import lexical
    from paqad.search import query as query_mod

    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    index = Index.open(repo.root)
    n = index.meta().n_units
    for q in ["retry a failed charge with backoff", "where is the session cookie signed", "charge", "refund the card payment"]:
        plain = lexical._score_plain(index, query_mod.analyze(index, q, n).scored(), lexical.POOL)
        fast = lexical._score_numpy(index, query_mod.analyze(index, q, n).scored(), lexical.POOL)
        assert plain.ranked, q
        assert plain.total == fast.total
        assert [(c.uid, c.bm25f, c.relevance, c.rarity) for c in plain.ranked] == [(c.uid, c.bm25f, c.relevance, c.rarity) for c in fast.ranked]
        lexical.fill_matched(plain.ranked, plain.terms, plain.postings)
        lexical.fill_matched(fast.ranked, fast.terms, fast.postings)
        assert [c.matched for c in plain.ranked] == [c.matched for c in fast.ranked] and plain.ranked[0].matched
    index.close()


def test_a_fresh_lexical_search_does_not_import_numpy(repo):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    code = "import sys; from pathlib import Path; from paqad.search import pipeline; " \
           f"r = pipeline.search(Path({str(repo.root)!r}), 'retry a failed charge'); print(r.answered, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=repo.root, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False"], done.stderr
