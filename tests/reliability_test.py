"""Issue 14, findings 4 to 6: the prompt never waits for a build it cannot finish, inputs it
cannot use are logged, settings are strict, and the small ones (``rag explain`` outside git, git
dirs, a huge prompt in ``context.json``).

Real repositories, the installed CLI and the installed prompt hook; no timing is asserted (the
benchmarks measure it): the no-index test shows *who* built the index instead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from paqad import config, workspace
from paqad.delivery import context, refresh
from paqad.errors import ConfigError
from paqad.settings import SETTINGS
from testing.env import LEXICAL, wait_for
from testing.hosts import host_json, run_host
from testing.repos import Repo, make_shop

QUESTION = "where is the session cookie signed with hmac"


def _hook_lines(root: Path) -> list[dict]:
    path = (workspace.logs_dir(root) / "hooks.log")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs."""
    return "claude"


# ---- 4. no index: answer at once, build behind the prompt -----------------------------------------


def test_without_an_index_the_prompt_is_answered_at_once_and_the_build_runs_behind_it(repo: Repo, paqad_cli) -> None:
    """A budget a small build fits in (30 s): the hook still does not build in the foreground;
    it answers (nothing: there is no earlier context) and the background refresh builds."""
    make_shop(repo)
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    for key, value in (("rag_enabled", "true"), ("rag_prompt_budget", "30")):
        assert paqad_cli("config", "set", key, value, cwd=repo.root).returncode == 0
    proc = run_host(repo.root, "claude", prompt=QUESTION)
    assert (proc.returncode, proc.stderr) == (0, "") and proc.stdout.strip() in ("", "{}")
    answer = next(e for e in _hook_lines(repo.root) if e["action"] == "context:claude")
    assert answer["status"] == "stale" and answer["detail"].startswith("no index yet"), answer
    assert wait_for(lambda: (workspace.vectors_dir(repo.root) / "CURRENT").exists(), timeout=60)  # built in the background
    assert wait_for(lambda: context.last_delivery(repo.root) is not None, timeout=60)  # ... and the prompt answered there


def test_hook_input_over_the_cap_is_logged_as_such(shop: Repo) -> None:
    raw = json.dumps(host_json("claude", "prompt", cwd=str(shop.root), prompt="charge " * 200_000))
    proc = run_host(shop.root, "claude", stdin=raw)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    errors = [e for e in _hook_lines(shop.root) if e["status"] == "error"]
    assert errors and "over 1,000,000 characters" in errors[-1]["error"], errors


def test_a_prompt_with_a_lone_surrogate_is_answered_and_the_log_says_what_was_replaced(shop: Repo) -> None:
    raw = json.dumps(host_json("claude", "prompt", cwd=str(shop.root), prompt=QUESTION + " \ud800"))  # JSON escapes it
    assert "\\ud800" in raw
    proc = run_host(shop.root, "claude", stdin=raw)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "shop/sessions.py:L" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    answer = next(e for e in _hook_lines(shop.root) if e["action"] == "context:claude")
    assert answer["status"] == "live" and "lone surrogates in the prompt replaced" in answer["detail"]


# ---- 5. strict settings ------------------------------------------------------------------------


FLOATS = sorted(name for name, s in SETTINGS.items() if s.type is float)


@pytest.mark.parametrize("raw", [".nan", ".inf", "-.inf", "nan", "inf", "NaN", "1e400"])
def test_no_float_setting_accepts_nan_or_infinity(repo: Repo, raw: str) -> None:
    assert len(FLOATS) >= 5
    team = repo.root / ".paqad/configs/team.yaml"
    team.parent.mkdir(parents=True)
    for name in FLOATS:
        team.write_text(f"{name}: {raw}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=name):
            config.load(repo.root, environ=LEXICAL)
        team.unlink()
        with pytest.raises(ConfigError, match=name):
            config.load(repo.root, environ={**LEXICAL, f"PAQAD_{name.upper()}": raw.lstrip(".")})
        with pytest.raises(ConfigError, match=name):
            config.load(repo.root, {name: raw.lstrip(".")}, environ=LEXICAL)
    assert all(math.isfinite(getattr(config.load(repo.root, environ=LEXICAL), name)) for name in FLOATS)


@pytest.mark.parametrize(
    ("key", "value"),
    [("rag_embedding_provider", "openai"), ("rag_rerank", "cohere"), ("rag_embedding_base_url", "http://localhost:1/v1"), ("rag_index_outside_repo", "true")],
)
def test_config_set_team_refuses_what_every_later_command_would_refuse(repo: Repo, paqad_cli, key: str, value: str) -> None:
    make_shop(repo)
    team = repo.root / ".paqad/configs/team.yaml"
    done = paqad_cli("config", "set", key, value, "--team", cwd=repo.root)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and key in done.stderr, done.stderr
    assert not team.exists()
    assert paqad_cli("rag", "status", cwd=repo.root).returncode == 0  # nothing broken was written
    assert paqad_cli("config", "set", key, value, cwd=repo.root).returncode == 0  # the user may choose it locally


# ---- 6. small ones ------------------------------------------------------------------------------


def test_rag_explain_outside_git_honours_the_folders_gitignore(tmp_path: Path, paqad_cli) -> None:
    folder = tmp_path / "plain"
    (folder / "build").mkdir(parents=True)
    body = 'def main():\n    """Start the application and serve requests until stopped."""\n    return 1\n'
    for rel in ("app.py", "secret_notes.py", "build/out.py"):
        (folder / rel).write_text(body, encoding="utf-8")
    (folder / ".gitignore").write_text("secret_notes.py\nbuild/\n", encoding="utf-8")
    for rel, expected in (("secret_notes.py", "ignored by .gitignore"), ("build/out.py", "ignored by .gitignore"), ("app.py", "kept")):
        done = paqad_cli("rag", "explain", rel, "--json", cwd=folder)
        assert done.returncode == 0, done.stderr
        decision = json.loads(done.stdout)
        assert expected in decision["reason"] and decision["kept"] is (expected == "kept"), (rel, decision)


def test_inside_a_git_dir_paqad_refuses_in_one_line(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    before = sorted(p.name for p in (repo.root / ".git").iterdir())
    done = paqad_cli("rag", "init", cwd=repo.root / ".git")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "git dir" in done.stderr, done.stderr
    assert sorted(p.name for p in (repo.root / ".git").iterdir()) == before


def test_context_json_keeps_a_bounded_query_not_a_whole_huge_prompt(shop: Repo) -> None:
    huge = QUESTION + " " + "word " * 200_000  # about 1 MB
    cfg = config.load(shop.root)
    refresh.refresh(shop.root, cfg, prompt=huge)
    state = json.loads(context.state_path(shop.root).read_text(encoding="utf-8"))
    assert state["query"] == huge[: context.STATE_QUERY_MAX_CHARS]
    assert context.state_path(shop.root).stat().st_size < 50_000
