"""The freshness stamp on every answer (issue 34, item 8): the commit the index reflects against
HEAD, whether uncommitted edits are covered, the age, and ``rag_stale_policy``.

Real repositories, the real CLI, real hooks fed the JSON each host sends, real ``paqad agent``
and ``paqad mcp`` sessions. A commit "without the hooks" runs with ``core.hooksPath`` pointing
nowhere, so no post-commit update stamps the index behind the test's back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paqad import config
from paqad.index.writing import build
from testing.agents import Agent, call_all, text_of
from testing.hosts import run_host
from testing.repos import SHIPPING, Repo, make_shop

QUESTION = "where is the session cookie signed with hmac"


@pytest.fixture
def indexed(repo: Repo, paqad_cli) -> Repo:
    """The shop, indexed, with no git hooks (nothing updates the index but the test)."""
    make_shop(repo)
    done = paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return repo


@pytest.fixture
def hooked(repo: Repo, paqad_cli) -> Repo:
    """The shop, indexed, with every host's hooks and the git hooks installed."""
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    done = paqad_cli("hooks", "install", "--agents", "all", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return repo


def commit_without_hooks(repo: Repo, message: str) -> None:
    repo.git("add", "-A")
    repo.git("-c", "core.hooksPath=/nonexistent", "commit", "-q", "-m", message)


def fresh(paqad_cli, repo: Repo, *options: str) -> dict:
    done = paqad_cli(*options, "rag", "search", QUESTION, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema_version"] == 1 and data["results"]  # the versioned shape is untouched
    return data["freshness"]


def hook_text(repo: Repo) -> str:
    done = run_host(repo.root, "claude", prompt=QUESTION)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


# ---- rag search --json --------------------------------------------------------------------------


def test_a_fresh_index_says_current(indexed: Repo, paqad_cli) -> None:
    got = fresh(paqad_cli, indexed)
    head = indexed.head()
    assert (got["indexed_commit"], got["head"], got["behind"], got["uncommitted_covered"], got["stale"]) == (head, head, 0, True, False)
    assert 0 <= got["age_seconds"] < 60 and got["policy"] == "warn" and got["refreshed"] is False


def test_commits_made_without_the_hooks_make_answers_behind_by_their_count(indexed: Repo, paqad_cli) -> None:
    indexed_at = indexed.head()
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    indexed.write("shop/notes.md", "# Notes\n\nNothing about cookies here, only notes.\n")
    commit_without_hooks(indexed, "notes")
    got = fresh(paqad_cli, indexed)
    assert (got["indexed_commit"], got["head"], got["behind"], got["stale"]) == (indexed_at, indexed.head(), 2, True)
    assert got["uncommitted_covered"] is True  # nothing is uncommitted: only HEAD moved


def test_an_uncommitted_edit_is_not_covered_until_an_update(indexed: Repo, paqad_cli) -> None:
    indexed.write("shop/sessions.py", (indexed.root / "shop/sessions.py").read_text() + "\nCOOKIE_NAME = 'sid'\n")
    got = fresh(paqad_cli, indexed)
    assert (got["head"], got["behind"], got["uncommitted_covered"], got["stale"]) == (indexed.head(), 0, False, True)
    assert paqad_cli("rag", "update", cwd=indexed.root).returncode == 0
    got = fresh(paqad_cli, indexed)
    assert (got["uncommitted_covered"], got["stale"]) == (True, False)
    indexed.git("checkout", "--", "shop/sessions.py")  # a discarded edit: the index still holds it
    assert fresh(paqad_cli, indexed)["uncommitted_covered"] is False


def test_policy_refresh_updates_a_stale_index_before_answering(indexed: Repo, paqad_cli) -> None:
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    done = paqad_cli("-c", "rag_stale_policy=refresh", "rag", "search", "hand the parcel to the courier", "--json", cwd=indexed.root)
    data = json.loads(done.stdout)
    got = data["freshness"]
    assert (got["refreshed"], got["stale"], got["indexed_commit"], got["behind"]) == (True, False, indexed.head(), 0)
    assert data["results"][0]["path"] == "shop/shipping.py"  # the update came first, then the search


def test_policy_refresh_warns_when_the_update_cannot_run_within_the_budget(indexed: Repo, paqad_cli) -> None:
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    lock = build.writer_lock(indexed.root, timeout=5)
    lock.acquire()
    try:
        got = fresh(paqad_cli, indexed, "-c", "rag_stale_policy=refresh", "-c", "rag_prompt_budget=0.3")
    finally:
        lock.release()
    assert (got["refreshed"], got["stale"], got["behind"]) == (False, True, 1) and got["refresh_note"]


def test_policy_warn_never_updates(indexed: Repo, paqad_cli) -> None:
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    assert fresh(paqad_cli, indexed)["stale"] is True
    assert fresh(paqad_cli, indexed)["behind"] == 1  # the search itself left the index as it was


def test_people_see_the_line_only_when_the_index_is_stale(indexed: Repo, paqad_cli) -> None:
    assert "Index" not in paqad_cli("rag", "search", QUESTION, cwd=indexed.root).stdout
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    out = paqad_cli("rag", "search", QUESTION, cwd=indexed.root).stdout
    assert f"Index STALE: 1 commit behind HEAD {indexed.head()[:7]}" in out and "shop/sessions.py" in out


def test_rag_status_says_it_too(indexed: Repo, paqad_cli) -> None:
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    got = json.loads(paqad_cli("rag", "status", "--json", cwd=indexed.root).stdout)["freshness"]
    assert (got["stale"], got["behind"], got["head"]) == (True, 1, indexed.head())
    assert "Index STALE: 1 commit behind HEAD" in paqad_cli("rag", "status", cwd=indexed.root).stdout


# ---- the prompt hook's text -----------------------------------------------------------------------


def test_the_hook_text_says_the_index_is_current_in_one_line(hooked: Repo) -> None:
    text = hook_text(hooked)
    line = next(ln for ln in text.splitlines() if ln.startswith("Index"))
    assert line.startswith(f"Index: {hooked.head()[:7]} (HEAD), uncommitted edits: covered, ") and line.endswith(" old.")
    assert len(line) < 100


def test_the_hook_syncs_first_so_a_commit_without_the_hooks_reads_current(hooked: Repo) -> None:
    hooked.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(hooked, "shipping")
    assert f"Index: {hooked.head()[:7]} (HEAD), uncommitted edits: covered" in hook_text(hooked)


def test_the_hook_says_stale_when_it_could_not_sync(hooked: Repo) -> None:
    indexed_at = hooked.head()
    hooked.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(hooked, "shipping")
    hooked.write("shop/sessions.py", (hooked.root / "shop/sessions.py").read_text() + "\nCOOKIE_NAME = 'sid'\n")
    config.set_value(hooked.root, "rag_prompt_budget", "4")  # about the lock, not a loaded machine
    lock = build.writer_lock(hooked.root, timeout=5)
    lock.acquire()
    try:
        text = hook_text(hooked)
    finally:
        lock.release()
    expected = f"Index STALE: 1 commit behind HEAD {hooked.head()[:7]} (indexed {indexed_at[:7]}), uncommitted edits: NOT covered, "
    assert expected in text and "shop/sessions.py:L" in text  # answered from the index as it is, and says so
    assert f"Index: {hooked.head()[:7]} (HEAD), uncommitted edits: covered" in hook_text(hooked)  # lock free: synced again


def test_the_line_is_in_session_context_and_in_a_handed_over_context(hooked: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from paqad.delivery import context

    hook_text(hooked)
    current = f"Index: {hooked.head()[:7]} (HEAD), uncommitted edits: covered"
    assert current in context.context_path(hooked.root).read_text(encoding="utf-8")
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "0")  # no time to answer: the last context is handed over
    done = run_host(hooked.root, "claude", prompt="how do we hand the parcel to the courier")
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "STALE: paqad could not answer this prompt in time" in text and current in text


def test_policy_silent_leaves_the_line_out_of_the_hook_text(hooked: Repo) -> None:
    config.set_value(hooked.root, "rag_stale_policy", "silent")
    hooked.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(hooked, "shipping")
    config.set_value(hooked.root, "rag_prompt_budget", "4")
    lock = build.writer_lock(hooked.root, timeout=5)
    lock.acquire()
    try:
        text = hook_text(hooked)
    finally:
        lock.release()
    assert "shop/sessions.py:L" in text and "Index" not in text


# ---- the agent protocol and MCP -------------------------------------------------------------------


def test_the_agent_protocol_carries_freshness(indexed: Repo) -> None:
    agent = Agent(indexed.root)
    try:
        first = agent.call("search", query=QUESTION)["result"]["freshness"]
        indexed.write("shop/shipping.py", SHIPPING)
        commit_without_hooks(indexed, "shipping")
        second = agent.call("research", query=QUESTION)["result"]["freshness"]
    finally:
        agent.close()
    assert (first["stale"], first["behind"]) == (False, 0)
    assert (second["stale"], second["behind"], second["head"]) == (True, 1, indexed.head())


def test_mcp_replies_carry_freshness_in_both_halves(indexed: Repo) -> None:
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    tools, (found,) = call_all(indexed.root, [("search", {"query": QUESTION})])
    got = found.structured_content["freshness"]
    assert (got["stale"], got["behind"], got["head"], got["uncommitted_covered"]) == (True, 1, indexed.head()[:12], True)
    assert f"Index STALE: 1 commit behind HEAD {indexed.head()[:7]}" in text_of(found)
    import jsonschema

    jsonschema.validate(found.structured_content, next(t for t in tools if t.name == "search").output_schema)


def test_mcp_under_policy_silent_says_nothing_about_it(indexed: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAQAD_RAG_STALE_POLICY", "silent")
    indexed.write("shop/shipping.py", SHIPPING)
    commit_without_hooks(indexed, "shipping")
    _, (found,) = call_all(indexed.root, [("search", {"query": QUESTION})])
    assert "freshness" not in found.structured_content and "Index" not in text_of(found)


def test_an_index_without_a_recorded_sync_reads_stale(indexed: Repo, paqad_cli) -> None:
    from paqad.index.writing import syncstamp

    Path(syncstamp.stamp_path(indexed.root)).unlink()  # an index built by a paqad before the stamp
    got = fresh(paqad_cli, indexed)
    assert (got["stale"], got["indexed_commit"], got["reason"]) == (True, None, "no sync of this index recorded")


@pytest.mark.parametrize("stamp", ["{not json", '{"version": 1, "generation": "GEN", "synced_at": "yesterday", "head": 7, "digest": null}'])
def test_a_damaged_stamp_reads_stale_and_never_breaks_an_answer(indexed: Repo, paqad_cli, stamp: str) -> None:
    from paqad.index import store
    from paqad.index.writing import syncstamp

    syncstamp.stamp_path(indexed.root).write_text(stamp.replace("GEN", str(store.pointer_name(indexed.root))), encoding="utf-8")
    got = fresh(paqad_cli, indexed)
    assert (got["stale"], got["indexed_commit"]) == (True, None)
