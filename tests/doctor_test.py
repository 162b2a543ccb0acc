"""``paqad doctor``: a correct setup is clean; each broken setup is one finding with its fix.

It replays each host's recorded input through the installed command (real subprocesses, the real
index), so these tests break when a host's command, output shape or trust check breaks."""

from __future__ import annotations

import json

from paqad import workspace
from paqad.delivery import refresh
from paqad.hooks.hosts import launcher
from paqad.serve import hookclient
from testing.hosts import run_host
from testing.repos import make_shop

QUESTION = "where is the session cookie signed with hmac"


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


def _budget(paqad_cli, root, seconds: str) -> None:
    assert paqad_cli("config", "set", "rag_prompt_budget", seconds, cwd=root).returncode == 0


def test_a_prompt_hook_that_delivers_nothing_for_an_answerable_question_fails(shop, paqad_cli):
    """0.1 s is too short for any answer (the process barely starts): over budget, and no earlier
    context to hand over, so the hook exits 0 with nothing, which doctor used to call ok."""
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=shop.root).returncode == 0
    _budget(paqad_cli, shop.root, "0.1")
    code, findings = _doctor(paqad_cli, shop.root)
    errors = [f for f in findings if f["level"] == "error"]
    assert code == 1 and [(f["host"], f["what"].split(":")[0]) for f in errors] == [("claude", "prompt")], findings
    assert "delivered nothing" in errors[0]["what"] and "for a question the index answers with shop/" in errors[0]["what"]
    assert "rag_prompt_budget" in errors[0]["fix"]
    asked = next(f["what"] for f in findings if f["what"].startswith("the replays ask"))
    assert "which the index answers with shop/" in asked  # picked from the index, not a fixed question
    _budget(paqad_cli, shop.root, "30")
    code, findings = _doctor(paqad_cli, shop.root)
    assert code == 0 and any(f["what"].startswith("prompt: exit 0, context (") and "live: passages" in f["what"] for f in findings), findings


def test_doctor_and_hooks_status_count_how_the_last_prompts_were_answered(shop, paqad_cli):
    assert paqad_cli("hooks", "install", "--agents", "claude,gemini", cwd=shop.root).returncode == 0
    _budget(paqad_cli, shop.root, "0.1")  # over budget with no earlier context: nothing
    assert run_host(shop.root, "claude", prompt="how are failed card charges retried with backoff").stdout == ""
    _budget(paqad_cli, shop.root, "30")  # room to answer: live
    assert "session cookie" in run_host(shop.root, "claude", prompt=QUESTION).stdout
    assert run_host(shop.root, "gemini", prompt="where does the payment gateway refund a transaction").stdout
    assert "Nothing in the index answers" in run_host(shop.root, "claude", prompt="how does the chess engine evaluate a board position").stdout  # dark: weak
    _budget(paqad_cli, shop.root, "0.1")  # over budget, an earlier context: stale
    for host, prompt in (("claude", "which code verifies the cookie signature"), ("gemini", "where is the card processor called")):
        assert "STALE:" in run_host(shop.root, host, prompt=prompt).stdout
    assert run_host(shop.root, "claude", prompt="ok thanks").stdout == ""  # an acknowledgement: skipped, not a prompt answered
    hookclient._log_stop(str(shop.root), "prompt-submit", "claude")  # the watchdog's own line for a hook stopped at its hard limit: failed
    _budget(paqad_cli, shop.root, "30")
    code, findings = _doctor(paqad_cli, shop.root)
    counts = {f["host"]: (f["level"], f["what"]) for f in findings if "prompt-hook lines" in f["what"]}
    assert sorted(counts) == ["claude", "gemini"], findings
    lines = "among the last 50 prompt-hook lines of hooks.log"
    assert counts["claude"][0] == "warn"  # 3 of 5 missed: over a fifth, and more than one cold start
    assert counts["claude"][1].startswith(f"3 of 5 answered prompts got an old context or none; 6 prompts {lines}: 1 live, 1 weak, 1 stale, 1 nothing, 1 failed, 1 skipped (")
    assert counts["gemini"][0] == "ok"  # 1 of 2 missed: one miss alone never warns
    assert counts["gemini"][1].startswith(f"2 prompts {lines}: 1 live, 0 weak, 1 stale, 0 nothing, 0 failed (")
    assert code == 0  # a warning, not a broken setup
    status = json.loads(paqad_cli("hooks", "status", "--json", cwd=shop.root).stdout)  # after doctor: its replays are not counted
    answers = status["prompt_answers"]
    assert (answers["window"], answers["lines"]) == (50, 8)
    wanted = {"claude": (1, 1, 1, 1, 1, 1, 0, 5, 3), "gemini": (1, 0, 1, 0, 0, 0, 0, 2, 1)}
    keys = ("live", "weak", "stale", "nothing", "failed", "skipped", "recorded", "answered", "missed")
    assert {h: tuple(c[k] for k in keys) for h, c in answers["hosts"].items()} == wanted
    assert answers["hosts"]["claude"]["first"] <= answers["hosts"]["claude"]["last"]
    assert "last_prompt_hooks" in status and "last_runs" in status  # the existing fields stay
    text = paqad_cli("hooks", "status", cwd=shop.root).stdout
    assert "prompts answered (the last 8 of at most 50 prompt-hook lines in hooks.log):" in text
    assert "  claude    1 live, 1 weak, 1 stale, 1 nothing, 1 failed, 1 skipped (" in text
    assert "  gemini    1 live, 0 weak, 1 stale, 0 nothing, 0 failed (" in text


def test_no_index_is_a_warning_and_retrieval_switched_off_is_an_error(repo, paqad_cli):
    make_shop(repo)
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    code, findings = _doctor(paqad_cli, repo.root)  # nothing to answer from: the silence is not judged
    assert code == 0 and [(f["level"], f["fix"]) for f in findings if f["what"].startswith("no index here")] == [("warn", "paqad rag init")], findings
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert paqad_cli("config", "set", "rag_enabled", "false", cwd=repo.root).returncode == 0
    code, findings = _doctor(paqad_cli, repo.root)
    errors = [f for f in findings if f["level"] == "error"]
    assert code == 1 and len(errors) == 1 and "delivered nothing" in errors[0]["what"] and "rag_enabled is false" in errors[0]["what"], findings
