"""A workspace of repositories: one query answered across this repository and its members, each
from its own index with its own rules, results naming their repository; members without an index
are reported, not errors; membership is per developer (never in a committed file)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from paqad import config, workspace
from paqad.errors import UsageError
from paqad.index.writing import build
from paqad.search import across
from testing.env import LEXICAL
from testing.repos import Repo, make_shop

INVOICES = '''def parse_supplier_invoice(text):
    """Split a supplier invoice into its line items and their VAT rates."""
    return [line.split(";") for line in text.splitlines()]
'''


@pytest.fixture
def two(repo: Repo, tmp_path):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    lib = Repo.init(tmp_path / "billing-lib")
    lib.write("billing/invoices.py", INVOICES)
    lib.write("billing/secrets.env", "API_KEY=sk-live-abcdefghijklmnopqrstuvwxyz\n")
    lib.commit("billing")
    build.build_full(lib.root, config.load(lib.root, environ=LEXICAL))
    return repo, lib


def test_one_query_is_answered_from_the_member_that_holds_it(two, monkeypatch):
    repo, lib = two
    monkeypatch.setenv("PAQAD_RAG_EMBEDDING_PROVIDER", "none")
    assert across.add(repo.root, str(lib.root / "billing")) == lib.root.resolve()  # a subfolder records the top
    resp = across.search(repo.root, "parse the supplier invoice line items")
    assert resp.answered
    top = resp.results[0]
    assert (top.repository, top.path, top.name) == ("billing-lib", "billing/invoices.py", "parse_supplier_invoice")
    members = {m["repository"]: m["status"] for m in resp.evidence["members"]}
    assert members == {repo.root.name: "silent", "billing-lib": "answered"}
    # this repository's own answers still come first for its own code
    own = across.search(repo.root, "where is the session cookie signed")
    assert own.results[0].repository == repo.root.name and own.results[0].path == "shop/sessions.py"


def test_each_member_keeps_its_own_rules_and_unindexed_members_are_reported(two, tmp_path):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    bare = Repo.init(tmp_path / "not-indexed")
    bare.write("x.py", "def x():\n    return 1\n")
    bare.commit("x")
    across.add(repo.root, str(bare.root))
    resp = across.search(repo.root, "API_KEY sk-live")
    assert all("sk-live" not in (r.source or "") for r in resp.results)  # the member's secrets rules built its index
    assert {"repository": "not-indexed", "path": str(bare.root.resolve()), "status": "not indexed"} in resp.evidence["members"]


def test_a_member_with_a_broken_config_is_reported_and_the_others_answer(two):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    (workspace.local_config_path(lib.root)).write_text("rag_top_n: [not, a, number]\n")
    resp = across.search(repo.root, "where is the session cookie signed")
    assert resp.answered and resp.results[0].repository == repo.root.name
    broken = next(m for m in resp.evidence["members"] if m["repository"] == "billing-lib")
    assert broken["status"] == "error" and "rag_top_n" in broken["reason"]


def test_membership_is_per_developer_and_validated(two, tmp_path):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    across.add(repo.root, str(lib.root))  # idempotent
    assert across.members(repo.root) == [lib.root.resolve()]
    stored = workspace.state_dir(repo.root) / "workspace.json"
    assert json.loads(stored.read_text())["members"] == [str(lib.root.resolve())]
    assert not stored.is_relative_to(repo.root)  # per developer, outside the work tree: nothing to commit, nothing a pull writes
    with pytest.raises(UsageError, match="not inside a git repository"):
        (tmp_path / "plain").mkdir()
        across.add(repo.root, str(tmp_path / "plain"))
    with pytest.raises(UsageError, match="itself"):
        across.add(repo.root, str(repo.root))
    assert across.remove(repo.root, "billing-lib") == lib.root.resolve() and across.members(repo.root) == []
    with pytest.raises(UsageError, match="not in this workspace"):
        across.remove(repo.root, "billing-lib")


def test_the_cli_searches_the_workspace_and_names_the_repository(two, paqad_cli):
    repo, lib = two
    assert paqad_cli("workspace", "add", str(lib.root), cwd=repo.root).returncode == 0
    listed = json.loads(paqad_cli("workspace", "list", "--json", cwd=repo.root).stdout)
    assert [m["repository"] for m in listed["members"]] == [repo.root.name, "billing-lib"] and all(m["indexed"] for m in listed["members"])
    done = paqad_cli("rag", "search", "--workspace", "--json", "parse the supplier invoice line items", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["results"][0]["repository"] == "billing-lib" and data["results"][0]["path"] == "billing/invoices.py"
    text = paqad_cli("rag", "search", "--workspace", "parse the supplier invoice line items", cwd=repo.root).stdout
    assert "[billing-lib] billing/invoices.py:" in text


def test_the_agent_protocol_and_mcp_take_a_workspace_scope(two):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    from paqad.agent import mcp_render
    from paqad.agent.ops import ACTIONS, Session

    session = Session(repo.root)
    one = session.call("search", {"query": "parse the supplier invoice line items"})
    assert all(r["repository"] == "" for r in one["results"])  # the default scope: this repository only
    both = session.call("search", {"query": "parse the supplier invoice line items", "scope": "workspace"})
    assert both["answered"] and both["results"][0]["repository"] == "billing-lib"
    compact = mcp_render.compact_search(both)
    assert compact["results"][0]["repository"] == "billing-lib"
    assert "## [billing-lib] billing/invoices.py:" in mcp_render.search_text(compact)
    assert ACTIONS["search"].input_schema()["properties"]["scope"]["enum"] == ["repository", "workspace"]


def test_members_are_asked_in_parallel_with_the_same_answer_as_one_by_one(two, tmp_path):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    third = Repo.init(tmp_path / "third")
    third.write("ledger/entries.py", "def post_ledger_entry(amount):\n    '''Book an amount on the general ledger.'''\n    return amount\n")
    third.commit("ledger")
    build.build_full(third.root, config.load(third.root, environ=LEXICAL))
    across.add(repo.root, str(third.root))
    for query in ("parse the supplier invoice line items", "book an amount on the ledger", "where is the session cookie signed"):
        one_by_one = across.search(repo.root, query, parallel=1).to_dict()
        parallel = across.search(repo.root, query, parallel=8).to_dict()
        for d in (one_by_one, parallel):
            d.pop("elapsed_ms", None)
        assert parallel == one_by_one and parallel["results"]


def test_a_member_past_its_timeout_is_reported_and_never_fails_the_search(two):
    repo, lib = two
    across.add(repo.root, str(lib.root))
    resp = across.search(repo.root, "parse the supplier invoice line items", timeout=1e-9)  # no search answers in a nanosecond
    assert not resp.answered and resp.results == []
    assert [m["status"] for m in resp.evidence["members"]] == ["timed out", "timed out"]
    assert resp.diagnosis["reason"] == "no_member_answered"
    assert across.search(repo.root, "parse the supplier invoice line items").answered  # the default timeout: answered


# ---- members given by URL: cloned into the user cache, fetched on demand --------------------


@pytest.fixture
def remote_lib(tmp_path) -> Path:
    """A bare repository holding the billing library: what a URL member is cloned from."""
    from testing.repos import make_bare

    lib = Repo.init(tmp_path / "billing-src")
    lib.write("billing/invoices.py", INVOICES)
    lib.commit("billing")
    return make_bare(lib, tmp_path / "billing-lib.git")


@pytest.mark.parametrize("form", ["file-url", "path"])
def test_a_url_member_is_cloned_into_the_user_cache_and_answers(form, repo: Repo, remote_lib, monkeypatch, paqad_cli):
    import os

    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    url = remote_lib.as_uri() if form == "file-url" else os.path.relpath(remote_lib, repo.root)
    done = paqad_cli("workspace", "add", url, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "paqad" / "workspace"
    (clone_dir,) = [p for p in cache.glob("*/*") if p.is_dir()]
    assert clone_dir.name == "billing-lib" and (clone_dir / "billing" / "invoices.py").is_file()
    assert [p.name for p in clone_dir.parent.iterdir()] == ["billing-lib"]  # no half clone left beside it
    recorded = across.sources(repo.root)
    assert recorded == {clone_dir: remote_lib.as_uri() if form == "file-url" else str(remote_lib.resolve())}
    resp = across.search(repo.root, "parse the supplier invoice line items")
    assert resp.answered and (resp.results[0].repository, resp.results[0].path) == ("billing-lib", "billing/invoices.py")
    listed = json.loads(paqad_cli("workspace", "list", "--json", cwd=repo.root).stdout)["members"]
    assert listed[1]["url"] == recorded[clone_dir] and listed[1]["indexed"]


def test_searching_never_fetches_and_workspace_fetch_brings_the_new_commit(repo: Repo, remote_lib, tmp_path, paqad_cli):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    clone_dir = across.add(repo.root, remote_lib.as_uri())
    before = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone_dir, capture_output=True, text=True).stdout
    work = Repo(tmp_path / "billing-work")
    subprocess.run(["git", "clone", "-q", str(remote_lib), str(work.root)], check=True)
    work.write("billing/refunds.py", "def refund_credit_note(invoice):\n    '''Issue a credit note that reverses an invoice.'''\n    return invoice\n")
    work.commit("refunds")
    work.git("push", "-q", "origin", "HEAD")
    resp = across.search(repo.root, "issue a credit note that reverses an invoice")
    assert all(r.path != "billing/refunds.py" for r in resp.results)  # the search did not fetch
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone_dir, capture_output=True, text=True).stdout == before
    done = paqad_cli("workspace", "fetch", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    (fetched,) = json.loads(done.stdout)["fetched"]
    assert fetched["repository"] == "billing-lib" and fetched["old"] != fetched["new"] == work.head() and fetched["changed_files"] == 1
    resp = across.search(repo.root, "issue a credit note that reverses an invoice")
    assert resp.results[0].path == "billing/refunds.py" and resp.results[0].repository == "billing-lib"


def test_a_url_git_cannot_clone_is_one_line_and_nothing_is_recorded(repo: Repo, tmp_path, paqad_cli):
    make_shop(repo)
    done = paqad_cli("workspace", "add", (tmp_path / "nothing-here.git").as_uri(), cwd=repo.root)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "could not clone" in done.stderr
    assert across.members(repo.root) == []
    with pytest.raises(UsageError, match="not a folder, a URL or a bare repository"):
        across.add(repo.root, "--upload-pack=touch pwned")


def test_a_url_member_whose_remote_is_gone_is_reported_by_fetch_and_still_answers(repo: Repo, remote_lib, tmp_path, paqad_cli):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    across.add(repo.root, remote_lib.as_uri())
    remote_lib.rename(tmp_path / "moved.git")
    done = paqad_cli("workspace", "fetch", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    (fetched,) = json.loads(done.stdout)["fetched"]
    assert fetched["error"].startswith("git could not fetch it") and fetched["new"] is None
    resp = across.search(repo.root, "parse the supplier invoice line items")  # the last fetched commit still answers
    assert resp.answered and resp.results[0].repository == "billing-lib"
    with pytest.raises(UsageError, match="git could not fetch it"):
        across.add(repo.root, remote_lib.as_uri())  # re-adding fetches: one line
