"""refresh-context: query from the recorded prompt or the working set, sync, depth, delivery, --json."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from paqad import config, git
from paqad.cli import main as cli_main
from paqad.config import Config
from paqad.delivery import context, prompt, refresh
from paqad.errors import PaqadError
from paqad.index.writing import build
from testing.repos import Repo, make_shop


@pytest.fixture
def shop(repo: Repo) -> Repo:
    make_shop(repo)
    config.set_value(repo.root, "rag_enabled", "true")
    build.build_full(repo.root, config.load(repo.root))
    return repo


@pytest.fixture
def cli(monkeypatch, capsys):
    """``paqad`` in-process (main.py registers refresh-context under rag)."""

    def run(*args: str) -> tuple[int, str]:
        code = cli_main.main(list(args))
        return code, capsys.readouterr().out

    return run


def test_the_working_set_has_staged_unstaged_untracked_and_committed_files(shop):
    shop.git("checkout", "-q", "-b", "feature")
    shop.write("shop/shipping.py", "def ship_parcel(address):\n    return address\n")
    shop.commit("Ship parcels to the courier")
    shop.write("shop/payments.py", shop.root.joinpath("shop/payments.py").read_text() + "\n# edited\n")
    shop.write("shop/new.py", "X = 1\n")
    shop.git("add", "shop/new.py")
    shop.write("notes/todo.md", "later\n")
    ws = refresh.working_set(shop.root, "auto")  # git's working set minus paqad's own folder
    assert (ws.base, ws.committed, ws.subjects) == ("main", ["shop/shipping.py"], ["Ship parcels to the courier"])
    assert (ws.staged, ws.unstaged, ws.untracked) == (["shop/new.py"], ["shop/payments.py"], ["notes/todo.md"])
    assert ws.files == ["notes/todo.md", "shop/new.py", "shop/payments.py", "shop/shipping.py"]


def test_base_branch_auto_falls_back_to_master_and_the_setting_is_honoured(tmp_path):
    repo = Repo(tmp_path / "r")
    repo.root.mkdir()
    repo.git("init", "-q", "-b", "master")
    repo.write("a.txt", "a\n")
    repo.commit("first")
    repo.git("checkout", "-q", "-b", "develop")
    repo.write("b.txt", "b\n")
    repo.commit("second")
    assert git.resolve_base(repo.root) == "master"
    assert git.working_set(repo.root).committed == ["b.txt"]
    assert git.resolve_base(repo.root, "develop") == "develop" and git.working_set(repo.root, "develop").committed == []
    assert git.resolve_base(repo.root, "nope") is None


def test_working_set_outside_git_or_without_commits_is_empty(tmp_path, repo):
    assert git.working_set(tmp_path).files == []
    repo.write("a.py", "x = 1\n")
    ws = git.working_set(repo.root)
    assert ws.base is None and ws.untracked == ["a.py"]


def test_a_recorded_prompt_is_the_query_and_its_answer_is_delivered(shop):
    refresh.record_prompt(shop.root, "where is the session cookie signed", host="claude")
    report = refresh.refresh(shop.root, config.load(shop.root))
    assert report.query_source == "prompt" and report.case in ("passages", "pointers")
    text = context.context_path(shop.root).read_text()
    assert "shop/sessions.py:L" in text and "where is the session cookie signed" in text and context.HINT in text


def test_without_a_prompt_the_working_set_is_the_query(shop):
    shop.git("checkout", "-q", "-b", "feature")
    shop.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier.'''\n    return address\n")
    shop.commit("Hand parcels to the courier")
    report = refresh.refresh(shop.root, config.load(shop.root))
    assert report.query_source == "working-set" and "courier" in report.query and "shipping" in report.query
    assert report.synced.startswith("incremental: 1 changed")  # the commit was indexed before the search
    assert "shop/shipping.py" in context.context_path(shop.root).read_text()


def test_uncommitted_edits_are_synced_before_searching(shop):
    shop.write("shop/refunds.py", "def partial_refund_ledger(amount):\n    '''Write the partial refund into the ledger.'''\n    return amount\n")
    report = refresh.refresh(shop.root, config.load(shop.root), prompt="partial refund ledger")
    assert report.synced.startswith("incremental: 1 changed")
    assert "shop/refunds.py" in {p["path"] for p in report.delivery["passages"]}


def test_trivial_prompt_and_empty_working_set_deliver_nothing(shop):
    report = refresh.refresh(shop.root, config.load(shop.root), prompt="thanks")
    assert report.depth["level"] == "none" and report.context_file is None
    report = refresh.refresh(shop.root, config.load(shop.root))
    assert report.depth["level"] == "none" and "nothing to look up" in report.depth["reason"]
    assert not context.context_path(shop.root).exists()


def fake_search(scores_by_top_n: dict[int, list[float]], seen: list[int]):
    """A search that returns ``scores_by_top_n[top_n]`` passages on shop/sessions.py (scoring moves; the rule must not);
    those under the default threshold (0.75) are low-confidence."""

    def search(root, query, top_n):
        seen.append(top_n)
        results = [
            SimpleNamespace(path="shop/sessions.py", start_line=7, end_line=10, score=s, source="", low_confidence=s < 0.75) for s in scores_by_top_n[top_n]
        ]
        return SimpleNamespace(answered=True, results=results, diagnosis=None)

    return search


def test_depth_steps_up_when_too_few_confident_passages_come_back(shop):
    seen: list[int] = []
    report = refresh.refresh(shop.root, config.load(shop.root), prompt="sign cookie", search=fake_search({20: [0.9, 0.2], 60: [0.9, 0.5, 0.4]}, seen))
    assert seen == [20, 60] and [s["level"] for s in report.depth_steps] == ["standard", "deep"]
    assert "only 1 confident" in report.depth["reason"] and report.usable == 3
    seen.clear()
    report = refresh.refresh(shop.root, config.load(shop.root), prompt="sign cookie", search=fake_search({20: [0.9, 0.8, 0.76, 0.4]}, seen))
    assert seen == [20] and report.depth["level"] == "standard" and len(report.depth_steps) == 1
    seen.clear()  # relief only (nothing confident): no passage would score higher deeper down
    report = refresh.refresh(shop.root, config.load(shop.root), prompt="sign cookie", search=fake_search({20: [0.6, 0.5, 0.4]}, seen))
    assert seen == [20] and report.depth["level"] == "standard"


LEDGER = '''\
def settle_refund_ledger(order):
    """Settle the refund ledger of an order: every refund line is booked to the ledger."""
    refund = order.refund
    ledger = order.ledger
    return ledger.settle(refund)


def audit_refund(order):
    """Check one refund against the card processor."""
    return order.refund


def print_ledger(book):
    """Print the ledger's pages."""
    return book.ledger


def close_till(till):
    """Settle the till at the end of the day."""
    return till.close()
'''


def test_a_confident_answer_padded_by_its_low_confidence_tail_goes_deeper_and_a_refused_prompt_does_not(repo):
    """Real index, real search: one passage holds the whole question, others one word of it (the
    tail after a confident answer). The tail used to count as usable passages, so only a refused
    prompt went deeper (benchmarks/README.md, "The hook's deeper search counts confident passages")."""
    repo.write("shop/ledger.py", LEDGER)
    repo.commit("ledger")
    config.set_value(repo.root, "rag_enabled", "true")
    cfg = config.load(repo.root)
    build.build_full(repo.root, cfg)
    seen: list[tuple[int, int, int]] = []

    def search(root, query, top_n):  # the real search, recording what each call returned
        resp = refresh._search(root, query, top_n, cfg)
        seen.append((top_n, refresh.confident(resp), len(resp.results)))
        return resp

    report = refresh.refresh(repo.root, cfg, prompt="settle the refund ledger", sync=False, search=search)
    first = seen[0]
    assert first[0] == 20 and 1 <= first[1] < 3 <= first[2], seen  # few confident, padded to 3+ by the tail
    assert [n for n, _, _ in seen] == [20, 60] and report.depth["level"] == "deep"
    assert "shop/ledger.py" in {p["path"] for p in report.delivery["passages"]}
    seen.clear()
    report = refresh.refresh(repo.root, cfg, prompt="quantum teleportation of photons", sync=False, search=search)
    assert seen == [(20, 0, 0)] and report.depth["level"] == "standard" and report.case == "dark"


def test_retrieval_off_is_an_error(repo):
    make_shop(repo)
    with pytest.raises(PaqadError, match="rag init"):
        refresh.refresh(repo.root, config.load(repo.root), prompt="x")


def test_cli_json_reports_the_depth_and_why(shop, cli):
    code, out = cli("--root", str(shop.root), "rag", "refresh-context", "--prompt", "where is the session cookie signed", "--json")
    data = json.loads(out)
    assert code == 0 and data["depth_steps"][0]["level"] == "standard" and "a request in the prompt" in data["depth_steps"][0]["reason"]
    assert data["depth"] == data["depth_steps"][-1] and data["query_source"] == "prompt"
    assert data["case"] in ("passages", "pointers") and "shop/sessions.py" in {p["path"] for p in data["delivery"]["passages"]}
    code, out = cli("--root", str(shop.root), "rag", "refresh-context")
    assert code == 0 and "depth: " in out and "delivered: " in out


def test_the_prompt_budget_comes_from_the_environment_then_the_setting_then_the_default():
    assert prompt.budget_of(Config(rag_prompt_budget=0.8), environ={}) == 0.8
    assert prompt.budget_of(Config(), environ={}) == prompt.DEFAULT_BUDGET_S == 1.5
    assert prompt.budget_of(Config(rag_prompt_budget=0.8), environ={"PAQAD_HOOK_BUDGET": "0"}) == 0.0
    assert prompt.budget_of(Config(), environ={"PAQAD_HOOK_BUDGET": "soon"}) == 1.5
