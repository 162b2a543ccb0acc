"""A committed ``hooks.yaml`` is untrusted (issue 31, finding 12): its event names, action names,
keys and values reach ``hooks.log`` and error messages only quoted, with control characters
escaped, ``$`` and backticks made inert and the length capped. Real repository, real CLI."""

from __future__ import annotations

import re
from typing import Any

import pytest

from paqad import workspace
from paqad.hooks import runner
from testing.repos import Repo, make_shop

EVIL_EVENT = "x$(touch PWNED)`id`\n\x1b[31mfake line"
CASES = {
    "event": f'"{EVIL_EVENT.encode("unicode_escape").decode()}": [rag-update]\n',
    "action": 'post-commit: ["rag$(touch PWNED)\\r\\nforged: `id`"]\n',
    "key": 'post-commit:\n  - action: rag-update\n    "k$(touch PWNED)\\u2028": 1\n',
    "value": 'post-commit:\n  - action: rag-update\n    timeout: "$(touch PWNED)' + "y" * 500 + '"\n',
}
RAW = re.compile(r"\$\(|`|[\x00-\x1f\x7f\u2028]")


@pytest.fixture
def indexed(repo: Repo, paqad_cli: Any) -> Repo:
    make_shop(repo)
    assert paqad_cli("rag", "init", "--provider", "none", cwd=repo.root).returncode == 0
    return repo


@pytest.mark.parametrize("case", sorted(CASES))
def test_hooks_yaml_names_reach_the_log_and_stderr_inert(indexed: Repo, paqad_cli: Any, case: str) -> None:
    runner.hooks_path(indexed.root).write_text(CASES[case], encoding="utf-8")
    indexed.commit("a hostile hooks.yaml")
    assert paqad_cli("hook", "run", "post-commit", cwd=indexed.root).returncode == 0
    [entry] = [e for e in runner.read_log(indexed.root) if e.get("status") == "error"]
    error = entry["error"]
    assert "hooks.yaml" in error and "PWNED" in error and not RAW.search(error), error
    assert len(error) <= runner.ERROR_MAX_CHARS
    assert not (indexed.root / "PWNED").exists()
    raw_log = (workspace.logs_dir(indexed.root) / runner.LOG_NAME).read_text(encoding="utf-8")
    assert "$(" not in raw_log and "`" not in raw_log and "\\u001b" not in raw_log
    proc = paqad_cli("hooks", "install", cwd=indexed.root)  # reports a broken hooks.yaml on stderr
    assert "PWNED" in proc.stderr and not RAW.search(proc.stderr.rstrip("\n")), proc.stderr


def test_a_non_string_action_or_mixed_keys_are_config_errors_not_crashes(indexed: Repo) -> None:
    runner.hooks_path(indexed.root).write_text("post-commit:\n  - action: [a, b]\n  - {action: rag-update, 1: x, b: y}\n", encoding="utf-8")
    [result] = runner.run_event(indexed.root, "post-commit")
    assert result.status == "error" and result.exit == 2 and "unknown action" in (result.error or "")
    runner.hooks_path(indexed.root).write_text("post-commit:\n  - {action: rag-update, 1: x, b: y}\n", encoding="utf-8")
    [result] = runner.run_event(indexed.root, "post-commit")
    assert result.status == "error" and result.exit == 2 and "unknown key" in (result.error or ""), result
