"""``paqad mcp --hook-tool``: Claude Code's prompt hook as an MCP tool (a hook of type ``mcp_tool``),
answered like the command hook, by the service when one runs, else in the server's process."""

from __future__ import annotations

import json

import pytest

from paqad import workspace
from paqad.agent import mcp_hook
from paqad.channel import client
from testing import serve
from testing.agents import call_all, text_of
from testing.env import wait_for
from testing.hosts import run_host
from testing.repos import Repo

QUESTION = "where is the session cookie signed"


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs."""
    return "claude"


def _context(text: str) -> str:
    return json.loads(text)["hookSpecificOutput"]["additionalContext"]


def _prompt_lines(root) -> list[dict]:
    lines = (workspace.logs_dir(root) / "hooks.log").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("action") == "context:claude"]


def test_the_hook_tool_is_listed_only_when_asked_for(shop: Repo) -> None:
    plain, _ = call_all(shop.root, [])
    assert mcp_hook.TOOL not in {t.name for t in plain}
    tools, _ = call_all(shop.root, [], ("--hook-tool",))
    hook = next(t for t in tools if t.name == mcp_hook.TOOL)
    assert hook.input_schema["required"] == ["prompt"] and "not for the model" in hook.description


@pytest.mark.usefixtures("serving")
def test_without_a_service_the_server_answers_in_process_and_starts_one(shop: Repo) -> None:
    assert not client.running(shop.root)
    _, (result,) = call_all(shop.root, [(mcp_hook.TOOL, {"prompt": QUESTION, "cwd": str(shop.root), "session_id": "s1"})], ("--hook-tool",))
    assert result.is_error is False
    assert "shop/sessions.py:L" in _context(text_of(result))
    assert _prompt_lines(shop.root)[-1]["mode"] != "service" and "mcp_tool; service: absent" in _prompt_lines(shop.root)[-1]["detail"]
    assert wait_for(lambda: client.running(shop.root)), "the in-process answer started a service for the next prompt"


@pytest.mark.usefixtures("serving")
def test_with_a_service_the_tool_answers_what_the_command_hook_answers(shop: Repo) -> None:
    serve.start(shop.root)
    command = run_host(shop.root, "claude", prompt=QUESTION)
    assert _prompt_lines(shop.root)[-1]["mode"] == "service"
    _, (result,) = call_all(shop.root, [(mcp_hook.TOOL, {"prompt": QUESTION, "cwd": str(shop.root), "session_id": "s2"})], ("--hook-tool",))
    assert _prompt_lines(shop.root)[-1]["mode"] == "service"
    ours, theirs = _context(text_of(result)), _context(command.stdout)
    assert "shop/sessions.py:L" in ours and ours.split("\n\n")[:2] == theirs.split("\n\n")[:2]


def test_a_trivial_prompt_gets_silence_as_from_the_command_hook(shop: Repo) -> None:
    _, (result,) = call_all(shop.root, [(mcp_hook.TOOL, {"prompt": "ok"})], ("--hook-tool",))
    assert result.is_error is False and text_of(result) == "" == run_host(shop.root, "claude", prompt="ok").stdout


def test_the_claude_hook_entry_names_the_tool_and_the_hook_inputs() -> None:
    entry = mcp_hook.claude_hook()
    assert (entry["type"], entry["server"], entry["tool"]) == ("mcp_tool", "paqad", mcp_hook.TOOL)
    assert entry["input"]["prompt"] == "${prompt}" and set(entry["input"]) <= set(mcp_hook.INPUT_SCHEMA["properties"])
