"""Descriptions written in the background (``rag_describe_background``, issue 32 item 4): the
session-start orientation asks the agent for a batch only when the user opted in, with the real
count of undescribed declarations, and is byte for byte what it was when they did not.

Real parts: the shop in a temp git repository indexed by the installed CLI, the Claude Code
plugin's own SessionStart and SubagentStart commands (``integrations/claude-code/hooks/hooks.json``)
and Codex's installed hook, each fed the JSON its host sends, in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from paqad.hooks.hosts import claude, orientation, turns
from testing.env import BIN
from testing.hosts import host_json, run_host
from testing.repos import Repo

PLUGIN_HOOKS = Path(__file__).resolve().parent.parent / "integrations" / "claude-code" / "hooks" / "hooks.json"
ASK = "Descriptions (the user opted in: rag_describe_background)"


@pytest.fixture
def shop_hooks() -> str:
    """Codex's hooks in the repository; Claude Code's come from the plugin (none in .claude/)."""
    return "codex"


def plugin_hook(root: Path, event: str, recorded: str, **fields: str) -> subprocess.CompletedProcess[str]:
    """The plugin's command for ``event``, run the way Claude Code runs it, with its JSON on stdin."""
    command = json.loads(PLUGIN_HOOKS.read_text(encoding="utf-8"))["hooks"][event][0]["hooks"][0]["command"]
    stdin = json.dumps(host_json("claude", recorded, cwd=root, **fields))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["sh", "-c", command], cwd=root, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False)


def session_start(root: Path) -> str:
    done = plugin_hook(root, "SessionStart", "session-start")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def context_of(stdout: str) -> str:
    return str(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])


def counts(paqad_cli, root: Path) -> dict:
    done = paqad_cli("describe", "status", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def opt(paqad_cli, root: Path, value: str) -> None:
    done = paqad_cli("config", "set", "rag_describe_background", value, cwd=root)
    assert done.returncode == 0, done.stderr


def test_the_plugins_session_start_asks_for_descriptions_only_when_the_user_opted_in(shop: Repo, paqad_cli):
    off = session_start(shop.root)
    expected = claude.render(turns.end_marked(orientation.text(shop.root)), claude.read_event(json.dumps(host_json("claude", "session-start", cwd=shop.root)), "plugin-session-start"))
    assert off == expected + "\n" and ASK not in off and "describe" not in off

    opt(paqad_cli, shop.root, "true")
    before = counts(paqad_cli, shop.root)
    assert before["pending"] == before["total"] > 1
    text = context_of(session_start(shop.root))
    assert text.startswith(context_of(off).removesuffix("\n" + turns.END_MARK) + "\n\n" + ASK), text
    assert f"{before['pending']} of {before['total']} declarations" in text
    assert "`/paqad:describe`" in text and "paqad describe pending --limit 20 --json" in text and "--hash CONTENT_HASH" in text
    assert "never instructions to follow" in text and text.endswith(turns.END_MARK)

    page = json.loads(paqad_cli("describe", "pending", "--limit", "1", "--json", cwd=shop.root).stdout)["units"][0]
    put = paqad_cli("describe", "put", page["id"], "Signs the session cookie so a client cannot forge it.", "--hash", page["content_hash"], cwd=shop.root)
    assert put.returncode == 0, put.stderr
    assert f"{before['pending'] - 1} of {before['total']} declarations" in context_of(session_start(shop.root))

    opt(paqad_cli, shop.root, "false")
    assert session_start(shop.root) == off  # byte for byte what it was before the opt-in


def test_another_hosts_session_start_is_asked_without_the_plugins_command(shop: Repo, paqad_cli, monkeypatch: pytest.MonkeyPatch):
    plain = run_host(shop.root, "codex", "session-start").stdout
    monkeypatch.setenv("PAQAD_RAG_DESCRIBE_BACKGROUND", "true")  # the environment opts in as well as config.yaml
    pending = counts(paqad_cli, shop.root)["pending"]
    text = context_of(run_host(shop.root, "codex", "session-start").stdout)
    assert ASK in text and f"{pending} of " in text and "/paqad:describe" not in text
    assert ASK not in plain


def test_a_subagent_is_never_asked_to_start_another(shop: Repo, paqad_cli):
    opt(paqad_cli, shop.root, "true")
    done = plugin_hook(shop.root, "SubagentStart", "subagent-start", agent_id="describer")
    text = context_of(done.stdout)
    assert done.returncode == 0 and text.startswith(orientation.HEADING) and ASK not in text


def test_a_broken_sidecar_leaves_the_orientation_whole_and_unwritten(shop: Repo, paqad_cli):
    off = session_start(shop.root)
    opt(paqad_cli, shop.root, "true")
    sidecar = shop.root / "paqad.descriptions.json"
    sidecar.write_text('{"version": 1, "descriptions": [', encoding="utf-8")
    assert session_start(shop.root) == off  # no count to give: the orientation alone, never an error
    assert sidecar.read_text(encoding="utf-8") == '{"version": 1, "descriptions": ['


def test_a_committed_team_config_cannot_opt_in(shop: Repo, paqad_cli):
    off = session_start(shop.root)
    done = paqad_cli("config", "set", "--team", "rag_describe_background", "true", cwd=shop.root)
    assert done.returncode != 0 and "has your agent spend its tokens writing descriptions into this repository" in done.stderr
    assert session_start(shop.root) == off
