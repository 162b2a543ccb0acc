"""The Claude Code plugin (``integrations/claude-code``) and its marketplace (``.claude-plugin/``):
the committed files say what paqad's own code says, and the MCP server entry finds paqad the way
the hook commands do. The real CLI's checks (``claude plugin validate --strict``, an install from
this checkout as a local marketplace, a prompt whose context reaches the model) are in
hosts_e2e_test.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

from paqad.hooks.hosts import claude, launcher
from testing.env import BIN
from testing.repos import Repo

CHECKOUT = Path(__file__).resolve().parent.parent
PLUGIN = CHECKOUT / "integrations" / "claude-code"


def load(rel: str) -> dict:
    return json.loads((CHECKOUT / rel).read_text(encoding="utf-8"))


def test_the_plugins_hooks_are_paqads_claude_hooks_marked_as_the_plugins():
    hooks = load("integrations/claude-code/hooks/hooks.json")["hooks"]
    assert hooks == claude.plugin_hooks(), "regenerate hooks/hooks.json from paqad.hooks.hosts.claude.plugin_hooks()"
    assert set(hooks) == set(claude.EVENTS)
    for event, groups in hooks.items():
        command = groups[0]["hooks"][0]["command"]
        assert command.startswith(launcher.FIND)  # the shim first, then PATH, else exit 0
        assert (claude.EVENTS[event] == claude.FILE_CHANGED) != (f"hook run {claude.PLUGIN}" in command)


def test_the_plugins_mcp_server_is_paqad_mcp_found_like_the_hooks_and_always_loaded():
    server = load("integrations/claude-code/.mcp.json")["mcpServers"]["paqad"]
    assert server == {"type": "stdio", "command": "sh", "args": ["-c", launcher.SERVE], "alwaysLoad": True}


def test_the_marketplace_lists_the_plugin_at_paqads_version():
    version = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    market = load(".claude-plugin/marketplace.json")
    [entry] = market["plugins"]
    assert (CHECKOUT / entry["source"]).resolve() == PLUGIN
    manifest = load("integrations/claude-code/.claude-plugin/plugin.json")
    assert entry["name"] == manifest["name"] == "paqad" and entry["version"] == manifest["version"] == version
    skill = (PLUGIN / "skills" / "paqad" / "SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: paqad\ndescription: ")
    # descriptions (issue 32): the skill and /paqad:describe name the commands the CLI really has
    describe_md = (PLUGIN / "commands" / "describe.md").read_text(encoding="utf-8")
    for text in (skill, describe_md):
        assert "paqad describe pending --limit" in text and "describe_put" in text and "never" in text
    assert sorted(p.stem for p in (PLUGIN / "commands").glob("*.md")) == ["describe", "doctor", "research", "search"]


def path_without_paqad() -> str:
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != BIN.resolve()]
    path = os.pathsep.join(keep)
    assert shutil.which("paqad", path=path) is None
    return path


def serve(root: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path_without_paqad()}
    return subprocess.run(["sh", "-c", launcher.SERVE], cwd=root, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False)


def test_the_plugins_server_without_any_paqad_says_what_to_install(repo: Repo):
    launcher.shim_path().unlink(missing_ok=True)  # per user: an earlier test's `hooks install` may have written it
    done = serve(repo.root, "")
    assert done.returncode == 1 and done.stdout == ""
    launcher_path = launcher.shim_path()
    assert done.stderr.strip().splitlines() == [f"paqad: not found (no launcher at {launcher_path}, no paqad on PATH): install paqad with its mcp extra from its repository (paqad is not on PyPI), then paqad hooks install"]


def test_the_plugins_server_runs_paqad_mcp_through_the_repositorys_shim(repo: Repo, paqad_cli):
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("a")
    assert paqad_cli("hooks", "install", "--agents", "none", cwd=repo.root).returncode == 0  # writes the per-user launcher
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    done = serve(repo.root, json.dumps(hello) + "\n")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "paqad", reply
