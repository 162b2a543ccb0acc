"""``paqad doctor``: a correct setup is clean; each broken setup is one finding with its fix.

It replays each host's recorded input through the installed command (real subprocesses, the real
index), so these tests break when a host's command, output shape or trust check breaks."""

from __future__ import annotations

import json

import pytest

from paqad import workspace
from paqad.delivery import refresh
from paqad.hooks.hosts import launcher
from testing.hosts import run_host
from testing.repos import Repo, make_shop

QUESTION = "where is the session cookie signed with hmac"


@pytest.fixture
def shop(repo: Repo, paqad_cli) -> Repo:
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    return repo


def _doctor(paqad_cli, root, **env):
    proc = paqad_cli("doctor", "--json", cwd=root, env=env or None)
    return proc.returncode, json.loads(proc.stdout)["findings"]


def test_a_correct_setup_is_clean_and_the_replay_leaves_the_context_as_it_was(shop, paqad_cli):
    assert paqad_cli("hooks", "install", "--agents", "claude,gemini,copilot,qwen", cwd=shop.root).returncode == 0
    run_host(shop.root, "claude", prompt=QUESTION)
    before = (workspace.context_dir(shop.root) / "session-context.md").read_text()
    code, findings = _doctor(paqad_cli, shop.root)
    assert code == 0 and not [f for f in findings if f["level"] != "ok"], findings
    replays = {(f["host"], f["what"].split(":")[0]) for f in findings if "exit 0" in f["what"]}
    assert {("claude", "prompt"), ("claude", "session-start"), ("gemini", "prompt"), ("copilot", "tool"), ("qwen", "prompt")} <= replays
    assert any(f"through {launcher.shim_path()}" in f["what"] for f in findings)
    assert refresh.recorded_prompt(shop.root) == QUESTION  # the doctor's own question was not kept
    assert (workspace.context_dir(shop.root) / "session-context.md").read_text() == before


def test_each_broken_setup_is_reported_with_its_fix(shop, paqad_cli, tmp_path):
    assert paqad_cli("hooks", "install", "--agents", "claude,gemini,codex", cwd=shop.root).returncode == 0
    settings = shop.root / ".gemini/settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "hooksConfig": {"enabled": False}}))
    claude = shop.root / ".claude/settings.json"
    old = launcher.OLD_PREFIX + " prompt-submit --host claude || true"
    data = json.loads(claude.read_text())
    data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] = old
    claude.write_text(json.dumps(data))
    launcher.shim_path().unlink()
    home = tmp_path / "home"
    home.mkdir()
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(__import__("shutil").which(tool))
    code, findings = _doctor(paqad_cli, shop.root, HOME=str(home), CODEX_HOME=str(home / ".codex"), PATH=f"{bare}:{__import__('os').environ['PATH']}")
    text = "\n".join(f"{f['level']} {f['host']} {f['what']} -- {f['fix']}" for f in findings)
    assert code == 1
    assert f"no launcher at {launcher.shim_path()}" in text  # PATH's paqad still answers: a warning with the fix
    assert "hooksConfig.enabled is false" in text and '"enabled": true' in text
    assert "written by an older paqad" in text and "paqad hooks install --agents claude" in text
    assert "Codex does not trust this project" in text and "not reviewed in Codex" in text


def test_codex_trusted_and_reviewed_is_clean(shop, paqad_cli, tmp_path):
    assert paqad_cli("hooks", "install", "--agents", "codex", cwd=shop.root).returncode == 0
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    root = str(shop.root)
    (codex_home / "config.toml").write_text(
        f'[projects."{root}"]\ntrust_level = "trusted"\n\n[hooks.state."{root}/.codex/hooks.json:user_prompt_submit:0:0"]\ntrusted_hash = "abc"\n'
    )
    code, findings = _doctor(paqad_cli, shop.root, CODEX_HOME=str(codex_home))
    assert code == 0 and not [f for f in findings if f["host"] == "codex" and f["level"] != "ok"], findings


def test_nothing_installed_says_what_to_run(repo, paqad_cli):
    proc = paqad_cli("doctor", cwd=repo.root)
    assert "no agent host is installed here" in proc.stdout and "paqad hooks install" in proc.stdout
