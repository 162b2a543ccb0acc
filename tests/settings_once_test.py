"""A request's settings are loaded once, with its ``-c`` overrides, and those are the settings it
answers with (issue 33: a prompt hook loaded them twice, and the second load dropped ``-c``).

The loader is the real ``config.load``, wrapped to count its calls in this process."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from paqad import config
from paqad.channel import calls
from paqad.cli.app import cli
from paqad.serve import route
from testing.hosts import host_json

QUESTION = "where is the session cookie signed with hmac"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """The ``-c`` overrides of each ``config.load`` call from here on."""
    seen: list[dict[str, str]] = []
    real = config.load

    def counting(root, cli_overrides=None, environ=None):  # type: ignore[no-untyped-def]
        seen.append(dict(cli_overrides or {}))
        return real(root, cli_overrides, environ)

    monkeypatch.setattr(config, "load", counting)
    return seen


def _passages(hook_stdout: str) -> set[str]:
    context = json.loads(hook_stdout)["hookSpecificOutput"]["additionalContext"]
    return set(re.findall(r"shop/[a-z_/]+\.py:L\d+", context))


def _hook(root, session: str, overrides: dict[str, str]) -> str:
    raw = json.dumps(host_json("claude", prompt=QUESTION, cwd=str(root), session_id=session))
    return route.hook(str(root), calls.Hook("prompt-submit", "claude", raw, str(root), overrides=overrides))


def test_a_prompt_hook_answered_here_loads_its_settings_once_and_keeps_its_overrides(shop, loads):
    assert len(_passages(_hook(shop.root, "s-1", {}))) > 1
    assert loads == [{}]
    loads.clear()
    strict = {"rag_similarity_threshold": "0.99"}  # only the best passage is delivered normally
    assert _passages(_hook(shop.root, "s-2", strict)) == {"shop/sessions.py:L7"}  # the -c value is what answered
    assert loads == [strict]


def test_rag_search_loads_its_settings_once_and_keeps_its_overrides(shop, loads, monkeypatch):
    monkeypatch.chdir(shop.root)
    done = CliRunner().invoke(cli, ["-c", "rag_top_n=1", "rag", "search", QUESTION, "--json"])
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.output)["results"]) == 1
    assert loads == [{"rag_top_n": "1"}]


def test_a_prompt_hook_with_c_overrides_answers_with_them_through_the_console_script(shop, paqad_cli):
    """``paqad -c KEY=VALUE hook run prompt-submit --host claude``: the full CLI's door (the thin
    client leaves ``-c`` to it) answers with the override, not the work tree's own setting."""
    slow = {"PAQAD_HOOK_BUDGET": "30"}  # a loaded machine must not turn the answer into silence
    raw = json.dumps(host_json("claude", prompt=QUESTION, cwd=str(shop.root), session_id="s-3"))
    assert len(_passages(paqad_cli("hook", "run", "prompt-submit", "--host", "claude", cwd=shop.root, input=raw, env=slow).stdout)) > 1
    raw = raw.replace('"s-3"', '"s-4"')  # another session asking the same
    done = paqad_cli("-c", "rag_similarity_threshold=0.99", "hook", "run", "prompt-submit", "--host", "claude", cwd=shop.root, input=raw, env=slow)
    assert done.returncode == 0 and _passages(done.stdout) == {"shop/sessions.py:L7"}
