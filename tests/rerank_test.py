"""Reranking (paqad/search/rerank.py): off is a passthrough; local runs a real ONNX cross-encoder
and really reorders; Cohere speaks the documented API to a stub on 127.0.0.1; every failure keeps
the fused order, writes one audit line without the key, and exits 0.

The local model is built by ``testing.models`` with ``onnx.helper``: the real cross-encoder interface
(``input_ids``, ``attention_mask``, ``token_type_ids`` int64 [batch, seq] -> ``logits`` float
[batch, 1]) over a real ``tokenizers`` WordLevel tokenizer.json made from the test repository's
words. Its logit is query-dependent and computable by hand:

    logit = Σ over passage tokens j of weight[id_j] · (number of query tokens equal to id_j)

so a test can say exactly which order the model must produce. No real cross-encoder ships in a
registry package (see benchmarks/README.md, Reranking), so none is used here.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paqad import audit, config, workspace
from paqad.delivery import prompt
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline, rerank
from paqad.search.request import SearchRequest
from paqad.secrets import set_secret
from testing.models import TinyModel, make_model
from testing.repos import Repo, make_shop
from testing.stubs import Reply, Request, json_reply, serve

KEY = "co-test-key-9f8e7d6c5b4a"
QUERY = "charge refund transaction"
TARGET = "shop/payments.py::PaymentGateway.charge"  # what both rerankers put first; fused puts refund first


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture
def shop(repo: Repo) -> Repo:
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root))
    return repo


@pytest.fixture
def tiny(shop: Repo, tmp_path: Path) -> TinyModel:
    # "transaction" weighs 10: the model prefers the passage that says "transaction id" (charge),
    # while the fused order puts refund first.
    return make_model(tmp_path / "models" / "tiny", shop.root, {"transaction": 10.0})


def cfg_for(root: Path, **settings: str) -> config.Config:
    return config.load(root, {k: str(v) for k, v in settings.items()})


def run_search(root: Path, query: str = QUERY, gate: bool = True, **settings: Any) -> pipeline.SearchResponse:
    cfg = cfg_for(root, **settings)
    return pipeline.run(Index.shared(root), SearchRequest.from_settings(cfg, root, query, top_n=10, gate=gate))


def fallback_lines(root: Path) -> list[str]:
    return [line for line in audit.read(root) if rerank.AUDIT_EVENT in line]


def ids(resp: pipeline.SearchResponse) -> list[str]:
    return [r.id for r in resp.results]


def confident(resp: pipeline.SearchResponse) -> list[str]:
    """The results delivered with confidence (the floor may add a low-confidence tail after them)."""
    return [r.id for r in resp.results if not r.low_confidence]


# ---------------------------------------------------------------------------- off and local


def test_off_is_a_passthrough(shop: Repo) -> None:
    plain = pipeline.search(shop.root, QUERY, top_n=10, gate=False)
    off = run_search(shop.root, gate=False, rag_rerank="off")
    assert off.rerank is None
    assert [(r.id, r.score, r.signals) for r in off.results] == [(r.id, r.score, r.signals) for r in plain.results]
    assert all("rerank" not in r.signals for r in off.results)
    assert fallback_lines(shop.root) == []


def test_local_reorders_by_the_model_and_keeps_scores(shop: Repo, tiny: TinyModel) -> None:
    fused = run_search(shop.root, gate=False)
    ranked = run_search(shop.root, gate=False, rag_rerank="local", rag_rerank_model=str(tiny.folder))
    assert ranked.rerank["mode"] == "local" and ranked.rerank["fallback"] is None and ranked.rerank["reranked"] >= len(ranked.results)
    assert sorted(ids(ranked)) == sorted(ids(fused))
    # The order is the model's: descending logits (ties keep the fused order) ...
    logits = [r.signals["rerank"] for r in ranked.results]
    assert logits == sorted(logits, reverse=True)
    fused_pos = {rid: i for i, rid in enumerate(ids(fused))}
    for a, b in zip(ranked.results, ranked.results[1:]):
        assert a.signals["rerank"] > b.signals["rerank"] or fused_pos[a.id] < fused_pos[b.id]
    # ... and the logits are what the model computes for (query, that unit's text).
    stored = Index.shared(shop.root).units_by_id([r.id for r in ranked.results], ("path", "qualified_name", "text"))
    for res in ranked.results:
        u = stored[res.id]
        assert res.signals["rerank"] == pytest.approx(tiny.logit(QUERY, rerank.document_text(u.path, u.qualified_name, u.text)), abs=1e-4)
    # It really moved something: charge outranks what the fused order put first.
    assert ids(ranked) != ids(fused)
    assert ranked.results[0].id == TARGET != fused.results[0].id
    # Scores are kept: each unit has the calibrated score it had without reranking.
    fused_score = {r.id: r.score for r in fused.results}
    assert all(r.score == fused_score[r.id] and r.signals["calibrated"] == r.score for r in ranked.results)
    assert fallback_lines(shop.root) == []


def test_rerank_runs_before_the_floor_and_the_floor_still_decides(shop: Repo, tiny: TinyModel) -> None:
    model = {"rag_rerank": "local", "rag_rerank_model": str(tiny.folder)}
    # At the default threshold only refund passes: the model's favourite (charge, 0.74) is not lifted.
    fused, ranked = run_search(shop.root), run_search(shop.root, **model)
    assert ranked.answered and confident(ranked) == confident(fused) == ["shop/payments.py::PaymentGateway.refund"]
    assert ranked.results[0].id == "shop/payments.py::PaymentGateway.refund"  # the tail comes after, however the model ranks it
    assert ranked.results[0].signals["rerank"] < run_search(shop.root, gate=False, **model).results[0].signals["rerank"]
    # With a lower threshold more pass, and they come in the model's order with their own scores.
    fused, ranked = run_search(shop.root, rag_similarity_threshold=0.5), run_search(shop.root, rag_similarity_threshold=0.5, **model)
    assert set(confident(ranked)) == set(confident(fused)) and len(confident(ranked)) >= 3
    assert ranked.results[0].id == TARGET != fused.results[0].id
    assert all(r.score >= 0.5 for r in ranked.results if not r.low_confidence)


def test_pool_bounds_what_is_reranked(shop: Repo, tiny: TinyModel) -> None:
    fused = run_search(shop.root, gate=False)
    ranked = run_search(shop.root, gate=False, rag_rerank="local", rag_rerank_model=str(tiny.folder), rag_rerank_pool=2)
    assert ranked.rerank["pool"] == 2 and ranked.rerank["reranked"] == 2
    assert [("rerank" in r.signals) for r in ranked.results].count(True) <= 2
    assert ids(ranked)[2:] == ids(fused)[2:]  # below the pool, the fused order is untouched
    assert set(ids(ranked)[:2]) == set(ids(fused)[:2])


def test_refused_query_loads_no_model(shop: Repo, tmp_path: Path) -> None:
    resp = run_search(shop.root, "kubernetes helm chart", rag_rerank="local", rag_rerank_model=str(tmp_path / "nowhere"))
    assert not resp.answered and resp.rerank is None
    assert fallback_lines(shop.root) == []  # never attempted: a missing model would have been logged


def test_relative_model_folder_is_confined_to_the_repository(shop: Repo, tiny: TinyModel) -> None:
    inside = make_model(shop.root / "models" / "ce", shop.root, {"transaction": 10.0})
    ok = run_search(shop.root, gate=False, rag_rerank="local", rag_rerank_model="models/ce")
    assert ok.rerank["fallback"] is None and ok.results[0].signals["rerank"] > 0 and inside.folder.is_dir()
    escape = run_search(shop.root, gate=False, rag_rerank="local", rag_rerank_model="../models/tiny")
    assert "outside the repository" in escape.rerank["fallback"]


def _corrupt(folder: Path, root: Path) -> None:
    make_model(folder, root)
    (folder / "model.onnx").write_bytes(b"this is not an onnx model\x00\x01")


def _bad_shape(folder: Path, root: Path) -> None:
    make_model(folder, root, shape="bad")


def _bad_tokenizer(folder: Path, root: Path) -> None:
    make_model(folder, root)
    (folder / "tokenizer.json").write_text("{not json", encoding="utf-8")


def _no_tokenizer(folder: Path, root: Path) -> None:
    make_model(folder, root)
    (folder / "tokenizer.json").unlink()


@pytest.mark.parametrize(
    ("breaker", "reason"),
    [
        (None, "does not exist"),
        (_no_tokenizer, "has no tokenizer.json"),
        (_corrupt, "not a model onnxruntime can load"),
        (_bad_tokenizer, "not a tokenizers file"),
        (_bad_shape, "logits of shape"),
    ],
)
def test_local_failures_keep_the_fused_order(shop: Repo, tmp_path: Path, breaker: Callable | None, reason: str) -> None:
    folder = tmp_path / "broken"
    if breaker is not None:
        breaker(folder, shop.root)
    fused = run_search(shop.root, gate=False)
    resp = run_search(shop.root, gate=False, rag_rerank="local", rag_rerank_model=str(folder))
    assert ids(resp) == ids(fused) and [r.score for r in resp.results] == [r.score for r in fused.results]
    assert reason in resp.rerank["fallback"]
    lines = fallback_lines(shop.root)
    assert len(lines) == 1 and "WARN" in lines[0] and 'mode="local"' in lines[0] and reason in lines[0]


def test_local_without_a_model_setting_says_what_to_set(shop: Repo) -> None:
    resp = run_search(shop.root, gate=False, rag_rerank="local")
    assert "needs rag_rerank_model" in resp.rerank["fallback"] and "model.onnx" in resp.rerank["fallback"]


def test_deadline_passed_keeps_the_fused_order(shop: Repo, tiny: TinyModel) -> None:
    cfg = cfg_for(shop.root, rag_rerank="local", rag_rerank_model=str(tiny.folder))
    late = dataclasses.replace(SearchRequest.from_settings(cfg, shop.root, QUERY).rerank, deadline=time.monotonic() - 1)
    fused = pipeline.search(shop.root, QUERY, top_n=10, gate=False)
    resp = pipeline.search(shop.root, QUERY, top_n=10, gate=False, rerank=late)
    assert ids(resp) == ids(fused) and "no time left" in resp.rerank["fallback"]


def test_local_out_of_time_between_batches(tiny: TinyModel) -> None:
    encoder = rerank.CrossEncoder(tiny.folder, batch=1)
    calls = iter([1.0, 1.0, 0.0])
    with pytest.raises(rerank.RerankError, match="ran out of time after 2 of 3"):
        encoder.score(QUERY, ["refund", "charge", "gateway"], lambda: next(calls))


# ---------------------------------------------------------------------------- Cohere against a stub


@dataclass
class Stub:
    """A local Cohere: POST /v2/rerank -> {"results": [{"index", "relevance_score"}], ...}."""

    status: int = 200
    delay: float = 0.0
    scores: Callable[[list[str]], list[float]] | None = None
    requests: list[dict] = field(default_factory=list)
    url: str = ""

    def reply(self, body: dict) -> tuple[int, dict]:
        if self.status != 200:
            return self.status, {"message": f"stub says {self.status}"}
        docs = body["documents"]
        scores = self.scores(docs) if self.scores else [float("transaction id" in d.lower()) for d in docs]
        order = sorted(range(len(docs)), key=lambda i: -scores[i])[: body.get("top_n", len(docs))]
        return 200, {"id": "stub", "results": [{"index": i, "relevance_score": scores[i]} for i in order], "meta": {"api_version": {"version": "2"}}}


@pytest.fixture
def cohere_stub():
    stub = Stub()

    def handle(request: Request) -> Reply:
        stub.requests.append({"path": request.path, "auth": request.headers.get("authorization"), "body": request.body})
        time.sleep(stub.delay)
        status, answer = stub.reply(request.body)
        return json_reply(status, answer, {"Retry-After": "0"} if status == 429 else None)

    with serve(handle) as server:
        stub.url = server.url
        yield stub


@pytest.fixture(autouse=True)
def _no_cohere_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in rerank.COHERE_KEYS:
        monkeypatch.delenv(name, raising=False)


def cohere_settings(stub: Stub, **extra: Any) -> dict[str, Any]:
    return {"rag_rerank": "cohere", "rag_rerank_base_url": stub.url, **extra}


def test_cohere_request_shape_key_from_secrets_and_reorder(shop: Repo, cohere_stub: Stub) -> None:
    set_secret(shop.root, "CO_API_KEY", KEY)
    fused = run_search(shop.root, gate=False)
    resp = run_search(shop.root, gate=False, **cohere_settings(cohere_stub))
    assert resp.rerank["fallback"] is None and resp.rerank["model"] == "rerank-english-v3.0"
    (req,) = cohere_stub.requests
    assert req["path"] == "/v2/rerank" and req["auth"] == f"Bearer {KEY}"
    body = req["body"]
    assert body["model"] == "rerank-english-v3.0" and body["query"] == QUERY and body["top_n"] == len(body["documents"])
    assert all(isinstance(d, str) and len(d) <= rerank.DOC_CHARS for d in body["documents"])
    assert resp.results[0].id == TARGET != fused.results[0].id
    assert resp.results[0].signals["rerank"] == 1.0
    assert {r.id: r.score for r in resp.results} == {r.id: r.score for r in fused.results}


def test_cohere_key_from_either_environment_variable(shop: Repo, cohere_stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COHERE_API_KEY", KEY)
    assert run_search(shop.root, gate=False, **cohere_settings(cohere_stub)).rerank["fallback"] is None
    monkeypatch.setenv("CO_API_KEY", KEY + "-preferred")
    assert run_search(shop.root, gate=False, **cohere_settings(cohere_stub, rag_rerank_model="rerank-v3.5")).rerank["fallback"] is None
    assert [r["auth"] for r in cohere_stub.requests] == [f"Bearer {KEY}", f"Bearer {KEY}-preferred"]
    assert cohere_stub.requests[1]["body"]["model"] == "rerank-v3.5"


@pytest.mark.parametrize(
    ("status", "delay", "reason"),
    [(401, 0.0, "rejected the API key (401)"), (429, 0.0, "HTTP 429"), (500, 0.0, "HTTP 500"), (200, 2.0, "within")],
)
def test_cohere_failures_keep_the_fused_order_and_never_log_the_key(shop: Repo, cohere_stub: Stub, status: int, delay: float, reason: str) -> None:
    set_secret(shop.root, "CO_API_KEY", KEY)
    cohere_stub.status, cohere_stub.delay = status, delay
    fused = run_search(shop.root, gate=False)
    started = time.monotonic()
    resp = run_search(shop.root, gate=False, **cohere_settings(cohere_stub, rag_rerank_timeout=0.5))
    assert time.monotonic() - started < 5
    assert ids(resp) == ids(fused) and reason in resp.rerank["fallback"]
    (line,) = fallback_lines(shop.root)
    assert 'mode="cohere"' in line and reason in line
    assert KEY not in (workspace.local_dir(shop.root) / "audit.log").read_text(encoding="utf-8")
    assert KEY not in json.dumps(resp.to_dict())


def test_cohere_without_a_key_sends_nothing(shop: Repo, cohere_stub: Stub) -> None:
    resp = run_search(shop.root, gate=False, **cohere_settings(cohere_stub))
    assert "CO_API_KEY" in resp.rerank["fallback"] and cohere_stub.requests == []


def test_cohere_plain_http_to_another_machine_is_refused(shop: Repo) -> None:
    set_secret(shop.root, "CO_API_KEY", KEY)
    resp = run_search(shop.root, gate=False, rag_rerank="cohere", rag_rerank_base_url="http://rerank.example.com")
    assert "plain http://" in resp.rerank["fallback"]


@pytest.mark.parametrize(
    ("payload", "match"),
    [({}, "'results' list"), ({"results": [{"index": 99, "relevance_score": 1.0}]}, "out-of-range"), ({"results": [{"index": 0, "relevance_score": "x"}]}, "not a number")],
)
def test_cohere_malformed_answers_are_errors(payload: dict, match: str) -> None:
    with pytest.raises(rerank.RerankError, match=match):
        rerank.parse_cohere(payload, 3)


def test_cohere_partial_answer_ranks_the_missing_last() -> None:
    assert rerank.parse_cohere({"results": [{"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}]}, 3) == [0.2, -0.8, 0.9]


def test_rerank_urls() -> None:
    assert rerank.rerank_url("https://api.cohere.com") == "https://api.cohere.com/v2/rerank"
    assert rerank.rerank_url("https://gw.example/v2/") == "https://gw.example/v2/rerank"
    assert rerank.rerank_url("http://127.0.0.1:9/custom/rerank") == "http://127.0.0.1:9/custom/rerank"


# ---------------------------------------------------------------------------- the prompt hook and the CLI


def test_prompt_hook_never_waits_for_a_slow_reranker(shop: Repo, cohere_stub: Stub) -> None:
    set_secret(shop.root, "CO_API_KEY", KEY)
    config.set_value(shop.root, "rag_enabled", "true")
    for key, value in cohere_settings(cohere_stub, rag_rerank_timeout=30).items():
        config.set_value(shop.root, key, str(value))
    cohere_stub.delay = 5.0
    started = time.monotonic()
    answer = prompt.answer_prompt(shop.root, config.load(shop.root), "where is a charge refunded", 10_000, lambda root: None, budget=2.0)
    assert time.monotonic() - started < 2.5  # the budget, not Cohere's 5 s nor rag_rerank_timeout's 30
    assert answer.status == "live" and "shop/payments.py" in (answer.text or "")
    lines = fallback_lines(shop.root)
    assert lines and all('mode="cohere"' in line and KEY not in line for line in lines)


def test_cli_end_to_end_local(shop: Repo, tiny: TinyModel, paqad_cli) -> None:
    args = ("-c", "rag_rerank=local", "-c", f"rag_rerank_model={tiny.folder}", "-c", "rag_similarity_threshold=0.5", "rag", "search", QUERY, "--json")
    out = paqad_cli(*args, cwd=shop.root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["rerank"]["mode"] == "local" and data["rerank"]["fallback"] is None
    assert data["results"][0]["id"] == TARGET and "rerank" in data["results"][0]["signals"]
    off = json.loads(paqad_cli("-c", "rag_similarity_threshold=0.5", "rag", "search", QUERY, "--json", cwd=shop.root).stdout)
    assert off["rerank"] is None and off["results"][0]["id"] != data["results"][0]["id"]
    flag = json.loads(paqad_cli("-c", f"rag_rerank_model={tiny.folder}", "rag", "probe", QUERY, "--rerank", "local", "--json", cwd=shop.root).stdout)
    assert flag["rerank"]["mode"] == "local" and flag["results"][0]["id"] == TARGET


def test_cli_fallback_exits_0_with_a_warning(shop: Repo, tmp_path: Path, paqad_cli) -> None:
    out = paqad_cli("-c", "rag_rerank=local", "-c", f"rag_rerank_model={tmp_path / 'missing'}", "rag", "search", QUERY, "--json", cwd=shop.root)
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["answered"] and "does not exist" in data["rerank"]["fallback"]
    assert "warning: reranking skipped, fused order kept" in out.stderr
    assert len(fallback_lines(shop.root)) == 1
    bad = paqad_cli("-c", "rag_rerank=sometimes", "rag", "search", QUERY, cwd=shop.root)
    assert bad.returncode == 2 and "rag_rerank" in bad.stderr and "off, local, cohere" in bad.stderr


def test_cross_encoder_session_uses_the_shared_settings(tiny: TinyModel) -> None:
    """The local reranker's session comes from the same helper as MiniLM's (paqad/embed/onnx_session.py)."""
    options = rerank.CrossEncoder(tiny.folder, threads=1)._session.get_session_options()
    assert options.inter_op_num_threads == 1 and options.intra_op_num_threads == 1 and options.log_severity_level == 3
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_cohere_goes_through_the_shared_http_client(shop: Repo, cohere_stub: Stub) -> None:
    """Cohere reranking is a plain JsonClient (no embedding-provider subclass): its label, model and key rule."""
    from paqad.transport import JsonClient

    client = rerank._cohere_client(rerank.RerankConfig(root=shop.root, mode="cohere", base_url=cohere_stub.url), 5.0)
    assert type(client) is JsonClient and client.url == cohere_stub.url + "/v2/rerank"
    assert (client.label, client.model, client.key.names) == ("Cohere rerank", "rerank-english-v3.0", rerank.COHERE_KEYS)
    assert client.retry.max_attempts == 2 and client.retry.max_total_s == 5.0
