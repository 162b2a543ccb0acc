"""End to end with the real host CLIs: paqad's context for this prompt reaches the model.

Each test builds a real git repository with a distinctive function, runs ``paqad rag init``
(lexical) and ``paqad hooks install --agents <host>``, then runs the host's own CLI, installed from
npm at the version pinned in ``tests/hosts-e2e/package-lock.json`` (``bash
tests/hosts-e2e/install.sh``; without it these tests fail with a one-line message saying so),
non-interactively, with HOME in a temp folder, against a fake model endpoint on 127.0.0.1
(:mod:`testing.fake_model`) that records every request. The assertion is on what the model was
sent: exactly one "Retrieved context (paqad)" block, for this prompt (its ``For:`` line, not a
polluted one), naming the function's file and lines, and nothing from an earlier prompt's answer.

How each CLI is pointed at the fake model and made to run project hooks unattended:

- Claude Code 2.1.332: ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``, ``claude -p``.
- Codex 0.171.0: a model provider in ``$CODEX_HOME/config.toml`` (``wire_api = "responses"``),
  the project marked trusted there, and ``codex exec --dangerously-bypass-hook-trust`` (an
  unreviewed project hook is skipped silently otherwise, which a test here proves too).
- Gemini CLI 0.61.0: ``GOOGLE_GEMINI_BASE_URL`` with ``security.auth.selectedType:
  "gemini-api-key"`` in the user settings (the URL alone selects the "gateway" auth type, which
  headless mode rejects: "Invalid auth method selected."), ``GEMINI_CLI_TRUST_WORKSPACE=true``,
  an explicit ``-m`` (the default "auto" asks a classifier model for JSON first).
- GitHub Copilot CLI 1.0.102: ``COPILOT_PROVIDER_BASE_URL`` (BYOK, chat completions),
  ``COPILOT_OFFLINE=true``, ``copilot -p … --trust-folder --allow-all-tools``.
- Qwen Code 0.24.4: ``qwen "<prompt>" --auth-type openai --openai-base-url … -m fake-model``.
- Cline CLI 3.0.65: ``cline auth -p openai -b …``, then ``cline "<task>" --json``; paqad's
  ``TaskStart`` copied to ``~/.cline/hooks/`` (the CLI runs no project hook).
- OpenCode 1.18.33: an OpenAI-compatible provider in ``~/.config/opencode/opencode.json``, then
  ``opencode run -m fake/fake-model``, with ``PWD`` set to the repository: OpenCode takes its
  project folder from ``$PWD``, not from the folder it was started in (run from a test whose
  ``PWD`` was elsewhere, it loaded the project's plugin but never called a hook of it).
- Factory Droid: ``customModels`` and ``trustedFolders`` in ``~/.factory/settings.json``, then
  ``droid exec --model custom:fake-model``. npm has no ``@factory/cli-linux-x64@0.225.1`` (E404),
  so the lockfile pairs the 0.225.1 launcher with the 0.225.2 binary, which is what runs.

Telemetry and update checks are switched off for each, so the only traffic is to 127.0.0.1.

What they prove besides "this prompt's block reached the model" is each test's comment; Cline
CLI and ``droid exec`` run paqad's hooks but do not (Cline) or cannot (no ``UserPromptSubmit`` in
exec) hand this prompt's block to the model, and those tests say so by asserting it.

Uptake (issue 35): the fake model plays a scripted sequence of tool calls once paqad's block has
reached it (``FakeModel.script``), and ``paqad report --json`` must count exactly what it made the
agent do (Claude Code, its subagents, Codex, Gemini CLI, Qwen Code, Copilot CLI).

Not driven here: Kiro and Cursor have no npm CLI; they are tested from their documented hook JSON
only (``paqad/hooks/hosts/recorded/``, replayed by hosts_prompt_test.py and ``paqad doctor``), and
the run's summary says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paqad.delivery import refresh
from paqad.hooks import runner, uptake
from testing import host_clis
from testing.env import BIN
from testing.fake_model import FakeModel, Request
from testing.hosts import run_host
from testing.repos import Repo

PROMPT = "how do we reconcile the quarterly ledger"
EARLIER = "what does vat_for compute on an amount"
LEDGER = '''\
"""Quarter-end bookkeeping."""


def reconcile_quarterly_ledger(entries: list[dict]) -> list[dict]:
    """Match each invoice against its bank transfer at quarter end and return the unmatched ones."""
    return [entry for entry in entries if not entry.get("matched")]
'''
TAX = '''\
"""Sales tax."""


def vat_for(amount: float) -> float:
    """Value added tax on an amount at the standard rate."""
    return amount * 0.2
'''
BLOCK = re.compile(r"## Retrieved context \(paqad\).*?\(end of paqad context\)", re.S)
TIMEOUT_S = 300


@pytest.fixture
def model() -> Iterator[FakeModel]:
    server = FakeModel().start()
    yield server
    server.stop()


@pytest.fixture
def books(repo: Repo, paqad_cli, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A small bookkeeping repository, indexed (lexical), with an earlier prompt's answer on record.

    The hook's time budget is raised: these tests check what reaches the model, and on a loaded CI
    machine the 1.5 s default handed Copilot, Cline and OpenCode the earlier (stale) context. The
    budget itself is measured in benchmarks/ (``hook_latency``), not asserted here."""
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    repo.write("books/ledger.py", LEDGER)
    repo.write("books/tax.py", TAX)
    repo.write("README.md", "# Books\n\nA small bookkeeping tool.\n")
    repo.commit("books")
    init = paqad_cli("rag", "init", cwd=repo.root)
    assert init.returncode == 0, init.stderr
    return repo


def install(repo: Repo, paqad_cli, host: str) -> None:
    """``paqad hooks install`` for ``host``, then one earlier prompt through its installed hook, so
    the last context on record answers a different question (a stale block would be seen)."""
    done = paqad_cli("hooks", "install", "--agents", host, "--json", cwd=repo.root, env=_path_env(host))
    assert done.returncode == 0, done.stderr
    assert [a["host"] for a in json.loads(done.stdout)["agents"]] == [host]
    earlier = run_host(repo.root, host, prompt=EARLIER, session_id="earlier")
    assert "books/tax.py:L" in earlier.stdout, earlier.stdout + earlier.stderr


def _path_env(host: str) -> dict[str, str]:
    """PATH with this venv's paqad first, then the host CLI's npm bin folder (``hooks install``
    asks ``copilot --version``; the hooks find paqad through the repository's shim)."""
    return {"PATH": os.pathsep.join([str(BIN), str(host_clis.cli(host).parent), os.environ.get("PATH", "")])}


def run_cli(repo: Repo, host: str, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    exe = host_clis.cli(host)
    full = {**os.environ, **_path_env(host), "NO_COLOR": "1", "TERM": "dumb", "CI": "1", **env}
    return subprocess.run([str(exe), *args], cwd=repo.root, env=full, input="", capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def strings(node: Any) -> Iterator[str]:
    """Every string in a JSON value (a string that is itself JSON is opened too)."""
    if isinstance(node, str):
        if node[:1] in "[{":
            try:
                yield from strings(json.loads(node))
                return
            except ValueError:
                pass
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def sent_text(request: Request) -> str:
    return "\n".join(strings(request.json()))


def assert_context_reached_the_model(model: FakeModel, host: str, done: subprocess.CompletedProcess[str]) -> str:
    """The last model request of this turn carries exactly one paqad block, for PROMPT, with the
    ledger function; nothing of the earlier prompt's answer. Returns the block."""
    why = f"{host} {host_clis.version(host)} exit {done.returncode}; requests: {model.summary()}; stderr: {done.stderr[-1500:]}"
    turn = [sent_text(r) for r in model.model_requests() if PROMPT in sent_text(r)]
    assert turn, f"the prompt never reached the model ({why})"
    blocks = BLOCK.findall(turn[-1])
    assert len(blocks) == 1, f"{len(blocks)} paqad blocks in the model's request ({why})"
    block = blocks[0]
    assert f'For: "{PROMPT}"' in block, block
    assert "books/ledger.py:L" in block and "def reconcile_quarterly_ledger" in block, block
    assert EARLIER not in turn[-1] and "STALE" not in turn[-1], block
    assert done.returncode == 0, why
    return block


def test_claude_code_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "claude")
    done = run_cli(
        books, "claude", ["-p", PROMPT, "--output-format", "json"],
        ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
    )
    assert_context_reached_the_model(model, "claude", done)
    assert json.loads(done.stdout)["result"] == "Noted."  # the turn finished on the fake model's reply


def codex_config(books: Repo, model: FakeModel) -> Path:
    """A CODEX_HOME whose config sends the model's requests to ``model`` and trusts ``books``."""
    codex_home = Path(os.environ["HOME"]) / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "fake-model"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{model.url}/v1"\nenv_key = "FAKE_MODEL_KEY"\nwire_api = "responses"\n\n'
        f'[analytics]\nenabled = false\n\n[projects."{books.root}"]\ntrust_level = "trusted"\n',
        encoding="utf-8",
    )
    return codex_home


def test_codex_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "codex")
    codex_home = codex_config(books, model)
    done = run_cli(books, "codex", ["exec", "--dangerously-bypass-hook-trust", PROMPT], CODEX_HOME=str(codex_home), FAKE_MODEL_KEY="fake")
    assert_context_reached_the_model(model, "codex", done)
    assert "hook: UserPromptSubmit Completed" in done.stderr


def test_codex_runs_no_unreviewed_project_hook_even_in_a_trusted_project(books, paqad_cli, model):
    # What `paqad hooks install` and `paqad doctor` tell Codex users (codex.TRUST_NOTE): the
    # hooks run only after a `/hooks` review; `codex exec` skips them without a word.
    install(books, paqad_cli, "codex")
    codex_home = codex_config(books, model)
    done = run_cli(books, "codex", ["exec", PROMPT], CODEX_HOME=str(codex_home), FAKE_MODEL_KEY="fake")
    assert done.returncode == 0 and "hook: UserPromptSubmit" not in done.stderr, done.stderr[-1500:]
    sent = model.transcript()
    assert PROMPT in sent and "(paqad)" not in sent and "paqad (orientation)" not in sent, model.summary()


def test_gemini_cli_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "gemini")
    settings = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }), encoding="utf-8")
    done = run_cli(
        books, "gemini", ["-p", PROMPT, "-m", "gemini-2.5-flash", "--output-format", "stream-json"],
        GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="fake", GEMINI_CLI_TRUST_WORKSPACE="true",
    )
    block = assert_context_reached_the_model(model, "gemini", done)
    # Headless Gemini prepends the session start's <hook_context> to the prompt: the block above
    # answered the user's words alone (its For: line), and the session start got the orientation.
    user = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    first = next(e["content"] for e in user if e.get("type") == "message" and e.get("role") == "user")
    assert first.startswith("<hook_context>## paqad (orientation)") and first.rstrip().endswith(PROMPT), first
    assert "<hook_context>" not in block


def test_copilot_cli_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "copilot")
    done = run_cli(
        books, "copilot", ["-p", PROMPT, "--trust-folder", "--allow-all-tools", "--no-auto-update", "-s"],
        COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1", COPILOT_PROVIDER_API_KEY="fake", COPILOT_MODEL="gpt-4.1",
        COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false",
    )
    # sessionStart (initialPrompt) and userPromptSubmitted both carry this prompt: one block only.
    assert_context_reached_the_model(model, "copilot", done)
    assert done.stdout.strip() == "Noted."


# ---- the Claude Code plugin (integrations/claude-code, listed by .claude-plugin/marketplace.json) ----

CHECKOUT = Path(__file__).resolve().parent.parent
PLUGIN = CHECKOUT / "integrations" / "claude-code"


def test_the_claude_code_plugin_and_its_marketplace_validate_strictly():
    for folder in (CHECKOUT, PLUGIN):  # the marketplace manifest, then the plugin's own
        done = run_claude_plugin(["validate", "--strict", str(folder)], cwd=CHECKOUT)
        assert done.returncode == 0 and "Validation passed" in done.stdout, done.stdout + done.stderr
    listed = run_claude_plugin(["validate", str(PLUGIN)], cwd=CHECKOUT).stdout
    for part in ("mcpServers: paqad", "skills: paqad:paqad", "commands: paqad:search", "commands: paqad:research", "commands: paqad:doctor", "commands: paqad:describe"):
        assert part in listed, listed


def run_claude_plugin(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    exe = host_clis.cli("claude")
    full = {**os.environ, "NO_COLOR": "1", "CI": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **env}
    return subprocess.run([str(exe), "plugin", *args], cwd=cwd, env=full, input="", capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def install_plugin(repo: Repo) -> None:
    """The two commands of docs/hosts.md (Claude Code plugin), from this checkout as a local marketplace, into the test's HOME."""
    for args in (["marketplace", "add", str(CHECKOUT), "--json"], ["install", "paqad@paqad", "--json"]):
        done = run_claude_plugin(args, cwd=repo.root)
        assert done.returncode == 0 and '"outcome":"ok"' in done.stdout, done.stdout + done.stderr


def no_paqad_path() -> str:
    """PATH without this venv's bin folder (and so without ``paqad``): what the plugin's hooks and
    server run must then be the repository's ``.paqad/bin/paqad`` shim."""
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != BIN.resolve()]
    path = os.pathsep.join([str(host_clis.cli("claude").parent), *keep])
    assert shutil.which("paqad", path=path) is None, "paqad is on PATH outside the test venv; this test needs it only in the shim"
    return path


def test_claude_code_plugin_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    # No project hooks: `--agents none` writes only the per-machine shim (and the git hooks);
    # everything paqad delivers here comes through the plugin's hooks/hooks.json.
    done = paqad_cli("hooks", "install", "--agents", "none", "--json", cwd=books.root)
    assert done.returncode == 0 and json.loads(done.stdout)["agents"] == [], done.stdout + done.stderr
    assert not (books.root / ".claude").exists()
    install_plugin(books)
    env = {
        "PAQAD_RAG_DESCRIBE_BACKGROUND": "true",  # the user's opt-in: the orientation asks for descriptions
        "PATH": no_paqad_path(), "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
    }
    full = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "CI": "1", **env}
    exe = str(host_clis.cli("claude"))
    ran = subprocess.run([exe, "-p", PROMPT, "--output-format", "json"], cwd=books.root, env=full, input="", capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert_context_reached_the_model(model, "claude", ran)
    sent = model.transcript()
    assert "## paqad (orientation)" in sent, model.summary()  # the plugin's SessionStart hook
    # ... with the opt-in's request (both functions are undescribed) and the plugin's command for it
    assert "Descriptions (the user opted in: rag_describe_background): 2 of 2 declarations" in sent and "`/paqad:describe`" in sent, model.summary()
    # The plugin's MCP server starts through the same shim (`claude mcp list` health-checks it).
    listed = subprocess.run([exe, "mcp", "list"], cwd=books.root, env=full, input="", capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert "plugin:paqad:paqad" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr


def test_claude_code_plugin_and_project_hooks_together_deliver_once(books, paqad_cli, model):
    # Both installed: Claude Code 2.1.332 runs both sets (two blocks reached the model before the
    # plugin's hooks stepped aside); now the project's hooks answer and the plugin's are skipped.
    install(books, paqad_cli, "claude")
    install_plugin(books)
    done = run_cli(
        books, "claude", ["-p", PROMPT, "--output-format", "json"],
        ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
    )
    assert_context_reached_the_model(model, "claude", done)
    assert model.transcript().count("## paqad (orientation)") == 1, model.summary()
    skipped = [e for e in runner.read_log(books.root) if e["status"] == "skipped" and "plugin's hook" in str(e.get("detail"))]
    assert {e["event"] for e in skipped} == {"prompt-submit", "session-start"}, runner.read_log(books.root)


# ---- Qwen Code and Factory Droid ---------------------------------------------------------------


def test_qwen_code_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "qwen")
    settings = Path(os.environ["HOME"]) / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }), encoding="utf-8")
    done = run_cli(
        books, "qwen", [PROMPT, "--auth-type", "openai", "--openai-base-url", f"{model.url}/v1", "--openai-api-key", "fake", "-m", "fake-model", "--output-format", "json"],
    )
    block = assert_context_reached_the_model(model, "qwen", done)
    assert "<qwen:user-prompt-submit-context>" not in block
    assert json.loads(done.stdout)[-1]["result"] == "Noted."
    sent = model.transcript()
    assert "## paqad (orientation)" in sent  # its SessionStart hook


def droid_home(books: Repo, model: FakeModel) -> None:
    """~/.factory/settings.json: a custom model at the fake endpoint, and the repository trusted
    (Droid runs no project hook in a folder the user has not trusted)."""
    folder = Path(os.environ["HOME"]) / ".factory"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps({
        "customModels": [{"model": "fake-model", "displayName": "Fake", "baseUrl": f"{model.url}/v1", "apiKey": "fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 1000}],
        "trustedFolders": {str(books.root): {"trustedAt": "2026-12-02T00:00:00.000Z"}},
    }), encoding="utf-8")


def test_factory_droid_exec_delivers_the_orientation_but_fires_no_prompt_hook(books, paqad_cli, model):
    # What `droid exec` does with paqad's hooks (Droid 0.225.2): SessionStart runs and its
    # orientation reaches the model; UserPromptSubmit never fires for exec's prompt, so no block
    # for this prompt arrives (a user hook that only logs its input showed the same: SessionStart
    # only). The interactive TUI is not driven here.
    install(books, paqad_cli, "droid")
    droid_home(books, model)
    done = run_cli(books, "droid", ["exec", "--model", "custom:fake-model", "-o", "json", PROMPT], DROID_DISABLE_AUTO_UPDATE="1", FACTORY_DISABLE_TELEMETRY="1")
    assert done.returncode == 0 and json.loads(done.stdout)["result"] == "Noted.", done.stdout + done.stderr[-1500:]
    turn = [sent_text(r) for r in model.model_requests() if PROMPT in sent_text(r)]
    assert turn and "## paqad (orientation)" in turn[-1], model.summary()
    assert not BLOCK.findall(turn[-1]), "a block arrived: droid exec fires UserPromptSubmit now; assert the block instead"
    events = [e["event"] for e in runner.read_log(books.root) if e["action"] == "context:droid"]
    assert events[-1:] == ["session-start"] and "prompt-submit" not in events[1:], events  # [0] is install()'s earlier prompt


def test_cline_cli_runs_paqads_task_start_from_the_user_hooks_and_it_answers_this_task(books, paqad_cli, model):
    # Cline CLI 3.0.65 (`cline "<task>"`) runs hooks from ~/.cline/hooks/ only: the project's
    # .clinerules/hooks/ that `paqad hooks install --agents cline` writes do not run (a probe hook
    # there never fired). Its TaskStart ("agent_start") carries no task text; paqad reads it from
    # the session record the CLI has written, and answers this task. The CLI does not put that
    # answer into the model's request (a one-turn task: the request holds no paqad block), and it
    # sends no UserPromptSubmit for the task.
    try:
        _cline_task(books, paqad_cli, model)
    finally:  # the CLI leaves a hub daemon behind for its work tree; it outlived the whole CI run
        _stop_processes_naming(str(books.root), "--cline-hub-daemon")


def _stop_processes_naming(*parts: str) -> None:
    """SIGTERM every process whose command line holds all of ``parts``."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if all(p in cmdline for p in parts):
            try:
                os.kill(int(entry.name), signal.SIGTERM)
            except ProcessLookupError:
                pass


def _cline_task(books, paqad_cli, model):
    install(books, paqad_cli, "cline")
    hooks = Path(os.environ["HOME"]) / ".cline" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(books.root / ".clinerules" / "hooks" / "TaskStart", hooks / "TaskStart")  # what `hooks install` tells a CLI user to do
    auth = run_cli(books, "cline", ["auth", "-p", "openai", "-k", "fake", "-m", "fake-model", "-b", f"{model.url}/v1"])
    assert auth.returncode == 0, auth.stdout + auth.stderr
    done = run_cli(books, "cline", [PROMPT, "--json", "-t", "120"])
    assert done.returncode == 0 and '"text":"Noted."' in done.stdout, done.stdout[-1500:] + done.stderr[-1500:]
    answers = [e for e in runner.read_log(books.root) if e["action"] == "context:cline" and e["event"] == "session-start"]
    assert answers and all(e["status"] == "live" for e in answers), answers
    assert refresh.recorded_prompt(books.root) == PROMPT  # TaskStart answered this task, not an older one
    turn = [sent_text(r) for r in model.model_requests() if PROMPT in sent_text(r)]
    assert turn and not BLOCK.findall(turn[-1]), "the block reached the model: Cline CLI delivers TaskStart context now; assert it instead"
    assert not [e for e in runner.read_log(books.root) if e["action"] == "context:cline" and e["event"] == "prompt-submit"][1:]


TASK = "Find where the quarterly ledger is reconciled and report the function name."


def test_claude_code_subagent_gets_its_sessions_context_at_subagent_start(books, paqad_cli):
    # The fake model answers the prompt with one Agent tool call; Claude Code starts a subagent,
    # runs paqad's SubagentStart hook, and the subagent's own request must carry the block paqad
    # delivered for this session's prompt (additionalContext reaches the subagent: 2.1.332).
    install(books, paqad_cli, "claude")
    server = FakeModel(tool_call=("Agent", {"description": "find the ledger code", "prompt": TASK, "subagent_type": "general-purpose", "run_in_background": False})).start()
    try:
        done = run_cli(
            books, "claude", ["-p", PROMPT, "--output-format", "json"],
            ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
        )
        sub = [sent_text(r) for r in server.model_requests() if TASK in sent_text(r) and '"tool_use_id"' not in r.body]
        why = f"exit {done.returncode}; requests: {server.summary()}; stderr: {done.stderr[-1500:]}"
        assert sub, f"no subagent request ({why})"
        blocks = BLOCK.findall(sub[0])
        assert len(blocks) == 1 and f'For: "{PROMPT}"' in blocks[0] and "books/ledger.py:L" in blocks[0], why
        given = [e for e in runner.read_log(books.root) if e["event"] == "subagent-start"]
        assert [e["status"] for e in given] == ["subagent"], given
        assert done.returncode == 0, why
    finally:
        server.stop()


def test_opencode_hands_this_prompts_context_to_the_model(books, paqad_cli, model):
    install(books, paqad_cli, "opencode")
    config = Path(os.environ["HOME"]) / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({
        "autoupdate": False, "share": "disabled", "model": "fake/fake-model", "small_model": "fake/fake-model",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": f"{model.url}/v1", "apiKey": "fake"}, "models": {"fake-model": {"name": "Fake"}}}},
    }), encoding="utf-8")
    # One word an argument, as typed in a shell: `opencode run` wraps an argument that holds a
    # space in quotes before joining them (1.18.33), and the quotes would be part of the prompt.
    done = run_cli(
        books, "opencode", ["run", *PROMPT.split(), "-m", "fake/fake-model", "--format", "json"],
        PWD=str(books.root), OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_SHARE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1",
    )
    assert_context_reached_the_model(model, "opencode", done)
    assert '"text":"Noted."' in done.stdout


# ---- uptake: what the agent did with the context, read back by `paqad report` (issue 35) --------


def uptake_script(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The agent's moves after the context arrives: open the delivered file, grep for the delivered
    unit, grep for another name and open the file it finds (ranked, not delivered), open a file paqad
    did not rank, edit the delivered file."""
    return [
        ("Read", {"file_path": str(root / "books/ledger.py")}),
        ("Grep", {"pattern": "reconcile_quarterly_ledger", "path": str(root), "output_mode": "files_with_matches"}),
        ("Grep", {"pattern": "vat_for", "path": str(root), "output_mode": "files_with_matches"}),
        ("Read", {"file_path": str(root / "books/tax.py")}),
        ("Read", {"file_path": str(root / "README.md")}),
        ("Edit", {"file_path": str(root / "books/ledger.py"), "old_string": "return the unmatched ones.", "new_string": "return the ones left unmatched."}),
    ]


def test_paqad_report_counts_what_claude_code_did_with_the_context(books, paqad_cli, monkeypatch):
    # Claude Code 2.1.332 names its session transcript in every hook's input; the fake model plays
    # six tool calls after the block arrives, and `paqad report` must count exactly those.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")  # the counts, not the budget, are under test (a loaded CI machine)
    install(books, paqad_cli, "claude")
    server = FakeModel(script=uptake_script(books.root)).start()
    try:
        done = run_cli(
            books, "claude", ["-p", PROMPT, "--output-format", "json", "--allowedTools", "Read,Grep,Glob,Edit"],
            ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
        )
        why = f"exit {done.returncode}; played {len(server.played)}; requests: {server.summary()}; stderr: {done.stderr[-1500:]}"
        assert done.returncode == 0 and len(server.played) == 6, why
    finally:
        server.stop()
    assert "return the ones left unmatched." in (books.root / "books/ledger.py").read_text(encoding="utf-8"), why  # the Edit ran
    rows = [json.loads(line) for line in uptake.path(books.root).read_text(encoding="utf-8").splitlines()]
    turn = rows[-1]  # rows[0] is install()'s earlier prompt, with a transcript path that does not exist
    assert turn["transcript"] and Path(turn["transcript"]).is_file() and turn["offset"] >= 0, turn
    ranked = {r["path"] for r in turn["ranked"]}
    assert [p["path"] for p in turn["delivered"]] == ["books/ledger.py"] and "books/tax.py" in ranked and "README.md" not in ranked, turn
    data = json.loads(paqad_cli("report", "--json", cwd=books.root).stdout)
    claude = data["hosts"]["claude"]
    assert (claude["deliveries"], claude["measured"], claude["passages_measured"]) == (2, 1, 1), claude
    assert (claude["used"], claude["opened"], claude["searched"], claude["edited"], claude["share_used"]) == (1, 1, 1, 1, 1.0), claude
    assert (claude["missed_ranked"], claude["missed_unranked"]) == (1, 1), claude
    assert claude["prompts"]["live"] == 2 and claude["tokens"] == sum(r["tokens"] for r in rows), claude


def uptake_moves(root: Path, read: str, grep: str, edit: str, path_key: str = "file_path", dir_key: str = "path") -> list[tuple[str, dict[str, Any]]]:
    """``uptake_script``'s six moves in the tool names a Gemini-family host offers."""
    ledger, tax, readme = (str(root / p) for p in ("books/ledger.py", "books/tax.py", "README.md"))
    return [
        (read, {path_key: ledger}),
        (grep, {"pattern": "reconcile_quarterly_ledger", dir_key: str(root)}),
        (grep, {"pattern": "vat_for", dir_key: str(root)}),
        (read, {path_key: tax}),
        (read, {path_key: readme}),
        (edit, {path_key: ledger, "old_string": "return the unmatched ones.", "new_string": "return the ones left unmatched."}),
    ]


def assert_uptake_counted(books: Repo, paqad_cli, host: str, server: FakeModel, done: subprocess.CompletedProcess[str], edited: bool = True) -> dict:
    """The six moves were played and `paqad report` counts them: 1 of 1 passage used (opened,
    searched for, edited), one ranked miss (tax.py, found by the grep), one unranked (README.md)."""
    why = f"{host} exit {done.returncode}; played {len(server.played)}; requests: {server.summary()}; stderr: {done.stderr[-1500:]}"
    assert len(server.played) == 6, why
    rows = [json.loads(line) for line in uptake.path(books.root).read_text(encoding="utf-8").splitlines()]
    turn = rows[-1]
    assert turn["host"] == host and Path(turn["transcript"]).is_file(), (turn, why)
    assert [p["path"] for p in turn["delivered"]] == ["books/ledger.py"] and "books/tax.py" in {r["path"] for r in turn["ranked"]}, turn
    data = json.loads(paqad_cli("report", "--json", cwd=books.root).stdout)
    counts = data["hosts"][host]
    got = {k: counts[k] for k in ("measured", "passages_measured", "used", "opened", "searched", "edited", "missed_ranked", "missed_unranked")}
    assert got == {"measured": 1, "passages_measured": 1, "used": 1, "opened": 1, "searched": 1, "edited": int(edited), "missed_ranked": 1, "missed_unranked": 1}, (got, why)
    return counts


def test_paqad_report_counts_what_qwen_code_did_with_the_context(books, paqad_cli, monkeypatch):
    # Qwen Code 0.24.4: transcript_path names its chat JSONL; tool calls are Gemini-shaped parts.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    install(books, paqad_cli, "qwen")
    settings = Path(os.environ["HOME"]) / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}), encoding="utf-8")
    server = FakeModel(script=uptake_moves(books.root, "read_file", "grep_search", "edit")).start()
    try:
        done = run_cli(books, "qwen", [PROMPT, "--auth-type", "openai", "--openai-base-url", f"{server.url}/v1", "--openai-api-key", "fake", "-m", "fake-model", "--output-format", "json", "--yolo"])
    finally:
        server.stop()
    assert_uptake_counted(books, paqad_cli, "qwen", server, done)


def test_paqad_report_counts_what_gemini_cli_did_with_the_context(books, paqad_cli, monkeypatch):
    # Gemini CLI 0.61.0: transcript_path names its session JSONL; read_file, grep_search; no edit
    # tool offered in headless mode without approval, so the sixth move is a read.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    install(books, paqad_cli, "gemini")
    settings = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }), encoding="utf-8")
    moves = uptake_moves(books.root, "read_file", "grep_search", "replace", dir_key="dir_path")
    server = FakeModel(script=[*moves[:5], ("read_file", {"file_path": str(books.root / "books/ledger.py"), "start_line": 4, "end_line": 6})]).start()
    try:
        done = run_cli(
            books, "gemini", ["-p", PROMPT, "-m", "gemini-2.5-flash", "--output-format", "stream-json"],
            GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY="fake", GEMINI_CLI_TRUST_WORKSPACE="true",
        )
    finally:
        server.stop()
    assert_uptake_counted(books, paqad_cli, "gemini", server, done, edited=False)


def test_paqad_report_counts_what_codex_did_with_the_context(books, paqad_cli, monkeypatch):
    # Codex 0.171.0: transcript_path names its rollout JSONL; every move is an exec_command.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    install(books, paqad_cli, "codex")
    root = books.root
    script = [
        ("exec_command", {"cmd": "cat books/ledger.py"}),
        ("exec_command", {"cmd": "grep -rn reconcile_quarterly_ledger ."}),
        ("exec_command", {"cmd": "grep -rln vat_for ."}),
        ("exec_command", {"cmd": f"sed -n '1,20p' {root / 'books/tax.py'}"}),
        ("exec_command", {"cmd": "head -5 README.md"}),
        ("exec_command", {"cmd": "sed -i 's/return the unmatched ones./return the ones left unmatched./' books/ledger.py"}),
    ]
    server = FakeModel(script=script).start()
    try:
        codex_home = codex_config(books, server)
        done = run_cli(books, "codex", ["exec", "--dangerously-bypass-hook-trust", PROMPT], CODEX_HOME=str(codex_home), FAKE_MODEL_KEY="fake")
    finally:
        server.stop()
    assert_uptake_counted(books, paqad_cli, "codex", server, done)


def test_paqad_report_counts_what_copilot_cli_did_from_its_tool_events(books, paqad_cli, monkeypatch):
    # Copilot CLI 1.0.102 names no transcript; paqad's postToolUse hook gets each tool call.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    install(books, paqad_cli, "copilot")
    root = books.root
    script = [
        ("view", {"path": str(root / "books/ledger.py")}),
        ("grep", {"pattern": "reconcile_quarterly_ledger", "path": str(root)}),
        ("grep", {"pattern": "vat_for", "path": str(root)}),
        ("view", {"path": str(root / "books/tax.py")}),
        ("view", {"path": str(root / "README.md")}),
        ("edit", {"path": str(root / "books/ledger.py"), "old_str": "return the unmatched ones.", "new_str": "return the ones left unmatched."}),
    ]
    server = FakeModel(script=script).start()
    try:
        done = run_cli(
            books, "copilot", ["-p", PROMPT, "--trust-folder", "--allow-all-tools", "--no-auto-update", "-s"],
            COPILOT_PROVIDER_BASE_URL=f"{server.url}/v1", COPILOT_PROVIDER_API_KEY="fake", COPILOT_MODEL="gpt-4.1",
            COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false",
        )
    finally:
        server.stop()
    why = f"copilot exit {done.returncode}; played {len(server.played)}; requests: {server.summary()}; stderr: {done.stderr[-1500:]}"
    assert len(server.played) == 6 and "return the ones left unmatched." in (root / "books/ledger.py").read_text(encoding="utf-8"), why
    data = json.loads(paqad_cli("report", "--json", cwd=root).stdout)
    counts = data["hosts"]["copilot"]
    got = {k: counts[k] for k in ("measured", "passages_measured", "used", "opened", "searched", "edited", "missed_ranked", "missed_unranked")}
    assert got == {"measured": 1, "passages_measured": 1, "used": 1, "opened": 1, "searched": 1, "edited": 1, "missed_ranked": 1, "missed_unranked": 1}, (got, why)


def test_paqad_report_counts_what_a_claude_code_subagent_did(books, paqad_cli, monkeypatch):
    # The fake model starts a subagent, which reads the delivered file: Claude Code 2.1.332 writes
    # that read to the subagent's own transcript (<session>/subagents/), and it counts for the turn.
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    install(books, paqad_cli, "claude")
    agent = {"description": "find the ledger code", "prompt": TASK, "subagent_type": "general-purpose", "run_in_background": False}
    server = FakeModel(script=[("Agent", agent), ("Read", {"file_path": str(books.root / "books/ledger.py")})]).start()
    try:
        done = run_cli(
            books, "claude", ["-p", PROMPT, "--output-format", "json", "--allowedTools", "Read,Agent"],
            ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
        )
    finally:
        server.stop()
    why = f"exit {done.returncode}; played {len(server.played)}; requests: {server.summary()}; stderr: {done.stderr[-1500:]}"
    assert done.returncode == 0 and len(server.played) == 2, why
    claude = json.loads(paqad_cli("report", "--json", cwd=books.root).stdout)["hosts"]["claude"]
    assert (claude["measured"], claude["used"], claude["opened"]) == (1, 1, 1), (claude, why)
