"""The prompt hook, driven the way each host drives it: its configured command, its JSON on stdin.

Proves it records the prompt first, answers this prompt within the budget, and never blocks or
fails: corrupt index, held lock, no paqad on PATH, no git, garbage input all give exit 0 and
(where the host allows) nothing on stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paqad import config
from paqad import workspace as paqad_workspace
from paqad.delivery import context, prompt, refresh
from paqad.errors import IndexMissingError
from paqad.hooks import runner
from paqad.hooks.hosts import launcher, turns
from paqad.index import store
from paqad.index.writing import build
from testing.env import BIN, wait_for
from testing.hosts import host_json, run_host
from testing.repos import make_shop

QUESTION = "where is the session cookie signed with hmac"


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs: every host's."""
    return "all"


# ---- hosts that inject on prompt --------------------------------------------------------------


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_prompt_hook_answers_this_prompt_as_hook_specific_output(shop, name):
    proc = run_host(shop.root, name, prompt=QUESTION)
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)  # JSON only (Gemini requires it)
    expected = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}[name]
    assert set(out) == {"hookSpecificOutput"} and out["hookSpecificOutput"]["hookEventName"] == expected
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10_000 and QUESTION in text and "shop/sessions.py:L" in text and "verify" in text
    assert refresh.recorded_prompt(shop.root) == QUESTION
    assert "STALE" not in text


def test_cline_gets_context_modification(shop):
    proc = run_host(shop.root, "cline", prompt=QUESTION)
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["cancel"] is False and "shop/sessions.py:L" in out["contextModification"]


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "qwen", "droid"])
def test_a_session_start_without_a_prompt_orients_and_never_hands_over_an_old_answer(shop, name):
    run_host(shop.root, "claude", prompt=QUESTION, session_id="earlier")
    proc = run_host(shop.root, name, "session-start", session_id="fresh")
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    text = out["additionalContext"]
    assert out["hookEventName"] == "SessionStart" and text.startswith("## paqad (orientation)")
    assert "shop/sessions.py" not in text and QUESTION not in text and "STALE" not in text
    assert any(e.get("status") == "orientation" and e["action"] == f"context:{name}" for e in runner.read_log(shop.root))


def test_copilot_session_start_with_an_initial_prompt_answers_that_prompt(shop):
    run_host(shop.root, "claude", prompt="how do we hand the parcel to the courier", session_id="earlier")
    proc = run_host(shop.root, "copilot", "session-start", initial_prompt=QUESTION)
    text = json.loads(proc.stdout)["additionalContext"]
    assert "shop/sessions.py:L" in text and QUESTION in text and "STALE" not in text and "courier" not in text
    assert refresh.recorded_prompt(shop.root) == QUESTION


def test_copilot_answers_on_user_prompt_submitted_and_tool_use_does_not_repeat_it(shop):
    proc = run_host(shop.root, "copilot", prompt=QUESTION)
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["additionalContext"]
    proc = run_host(shop.root, "copilot", "tool")
    assert proc.returncode == 0 and proc.stdout.strip() == ""


def test_an_old_copilot_records_on_its_prompt_and_delivers_on_the_next_tool_use(shop):
    from paqad.hooks.hosts import copilot

    shop.write(copilot.CONFIG, copilot.document((1, 0, 40)))  # what install writes for a CLI older than 1.0.65
    proc = run_host(shop.root, "copilot", prompt=QUESTION)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert wait_for(lambda: (context.last_delivery(shop.root) or context.Delivery("x", "")).query == QUESTION)
    assert "shop/sessions.py:L" in json.loads(run_host(shop.root, "copilot", "tool").stdout)["additionalContext"]


def test_a_trivial_prompt_prints_nothing_and_keeps_the_recorded_request(shop):
    run_host(shop.root, "claude", prompt=QUESTION)
    proc = run_host(shop.root, "claude", prompt="thanks!")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert refresh.recorded_prompt(shop.root) == QUESTION


def test_code_committed_just_now_is_in_the_next_prompts_context(shop):
    shop.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier service.'''\n    return address\n")
    shop.commit("shipping")
    proc = run_host(shop.root, "claude", prompt="how do we hand the parcel to the courier")
    assert "shop/shipping.py:L1-3" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


# ---- hosts that record on prompt and deliver later -------------------------------------------


@pytest.mark.parametrize(("name", "prompt_out", "key"), [("cursor", {"continue": True}, "additional_context")])
def test_record_on_prompt_then_deliver_on_tool_use_once(shop, name, prompt_out, key):
    proc = run_host(shop.root, name, prompt=QUESTION)
    assert proc.returncode == 0
    assert (json.loads(proc.stdout) if proc.stdout else None) == prompt_out
    assert refresh.recorded_prompt(shop.root) == QUESTION  # recorded at once
    assert wait_for(lambda: (context.last_delivery(shop.root) or context.Delivery("x", "")).query == QUESTION)  # background refresh
    proc = run_host(shop.root, name, "tool")
    assert "shop/sessions.py:L" in json.loads(proc.stdout)[key]
    proc = run_host(shop.root, name, "tool")
    assert proc.stdout.strip() in ("", "{}")  # each refresh is handed over once, not on every tool call
    proc = run_host(shop.root, name, "tool", session_id="another-session")
    assert proc.stdout.strip() in ("", "{}")  # never another session's context


# ---- never blocks, never fails ------------------------------------------------------------------


def test_corrupt_index_prints_nothing_and_exits_0(shop):
    current = store.current_path(shop.root)
    current.write_bytes(b"this is not sqlite" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(current) + suffix).unlink(missing_ok=True)
    proc = run_host(shop.root, "claude", prompt=QUESTION)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "") and proc.seconds < 5


def test_held_writer_lock_does_not_block_the_prompt(shop):
    # A roomier budget than the default keeps this test about the lock, not about a loaded CI box.
    config.set_value(shop.root, "rag_prompt_budget", "4")
    lock = build.writer_lock(shop.root, timeout=5)
    lock.acquire()
    try:
        proc = run_host(shop.root, "claude", prompt=QUESTION)
    finally:
        lock.release()
    assert proc.returncode == 0 and proc.seconds < 8
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]  # the index as it is


def test_without_paqad_on_path_the_shim_finds_the_installing_paqad(shop, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(shutil.which(tool))
    proc = run_host(shop.root, "claude", prompt=QUESTION, path=str(bare))
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    shim = launcher.shim_path()
    assert shim.is_file() and not shim.is_relative_to(shop.root)  # per user, outside the repository: nothing to commit or pull


def test_the_shim_checks_the_installed_package_file_without_a_second_python(shop, tmp_path):
    """The shim starts one Python, not two: it tests that the installing paqad's package file is
    there (``[ -f …/paqad/__init__.py ]``) and falls back to PATH when it is not."""
    import paqad

    shim = launcher.shim_path()
    text = shim.read_text()
    assert f"[ -f {Path(paqad.__file__).resolve()} ]" in text and "import paqad" not in text
    gone = text.replace(str(Path(paqad.__file__).resolve()), str(tmp_path / "uninstalled/paqad/__init__.py"))
    shim.write_text(gone)
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(shutil.which(tool))
    proc = run_host(shop.root, "claude", prompt=QUESTION, path=str(bare))
    assert (proc.returncode, proc.stdout) == (0, "")  # package gone, no paqad on PATH: silent


def test_modules_in_the_repository_shadow_nothing_the_shim_runs(shop, tmp_path):
    """The shim runs ``python -P``: the repository the hook starts in is not on ``sys.path``, so
    a ``paqad/`` package or a ``json.py`` there is never imported in the hook's place."""
    (shop.root / "paqad").mkdir()
    (shop.root / "paqad" / "__init__.py").write_text("raise SystemExit('the repository shadowed paqad')\n")
    (shop.root / "json.py").write_text("raise SystemExit('the repository shadowed json')\n")
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(shutil.which(tool))
    proc = run_host(shop.root, "claude", prompt=QUESTION, path=str(bare))
    assert "shadowed" not in proc.stderr
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_without_the_shim_or_paqad_on_path_the_hook_is_silent(shop, tmp_path):
    launcher.shim_path().unlink()
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git"):
        (bare / tool).symlink_to(shutil.which(tool))
    for name in ("claude", "codex", "gemini", "cursor", "copilot", "qwen", "droid", "kiro"):
        proc = run_host(shop.root, name, prompt=QUESTION, path=str(bare))
        assert (proc.returncode, proc.stdout) == (0, ""), name
    proc = run_host(shop.root, "cline", prompt=QUESTION, path=str(bare))
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"cancel": False}


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", '{"prompt": 5}'])
def test_garbage_input_is_silent(shop, payload):
    proc = run_host(shop.root, "claude", stdin=payload)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_outside_git_or_without_paqad_set_up_it_is_silent(tmp_path, repo, paqad_cli):
    for cwd in (tmp_path, repo.root):
        payload = json.dumps(host_json("claude", cwd=cwd, prompt=QUESTION))
        proc = paqad_cli("hook", "run", "prompt-submit", "--host", "claude", cwd=cwd, input=payload)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (tmp_path / ".paqad").exists() and not (repo.root / ".paqad").exists()


def test_an_unknown_host_name_is_silent(shop, paqad_cli):
    proc = paqad_cli("hook", "run", "prompt-submit", "--host", "vim", cwd=shop.root, input="{}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# ---- the budget: in-process, with a slow or cold worker ----------------------------------------


def test_over_budget_hands_over_the_last_context_marked_stale_and_refreshes(shop, monkeypatch):
    cfg = config.load(shop.root)
    refresh.refresh(shop.root, cfg, prompt="retry a charge with backoff")
    monkeypatch.setattr(prompt, "refresh", lambda *a, **k: time.sleep(5))
    spawned = []
    started = time.perf_counter()
    answer = prompt.answer_prompt(shop.root, cfg, QUESTION, 10_000, spawned.append, budget=0.5)
    assert time.perf_counter() - started < 0.6
    assert answer.status == "stale" and spawned == [shop.root]
    assert "STALE" in answer.text and '"retry a charge with backoff"' in answer.text and "ago" in answer.text
    assert refresh.recorded_prompt(shop.root) == QUESTION  # recorded before anything else


def test_cold_index_hands_over_what_there_is_and_refreshes(shop, monkeypatch):
    def cold(*a, **k):
        raise IndexMissingError("no index yet")

    monkeypatch.setattr(prompt, "refresh", cold)
    spawned = []
    answer = prompt.answer_prompt(shop.root, config.load(shop.root), QUESTION, 10_000, spawned.append)
    assert (answer.text, answer.status, spawned) == (None, "stale", [shop.root])


def test_the_hook_log_says_which_path_each_prompt_took(shop, paqad_cli):
    run_host(shop.root, "claude", prompt=QUESTION)
    status = json.loads(paqad_cli("hooks", "status", "--json", cwd=shop.root).stdout)
    run = status["last_prompt_hooks"]["context:claude"]
    assert run["status"] == "live" and run["seconds"] < 1.5


def test_a_killed_background_worker_never_blocks_the_next_prompt_or_commit(shop):
    """Kill the refresh worker at random points (mid-sync, mid-write): the OS lock dies with it, the
    index is the old or the new one, and the next prompt and commit go through."""
    import random
    import signal

    rnd = random.Random(5)
    for i in range(3):
        shop.write(f"shop/extra_{i}.py", f"def parcel_label_{i}(order):\n    '''Print the parcel label number {i} for an order.'''\n    return order\n")
        worker = subprocess.Popen(
            [sys.executable, "-m", "paqad", "--root", str(shop.root), "hook", "run-action", "refresh-context"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        time.sleep(rnd.uniform(0.05, 0.6))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        proc = run_host(shop.root, "claude", prompt=QUESTION)
        assert proc.returncode == 0 and proc.seconds < 10
        assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        started = time.perf_counter()
        shop.commit(f"extra {i}")
        assert time.perf_counter() - started < 10


@pytest.mark.usefixtures("default_provider")
def test_with_the_default_model_the_prompt_hook_answers_within_its_budget(repo, paqad_cli):
    """The shipped default (local vectors): the hook still exits 0 with this prompt's answer, and
    the log says whether the vectors took part or the model was over budget (then: lexical)."""
    make_shop(repo)
    init = json.loads(paqad_cli("rag", "init", "--json", cwd=repo.root).stdout)
    assert init["vectors"]["provider"] == "local" and init["vectors"]["pending"] == 0
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    proc = run_host(repo.root, "claude", prompt=QUESTION)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "sign_cookie" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    run = json.loads(paqad_cli("hooks", "status", "--json", cwd=repo.root).stdout)["last_prompt_hooks"]["context:claude"]
    assert run["status"] == "live" and ("(hybrid" in run["detail"] or "model over budget" in run["detail"])


# ---- only the user's own words, once per turn ---------------------------------------------------


def test_gemini_headless_hook_context_is_never_searched_or_recorded(shop):
    """Gemini -p prepends the session start's context as <hook_context>; paqad searches the rest."""
    orientation = json.loads(run_host(shop.root, "gemini", "session-start").stdout)["hookSpecificOutput"]["additionalContext"]
    polluted = f"<hook_context>{orientation}</hook_context>\n\n{QUESTION}"
    proc = run_host(shop.root, "gemini", prompt=polluted)
    text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "shop/sessions.py:L" in text and refresh.recorded_prompt(shop.root) == QUESTION
    echoed = f"{text}\n\nand where is it checked"  # a host that echoes paqad's block back untagged
    run_host(shop.root, "claude", prompt=echoed)
    assert refresh.recorded_prompt(shop.root) == "and where is it checked"


@pytest.mark.parametrize(
    ("prompt_text", "extra"),
    [
        ("<task-notification><task-id>b1</task-id><status>completed</status></task-notification>", {}),
        ("<cross-session-message from='s2'>ping</cross-session-message>", {}),
        (QUESTION, {"agent_id": "a-1", "agent_type": "Explore"}),
    ],
)
def test_machine_made_prompts_are_skipped_with_the_reason_in_the_log(shop, prompt_text, extra):
    run_host(shop.root, "claude", prompt="how do we hand the parcel to the courier")
    payload = {**host_json("claude", prompt=prompt_text, cwd=shop.root), **extra}
    proc = run_host(shop.root, "claude", stdin=json.dumps(payload))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert refresh.recorded_prompt(shop.root) == "how do we hand the parcel to the courier"  # not replaced
    last = [e for e in runner.read_log(shop.root) if e["action"] == "context:claude"][-1]
    assert last["status"] == "skipped" and "machine-made" in last["detail"]


def test_copilot_running_claudes_hooks_delivers_once(shop):
    """Copilot CLI runs .claude/settings.json's hooks with its own input and without CLAUDE_PROJECT_DIR."""
    copilot_input = json.dumps(host_json("copilot", prompt=QUESTION, cwd=shop.root))
    first = run_host(shop.root, "copilot", stdin=copilot_input)
    assert "shop/sessions.py:L" in json.loads(first.stdout)["additionalContext"]
    second = run_host(shop.root, "claude", stdin=copilot_input)
    assert (second.returncode, second.stdout) == (0, "")
    last = [e for e in runner.read_log(shop.root) if e["action"] == "context:claude"][-1]
    assert last["status"] == "skipped" and "Copilot CLI running Claude Code's hooks" in last["detail"]


def test_a_second_host_hook_for_the_same_prompt_is_a_duplicate_but_the_user_may_ask_again(shop):
    assert "shop/sessions.py:L" in run_host(shop.root, "claude", prompt=QUESTION).stdout
    assert run_host(shop.root, "codex", prompt=QUESTION).stdout == ""  # another host's hook, same turn
    assert [e for e in runner.read_log(shop.root) if e["action"] == "context:codex"][-1]["detail"].startswith("duplicate")
    assert "shop/sessions.py:L" in run_host(shop.root, "claude", prompt=QUESTION).stdout  # the user asking again


def test_copilot_prompt_after_a_session_start_that_answered_it_is_not_delivered_twice(shop):
    # Copilot CLI 1.0.102 `-p`: sessionStart carries the prompt as initialPrompt, then
    # userPromptSubmitted sends it again in the same session (tests/hosts_e2e_test.py saw both).
    assert "shop/sessions.py:L" in run_host(shop.root, "copilot", "session-start", initial_prompt=QUESTION, session_id="c-1").stdout
    assert run_host(shop.root, "copilot", prompt=QUESTION, session_id="c-1").stdout == ""
    last = [e for e in runner.read_log(shop.root) if e["action"] == "context:copilot"][-1]
    assert last["status"] == "skipped" and last["detail"].startswith("duplicate: this session's start")
    assert "shop/sessions.py:L" in run_host(shop.root, "copilot", prompt=QUESTION, session_id="c-1").stdout  # asked again


def test_a_slow_session_start_still_covers_the_same_sessions_prompt_event(tmp_path):
    """CI saw Copilot's userPromptSubmitted arrive more than WINDOW_S after its sessionStart on a
    loaded machine: the same session still gets one block; another session, or no ids, does not."""
    later = time.time() + turns.WINDOW_S + 20
    assert turns.claim(tmp_path, QUESTION, "copilot", kind="session-start", session="c-1") is None
    assert (turns.claim(tmp_path, QUESTION, "copilot", now=later, kind="prompt", session="c-1") or "").startswith("duplicate: this session's start")
    assert turns.claim(tmp_path, "how is a refund issued", "copilot", kind="session-start", session="c-2") is None
    assert turns.claim(tmp_path, "how is a refund issued", "copilot", now=later, kind="prompt", session="c-3") is None
    assert turns.claim(tmp_path, "where are coupons applied", "copilot", kind="session-start") is None
    assert turns.claim(tmp_path, "where are coupons applied", "copilot", now=later, kind="prompt") is None


def test_a_session_start_after_its_own_prompt_event_is_the_duplicate(tmp_path):
    """A full CI run saw Copilot's userPromptSubmitted hook claim the prompt before its sessionStart
    hook did: the model got two blocks. The second of the pair is skipped, in either order; the
    user asking the same words again afterwards is answered."""
    assert turns.claim(tmp_path, QUESTION, "copilot", kind="prompt", session="c-1") is None
    assert (turns.claim(tmp_path, QUESTION, "copilot", kind="session-start", session="c-1") or "").startswith("duplicate: this session's prompt event")
    assert turns.claim(tmp_path, QUESTION, "copilot", kind="prompt", session="c-1") is None  # asked again
    assert turns.claim(tmp_path, "how is a refund issued", "copilot", kind="prompt", session="c-2") is None
    assert turns.claim(tmp_path, "how is a refund issued", "copilot", kind="session-start", session="c-3") is None  # another session


def test_qwen_searches_the_submitted_prompt_not_the_tool_result_continuation(shop):
    payload = host_json("qwen", prompt="[function_response: ok]", cwd=shop.root)
    payload["submitted_prompt"] = QUESTION
    proc = run_host(shop.root, "qwen", stdin=json.dumps(payload))
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert refresh.recorded_prompt(shop.root) == QUESTION


def test_cline_task_start_without_the_task_text_gets_the_orientation(shop):
    out = json.loads(run_host(shop.root, "cline", "session-start").stdout)
    assert out["cancel"] is False and out["contextModification"].startswith("## paqad (orientation)")


# ---- Claude Code subagents (SubagentStart) ------------------------------------------------------


def test_each_subagent_gets_its_sessions_context_once_and_another_sessions_never(shop):
    assert "shop/sessions.py:L" in run_host(shop.root, "claude", prompt=QUESTION, session_id="s-1").stdout

    def subagent(session: str, agent: str) -> str:
        out = json.loads(run_host(shop.root, "claude", "subagent-start", session_id=session, agent_id=agent).stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SubagentStart"
        return out["additionalContext"]

    first = subagent("s-1", "a-1")
    assert f'For: "{QUESTION}"' in first and "shop/sessions.py:L" in first and first.endswith("(end of paqad context)")
    assert subagent("s-1", "a-1").startswith("## paqad (orientation)")  # that subagent has it already
    assert "shop/sessions.py:L" in subagent("s-1", "a-2")  # a second subagent of the same turn
    other = subagent("s-2", "a-3")  # a subagent of another session: never this session's answer
    assert other.startswith("## paqad (orientation)") and QUESTION not in other
    statuses = [e["status"] for e in runner.read_log(shop.root) if e["event"] == "subagent-start"]
    assert statuses == ["subagent", "orientation", "subagent", "orientation"], statuses


# ---- the Claude Code plugin's hooks (integrations/claude-code/hooks/hooks.json) -----------------

PLUGIN_HOOKS = Path(__file__).resolve().parent.parent / "integrations" / "claude-code" / "hooks" / "hooks.json"


def plugin_command(event: str) -> str:
    return json.loads(PLUGIN_HOOKS.read_text(encoding="utf-8"))["hooks"][event][0]["hooks"][0]["command"]


def run_plugin(root: Path, event: str, recorded: str, **fields) -> subprocess.CompletedProcess[str]:
    payload = json.dumps(host_json("claude", recorded, cwd=root, **fields))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["sh", "-c", plugin_command(event)], cwd=root, input=payload, capture_output=True, text=True, env=env, timeout=60, check=False)


def test_the_plugins_hooks_answer_where_the_project_has_no_paqad_hooks(repo, paqad_cli):
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    start = json.loads(run_plugin(repo.root, "SessionStart", "session-start").stdout)["hookSpecificOutput"]
    assert start["additionalContext"].startswith("## paqad (orientation)")
    text = json.loads(run_plugin(repo.root, "UserPromptSubmit", "prompt", prompt=QUESTION).stdout)["hookSpecificOutput"]["additionalContext"]
    assert f'For: "{QUESTION}"' in text and "shop/sessions.py:L" in text


def test_the_plugins_hooks_step_aside_where_the_projects_paqad_hooks_answer(shop):
    for event, recorded in (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"), ("SubagentStart", "subagent-start")):
        done = run_plugin(shop.root, event, recorded, prompt=QUESTION)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), event
    skipped = [e for e in runner.read_log(shop.root) if e["status"] == "skipped"]
    assert [e["event"] for e in skipped] == ["session-start", "prompt-submit", "subagent-start"]
    assert all("plugin's hook" in e["detail"] for e in skipped)
    assert "shop/sessions.py:L" in run_host(shop.root, "claude", prompt=QUESTION).stdout  # the project's own hook answers


def test_cline_cli_task_start_is_answered_from_the_session_record_it_names(shop):
    # Cline CLI 3.0.65 sends TaskStart as "agent_start" with taskMetadata {} and the session's id;
    # the task text is in the record it has already written under ~/.cline/data/sessions/.
    record = Path(os.environ["HOME"]) / ".cline" / "data" / "sessions" / "c-9" / "c-9.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"version": 1, "session_id": "c-9", "prompt": QUESTION}), encoding="utf-8")
    out = json.loads(run_host(shop.root, "cline", "session-start", session_id="c-9").stdout)
    assert out["cancel"] is False and f'For: "{QUESTION}"' in out["contextModification"] and "shop/sessions.py:L" in out["contextModification"]
    spawned = host_json("cline", "session-start", cwd=shop.root, session_id="c-9")
    spawned["parent_agent_id"] = "agent_0"  # a spawned agent's start: not the user's task
    assert json.loads(run_host(shop.root, "cline", stdin=json.dumps(spawned)).stdout) == {"cancel": False}


# ---- Kiro IDE: Prompt Submit runs a shell command with the prompt in USER_PROMPT ----------------


def test_kiro_ide_prompt_submit_hook_answers_the_prompt_from_user_prompt(shop):
    from paqad.hooks.hosts import kiro

    hook = json.loads((shop.root / kiro.IDE_CONFIG).read_text())
    assert hook["when"] == {"type": "promptSubmit"} and hook["then"]["type"] == "runCommand" and hook["enabled"] is True
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "USER_PROMPT": QUESTION}
    # As the IDE runs it: a shell command, no JSON on stdin (here: an empty, closed stdin), stdout added to the context.
    done = subprocess.run(["sh", "-c", hook["then"]["command"]], cwd=shop.root, input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert QUESTION in done.stdout and "shop/sessions.py:L" in done.stdout and not done.stdout.lstrip().startswith("{")
    assert refresh.recorded_prompt(shop.root) == QUESTION
    # A prompt with quotes and a dollar sign reaches paqad as typed (the variable is expanded once, never evaluated).
    odd = "where is the session cookie signed? say \"hmac\" $HOME `id`"
    done = subprocess.run(["sh", "-c", hook["then"]["command"]], cwd=shop.root, input="", capture_output=True, text=True, env={**env, "USER_PROMPT": odd}, timeout=60)
    assert done.returncode == 0 and refresh.recorded_prompt(shop.root) == odd


def test_kiro_install_owns_both_files_and_uninstall_removes_both(repo):
    from paqad.hooks.hosts import kiro

    state = kiro.install(repo.root)
    assert state.state == "installed" and state.paths == [kiro.CONFIG, kiro.IDE_CONFIG] and state.action == "installed"
    assert kiro.install(repo.root).action == "unchanged"
    (repo.root / kiro.IDE_CONFIG).unlink()
    assert kiro.status(repo.root).state == "partial"
    assert kiro.install(repo.root).action == "installed" and kiro.status(repo.root).state == "installed"
    assert kiro.uninstall(repo.root).action == "removed"
    assert not (repo.root / kiro.CONFIG).exists() and not (repo.root / kiro.IDE_CONFIG).exists() and not (repo.root / ".kiro").exists()


def test_a_prompt_answered_in_a_warm_process_syncs_nothing_to_disk_and_leaves_its_files_whole(shop, monkeypatch):
    """The files a prompt rewrites every time (the delivered context and its state, the recorded
    prompt, the delivered marks) are replaced atomically without an ``fsync`` (the next prompt
    regenerates them); each is whole and parses after the answer."""
    import os

    from paqad.hooks import hosts

    host = hosts.HOSTS["claude"]
    door = hosts.Door("service", 30.0, lambda _root: None)

    def answer(question: str, session: str) -> str:
        raw = json.dumps(host_json("claude", "prompt", cwd=str(shop.root), prompt=question, session_id=session))
        return hosts.handle(host, host.read_event(raw, "prompt-submit"), shop.root, config.load(shop.root), door)

    assert "shop/sessions.py:L" in answer(QUESTION, "warm-up")  # the index and the search warm, as in a service
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    out = answer("how is a card charge retried", "s2")
    assert "shop/payments.py:L" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert synced == []
    from paqad.delivery import context, refresh

    assert json.loads(refresh.prompt_path(shop.root).read_text())["prompt"] == "how is a card charge retried"
    assert json.loads(context.state_path(shop.root).read_text())["query"] == "how is a card charge retried"
    assert "claude:s2" in json.loads((paqad_workspace.state_dir(shop.root) / hosts.DELIVERED_FILE).read_text())
    assert "how is a card charge retried" in context.context_path(shop.root).read_text()


def test_a_claim_appears_whole_so_a_second_hook_of_the_same_host_never_reads_it_half_made(tmp_path):
    """A CI run under load saw Cline's two TaskStart hooks (the user's and the project's) race: the
    first had created its claim file but not yet written it, and the second read the empty file as
    another host's claim and skipped the turn."""
    folder = paqad_workspace.state_dir(tmp_path) / turns.TURNS_DIR
    assert turns.claim(tmp_path, QUESTION, "cline", kind="session-start", session="t-1") is None
    (claimed,) = [p for p in folder.iterdir()]
    assert claimed.read_text(encoding="utf-8") == "cline\nsession-start\nt-1"  # the content arrived with the file
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no private copy left behind
    assert turns.claim(tmp_path, QUESTION, "cline", kind="session-start", session="t-1") is None  # the same host again: answered
    claimed.write_text("", encoding="utf-8")  # what a hook that died mid-claim (or an older paqad, mid-write) leaves
    assert turns.claim(tmp_path, QUESTION, "cline", kind="session-start", session="t-1") is None
    assert (turns.claim(tmp_path, QUESTION, "copilot", kind="prompt") or "").startswith("duplicate: the cline hook")


def test_a_c_override_reaches_the_answer_of_the_prompt_hook(shop, paqad_cli):
    """The settings are loaded once per prompt, with the command line's ``-c`` overrides: before
    (issue 33), the hook loaded them twice and the second load, the one that answered, dropped
    them, so ``-c rag_enabled=false`` still delivered context."""
    stdin = json.dumps(host_json("claude", prompt=QUESTION, cwd=str(shop.root)))
    plain = paqad_cli("hook", "run", "prompt-submit", "--host", "claude", cwd=shop.root, input=stdin)
    assert "shop/sessions.py:L" in plain.stdout
    off = paqad_cli("-c", "rag_enabled=false", "hook", "run", "prompt-submit", "--host", "claude", cwd=shop.root, input=stdin.replace("hmac", "an hmac"))
    assert off.returncode == 0 and off.stdout == "", off.stdout[:300]


def test_the_door_is_all_handle_knows_of_where_it_runs_a_failure_is_logged_with_its_mode(shop):
    """``hosts.handle`` answers with what its caller's ``Door`` says; a failure inside it (here the
    service's re-index refusing the files a ``file-changed`` event names) is one ``hooks.log``
    line in that door's mode, and silence for the host."""
    from paqad.hooks import hosts

    host = hosts.HOSTS["claude"]
    event = host.read_event(json.dumps(host_json("claude", "file-changed", cwd=str(shop.root), file_path=str(shop.root / "shop" / "sessions.py"))), "file-changed")
    taken: list[list[str]] = []

    def refuse(_root: Path, files: list[str]) -> None:
        taken.append(files)
        raise OSError("the job queue is gone")

    door = hosts.Door("service", 30.0, lambda _root: None, changed=refuse)
    assert hosts.handle(host, event, shop.root, config.load(shop.root), door) == ""
    assert taken == [event.files]
    [line] = [e for e in runner.read_log(shop.root) if e.get("action") == "context:claude"]
    assert (line["mode"], line["status"], line["error"]) == ("service", "error", "OSError: the job queue is gone")
