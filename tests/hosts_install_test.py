"""Agent hosts: install merges into each host's config keeping the user's entries, idempotently;
uninstall restores what was there."""

from __future__ import annotations

import json
import os
import sys

import pytest

from paqad.hooks.hosts import HOSTS, base, claude, cline, codex, copilot, cursor, gemini, launcher
from testing.hosts import RESOURCES, events, run_host
from testing.repos import Repo, make_shop

USER_CLAUDE = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format"}]}],
    },
}


def ours(groups: list) -> list:
    return [g for g in groups if base.is_ours(g)]


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "cursor"])
def test_json_hosts_keep_the_users_entries_and_install_once(repo, name):
    host = HOSTS[name]
    rel = host.CONFIG
    original = json.dumps(USER_CLAUDE, indent=4) + "\n"
    repo.write(rel, original)
    first = host.install(repo.root)
    assert first.action == "installed" and first.state == "installed"
    data = json.loads((repo.root / rel).read_text())
    assert data["permissions"] == USER_CLAUDE["permissions"]
    assert data["hooks"]["PostToolUse"][0] == USER_CLAUDE["hooks"]["PostToolUse"][0]
    for event in host.EVENTS:
        assert len(ours(data["hooks"][event])) == 1
    assert data["hooks"]["UserPromptSubmit"][0] == USER_CLAUDE["hooks"]["UserPromptSubmit"][0]
    written = (repo.root / rel).read_bytes()
    second = host.install(repo.root)
    assert second.action == "unchanged" and (repo.root / rel).read_bytes() == written
    assert host.uninstall(repo.root).action == "restored"
    assert (repo.root / rel).read_text() == original  # byte for byte


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "cursor"])
def test_json_hosts_created_from_nothing_are_removed_entirely(repo, name):
    host = HOSTS[name]
    host.install(repo.root)
    assert host.status(repo.root).state == "installed"
    host.uninstall(repo.root)
    folder = (repo.root / host.CONFIG).parent
    assert not folder.exists(), sorted(p.name for p in folder.iterdir())
    assert host.status(repo.root).state == "absent"


def test_claude_gets_background_file_change_hooks_beside_the_users_post_tool_use(repo):
    repo.write(claude.CONFIG, json.dumps(USER_CLAUDE))
    claude.install(repo.root)
    hooks = json.loads((repo.root / claude.CONFIG).read_text())["hooks"]
    assert hooks["PostToolUse"][0] == USER_CLAUDE["hooks"]["PostToolUse"][0]  # the user's formatter stays first
    (edits,) = ours(hooks["PostToolUse"])
    (changed,) = ours(hooks["FileChanged"])
    assert edits["matcher"] == "Write|Edit|MultiEdit" and "matcher" not in changed
    for group in (edits, changed):
        (hook,) = group["hooks"]
        assert hook["async"] is True and " hook run file-changed --host claude " in hook["command"]


def test_a_claude_install_from_before_the_file_change_hooks_still_counts_as_installed(repo):
    claude.install(repo.root)
    data = json.loads((repo.root / claude.CONFIG).read_text())
    for event in ("PostToolUse", "FileChanged"):
        del data["hooks"][event]
    (repo.root / claude.CONFIG).write_text(json.dumps(data))
    state = claude.status(repo.root)
    assert state.state == "installed" and "paqad hooks install --agents claude" in (state.note or "")
    claude.install(repo.root)
    assert claude.status(repo.root).note is None


def test_uninstall_after_the_user_edited_the_file_removes_only_paqads_entries(repo):
    repo.write(claude.CONFIG, json.dumps(USER_CLAUDE))
    claude.install(repo.root)
    data = json.loads((repo.root / claude.CONFIG).read_text())
    data["env"] = {"FOO": "1"}  # the user's later edit
    (repo.root / claude.CONFIG).write_text(json.dumps(data))
    assert claude.uninstall(repo.root).action == "removed"
    after = json.loads((repo.root / claude.CONFIG).read_text())
    assert after == {**USER_CLAUDE, "env": {"FOO": "1"}}


def test_a_teammates_clone_without_the_backup_still_uninstalls_cleanly(repo, tmp_path):
    claude.install(repo.root)
    clone = Repo.init(tmp_path / "clone")
    clone.write(claude.CONFIG, (repo.root / claude.CONFIG).read_text())
    claude.uninstall(clone.root)
    assert not (clone.root / ".claude").exists()


def test_an_older_paqad_entry_is_replaced_not_duplicated(repo):
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "paqad hook run prompt-submit --host claude --old"}]}]}}
    repo.write(claude.CONFIG, json.dumps(old))
    claude.install(repo.root)
    groups = json.loads((repo.root / claude.CONFIG).read_text())["hooks"]["UserPromptSubmit"]
    assert len(groups) == 1 and "--old" not in json.dumps(groups)


def test_a_config_that_is_not_json_is_never_overwritten(repo):
    path = repo.write(claude.CONFIG, "{ this is not json")
    with pytest.raises(Exception, match="not valid JSON"):
        claude.install(repo.root)
    assert path.read_text() == "{ this is not json"


def test_claude_entries_run_the_repository_shim_then_path_with_a_timeout(repo):
    claude.install(repo.root)
    [group] = json.loads((repo.root / claude.CONFIG).read_text())["hooks"]["UserPromptSubmit"]
    [hook] = group["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 10
    command = hook["command"]
    assert launcher.COMMAND_MARK in command and ".paqad/" not in command and "command -v paqad" in command and command.endswith('"$paqad_exe" hook run prompt-submit --host claude || true')
    assert str(repo.root) not in command and sys.executable not in command  # no machine path in a committed file


def test_codex_switches_the_hooks_feature_on_and_off_again(repo):
    path = repo.write(codex.TOML, 'model = "o4"\n\n[features]\nweb_search = true\n\n[tui]\nx = 1\n')
    before = path.read_text()
    codex.install(repo.root)
    text = path.read_text()
    assert "[features]\nhooks = true  # added by paqad" in text and 'model = "o4"' in text and "[tui]\nx = 1" in text
    codex.install(repo.root)
    assert path.read_text() == text
    codex.uninstall(repo.root)
    assert path.read_text() == before
    assert not (repo.root / codex.CONFIG).exists()


def test_codex_leaves_a_flag_the_user_set_and_adds_the_table_when_missing():
    assert codex.enable_flag("[features]\ncodex_hooks = true\n") == "[features]\ncodex_hooks = true\n"
    assert codex.enable_flag("[features]\nhooks = false\n") == "[features]\nhooks = false\n"  # the user's choice
    added = codex.enable_flag('model = "o4"\n')
    assert added == 'model = "o4"\n\n[features]  # added by paqad hooks install\nhooks = true  # added by paqad hooks install\n'
    assert codex.disable_flag(added) == 'model = "o4"\n'
    assert codex.disable_flag(codex.enable_flag(None)) is None


def test_gemini_uses_millisecond_timeouts_and_drops_the_old_enable_hooks_flag(repo):
    repo.write(gemini.CONFIG, json.dumps({"theme": "dark", "tools": {"sandbox": True, "enableHooks": True}}))  # as older paqad wrote it
    gemini.install(repo.root)
    data = json.loads((repo.root / gemini.CONFIG).read_text())
    assert data["tools"] == {"sandbox": True} and data["theme"] == "dark" and "hooksConfig" not in data
    [group] = data["hooks"]["BeforeAgent"]
    assert group["hooks"][0]["timeout"] == 10_000 and group["hooks"][0]["name"] == "paqad"
    assert gemini.status(repo.root).note is None
    gemini.uninstall(repo.root)  # byte for byte: what was there before
    assert json.loads((repo.root / gemini.CONFIG).read_text()) == {"theme": "dark", "tools": {"sandbox": True, "enableHooks": True}}


def test_gemini_respects_hooks_config_enabled_false_and_says_how_to_fix_it(repo):
    repo.write(gemini.CONFIG, json.dumps({"hooksConfig": {"enabled": False}}))
    state = gemini.install(repo.root)
    assert json.loads((repo.root / gemini.CONFIG).read_text())["hooksConfig"] == {"enabled": False}  # the user's choice stays
    assert state.state == "installed" and "hooksConfig.enabled is false" in state.note and '"enabled": true' in state.note


def test_codex_install_says_how_to_trust_the_hooks(repo):
    state = codex.install(repo.root)
    assert "review" in state.note and "--dangerously-bypass-hook-trust" in state.note


@pytest.mark.parametrize("name", ["qwen", "droid"])
def test_new_claude_style_hosts_merge_and_restore(repo, name):
    host = HOSTS[name]
    original = json.dumps({"model": {"name": "x"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}) + "\n"
    repo.write(host.CONFIG, original)
    assert host.install(repo.root).state == "installed"
    data = json.loads((repo.root / host.CONFIG).read_text())
    assert data["hooks"]["Stop"] and set(host.EVENTS) <= set(data["hooks"])
    assert host.install(repo.root).action == "unchanged"
    assert host.uninstall(repo.root).action == "restored" and (repo.root / host.CONFIG).read_text() == original


@pytest.mark.parametrize("name", ["kiro", "opencode"])
def test_file_owning_hosts_write_their_file_and_refuse_a_foreign_one(repo, name):
    host = HOSTS[name]
    assert host.install(repo.root).action == "installed" and host.status(repo.root).state == "installed"
    assert host.install(repo.root).action == "unchanged"
    assert host.uninstall(repo.root).action == "removed" and not (repo.root / host.CONFIG).exists()
    repo.write(host.CONFIG, "{}\n")
    assert host.install(repo.root).action == "refused" and (repo.root / host.CONFIG).read_text() == "{}\n"


def test_a_fresh_repository_lists_the_hosts_found_elsewhere_with_the_command_to_add_each(repo, paqad_cli, tmp_path):
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    bindir = tmp_path / "clis"
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\n")
    (bindir / "claude").chmod(0o755)
    env = {"HOME": str(home), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    data = json.loads(paqad_cli("hooks", "install", "--json", cwd=repo.root, env=env).stdout)
    assert data["agents"] == []  # nothing in the repository asked for a host: no config written
    found = {f["host"]: f for f in data["elsewhere"]}
    assert found["claude"]["found"] == "`claude` on PATH" and found["claude"]["command"] == "paqad hooks install --agents claude"
    assert found["gemini"]["found"] == "~/.gemini"
    text = paqad_cli("hooks", "install", cwd=repo.root, env=env).stdout
    assert "found `claude` on PATH; add it: paqad hooks install --agents claude" in text


def test_cline_writes_executable_hook_files_and_leaves_the_users_alone(repo):
    mine = repo.write(".clinerules/hooks/TaskStart", "#!/bin/sh\necho '{\"cancel\": false}'\n")
    state = cline.install(repo.root)
    hook = repo.root / ".clinerules/hooks/UserPromptSubmit"
    assert os.access(hook, os.X_OK) and cline.ID_LINE in hook.read_text()
    assert state.action == "refused" and "TaskStart" in state.note and mine.read_text().startswith("#!/bin/sh\necho")
    assert cline.CLI_NOTE in state.note  # the CLI reads ~/.cline/hooks/ only
    assert cline.install(repo.root).state == "partial"
    cline.uninstall(repo.root)
    assert not hook.exists() and mine.exists()


def test_cursor_keeps_version_1(repo):
    cursor.install(repo.root)
    data = json.loads((repo.root / cursor.CONFIG).read_text())
    assert data["version"] == 1 and set(data["hooks"]) == {"beforeSubmitPrompt", "sessionStart", "postToolUse"}
    assert data["hooks"]["beforeSubmitPrompt"] == [{"command": base.command("prompt-submit", "cursor")}]


def test_copilot_owns_one_file_and_never_touches_others(repo):
    other = repo.write(".github/hooks/security.json", '{"version": 1, "hooks": {}}\n')
    copilot.install(repo.root)
    data = json.loads((repo.root / copilot.CONFIG).read_text())
    assert data["version"] == 1 and data["hooks"]["userPromptSubmitted"][0]["bash"] == base.command("prompt-submit", "copilot")
    assert data["hooks"]["postToolUse"][0]["timeoutSec"] == 10
    assert copilot.install(repo.root).action == "unchanged"
    copilot.uninstall(repo.root)
    assert not (repo.root / copilot.CONFIG).exists() and other.exists()


def test_copilot_refuses_a_foreign_file_with_its_name(repo):
    repo.write(copilot.CONFIG, '{"version": 1, "hooks": {"sessionStart": []}}\n')
    assert copilot.install(repo.root).action == "refused"
    assert copilot.uninstall(repo.root).action == "unchanged" and (repo.root / copilot.CONFIG).exists()


# ---- through the CLI ------------------------------------------------------------------------


def test_cli_installs_detected_hosts_by_default_and_named_ones_on_request(repo, paqad_cli):
    (repo.root / ".claude").mkdir()
    (repo.root / "GEMINI.md").write_text("# notes\n")
    data = json.loads(paqad_cli("hooks", "install", "--json", cwd=repo.root).stdout)
    assert {a["host"]: a["action"] for a in data["agents"]} == {"claude": "installed", "gemini": "installed"}
    data = json.loads(paqad_cli("hooks", "install", "--agents", "codex,cursor", "--json", cwd=repo.root).stdout)
    assert [a["host"] for a in data["agents"]] == ["codex", "cursor"]
    status = json.loads(paqad_cli("hooks", "status", "--json", cwd=repo.root).stdout)
    states = {a["host"]: a["state"] for a in status["agents"]}
    assert states == {"claude": "installed", "codex": "installed", "gemini": "installed", "cline": "absent", "cursor": "installed", "copilot": "absent", "qwen": "absent", "droid": "absent", "kiro": "absent", "opencode": "absent"}
    text = paqad_cli("hooks", "status", cwd=repo.root).stdout
    assert "claude" in text and ".claude/settings.json" in text
    data = json.loads(paqad_cli("hooks", "uninstall", "--json", cwd=repo.root).stdout)
    assert all(a["state"] == "absent" for a in data["agents"])
    assert not (repo.root / ".codex").exists() and not (repo.root / ".cursor").exists() and not (repo.root / ".gemini").exists()
    assert (repo.root / ".claude").is_dir() and not any((repo.root / ".claude").iterdir())  # the user's folder stays


def test_cli_rejects_an_unknown_agent_before_writing_anything(repo, paqad_cli):
    proc = paqad_cli("hooks", "install", "--agents", "claude,vim", cwd=repo.root)
    assert proc.returncode == 2 and "unknown agent 'vim'" in proc.stderr and "claude, codex" in proc.stderr
    assert not (repo.root / ".claude").exists() and not (repo.root / ".paqad").exists()


def test_one_broken_host_config_does_not_stop_the_others(repo, paqad_cli):
    repo.write(claude.CONFIG, "{ broken")
    proc = paqad_cli("hooks", "install", "--agents", "claude,codex", "--json", cwd=repo.root)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and [a["action"] for a in data["agents"]] == ["error", "installed"]
    assert "not valid JSON" in data["agents"][0]["note"]


def test_every_recorded_host_event_runs_through_the_installed_command(repo, paqad_cli):
    """Each host's installed command takes each JSON the host sends (paqad/hooks/hosts/recorded)
    and answers in that host's format: exit 0, nothing on stderr, stdout empty or one JSON object."""
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert paqad_cli("hooks", "install", "--agents", "all", cwd=repo.root).returncode == 0
    recorded = {host: events(host) for host in sorted(p.name for p in RESOURCES.iterdir())}
    assert set(recorded) == set(HOSTS) and all("prompt" in evs for evs in recorded.values())
    plain = {"kiro", "opencode"}  # stdout is the context itself, as plain text
    for host, evs in recorded.items():
        for event in evs:
            question = f"where is the session cookie signed ({host})"  # each host its own prompt: one delivery per turn
            proc = run_host(repo.root, host, event, prompt=question)
            assert (proc.returncode, proc.stderr) == (0, ""), (host, event, proc.stderr)
            if host in plain:
                text = proc.stdout
            else:
                out = json.loads(proc.stdout) if proc.stdout.strip() else {}
                assert isinstance(out, dict), (host, event, proc.stdout)
                text = json.dumps(out)
            if event == "prompt" and host not in ("cursor",):
                assert "shop/sessions.py:L" in text, host
            if event == "session-start":
                assert "paqad (orientation)" in text and "shop/sessions.py" not in text, host


def test_droid_moves_an_older_paqads_hooks_json_entries_to_settings_json(repo):
    # Droid 0.225.2 ran no hook from .factory/hooks.json, and ran them from .factory/settings.json.
    from paqad.hooks.hosts import droid

    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}
    older = {"hooks": {**theirs["hooks"], **{e: [droid._group(e)] for e in droid.EVENTS}}}
    repo.write(droid.OLD_CONFIG, json.dumps(older))
    assert "older paqad" in droid.status(repo.root).note
    state = droid.install(repo.root)
    assert state.state == "installed" and state.action == "updated" and state.note is None
    assert json.loads((repo.root / droid.OLD_CONFIG).read_text()) == theirs  # the user's own hook stays
    assert set(json.loads((repo.root / droid.CONFIG).read_text())["hooks"]) == set(droid.EVENTS)
