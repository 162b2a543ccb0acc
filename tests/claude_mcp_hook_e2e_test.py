"""End to end with Claude Code 2.1.332: a ``UserPromptSubmit`` hook of type ``mcp_tool`` calling
``prompt_context`` on ``paqad mcp --hook-tool`` hands this prompt's context to the model.

The same real CLI, fake model endpoint and repository as tests/hosts_e2e_test.py (whose fixtures
and checks are reused); the command hook is swapped for the entry :func:`paqad.agent.mcp_hook.claude_hook`
renders, and the server is given with ``--mcp-config`` (``--strict-mcp-config``: no other server).
"""

from __future__ import annotations

import json

from hosts_e2e_test import PROMPT, assert_context_reached_the_model, books, install, model, run_cli  # noqa: F401 - fixtures

from paqad.agent import mcp_hook
from paqad.hooks import runner
from testing.env import paqad_exe


def test_claude_codes_mcp_tool_hook_hands_this_prompts_context_to_the_model(books, paqad_cli, model, tmp_path):  # noqa: F811
    install(books, paqad_cli, "claude")
    settings = books.root / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["UserPromptSubmit"] = [{"hooks": [mcp_hook.claude_hook()]}]
    settings.write_text(json.dumps(data, indent=2))
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"paqad": {"type": "stdio", "command": paqad_exe(), "args": ["mcp", "--root", str(books.root), "--hook-tool"]}}}))
    before = len(runner.read_log(books.root))
    done = run_cli(
        books, "claude", ["-p", PROMPT, "--output-format", "json", "--mcp-config", str(config), "--strict-mcp-config"],
        ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
    )
    assert_context_reached_the_model(model, "claude", done)
    answered = [e for e in runner.read_log(books.root)[before:] if e.get("action") == "context:claude"]
    prompt_answers = [e for e in answered if e["event"] == "prompt-submit"]
    assert [e["status"] for e in prompt_answers] == ["live"] and "mcp_tool" in prompt_answers[0]["detail"]  # the MCP server's door, no command
