"""``paqad serve``: the resident process behind the doors, driven as the hosts and git drive it.

Real processes throughout: the installed ``paqad`` and the hook commands the hosts' configs hold,
real services started on demand or by ``testing.serve.start``, frozen with SIGSTOP and killed
with SIGKILL. Each test has its own runtime folder, and every service is stopped after it
(``tests/conftest.py``). What is asserted is what happened (which door answered, according to
the hook log; which process is serving), not how fast: the timings are benchmarks/hook_latency.py's.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import workspace
from paqad.channel import client, paths, wire
from paqad.hooks import runner
from testing import serve
from testing.env import child_env, wait_for
from testing.hosts import host_json, run_host
from testing.repos import Repo, make_shop

QUESTION = "where is a charge refunded"
pytestmark = pytest.mark.usefixtures("serving")


@pytest.fixture
def shop_hooks() -> str:
    """The agents whose hooks conftest's ``shop`` installs."""
    return "claude"


def last_prompt_log(root: Path) -> dict:
    return [e for e in runner.read_log(root) if e.get("action") == "context:claude"][-1]


def context_of(stdout: str) -> str:
    return json.loads(stdout)["hookSpecificOutput"]["additionalContext"]


def serve_log(root: Path) -> str:
    path = workspace.logs_dir(root) / "serve.log"
    return path.read_text() if path.exists() else ""


def test_the_first_prompt_answers_in_process_and_starts_the_service_the_next_one_uses(shop: Repo) -> None:
    first = run_host(shop.root, "claude", prompt=QUESTION)
    assert first.returncode == 0 and "refund" in context_of(first.stdout)
    entry = last_prompt_log(shop.root)
    assert entry["mode"] == "foreground" and entry["detail"].endswith("service: absent")
    assert serve.wait_ready(shop.root)
    second = run_host(shop.root, "claude", prompt=QUESTION)
    assert last_prompt_log(shop.root)["mode"] == "service"
    assert context_of(second.stdout).split("\n", 3)[:3] == context_of(first.stdout).split("\n", 3)[:3]
    pid = serve.service_pid(shop.root)
    run_host(shop.root, "claude", prompt="retry a card charge with exponential backoff")
    assert serve.service_pid(shop.root) == pid, "one service per work tree, kept"


def test_the_service_exits_after_its_idle_timeout(shop: Repo) -> None:
    pid = serve.start(shop.root, PAQAD_RAG_SERVE_IDLE_TIMEOUT="1")
    assert wait_for(lambda: not serve.alive(pid), timeout=30)
    assert "exited: idle for 1s" in serve_log(shop.root)
    sock = paths.for_root(shop.root)
    assert sock is not None and not os.path.exists(sock.socket) and not client.running(shop.root)


def test_a_killed_service_leaves_a_stale_socket_the_door_answers_past_and_a_new_service_replaces(shop: Repo) -> None:
    pid = serve.start(shop.root)
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not serve.alive(pid))
    found = paths.for_root(shop.root)
    assert found is not None and os.path.exists(found.socket)  # left behind by the dead process
    done = run_host(shop.root, "claude", prompt=QUESTION)
    assert done.returncode == 0 and "refund" in context_of(done.stdout)
    assert last_prompt_log(shop.root)["detail"].endswith("service: stale")
    assert serve.wait_ready(shop.root) and serve.service_pid(shop.root) not in (None, pid)


def test_a_socket_file_left_by_a_dead_process_is_replaced(shop: Repo) -> None:
    found = paths.for_root(shop.root, create=True)
    assert found is not None
    code = "import socket, sys, os; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); os._exit(0)"
    subprocess.run([sys.executable, "-c", code, found.socket], check=True, timeout=30)
    assert os.path.exists(found.socket) and client.request(shop.root, "status").why == "stale"
    serve.start(shop.root)
    assert client.request(shop.root, "status").answered


def test_a_hung_service_is_answered_past_in_process_within_the_hosts_timeout(shop: Repo) -> None:
    pid = serve.start(shop.root)
    os.kill(pid, signal.SIGSTOP)
    try:
        done = run_host(shop.root, "claude", prompt=QUESTION)  # run_host's own hard timeout is 60 s
    finally:
        os.kill(pid, signal.SIGCONT)
    assert done.returncode == 0 and "refund" in context_of(done.stdout)
    entry = last_prompt_log(shop.root)
    assert entry["mode"] == "foreground" and entry["detail"].endswith("service: hung")
    assert serve.service_pid(shop.root) == pid, "a hung service holds its lock: no second one was started"


def test_a_newer_client_makes_an_older_service_exit_and_answers_in_process(shop: Repo) -> None:
    old = serve.start(shop.root, version="0.0.1")
    done = run_host(shop.root, "claude", prompt=QUESTION)
    assert done.returncode == 0 and "refund" in context_of(done.stdout)
    assert last_prompt_log(shop.root)["detail"].endswith("service: refused:outdated")
    assert wait_for(lambda: not serve.alive(old))
    assert "a newer paqad asked (version 0.1.0" in serve_log(shop.root)
    assert serve.wait_ready(shop.root)  # the door started a current one
    assert client.request(shop.root, "status").reply["info"]["version"] == "0.1.0"


def test_a_service_of_another_build_of_the_same_version_makes_way(shop: Repo) -> None:
    """A checkout edited after its service started: same version, other code. The service exits
    and the door answers with the current code (then starts a current service)."""
    old = serve.start(shop.root, build="an-earlier-checkout")
    done = run_host(shop.root, "claude", prompt=QUESTION)
    assert done.returncode == 0 and "refund" in context_of(done.stdout)
    assert last_prompt_log(shop.root)["detail"].endswith("service: refused:outdated")
    assert wait_for(lambda: not serve.alive(old))
    assert "another build of this paqad version" in serve_log(shop.root)
    assert serve.wait_ready(shop.root)
    assert client.request(shop.root, "status").answered, "the current build serves the next request"


def test_a_checkout_has_a_build_fingerprint_that_moves_with_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "src" / "paqad"
    (package / "serve").mkdir(parents=True)
    (package / "serve" / "wire.py").write_text("# a stand-in\n")
    (package / "core.py").write_text("x = 1\n")
    monkeypatch.setattr(wire, "__file__", str(package / "serve" / "wire.py"))
    monkeypatch.setattr(wire, "_BUILD", [])
    assert wire.build_fingerprint() == "", "an installed release (no pyproject.toml beside it): the version decides"
    (tmp_path / "src" / "pyproject.toml").write_text("[project]\nname = 'paqad'\n")
    monkeypatch.setattr(wire, "_BUILD", [])
    first = wire.build_fingerprint()
    (package / "core.py").write_text("x = 22\n")
    monkeypatch.setattr(wire, "_BUILD", [])
    assert first and wire.build_fingerprint() not in ("", first)


def test_a_successor_is_started_while_the_service_making_way_still_holds_the_lock(shop: Repo) -> None:
    # The old service exits at its loop's next tick after refusing a newer client, so a quick
    # door used to find the lock still held and start nothing (the order-dependent failure of the
    # test above). A process holding the lock for a moment stands in for the exiting service.
    found = paths.for_root(shop.root, create=True)
    assert found is not None
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(1.5)")
    holder = subprocess.Popen([sys.executable, "-c", code, found.lock], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert client.start(shop.root, child_env()) is None, "a held lock is a running service: no second one"
        pid = client.start(shop.root, child_env(), why="refused:outdated")
        assert pid is not None
    finally:
        holder.wait(timeout=30)
    assert serve.wait_ready(shop.root) and serve.service_pid(shop.root) == pid


def test_a_client_with_other_settings_is_answered_in_process(shop: Repo) -> None:
    pid = serve.start(shop.root)
    env = {**os.environ, "PAQAD_RAG_TOP_N": "7"}
    payload = json.dumps({"cwd": str(shop.root), "prompt": QUESTION, "hook_event_name": "UserPromptSubmit"})
    hook = subprocess.run([sys.executable, "-m", "paqad", "hook", "run", "prompt-submit", "--host", "claude"], cwd=shop.root, env=env,
                          input=payload, capture_output=True, text=True, timeout=60, check=False)
    assert hook.returncode == 0 and "refund" in context_of(hook.stdout)
    assert last_prompt_log(shop.root)["detail"].endswith("service: refused:environment")
    assert wait_for(lambda: not serve.alive(pid)), "the newest caller's settings win: the old service made way"


def test_two_work_trees_are_served_at_once_each_by_its_own_socket_in_one_process(shop: Repo, tmp_path: Path, paqad_cli) -> None:
    other = Repo.init(tmp_path / "other")
    other.write("ledger/books.py", "def balance_the_ledger(entries):\n    \"\"\"Sum the debits and credits of the general ledger.\"\"\"\n    return sum(e.amount for e in entries)\n")
    other.commit("ledger")
    assert paqad_cli("rag", "init", "--provider", "none", cwd=other.root).returncode == 0
    first = serve.start(shop.root)
    serve.start(other.root)  # hands the work tree to the running process and exits
    assert {serve.service_pid(shop.root), serve.service_pid(other.root)} == {first}, "one process per user (issue 34)"
    roots = {client.request(r, "status").reply["info"]["root"] for r in (shop.root, other.root)}
    assert roots == {str(shop.root), str(other.root)}
    mine = paqad_cli("rag", "search", "balance the general ledger", "--json", cwd=other.root)
    theirs = paqad_cli("rag", "search", QUESTION, "--json", cwd=shop.root)
    assert json.loads(mine.stdout)["results"][0]["path"] == "ledger/books.py"
    assert json.loads(theirs.stdout)["results"][0]["path"].startswith("shop/")
    assert all(client.request(r, "status").reply["info"]["requests"] >= 2 for r in (shop.root, other.root))


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[len("socket:[") : -1])
    return out


def _inodes_in(table: str) -> set[str]:
    try:
        lines = Path(table).read_text().splitlines()[1:]
    except OSError:
        return set()
    if table.endswith("unix"):
        return {line.split()[6] for line in lines if len(line.split()) > 6}
    return {line.split()[9] for line in lines if len(line.split()) > 9}


@pytest.mark.skipif(not os.path.isdir("/proc/net"), reason="reads Linux's /proc/net socket tables")
def test_the_service_listens_on_no_tcp_or_udp_port(shop: Repo) -> None:
    pid = serve.start(shop.root)
    mine = _socket_inodes(pid)
    assert mine & _inodes_in("/proc/net/unix"), "the Unix socket itself is seen (the check can fail)"
    for table in ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"):
        assert not mine & _inodes_in(table), table


def test_git_commits_in_a_burst_become_few_service_updates_and_the_last_one_is_indexed(shop: Repo) -> None:
    serve.start(shop.root)
    words = ["apricot", "bramble", "cobalt", "dervish", "ember", "fjord", "gazebo", "hickory"]
    for i, word in enumerate(words):
        shop.write(f"shop/step_{i}.py", f"def {word}_totals(ledger):\n    \"\"\"Sum the {word} column of the quarterly ledger export.\"\"\"\n    return ledger\n")
        shop.commit(f"step {i}")
    assert wait_for(lambda: wait_quiet(shop.root) and "shop/step_7.py" in _found(shop.root, "sum the hickory column"), timeout=60)
    runs = [e for e in runner.read_log(shop.root) if e.get("action") == "rag-update"]
    assert runs and all(r["mode"] == "service" and r["status"] == "ok" for r in runs) and len(runs) < 8


def _found(root: Path, query: str) -> list[str]:
    reply = client.request(root, "search", {"request": _request(root, query)}).reply or {}
    return [r["path"] for r in reply.get("response", {}).get("results", [])]


def test_the_shims_hand_a_running_service_their_events_without_starting_python(shop: Repo) -> None:
    serve.start(shop.root)
    state = workspace.state_dir(shop.root)
    assert (state / "serve.pid").read_text().strip() == str(serve.service_pid(shop.root))
    shim = shop.root / ".git" / "hooks" / "post-commit"
    done = subprocess.run(["sh", "-x", str(shim)], cwd=shop.root, capture_output=True, text=True, timeout=30, check=False)
    ran = [line for line in done.stderr.splitlines() if line.startswith("+ ")]  # sh -x: every command it ran
    assert done.returncode == 0 and any(line.startswith("+ printf") for line in ran) and ran[-1] == "+ exit 0"
    assert not any(" -P -c" in line or "paqad hook run" in line for line in ran)
    assert wait_for(lambda: any(e.get("mode") == "service" and e.get("action") == "rag-update" for e in runner.read_log(shop.root)))


def test_a_git_event_through_the_console_script_reaches_the_service(shop: Repo, paqad_cli) -> None:
    serve.start(shop.root)
    assert paqad_cli("hook", "run", "post-merge", "0", cwd=shop.root).returncode == 0  # husky's and lefthook's line
    assert wait_for(lambda: [e for e in runner.read_log(shop.root) if e.get("event") == "post-merge" and e.get("mode") == "service"])


def wait_quiet(root: Path) -> bool:
    reply = client.request(root, "status").reply
    return bool(reply) and not reply["info"]["jobs"]


def _request(root: Path, query: str) -> dict:
    from paqad import config
    from paqad.search.request import SearchRequest

    return SearchRequest.from_settings(config.load(root), root, query).to_wire()


EDITED = "def tally_the_marzipan_inventory(shelves):\n    \"\"\"Count the marzipan boxes left on each bakery shelf.\"\"\"\n    return shelves\n"
EDIT_QUERY = "count the marzipan boxes on the bakery shelves"


def _file_change_runs(root: Path) -> list[dict]:
    return [e for e in runner.read_log(root) if e.get("action") == "rag-update" and e.get("event") == "file-changed"]


def test_an_edit_announced_by_claude_codes_post_tool_use_is_found_by_the_next_search_through_the_service(shop: Repo) -> None:
    serve.start(shop.root)
    path = shop.root / "shop" / "bakery.py"
    path.write_text(EDITED)  # an uncommitted edit, as Claude Code's Write tool leaves it
    assert "shop/bakery.py" not in _found(shop.root, EDIT_QUERY), "a search through the service alone does not see it yet"
    done = run_host(shop.root, "claude", "post-tool-use", file_path=str(path), content=EDITED)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert wait_for(lambda: wait_quiet(shop.root) and "shop/bakery.py" in _found(shop.root, EDIT_QUERY), timeout=60)
    runs = _file_change_runs(shop.root)
    assert runs and runs[-1]["mode"] == "service" and runs[-1]["status"] == "ok" and "1 changed" in runs[-1]["detail"]


def test_a_file_claude_code_reports_changed_on_disk_is_reindexed_by_the_service(shop: Repo) -> None:
    serve.start(shop.root)
    path = shop.root / "shop" / "payments.py"
    path.write_text(path.read_text() + "\n\n" + EDITED)  # changed by another editor; FileChanged reports it
    done = run_host(shop.root, "claude", "file-changed", file_path=str(path))
    assert (done.returncode, done.stdout) == (0, "")
    assert wait_for(lambda: wait_quiet(shop.root) and "shop/payments.py" in _found(shop.root, EDIT_QUERY), timeout=60)
    assert _file_change_runs(shop.root)


def test_a_file_change_outside_the_indexed_tree_queues_nothing(shop: Repo) -> None:
    serve.start(shop.root)
    for name in (shop.root / ".git" / "index", shop.root / ".paqad" / "config.yaml", shop.root.parent / "elsewhere.py"):
        assert run_host(shop.root, "claude", "file-changed", file_path=str(name)).returncode == 0
    assert wait_quiet(shop.root) and _file_change_runs(shop.root) == []
    from paqad.serve.jobs import _in_work_tree

    assert _in_work_tree(shop.root, str(shop.root / "shop" / "payments.py")) and _in_work_tree(shop.root, "shop/new.py")
    assert not any(_in_work_tree(shop.root, p) for p in (".git/index", ".paqad/x", "../elsewhere.py", str(shop.root)))


def test_without_a_service_the_file_change_hook_ends_at_once_importing_nothing_heavy(shop: Repo) -> None:
    path = shop.root / "shop" / "bakery.py"
    path.write_text(EDITED)
    payload = json.dumps(host_json("claude", "post-tool-use", cwd=shop.root, file_path=str(path), content=EDITED))
    code = "import sys; from paqad.cli.main import main; sys.exit(main(['hook', 'run', 'file-changed', '--host', 'claude']))"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=shop.root, input=payload, capture_output=True, text=True,
                          env=child_env(PAQAD_RAG_SERVE="true"), timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == ""
    names = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "paqad.serve.hookclient" in names and names & {"paqad.cli.app", "paqad.config", "click", "numpy"} == set()
    assert not client.running(shop.root) and not serve_log(shop.root), "no service started for a file change"


def test_serve_status_and_stop(shop: Repo, paqad_cli) -> None:
    done = paqad_cli("serve", "status", "--json", cwd=shop.root)
    assert done.returncode == 0 and json.loads(done.stdout)["running"] is False
    pid = serve.start(shop.root)
    status = json.loads(paqad_cli("serve", "status", "--json", cwd=shop.root).stdout)
    assert status["running"] and status["service"]["pid"] == pid and status["service"]["root"] == str(shop.root)
    assert paqad_cli("serve", "stop", cwd=shop.root).stdout.strip() == "stopped"
    assert not serve.alive(pid) or wait_for(lambda: not serve.alive(pid))
    assert paqad_cli("serve", "stop", cwd=shop.root).stdout.strip() == "not running"


def test_past_its_memory_cap_the_service_exits_and_the_doors_still_answer(shop: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAQAD_RAG_SERVE_MEMORY_CAP", "16")  # below any Python with numpy loaded
    done = run_host(shop.root, "claude", prompt=QUESTION)  # answers in-process and starts a service
    assert done.returncode == 0 and "refund" in context_of(done.stdout)
    assert wait_for(lambda: "exited: memory cap" in serve_log(shop.root))
    again = run_host(shop.root, "claude", prompt=QUESTION)
    assert again.returncode == 0 and "refund" in context_of(again.stdout)


def test_rag_serve_off_stops_a_running_service_at_its_next_request(shop: Repo, paqad_cli) -> None:
    pid = serve.start(shop.root)
    assert paqad_cli("config", "set", "rag_serve", "false", cwd=shop.root).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "PAQAD_RAG_SERVE"}
    done = subprocess.run(["sh", "-c", "paqad hook run prompt-submit --host claude"], cwd=shop.root, input=json.dumps({"cwd": str(shop.root), "prompt": QUESTION}),
                          capture_output=True, text=True, timeout=60, env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}, check=False)
    assert done.returncode == 0
    assert wait_for(lambda: not serve.alive(pid))
    assert not client.running(shop.root)


def test_the_hook_entry_imports_nothing_heavy_when_the_service_answers(shop: Repo) -> None:
    serve.start(shop.root)
    payload = json.dumps({"cwd": str(shop.root), "prompt": QUESTION, "hook_event_name": "UserPromptSubmit", "session_id": "s"})
    code = "import sys; from paqad.cli.main import main; sys.exit(main(['hook', 'run', 'prompt-submit', '--host', 'claude']))"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=shop.root, input=payload, capture_output=True, text=True,
                          env=child_env(), timeout=60, check=False)
    assert "refund" in context_of(done.stdout)
    names = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "paqad.serve.hookclient" in names and last_prompt_log(shop.root)["mode"] == "service"
    heavy = {"click", "yaml", "numpy", "filelock", "sqlite3", "subprocess", "pathlib", "dataclasses", "typing", "json", "re", "paqad.cli.app", "paqad.config"}
    assert names & heavy == set()


def test_no_socket_path_too_long_for_sun_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _runtime_dir: Path) -> None:
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    deep.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    monkeypatch.setenv("TMPDIR", str(_runtime_dir))
    found = paths.for_root(tmp_path, create=True)
    assert found is not None and len(os.fsencode(found.socket)) <= paths.SUN_PATH_MAX
    assert found.folder == str(_runtime_dir / f"paqad-{os.getuid()}")  # fell back to the temp-dir folder
    s = socket.socket(socket.AF_UNIX)
    s.bind(found.socket)  # and it binds
    s.close()
    os.unlink(found.socket)


def test_a_runtime_folder_others_can_enter_or_do_not_own_is_refused(_runtime_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(_runtime_dir))
    loose = _runtime_dir / paths.DIRNAME
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    found = paths.for_root(tmp_path, create=True)
    assert found is not None and found.folder == str(_runtime_dir / f"paqad-{os.getuid()}")  # the 0755 one was passed over
    assert os.stat(found.folder).st_mode & 0o777 == 0o700


@pytest.mark.parametrize(("client_version", "service_version", "newer"), [
    ("0.2.0", "0.1.9", True), ("0.1.10", "0.1.9", True), ("1.0", "0.9.9", True),
    ("0.1.0", "0.1.0", False), ("0.1.0", "0.2.0", False), ("0.2.0rc1", "0.1.0", True), ("dev", "0.1.0", False),
])
def test_which_client_is_newer(client_version: str, service_version: str, newer: bool) -> None:
    from paqad.channel import wire

    assert wire.is_newer(client_version, service_version) is newer


def test_a_command_that_fails_before_rag_init_starts_nothing_and_writes_nothing(repo: Repo, paqad_cli, serving: None) -> None:
    """Issue 34 item 3: `rag search` before `rag init` used to leave a service for 30 minutes and
    its log and pid file behind (and, with per-developer state, would have marked paqad set up)."""
    make_shop(repo)
    done = paqad_cli("rag", "search", "where is a card charge retried", cwd=repo.root)
    assert done.returncode == 1 and "rag init" in done.stderr
    assert not workspace.local_dir(repo.root).exists() and not (repo.root / ".paqad").exists()
    assert not client.running(repo.root)


def test_a_work_tree_deleted_after_a_commit_is_never_re_created(shop: Repo) -> None:
    """Issue 34 item 3: a work tree deleted right after a commit was re-created with a ``.paqad/``
    folder by its service. The service takes the commit's event, sees the tree gone, exits, and
    writes nothing where it was."""
    pid = serve.start(shop.root)
    shop.write("shop/late.py", "def late_charge():\n    return 1\n")
    shop.commit("late")  # the shim leaves the event for the running service
    import shutil

    shutil.rmtree(shop.root)
    assert wait_for(lambda: not serve.alive(pid), timeout=60)
    assert not shop.root.exists()
    assert "exited: work tree or its paqad folder removed" in serve_log(shop.root)


def test_one_process_serves_every_work_tree_of_the_user_and_releases_each_alone(tmp_path: Path, paqad_cli, serving: None) -> None:
    """Issue 34 item 3: one warm process per user, not per work tree. A second work tree's door
    starts `paqad serve`, which hands the tree to the running process and exits; a tree that goes
    away is released alone (nothing written where it was), and the process ends with the last."""
    trees = []
    for name in ("one", "two", "three"):
        tree = make_shop(Repo.init(tmp_path / name))
        assert paqad_cli("rag", "init", "--provider", "none", cwd=tree.root).returncode == 0
        trees.append(tree)
    pid = serve.start(trees[0].root)
    for tree in trees[1:]:
        done = paqad_cli("rag", "search", "where is a card charge retried", cwd=tree.root)
        assert done.returncode == 0 and "shop/" in done.stdout
        assert serve.wait_ready(tree.root)
    assert {serve.service_pid(t.root) for t in trees} == {pid}, "one process for the user's work trees"
    served = client.request(trees[0].root, "status").reply["info"]["work_trees"]
    assert sorted(served) == sorted(os.path.realpath(t.root) for t in trees)
    import shutil

    shutil.rmtree(trees[1].root)
    assert wait_for(lambda: not client.running(trees[1].root), timeout=30)
    assert not trees[1].root.exists() and serve.service_pid(trees[0].root) == pid and serve.service_pid(trees[2].root) == pid
    assert "exited: work tree or its paqad folder removed" in serve_log(trees[1].root)
    for tree in (trees[0], trees[2]):
        assert client.stop(tree.root)
    assert wait_for(lambda: not serve.alive(pid), timeout=30)


def test_the_process_of_the_user_adopts_only_work_trees_set_up_for_this_user(shop: Repo, tmp_path: Path, serving: None) -> None:
    """A work tree is served only when its per-developer folder exists: asking the host to adopt
    another folder is refused and writes nothing there or for it."""
    from paqad.serve import host

    serve.start(shop.root)
    user = paths.for_user()
    assert user is not None
    stranger = make_shop(Repo.init(tmp_path / "stranger"))
    assert host.ask_adopt(user, stranger.root) == "refused:not_set_up"
    assert not workspace.local_dir(stranger.root).exists() and not (stranger.root / ".paqad").exists()
    assert not client.running(stranger.root)


def test_an_idle_work_tree_is_released_while_the_process_serves_another(shop: Repo, tmp_path: Path, paqad_cli) -> None:
    """Issue 34 item 3: idle work trees are released (their socket, lock, index and caches) while
    the process lives on for the trees in use."""
    busy = make_shop(Repo.init(tmp_path / "busy"))
    assert paqad_cli("rag", "init", "--provider", "none", cwd=busy.root).returncode == 0
    pid = serve.start(shop.root, PAQAD_RAG_SERVE_IDLE_TIMEOUT="2")
    serve.start(busy.root, PAQAD_RAG_SERVE_IDLE_TIMEOUT="2")  # adopted by the running process
    assert serve.service_pid(busy.root) == pid

    def released() -> bool:
        client.request(busy.root, "status", reply_timeout=2.0)  # keeps the other one in use
        return not client.running(shop.root)

    assert wait_for(released, timeout=60)
    assert "exited: idle for 2s" in serve_log(shop.root)
    assert serve.service_pid(busy.root) == pid and serve.alive(pid)
    assert wait_for(lambda: not serve.alive(pid), timeout=60), "the process ends with its last work tree"
