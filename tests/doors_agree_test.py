"""Every door searches the same way: ``rag search --json``, ``paqad agent``, ``paqad mcp``, the
prompt hook's refresh and ``rag eval``'s paqad arm all build their search from the settings
through ``SearchRequest.from_settings``, so identical settings give identical answers; and the
resident ``paqad serve`` answering the CLI, agent and prompt-hook doors changes none of them.

Before, the agent and MCP doors never reranked (``"rerank": null`` with ``rag_rerank=local``) and
``rag eval`` searched with the default floor; the settings below (a local reranker and a floor
that is not the default) are the ones that exposed both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paqad import config
from paqad.channel import client
from paqad.delivery import context, refresh
from paqad.evaluation.arms import PaqadArm
from paqad.hooks import runner
from testing import serve
from testing.agents import Agent, call_all, text_of
from testing.hosts import run_host
from testing.models import make_model
from testing.repos import Repo

QUESTIONS = ["where is a charge refunded", "retry a card charge with exponential backoff", "how is the session cookie signed"]
THRESHOLD = "0.6"  # not the default (0.75): a door that ignores the setting answers differently


@pytest.fixture
def shop(shop: Repo, tmp_path: Path) -> Repo:
    """conftest's indexed shop with a tiny local reranker and a threshold that is not the default."""
    model = make_model(tmp_path / "models" / "tiny", shop.root, {"transaction": 10.0})
    for key, value in {"rag_rerank": "local", "rag_rerank_model": str(model.folder), "rag_similarity_threshold": THRESHOLD}.items():
        config.set_value(shop.root, key, value)
    return shop


def ranked(results: list[dict]) -> list[tuple[str, float, float | None]]:
    return [(r["id"], r["score"], r["signals"].get("rerank")) for r in results]


def test_cli_agent_and_mcp_give_the_same_reranked_answers(shop: Repo, paqad_cli) -> None:
    cli = {}
    for q in QUESTIONS:
        done = paqad_cli("rag", "search", q, "--json", cwd=shop.root)
        assert done.returncode == 0, done.stderr
        cli[q] = json.loads(done.stdout)
        assert cli[q]["rerank"] is not None and cli[q]["rerank"]["mode"] == "local" and not cli[q]["rerank"]["fallback"]
    agent = Agent(shop.root)
    try:
        by_agent = {q: agent.call("search", query=q)["result"] for q in QUESTIONS}
    finally:
        assert agent.close() == 0
    _, replies = call_all(shop.root, [("search", {"query": q}) for q in QUESTIONS])
    by_mcp = {q: reply.structured_content for q, reply in zip(QUESTIONS, replies)}
    for q in QUESTIONS:
        assert by_agent[q]["rerank"] == {**cli[q]["rerank"], "ms": by_agent[q]["rerank"]["ms"]}
        assert ranked(by_agent[q]["results"]) == ranked(cli[q]["results"]), q
        # MCP replies are compact (no per-signal scores): the same units, scores and reranking
        assert [(r["id"], r["score"]) for r in by_mcp[q]["results"]] == [(r["id"], r["score"]) for r in cli[q]["results"]], q
        assert by_mcp[q]["rerank"]["mode"] == "local" and by_mcp[q]["rerank"]["reranked"] == cli[q]["rerank"]["reranked"]
        heads = re.findall(r"^## (\S+):(\d+)-", text_of(replies[QUESTIONS.index(q)]), re.M)
        assert heads == [(r["path"], str(r["start_line"])) for r in cli[q]["results"]]


def test_prompt_hook_and_eval_arm_deliver_what_the_cli_ranks(shop: Repo, paqad_cli) -> None:
    cfg = config.load(shop.root)
    for q in QUESTIONS:
        report = refresh.refresh(shop.root, cfg, prompt=q, sync=False)
        passages = report.delivery["passages"]
        # the hook starts at rag_top_n and may search once deeper (under three confident passages):
        # the CLI is asked at the depth the hook ended at
        assert report.depth_steps[0]["top_n"] == cfg["rag_top_n"] and passages
        top_n = str(report.depth_steps[-1]["top_n"])
        done = paqad_cli("rag", "search", q, "--json", "--top-n", top_n, cwd=shop.root)
        expected = [r for r in json.loads(done.stdout)["results"] if r["score"] >= float(THRESHOLD)]
        assert [(p["path"], p["start_line"], p["score"]) for p in passages] == [(r["path"], r["start_line"], r["score"]) for r in expected][: len(passages)]
        arm = PaqadArm(shop.root, shop.root, cfg).ask(q)
        assert arm.files == list(dict.fromkeys(p["path"] for p in passages)), q


def _requests(root: Path) -> int:
    return int(client.request(root, "status").reply["info"]["requests"])


def _delivered(root: Path) -> list[tuple[str, int, float]]:
    last = context.last_delivery(root)
    assert last is not None
    return [(p["path"], p["start_line"], p["score"]) for p in last.to_dict()["passages"]]


def test_the_resident_service_door_gives_the_in_process_answers(shop: Repo, paqad_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rag search``, ``paqad agent`` and the prompt hook answered by ``paqad serve`` (its warm
    shared ``Index``) rank exactly as the same doors do in their own processes."""
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=shop.root).returncode == 0
    alone = {q: json.loads(paqad_cli("rag", "search", q, "--json", cwd=shop.root).stdout) for q in QUESTIONS}  # the suite's rag_serve=false
    monkeypatch.setenv("PAQAD_RAG_SERVE", "true")
    serve.start(shop.root)
    before = _requests(shop.root)
    agent = Agent(shop.root)
    try:
        for q in QUESTIONS:
            via_cli = json.loads(paqad_cli("rag", "search", q, "--json", cwd=shop.root).stdout)
            assert ranked(via_cli["results"]) == ranked(alone[q]["results"]), q
            assert via_cli["rerank"]["mode"] == "local" and not via_cli["rerank"]["fallback"]
            assert ranked(agent.call("search", query=q)["result"]["results"]) == ranked(alone[q]["results"]), q
            assert run_host(shop.root, "claude", prompt=q).returncode == 0
            assert [e for e in runner.read_log(shop.root) if e.get("action") == "context:claude"][-1]["mode"] == "service"
            # as the in-process refresh delivers (the test above); a fresh hook process may run out of
            # budget before its reranker loads, the warm service does not
            expected = [(r["path"], r["start_line"], r["score"]) for r in alone[q]["results"] if r["score"] >= float(THRESHOLD)]
            delivered = _delivered(shop.root)
            assert delivered and delivered == expected[: len(delivered)], q
    finally:
        assert agent.close() == 0
    assert _requests(shop.root) - before >= 3 * len(QUESTIONS), "every door went through the service"
