"""paqad.git, the one module that starts git: its error, its timeouts, batch mode for the network,
and the promise that nothing else in paqad starts git or imports GitPython."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import paqad
from paqad import git
from paqad.errors import PaqadError
from testing.repos import Repo, make_shop

PACKAGE = Path(paqad.__file__).parent
BIN = Path(sys.executable).parent
RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system", "popen",
           "execvp", "execlp", "execv", "spawnlp", "spawnvp", "create_subprocess_exec", "create_subprocess_shell", "which"}


# ---- nothing else starts git ------------------------------------------------------------------


def git_starts(path: Path) -> list[str]:
    """Where the module at ``path`` starts git or imports GitPython: a ``["git", ...]`` argv literal,
    a runner called with a ``"git ..."`` string (or ``shutil.which("git")``), ``import git``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git":
            found.append(f"{where} argv starting with 'git'")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for arg in node.args[:1]:
                if name in RUNNERS and isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.split()[:1] == ["git"]:
                    found.append(f"{where} {name}({arg.value!r})")
                if name == "import_module" and isinstance(arg, ast.Constant) and str(arg.value).split(".")[0] == "git":
                    found.append(f"{where} import_module({arg.value!r})")
        elif isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "git" for alias in node.names):
            found.append(f"{where} import git")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "git":
            found.append(f"{where} from git import")
    return found


def test_only_paqad_git_starts_git():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the scan really read the package
    outside = [hit for path in modules if path != PACKAGE / "git.py" for hit in git_starts(path)]
    assert outside == []
    assert git_starts(PACKAGE / "git.py")  # the scan finds git where it is started
    assert not (PACKAGE / "gitwork.py").exists()


def test_the_scan_sees_the_ways_git_could_be_started(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('import subprocess, shutil, os\nimport git.repo\nfrom git import Repo\n'
                      'subprocess.run(("git", "status"))\nos.system("git status")\nshutil.which("git")\n'
                      'print("git hooks need a work tree")\n')
    assert len(git_starts(sample)) == 5, git_starts(sample)


# ---- GitError ---------------------------------------------------------------------------------


def test_a_failed_command_says_what_ran_its_code_and_what_git_said(repo: Repo):
    with pytest.raises(git.GitError) as caught:
        git.run(["rev-parse", "--verify", "no-such-branch"], cwd=repo.root)
    exc = caught.value
    assert isinstance(exc, PaqadError) and exc.exit_code == 1
    assert exc.cmd == ("git", "rev-parse", "--verify", "no-such-branch") and exc.returncode == 128
    text = str(exc)
    assert text.startswith("command: ('git', 'rev-parse', '--verify', 'no-such-branch')\nreturn code: 128\nstdout: (none)\nstderr:\n    fatal: ")
    assert "Needed a single revision" in exc.stderr


def test_stdout_is_kept_and_indented_in_the_message(repo: Repo):
    make_shop(repo)
    with pytest.raises(git.GitError) as caught:  # prints the files, then fails on the unknown path
        git.run(["ls-files", "--error-unmatch", "README.md", "nope.txt"], cwd=repo.root)
    assert "stdout:\n    README.md\n" in str(caught.value) and "nope.txt" in caught.value.stderr


def test_a_timeout_kills_git_and_its_children_and_says_so(repo: Repo):
    started = time.perf_counter()
    with pytest.raises(git.GitError) as caught:  # the alias runs `sleep` as git's child, holding our pipes
        git.run(["-c", "alias.hang=!sleep 30", "hang"], cwd=repo.root, timeout=0.5)
    assert time.perf_counter() - started < 5
    exc = caught.value
    assert exc.timed_out and exc.returncode is None and "return code: none (timed out after 0.5s)" in str(exc)


def test_no_git_on_path_and_a_missing_folder_are_told_apart(repo: Repo, tmp_path, monkeypatch):
    with pytest.raises(git.GitError) as caught:
        git.run(["status"], cwd=tmp_path / "gone")
    assert "gone" in caught.value.reason and git.toplevel(tmp_path / "gone") is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(git.GitError) as caught:
        git.run(["status"], cwd=repo.root)
    assert "return code: none (git is not installed or not on PATH)" in str(caught.value)
    assert git.working_set(repo.root).files == [] and git.toplevel(repo.root) is None  # the hot path answers "nothing"


def test_hook_variables_are_not_passed_on_and_prompts_are_off(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    env = git.no_git_env()
    assert "GIT_DIR" not in env and "GIT_INDEX_FILE" not in env and env["GIT_TERMINAL_PROMPT"] == "0"


def test_batch_mode_keeps_a_users_ssh_command_and_adds_batch_options(monkeypatch):
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i ~/.ssh/deploy")
    env = git.batch_env()
    assert env["GIT_SSH_COMMAND"].startswith("ssh -i ~/.ssh/deploy -o BatchMode=yes -o ConnectTimeout=")
    assert env["GIT_ASKPASS"] == "true" and env["SSH_ASKPASS_REQUIRE"] == "never" and env["GIT_TERMINAL_PROMPT"] == "0"


# ---- the network never prompts, never hangs ---------------------------------------------------


def test_a_remote_that_asks_for_credentials_fails_fast_without_asking(repo, private_remote, tmp_path, monkeypatch):
    make_shop(repo)
    marker = tmp_path / "asked"
    askpass = tmp_path / "askpass.sh"  # what a user's desktop would pop up; it must never run
    askpass.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 30\n")
    askpass.chmod(0o755)
    monkeypatch.setenv("GIT_ASKPASS", str(askpass))
    monkeypatch.setenv("SSH_ASKPASS", str(askpass))
    started = time.perf_counter()
    with pytest.raises(git.GitError) as caught:
        git.ls_remote_head(repo.root, private_remote, "main", timeout=20)
    assert time.perf_counter() - started < 10 and not marker.exists()
    assert caught.value.returncode not in (0, None) and "authentication failed" in caught.value.stderr.lower()
    assert caught.value.cmd[:3] == ("git", "ls-remote", "--heads")


def test_a_remote_that_never_answers_costs_only_the_timeout(repo, silent_remote):
    make_shop(repo)
    started = time.perf_counter()
    with pytest.raises(git.GitError) as caught:  # git-remote-http is git's child: it must die too
        git.ls_remote_head(repo.root, silent_remote, "main", timeout=1.0)
    assert time.perf_counter() - started < 5 and caught.value.timed_out


# ---- GitPython stays off the hot paths --------------------------------------------------------


@pytest.fixture
def tripwire(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``import git`` (GitPython's name) leaves a mark, installed or not; with
    Python's import log on, so the test can also see what the child did import."""
    fake = tmp_path / "tripwire" / "git"
    fake.mkdir(parents=True)
    marker = tmp_path / "gitpython-imported"
    (fake / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    path = os.pathsep.join(p for p in (str(fake.parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYTHONPROFILEIMPORTTIME": "1", "PATH": f"{BIN}:{os.environ['PATH']}"}
    return env, marker


def imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:") and "|" in line}


def test_the_tripwire_fires_on_an_import_of_git(tripwire, tmp_path):
    env, marker = tripwire
    subprocess.run([sys.executable, "-c", "import git"], cwd=tmp_path, env=env, check=True, timeout=60)
    assert marker.exists()


@pytest.fixture
def indexed(repo: Repo, paqad_cli) -> Repo:
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    return repo


def test_the_git_shim_path_does_not_import_gitpython(indexed, tripwire):
    env, marker = tripwire
    shim = indexed.root / ".git" / "hooks" / "post-commit"
    assert "hook_main" in shim.read_text()
    # What the shim runs (its `-P -c` body), in the foreground so its imports can be read.
    body = "from paqad.serve.hookclient import hook_main; hook_main()"
    proc = subprocess.run([sys.executable, "-P", "-c", body, "run", "post-commit"], cwd=indexed.root, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    names = imported(proc.stderr)
    assert proc.returncode == 0 and "paqad.hooks.runner" in names and "paqad.git" in names
    assert not marker.exists() and not {n for n in names if n == "git" or n.startswith("git.")}


def test_the_prompt_hook_path_does_not_import_gitpython(indexed, tripwire):
    env, marker = tripwire
    payload = json.dumps({"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "cwd": str(indexed.root), "prompt": "where is the session cookie signed"})
    proc = subprocess.run(["paqad", "hook", "run", "prompt-submit", "--host", "claude"], cwd=indexed.root, env=env, input=payload,
                          capture_output=True, text=True, timeout=120, check=False)
    names = imported(proc.stderr)
    assert proc.returncode == 0 and "shop/sessions.py" in proc.stdout
    assert "paqad.delivery.prompt" in names and "paqad.git" in names
    assert not marker.exists() and not {n for n in names if n == "git" or n.startswith("git.")}


# ---- the working set: one git status, the base part remembered by HEAD -------------------------


def _three_lists(root: Path) -> tuple[list[str], list[str], list[str]]:
    """What ``git status`` replaced: ``diff --cached``, ``diff`` and ``ls-files --others`` (``diff``
    names a conflicted path once per stage; status once)."""
    return sorted(set(git.staged_files(root))), sorted(set(git.unstaged_files(root))), sorted(set(git.untracked_files(root)))


def _status_lists(root: Path) -> tuple[list[str], list[str], list[str]]:
    st = git.status(root)
    assert st is not None
    return sorted(st.staged), sorted(st.unstaged), sorted(st.untracked)


def test_one_git_status_lists_what_the_three_diff_and_ls_files_calls_listed(repo, tmp_path):
    assert git.status(tmp_path) is None  # not a work tree
    repo.write("staged new.py", "x = 1\n")
    repo.git("add", "staged new.py")
    assert git.status(repo.root).head is None and _status_lists(repo.root) == _three_lists(repo.root)  # no commit yet
    make_shop(repo)
    for rel in ("shop/both.py", "shop/gone.py", "shop/moved.py", "shop/caf\u00e9 \u00e0 la carte.py"):
        repo.write(rel, f"# {rel}\n")
    repo.commit("more files")
    repo.write("shop/payments.py", repo.root.joinpath("shop/payments.py").read_text() + "\n# unstaged\n")
    repo.write("shop/both.py", "# staged\n")
    repo.git("add", "shop/both.py")
    repo.write("shop/both.py", "# staged, then edited again\n")
    repo.git("rm", "-q", "shop/gone.py")
    repo.git("mv", "shop/moved.py", "shop/renamed.py")
    (repo.root / "shop/caf\u00e9 \u00e0 la carte.py").unlink()
    repo.write("notes/deep/todo.md", "later\n")
    repo.write("ignored.log", "x\n")
    repo.write(".gitignore", "*.log\n")
    expected = _three_lists(repo.root)
    assert expected[0] and expected[1] and expected[2]  # every list has something to compare
    assert _status_lists(repo.root) == expected
    assert git.status(repo.root).head == repo.head()


def test_git_status_lists_a_conflicted_path_as_diff_does(tmp_path):
    from testing.repos import make_merge_conflict

    repo = make_merge_conflict(Repo.init(tmp_path / "r"))
    assert "shop/payments.py" in git.status(repo.root).unstaged
    assert _status_lists(repo.root) == _three_lists(repo.root)


def test_the_working_set_status_never_rewrites_the_index(repo):
    """A prompt's ``git status`` runs beside the developer's ``git add``: a plain ``status``
    refreshes stale stat data by rewriting ``.git/index`` under ``index.lock`` (and a ``git add``
    finding that lock fails); the working set's status leaves the index alone."""
    make_shop(repo)
    index = repo.root / ".git" / "index"

    def touched_then(call) -> bool:
        """True when ``call`` rewrote the index after a tracked file's mtime moved."""
        path = repo.root / "shop/payments.py"
        stamp = path.stat().st_mtime_ns + 5_000_000_000
        os.utime(path, ns=(stamp, stamp))  # same content, new stat data
        before = index.stat()
        call()
        after = index.stat()
        return (after.st_ino, after.st_mtime_ns) != (before.st_ino, before.st_mtime_ns)

    assert touched_then(lambda: repo.git("status", "--porcelain"))  # the control: plain status rewrites it
    assert not touched_then(lambda: git.working_set(repo.root))
    assert git.working_set(repo.root).unstaged == []  # stat data moved, content did not: nothing changed


def test_the_base_part_is_remembered_by_head_and_redone_when_head_or_the_base_moves(tmp_path):
    repo = Repo.init(tmp_path / "r")
    make_shop(repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("shop/shipping.py", "def ship(): pass\n")
    repo.commit("ship")
    first = git.working_set(repo.root)
    assert (first.base, first.committed, first.subjects) == ("main", ["shop/shipping.py"], ["ship"])
    first.committed.append("mutated by a caller")  # a caller's change never reaches the cache
    assert git.working_set(repo.root).committed == ["shop/shipping.py"]
    repo.write("shop/invoices.py", "def bill(): pass\n")
    repo.commit("bill")  # HEAD moved
    assert git.working_set(repo.root).subjects == ["bill", "ship"]
    repo.git("branch", "-f", "main", "HEAD~1")  # the base moved (a fetch, a merge elsewhere), HEAD did not
    moved = git.working_set(repo.root)
    assert (moved.committed, moved.subjects) == (["shop/invoices.py"], ["bill"])
    repo.git("pack-refs", "--all")  # the same refs, now in packed-refs
    repo.git("update-ref", "refs/heads/main", "HEAD")
    assert git.working_set(repo.root).committed == []
