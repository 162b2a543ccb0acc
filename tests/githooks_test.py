"""Git hook shims in real repositories: install, chain, restore, core.hooksPath, husky, real commits."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paqad import workspace
from paqad.channel import gitevents
from paqad.cli.hooks_cmd import pre_commit_stage
from paqad.errors import PaqadError
from paqad.hooks import gitshims as githooks
from paqad.hooks import runner
from paqad.index.writing import build
from testing.env import wait_for
from testing.repos import GIT_ID, Repo, make_shop

LEGACY = b"#!/bin/sh\n# the user's own hook\necho \"legacy $# $*\" >> legacy.out\ncat >> legacy.out\nexit 3\n"


def git_hooks(repo: Repo) -> Path:
    """``.git/hooks`` (the tests run with an empty GIT_TEMPLATE_DIR, so git did not create it)."""
    folder = repo.root / ".git" / "hooks"
    folder.mkdir(exist_ok=True)
    return folder


def hook_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.endswith(".sample")}


def finished_runs(root: Path) -> list[dict]:
    return [e for e in runner.read_log(root) if e.get("status") in runner.FINISHED]


def timed_git(repo: Repo, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = subprocess.run(["git", *GIT_ID, *args], cwd=repo.root, capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - started


# ---- install / uninstall ------------------------------------------------------------------------


def test_install_writes_recognisable_shims_into_git_hooks(repo):
    states = githooks.install(repo.root)
    hooks = git_hooks(repo)
    assert [(s.hook, s.state, s.action) for s in states] == [(h, "installed", "installed") for h in githooks.HOOKS]
    for hook in githooks.HOOKS:
        path = hooks / hook
        text = path.read_text()
        assert os.access(path, os.X_OK) and githooks.is_ours(path)
        assert f"HOOK={hook}\n" in text and f"INSTALL_PYTHON={sys.executable}\n" in text
        assert "@" not in text.split("\n", 1)[1].replace("$@", "")  # every placeholder filled
    assert not githooks.is_ours(hooks / "pre-commit.sample")


def test_install_twice_is_idempotent(repo):
    githooks.install(repo.root)
    before = hook_files(repo.root / ".git" / "hooks")
    again = githooks.install(repo.root)
    assert {s.action for s in again} == {"unchanged"}
    assert hook_files(repo.root / ".git" / "hooks") == before


def test_an_older_shim_is_updated_in_place_not_chained(repo):
    path = git_hooks(repo) / "post-commit"
    path.write_text("#!/bin/sh\n# paqad-hook-id: paqad-git-shim-v0\nexit 0\n")
    [state] = [s for s in githooks.install(repo.root) if s.hook == "post-commit"]
    assert state.action == "updated" and state.legacy is None
    assert "paqad-git-shim-v5" in path.read_text()


def test_existing_hook_is_chained_and_restored_byte_for_byte(repo):
    hooks = git_hooks(repo)
    (hooks / "post-commit").write_bytes(LEGACY)
    (hooks / "post-commit").chmod(0o750)
    (hooks / "post-merge").symlink_to("post-commit")
    before = hook_files(hooks)
    before_modes = {p.name: p.lstat().st_mode for p in hooks.iterdir()}

    states = {s.hook: s for s in githooks.install(repo.root)}
    assert states["post-commit"].legacy == str(hooks / "post-commit.paqad-legacy")
    assert (hooks / "post-commit.paqad-legacy").read_bytes() == LEGACY
    assert (hooks / "post-merge.paqad-legacy").is_symlink()
    githooks.install(repo.root)  # a second install must not chain our own shim

    assert (hooks / "post-commit.paqad-legacy").read_bytes() == LEGACY
    undone = {s.hook: s.action for s in githooks.uninstall(repo.root)}
    assert undone == {"post-commit": "restored", "post-merge": "restored", "post-checkout": "removed", "post-rewrite": "removed"}
    assert hook_files(hooks) == before
    assert {p.name: p.lstat().st_mode for p in hooks.iterdir()} == before_modes
    assert (hooks / "post-merge").is_symlink() and os.readlink(hooks / "post-merge") == "post-commit"


def test_uninstall_leaves_other_tools_hooks_alone(repo):
    hooks = git_hooks(repo)
    (hooks / "post-commit").write_bytes(LEGACY)
    states = {s.hook: s.action for s in githooks.uninstall(repo.root)}
    assert states["post-commit"] == "left alone" and (hooks / "post-commit").read_bytes() == LEGACY


def test_install_refuses_to_overwrite_a_kept_legacy_hook(repo):
    hooks = git_hooks(repo)
    githooks.install(repo.root)
    (hooks / "post-commit.paqad-legacy").write_bytes(LEGACY)
    (hooks / "post-commit").write_bytes(b"#!/bin/sh\necho someone else\n")
    with pytest.raises(PaqadError, match="move one of them aside"):
        githooks.install(repo.root)
    assert (hooks / "post-commit.paqad-legacy").read_bytes() == LEGACY


def test_core_hooks_path_is_honoured(repo):
    repo.git("config", "core.hooksPath", "githooks")
    githooks.install(repo.root)
    assert all(githooks.is_ours(repo.root / "githooks" / h) for h in githooks.HOOKS)
    assert not (repo.root / ".git" / "hooks" / "post-commit").exists()
    status = githooks.status(repo.root)
    assert status["core_hooks_path"] == "githooks" and status["manager"] == "git"
    githooks.uninstall(repo.root)
    assert list((repo.root / "githooks").iterdir()) == []


def test_a_linked_worktree_installs_into_the_shared_hooks(repo, tmp_path):
    repo.commit("first")
    other = tmp_path / "wt"
    repo.git("worktree", "add", "-q", str(other))
    githooks.install(other)
    assert githooks.is_ours(repo.root / ".git" / "hooks" / "post-commit")


def test_husky_gets_one_marked_line_that_uninstall_removes(repo):
    repo.git("config", "core.hooksPath", ".husky/_")
    husky = repo.root / ".husky"
    (husky / "_").mkdir(parents=True)
    user = b"npx lint-staged"  # no final newline on purpose
    (husky / "post-commit").write_bytes(user)
    githooks.install(repo.root)
    text = (husky / "post-commit").read_text()
    assert text.startswith("npx lint-staged\n") and text.count("paqad hook run post-commit") == 1
    assert os.access(husky / "post-merge", os.X_OK) and githooks.status(repo.root)["manager"] == "husky"
    githooks.install(repo.root)
    assert (husky / "post-commit").read_text() == text  # idempotent
    assert not list((husky / "_").iterdir())  # husky's own folder untouched
    githooks.uninstall(repo.root)
    assert (husky / "post-commit").read_bytes() == user
    assert sorted(p.name for p in husky.iterdir()) == ["_", "post-commit"]  # the files we created are gone


def test_a_committed_husky_or_lefthook_file_that_is_a_symlink_is_never_written_through(repo, tmp_path):
    """A commit can make ``.husky/post-commit`` or ``lefthook-local.yml`` a symlink to a file of the
    developer's: rewriting it would copy that file into the repository (issue 31, as finding 7)."""
    own = tmp_path / "bashrc"
    own.write_text("# the developer's own file\n")
    repo.git("config", "core.hooksPath", ".husky/_")
    husky = repo.root / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "post-commit").symlink_to(own)
    states = {s.hook: s for s in githooks.install(repo.root)}
    assert states["post-commit"].action == "left alone" and (husky / "post-commit").is_symlink()
    assert own.read_text() == "# the developer's own file\n"
    githooks.uninstall(repo.root)
    assert (husky / "post-commit").is_symlink() and own.read_text() == "# the developer's own file\n"
    other = Repo.init(tmp_path / "lefty")
    (other.root / "lefthook.yml").write_text("pre-commit:\n  commands: {}\n")
    (other.root / "lefthook-local.yml").symlink_to(own)
    with pytest.raises(PaqadError, match="symlink"):
        githooks.install(other.root)
    assert own.read_text() == "# the developer's own file\n"


# ---- the shim itself ----------------------------------------------------------------------------


def run_shim(path: Path, cwd: Path, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(path), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=30)


def test_shim_without_paqad_runs_the_legacy_hook_and_exits_silently(repo, tmp_path):
    hooks = git_hooks(repo)
    (hooks / "post-rewrite").write_bytes(LEGACY)
    (hooks / "post-rewrite").chmod(0o755)
    githooks.install(repo.root)
    shim = hooks / "post-rewrite"
    shim.write_text(githooks.render_shim("post-rewrite", python=str(tmp_path / "gone" / "python")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    assert shutil.which("paqad", path=env["PATH"]) is None
    proc = run_shim(shim, repo.root, env, "amend", stdin="abc def\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "", "")  # the legacy hook's code, nothing printed
    assert (repo.root / "legacy.out").read_text() == "legacy 1 amend\nabc def\n"  # same args, same stdin


def test_shim_with_an_interpreter_that_lacks_paqad_is_silent(repo, tmp_path):
    # A bare virtualenv: a real interpreter in which `import paqad` fails (no skip needed).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    base = str(tmp_path / "bare" / "bin" / "python")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    probe = subprocess.run([base, "-P", "-c", "import paqad"], cwd=repo.root, env=env, capture_output=True)
    assert probe.returncode != 0
    githooks.install(repo.root)
    shim = repo.root / ".git" / "hooks" / "post-commit"
    shim.write_text(githooks.render_shim("post-commit", python=base))
    proc = run_shim(shim, repo.root, env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_shim_guards_against_running_the_legacy_hook_recursively(repo, tmp_path):
    hooks = git_hooks(repo)
    githooks.install(repo.root)
    (hooks / "post-commit.paqad-legacy").symlink_to("post-commit")  # a loop, were it not guarded
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    (hooks / "post-commit").write_text(githooks.render_shim("post-commit", python="/nonexistent"))
    assert run_shim(hooks / "post-commit", repo.root, env).returncode == 0


@pytest.mark.parametrize("pid_file", [gitevents.SERVE_PID_FILE, gitevents.BURST_PID_FILE])
def test_the_shim_leaves_its_event_in_the_file_python_takes_while_a_pid_file_names_a_live_process(repo, tmp_path, pid_file):
    """The sh and the Python agree on the channel's files: the names come from
    ``gitevents.SH_MARKS``, and the rendered shim, run by sh, reads and writes the very files
    ``gitevents.path`` names (the per-developer folder included)."""
    text = githooks.render_shim("post-merge", python=str(tmp_path / "gone" / "python"))
    assert re.findall(r"@[A-Z_]+@", text) == []
    shim = git_hooks(repo) / "post-merge"
    shim.write_text(text)
    shim.chmod(0o755)
    workspace.state_dir(repo.root).mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", **{k: os.environ[k] for k in ("HOME", "XDG_DATA_HOME", "PAQAD_DATA_DIR") if k in os.environ}}
    assert run_shim(shim, repo.root, env, "0").returncode == 0
    assert gitevents.take(repo.root) == []  # no live process named: nobody to leave it to
    gitevents.claim(repo.root, pid_file)  # this test's process: alive
    try:
        assert run_shim(shim, repo.root, env, "0").returncode == 0
        assert run_shim(shim, repo.root, env, "0").returncode == 0
        assert gitevents.take(repo.root) == ["post-merge", "post-merge"]
    finally:
        gitevents.release(repo.root, pid_file)
    assert not gitevents.path(repo.root, pid_file).exists()


# ---- end to end: real git commands run the shims ----------------------------------------------


@pytest.fixture
def indexed(repo, paqad_cli) -> Repo:
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    proc = paqad_cli("hooks", "install", "--json", cwd=repo.root)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["hooks_yaml_written"] and {h["state"] for h in data["hooks"]} == {"installed"}
    return repo


def test_commit_returns_at_once_and_the_update_happens_in_the_background(indexed, paqad_cli):
    repo = indexed
    repo.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier.'''\n    return address\n")
    repo.git("add", "-A")
    lock = build.writer_lock(repo.root, timeout=5)
    lock.acquire()  # the index writer is busy: the update must wait for it, git commit must not
    try:
        proc, seconds = timed_git(repo, "commit", "-q", "-m", "ship")
        assert proc.returncode == 0, proc.stderr
        assert seconds < 10 and proc.stderr == ""
        time.sleep(0.5)
        assert finished_runs(repo.root) == []
    finally:
        lock.release()
    [run] = wait_for(lambda: finished_runs(repo.root))
    assert (run["event"], run["action"], run["mode"], run["status"], run["exit"]) == ("post-commit", "rag-update", "background", "ok", 0)
    assert "1 changed" in run["detail"]
    found = paqad_cli("rag", "search", "hand the parcel to the courier", cwd=repo.root)
    assert "shop/shipping.py" in found.stdout

    status = json.loads(paqad_cli("hooks", "status", "--json", cwd=repo.root).stdout)
    assert status["last_runs"]["rag-update"]["status"] == "ok"
    assert [h["state"] for h in status["hooks"]] == ["installed"] * 4
    text = paqad_cli("hooks", "status", cwd=repo.root).stdout
    assert "last rag-update:" in text and "post-commit ok exit=0" in text


def test_a_burst_of_commits_without_a_service_starts_few_pythons_and_indexes_the_last_commit(indexed, paqad_cli, tmp_path):
    """No service: the first commit's shim starts a Python that stays for the burst; the next
    commits' shims find it alive (``.paqad/state/git-burst.pid``) and only leave their event.
    The shims' interpreter is a wrapper that counts its starts."""
    repo = indexed
    starts = tmp_path / "starts"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho start >> {starts}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    hooks = githooks.hooks_dir(repo.root)
    for hook in githooks.HOOKS:
        (hooks / hook).write_text(githooks.render_shim(hook, python=str(wrapper)))
    words = ["apricot", "bramble", "cobalt", "dervish", "ember", "fjord", "gazebo", "hickory"]
    for i, word in enumerate(words):
        repo.write(f"shop/step_{i}.py", f"def {word}_totals(ledger):\n    \"\"\"Sum the {word} column of the quarterly ledger export.\"\"\"\n    return ledger\n")
        proc, _ = timed_git(repo, "add", "-A")
        proc, _ = timed_git(repo, "commit", "-q", "-m", f"step {i}")
        assert proc.returncode == 0 and proc.stderr == ""
    burst = workspace.state_dir(repo.root) / "git-burst.pid"
    assert wait_for(lambda: not burst.exists(), timeout=60), "the burst's Python left when the commits stopped"
    assert wait_for(lambda: "shop/step_7.py" in paqad_cli("rag", "search", "sum the hickory column", cwd=repo.root).stdout, timeout=60)
    started = starts.read_text().count("start")
    assert 1 <= started < len(words), f"{started} Pythons for {len(words)} commits"
    assert {e["status"] for e in runner.read_log(repo.root) if e["action"] == "rag-update"} <= {"ok", "coalesced"}


def test_checkout_and_merge_fire_their_events(indexed):
    repo = indexed
    repo.git("checkout", "-q", "-b", "feature")
    wait_for(lambda: any(e["event"] == "post-checkout" for e in finished_runs(repo.root)))
    repo.write("shop/extra.py", "X = 1\n")
    repo.commit("extra")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "feature")
    fired = {"post-checkout", "post-commit", "post-merge"}
    assert wait_for(lambda: fired <= {e["event"] for e in runner.read_log(repo.root)}), runner.read_log(repo.root)
    # inside one debounce window later events coalesce into one trailing run (the shims are
    # detached, so their order of arrival is not git's order); the burst ends with a finished run
    assert wait_for(lambda: finished_runs(repo.root) and finished_runs(repo.root)[-1]["status"] == "ok"), runner.read_log(repo.root)
    assert {e["status"] for e in runner.read_log(repo.root)} <= {"ok", "coalesced"}


def test_a_broken_setting_does_not_fail_git(indexed):
    repo = indexed
    (workspace.local_config_path(repo.root)).write_text("rag_top_n: lots\n")  # the hook's settings check fails
    proc, _ = timed_git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    assert proc.returncode == 0 and proc.stderr == ""
    [run] = wait_for(lambda: [e for e in runner.read_log(repo.root) if e.get("status") == "error"])
    assert run["exit"] == 2 and "rag_top_n" in run["error"] and not finished_runs(repo.root)  # no action started


def test_a_broken_hooks_yaml_is_logged_and_git_still_succeeds(indexed):
    repo = indexed
    (repo.root / ".paqad" / "hooks.yaml").write_text("post-commit: [rag-updat]\n")
    proc, _ = timed_git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    assert proc.returncode == 0 and proc.stderr == ""
    errors = wait_for(lambda: [e for e in runner.read_log(repo.root) if e["status"] == "error"])
    assert "unknown action 'rag-updat'" in errors[0]["error"]


def test_uninstall_via_cli_restores_the_user_hook(repo, paqad_cli):
    hooks = git_hooks(repo)
    (hooks / "post-checkout").write_bytes(LEGACY)
    before = hook_files(hooks)
    assert paqad_cli("hooks", "install", cwd=repo.root).returncode == 0
    proc = paqad_cli("hooks", "uninstall", "--json", cwd=repo.root)
    assert proc.returncode == 0 and hook_files(hooks) == before
    assert {h["hook"]: h["action"] for h in json.loads(proc.stdout)["hooks"]}["post-checkout"] == "restored"


def test_hook_run_always_exits_0_without_output(tmp_path, paqad_cli):
    for args in (["hook", "run", "post-commit"], ["hook", "run", "no-such-event", "x"], ["hook", "run-action", "rag-update"]):
        proc = paqad_cli(*args, cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), args
    assert not (tmp_path / ".paqad").exists()


@pytest.mark.parametrize(
    ("environ", "event"),
    [
        ({"PRE_COMMIT": "1"}, "post-commit"),
        ({"PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": "a", "PRE_COMMIT_TO_REF": "b"}, "post-checkout"),
        ({"PRE_COMMIT_IS_SQUASH_MERGE": "0"}, "post-merge"),
        ({"PRE_COMMIT_REWRITE_COMMAND": "rebase"}, "post-rewrite"),
    ],
)
def test_pre_commit_stage_is_read_from_its_stage_variables(environ, event):
    assert pre_commit_stage(environ) == event


def test_pre_commit_manifest_declares_the_update_hook():
    import yaml

    manifest = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text())
    [hook] = manifest
    assert hook["id"] == "paqad-update" and hook["entry"] == "paqad hook run --from-pre-commit"
    assert hook["stages"] == list(runner.GIT_EVENTS) and hook["always_run"] and not hook["pass_filenames"]


def test_template_ships_with_the_package_data():
    assert githooks.template_text().startswith("#!/bin/sh\n# paqad-hook-id: ")
    assert workspace.DIRNAME == ".paqad"


def test_hook_main_the_shims_fast_entry_never_fails(tmp_path, monkeypatch, capsys):
    from paqad.cli.hooks_cmd import hook_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "environ", dict(os.environ))  # `hook run` scrubs the git variables in place
    assert hook_main(["run", "post-commit", "a", "b"]) == 0
    assert hook_main(["no-such-command"]) == 0
    assert hook_main(["run", "--bogus-flag"]) == 0
    assert not (tmp_path / ".paqad").exists()


def test_install_reports_a_broken_hooks_yaml_and_installs_nothing(repo, paqad_cli):
    workspace.ensure(repo.root)
    (repo.root / ".paqad" / "hooks.yaml").write_text("post-commit:\n  - action: rag-update\n    timeout: forever\n")
    proc = paqad_cli("hooks", "install", cwd=repo.root)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "hooks.yaml" in proc.stderr and "key 'timeout'" in proc.stderr and "'forever'" in proc.stderr
    assert not (repo.root / ".git" / "hooks" / "post-commit").exists()


def test_install_outside_git_says_so(tmp_path, paqad_cli):
    proc = paqad_cli("hooks", "install", cwd=tmp_path)
    assert proc.returncode == 1 and "not inside a git work tree" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / ".paqad").exists()
