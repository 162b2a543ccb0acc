"""``from paqad import Repository``: one work tree as a library, the object the service hosts and
the doors answer through in their own processes (issue 33)."""

from __future__ import annotations

import json

import pytest

import paqad
from paqad.channel import calls
from paqad.errors import UsageError
from testing.hosts import host_json

QUESTION = "where is the session cookie signed with hmac"


def test_the_public_face_searches_a_work_tree(shop):
    from paqad import Repository

    assert Repository is paqad.Repository and "Repository" in paqad.__all__
    response = Repository(shop.root).search(QUESTION, top_n=3)
    assert response.answered and response.results[0].path == "shop/sessions.py"


def test_a_hook_through_the_facade_answers_with_its_overrides(shop):
    call = calls.Hook("prompt-submit", "claude", json.dumps(host_json("claude", prompt=QUESTION, cwd=str(shop.root))), str(shop.root))
    out = paqad.Repository(shop.root).hook(call)
    assert "shop/sessions.py:L" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    again = calls.Hook("prompt-submit", "claude", call.stdin.replace("hmac", "an hmac"), str(shop.root))
    assert paqad.Repository(shop.root, {"rag_enabled": "false"}).hook(again) == ""


def test_a_git_event_outside_the_service_runs_as_the_runner_runs_it(shop):
    assert paqad.Repository(shop.root).git_event(calls.GitEvent("post-commit")) == ["rag-update"]
    with pytest.raises(UsageError):
        paqad.Repository(shop.root).git_event(calls.GitEvent("pre-push"))


def test_the_typed_requests_keep_the_wire_format():
    hook = calls.Hook("prompt-submit", "claude", "{}", "/w", "2", 0.25, spent=1.0, overrides={"a": "b"})
    assert hook.to_wire() == {"event": "prompt-submit", "host": "claude", "stdin": "{}", "cwd": "/w", "budget_env": "2", "client_age": 0.25}
    assert calls.Hook.from_wire(hook.to_wire()) == calls.Hook("prompt-submit", "claude", "{}", "/w", "2", 0.25)
    agent = calls.Agent("search", {"query": "q"}, {"rag_top_n": "3"})
    assert agent.to_wire() == {"action": "search", "params": {"query": "q"}, "overrides": {"rag_top_n": "3"}}
    assert calls.Agent.from_wire(agent.to_wire()) == agent and calls.GitEvent.from_wire({"event": "post-merge"}).to_wire() == {"event": "post-merge"}
    with pytest.raises(TypeError):
        calls.Agent.from_wire({"action": "search", "params": ["q"]})
