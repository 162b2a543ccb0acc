"""``paqad rag history`` through the installed console script (issue 35, item 3)."""

from __future__ import annotations

import json
import subprocess

from testing.env import child_env, paqad_exe
from testing.repos import Repo


def _paqad(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([paqad_exe(), "rag", "history", *args], cwd=repo.root, env=child_env(), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)


def test_the_command_builds_the_history_then_appends_and_answers(repo: Repo):
    repo.write("retry.py", "def wait():\n    return 0.5\n")
    repo.commit("Add the retry wait")
    first = _paqad(repo, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["added"] == 1
    repo.write("retry.py", "def wait():\n    return 2\n")
    repo.commit("Wait two seconds: the gateway rate-limits bursts")
    done = _paqad(repo, "why does the retry wait two seconds", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["update"]["added"] == 1 and not answer["update"]["full"]
    assert answer["results"][0]["sha"] == repo.head() and answer["results"][0]["files"] == ["retry.py"]
    text = _paqad(repo, "gateway bursts", "--no-update")
    assert text.returncode == 0 and text.stdout.startswith(repo.head()[:10])


def test_asking_before_any_history_exists_says_how_to_build_it(repo: Repo):
    repo.write("a.py", "A = 1\n")
    repo.commit("one")
    done = _paqad(repo, "anything", "--no-update")
    assert done.returncode == 1 and "paqad rag history" in done.stderr
