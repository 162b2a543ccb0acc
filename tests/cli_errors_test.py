"""The CLI's error tiers, through the installed ``paqad`` in real git repositories.

Every command of the click group (enumerated, so a new command is covered as soon as it is given
its minimal arguments in ``ARGS``) is run with a missing ``--root``, a bad ``-c`` value and a
broken local ``config.yaml`` (invalid YAML, an unknown key): one ``paqad: error:`` line on stderr and
exit 2. The exceptions are the documented contracts: ``paqad hook ...`` exits 0, prints nothing
and logs the reason in ``.paqad/logs/hooks.log``; ``paqad agent`` and ``paqad mcp`` answer
configuration errors in-band once the session runs. Then ^C (exit 130) and the crash tier.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import click
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from paqad import localstate, workspace
from paqad.cli.main import cli
from testing.env import LEXICAL
from testing.repos import Repo, make_shop

EXE = shutil.which("paqad", path=str(Path(sys.executable).parent)) or shutil.which("paqad")
UNIT = "shop/payments.py::retry_charge"

# The minimal valid arguments of each command (a list per way of calling it).
ARGS: dict[tuple[str, ...], list[list[str]]] = {
    ("agent",): [[]],
    ("bootstrap",): [[]],
    ("config", "get"): [["rag_top_n"]],
    ("config", "list"): [[]],
    ("config", "set"): [["rag_top_n", "5"]],
    ("describe", "pending"): [[]],
    ("describe", "promote"): [[]],
    ("describe", "put"): [[UNIT, "Charges again after a transient processor error."]],
    ("describe", "status"): [[]],
    ("hook", "run"): [["post-commit"], ["prompt-submit", "--host", "claude"]],
    ("hook", "run-action"): [["rag-update"]],
    ("hooks", "install"): [["--agents", "none"]],
    ("hooks", "status"): [[]],
    ("hooks", "uninstall"): [["--agents", "none"]],
    ("mcp",): [[]],
    ("mcp", "install"): [["--host", "claude"]],
    ("mcp", "uninstall"): [["--host", "claude"]],
    ("rag", "clear"): [["--yes"]],
    ("rag", "eval"): [[]],
    ("rag", "explain"): [["shop/payments.py"]],
    ("rag", "init"): [[]],
    ("rag", "history"): [["why are charges retried"]],
    ("rag", "neighbors"): [[UNIT]],
    ("rag", "probe"): [["retry a charge"]],
    ("rag", "publish"): [[]],
    ("rag", "rebuild"): [[]],
    ("rag", "refresh-context"): [[]],
    ("rag", "search"): [["retry a charge"]],
    ("rag", "status"): [[]],
    ("rag", "update"): [[]],
    ("doctor",): [[]],
    ("report",): [[]],
    ("serve",): [[]],
    ("serve", "status"): [[]],
    ("serve", "stop"): [[]],
    ("stackpack", "list"): [[]],
    ("stackpack", "new"): [["dart"]],
    ("stackpack", "show"): [["python"]],
    ("workspace", "add"): [["."]],
    ("workspace", "fetch"): [[]],
    ("workspace", "list"): [[]],
    ("workspace", "remove"): [["shared-lib"]],
}
IN_BAND = {("agent",), ("mcp",)}


def _runnable(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command a user can run: the leaves, and groups that run without a subcommand (mcp)."""
    out = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        path = (*prefix, name)
        if isinstance(cmd, click.Group):
            if cmd.invoke_without_command:
                out.append(path)
            out.extend(_runnable(cmd, path))
        else:
            out.append(path)
    return out


COMMANDS = _runnable(cli)
CALLS = [(path, args) for path in COMMANDS for args in ARGS.get(path, [[]])]


def test_every_command_has_minimal_arguments() -> None:
    missing = [" ".join(p) for p in COMMANDS if p not in ARGS]
    assert not missing, f"give these commands their minimal arguments in ARGS: {missing}"
    assert set(ARGS) == set(COMMANDS), f"ARGS names commands that no longer exist: {set(ARGS) - set(COMMANDS)}"


# ---- the repositories, one per condition ------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    name: str
    repo: Path
    prefix: tuple[str, ...]  # global options before the command
    says: str  # what the one stderr line (or the log, or the in-band error) must contain


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
    return {**env, **LEXICAL, "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TEMPLATE_DIR": ""}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def _shop(base: Path, home: Path, config_text: str | None = None) -> Path:
    repo = make_shop(Repo.init(base))
    done = subprocess.run([EXE, "rag", "init"], cwd=repo.root, env=_env(home), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    if config_text is not None:
        Path(localstate.tree_dir(repo.root, _env(home)), "config.yaml").write_text(config_text, encoding="utf-8")
    return repo.root


@pytest.fixture(scope="module")
def conditions(tmp_path_factory: pytest.TempPathFactory, home: Path) -> dict[str, Condition]:
    base = tmp_path_factory.mktemp("conditions")
    shop = _shop(base / "shop", home)
    missing = base / "no-such-folder"
    return {
        "missing-root": Condition("missing-root", shop, ("--root", str(missing)), f"--root {missing}: not a directory"),
        "bad-c": Condition("bad-c", shop, ("-c", "rag_top_n=abc"), "command line (-c): rag_top_n = 'abc' is not allowed"),
        "invalid-yaml": Condition("invalid-yaml", _shop(base / "yaml", home, "rag_top_n: [\n"), (), "config.yaml: line 2 is not valid YAML"),
        "unknown-key": Condition("unknown-key", _shop(base / "key", home, "rag_nonsense: 1\n"), (), "config.yaml: unknown setting 'rag_nonsense'"),
    }


def _new_log_entries(root: Path, home: Path, seen: int, wait_s: float = 15.0) -> list[dict]:
    """The hooks.log entries after the first ``seen``. A git event handed to the user's warm
    service is run, and its outcome logged, by the service a moment after the hook returned."""
    deadline = time.monotonic() + wait_s
    while True:
        new = _hooks_log(root, home)[seen:]
        if new or time.monotonic() > deadline:
            return new
        time.sleep(0.1)


def _hooks_log(root: Path, home: Path) -> list[dict]:
    path = Path(localstate.tree_dir(root, _env(home)), "logs", "hooks.log")  # where the subprocesses (this module's HOME) log
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _search_in_band_over_mcp(cond: Condition, home: Path) -> tuple[bool, str]:
    async def session() -> tuple[bool, str]:
        params = StdioServerParameters(command=EXE, args=[*cond.prefix, "mcp", "--root", str(cond.repo)], env=_env(home))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool("search", {"query": "retry a charge"})
            return bool(result.is_error), "".join(c.text for c in result.content)

    return anyio.run(session)


@pytest.mark.parametrize("condition", ["missing-root", "bad-c", "invalid-yaml", "unknown-key"])
@pytest.mark.parametrize(("path", "args"), CALLS, ids=[" ".join((*p, *a)) for p, a in CALLS])
def test_every_command_fails_in_one_line(path: tuple[str, ...], args: list[str], condition: str, conditions: dict[str, Condition], home: Path) -> None:
    cond = conditions[condition]
    before = _hooks_log(cond.repo, home)
    stdin = json.dumps({"prompt": "where is a card charge retried", "cwd": str(cond.repo), "session_id": "t"}) if "--host" in args else ""
    if path in IN_BAND and condition != "missing-root":
        stdin = json.dumps({"id": 1, "action": "search", "query": "retry a charge"}) + "\n"
        if path == ("mcp",):
            is_error, text = _search_in_band_over_mcp(cond, home)
            assert is_error and text.startswith("config_error: ") and cond.says in text, text
            return
    proc = subprocess.run([EXE, *cond.prefix, *path, *args], cwd=cond.repo, env=_env(home), input=stdin, capture_output=True, text=True, timeout=120, check=False)

    if path[0] == "hook":  # what git and the agent hosts call: exit 0, silent, the reason logged
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
        new = _new_log_entries(cond.repo, home, len(before))
        assert [e["status"] for e in new] == ["error"], new
        assert cond.says in new[0]["error"] and new[0]["exit"] == 2
    elif path in IN_BAND and condition != "missing-root":  # the session started; the error is a reply
        assert proc.returncode == 0, proc.stderr
        reply = json.loads(proc.stdout)
        assert reply["ok"] is False and reply["error"]["code"] == "config_error" and cond.says in reply["error"]["message"]
    else:
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("paqad: error: ") and cond.says in lines[0], proc.stderr


def test_click_usage_errors_keep_exit_2(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    no_value = paqad_cli("-c", "rag_top_n", "rag", "status", cwd=repo.root)
    assert no_value.returncode == 2 and "is not KEY=VALUE" in no_value.stderr
    assert paqad_cli("rag", "search", "--top-n", "0", "x", cwd=repo.root).returncode == 2
    assert paqad_cli("rag", "nosuch", cwd=repo.root).returncode == 2


# ---- ^C ---------------------------------------------------------------------------------------


def _interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_interrupt_while_serving_exits_130(repo: Repo) -> None:
    """A session blocked on its next request line: ^C is one line and 130, whatever is running."""
    make_shop(repo)
    proc = subprocess.Popen([EXE, "agent"], cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"id": 1, "action": "hello"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["ok"] is True  # the session runs and waits for the next line
    assert _interrupt(proc) == (130, "paqad: interrupted\n")


def test_interrupt_during_rebuild_exits_130_and_keeps_the_index(repo: Repo) -> None:
    make_shop(repo)
    for i in range(1500):
        repo.write(f"pkg/mod_{i:04d}.py", f'def handler_{i}(request):\n    """Handle request kind {i} and log it."""\n    return request.get("k{i}")\n')
    repo.commit("many")
    env = {**os.environ, **LEXICAL}
    first = subprocess.run([EXE, "rag", "init"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert first.returncode == 0, first.stderr
    current = (workspace.vectors_dir(repo.root) / "CURRENT").read_text()
    proc = subprocess.Popen([EXE, "rag", "rebuild"], cwd=repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    audit = (workspace.local_dir(repo.root) / "audit.log")
    starts = audit.read_text().count("build-started")
    deadline = time.monotonic() + 60
    while audit.read_text().count("build-started") == starts and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)  # the rebuild holds the writer lock and is parsing files now
    assert proc.poll() is None, "the rebuild finished before it could be interrupted: use more files"
    assert _interrupt(proc) == (130, "paqad: interrupted\n")
    assert (workspace.vectors_dir(repo.root) / "CURRENT").read_text() == current  # the old generation still serves
    again = subprocess.run([EXE, "rag", "search", "retry a card charge with exponential backoff", "--json"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0 and json.loads(again.stdout)["results"][0]["id"] == UNIT, again.stderr


# ---- the crash tier ---------------------------------------------------------------------------


def test_unexpected_error_writes_crash_log_under_root(repo: Repo, paqad_cli, tmp_path: Path) -> None:
    """`.paqad/state` is a file, which nothing in paqad expects: `rag update` cannot take its
    lock. Run from another repository: the report lands in --root's .paqad/logs, not the cwd's."""
    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    state = workspace.state_dir(repo.root)
    shutil.rmtree(state)
    state.write_text("not a folder\n", encoding="utf-8")
    elsewhere = Repo.init(tmp_path / "elsewhere")
    (elsewhere.root / ".paqad").mkdir()

    proc = paqad_cli("--root", str(repo.root), "rag", "update", cwd=elsewhere.root)
    crash = workspace.logs_dir(repo.root) / "crash.log"
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"paqad: unexpected error: FileExistsError: [Errno 17] File exists: '{state}' (details in {crash})"]
    report = crash.read_text(encoding="utf-8")
    assert report.startswith("## paqad ") and f"- command: `paqad --root {repo.root} rag update`" in report
    assert "- Python 3." in report and "click " in report and "\n```\nTraceback (most recent call last):\n" in report
    assert "FileExistsError" in report and report.rstrip().endswith("```")
    assert not (workspace.logs_dir(elsewhere.root)).exists()


def test_crash_outside_a_set_up_repository_goes_to_the_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No `.paqad/` to write into (paqad never set up here): the report goes to a new private file
    in the user's cache folder, never the shared temp folder, and the folder is left as it was.
    In-process, with a library function that raises a bug."""
    from paqad.cli import main as cli_main
    from paqad.index import status as status_mod

    def broken_status(root: Path) -> dict:
        raise KeyError("units_by_language")

    monkeypatch.setattr(status_mod, "status", broken_status)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("PAQAD_CACHE_DIR", str(tmp_path / "cache"))
    fresh = Repo.init(tmp_path / "fresh").root
    assert cli_main.main(["--root", str(fresh), "rag", "status"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("paqad: unexpected error: KeyError: 'units_by_language' (details in ")
    [report] = list((tmp_path / "cache" / "crash").glob("paqad-crash-*.log"))
    assert err[0].endswith(f"{report})") and "KeyError: 'units_by_language'" in report.read_text(encoding="utf-8")
    assert report.stat().st_mode & 0o777 == 0o600 and (tmp_path / "cache" / "crash").stat().st_mode & 0o777 == 0o700
    assert not list((tmp_path / "tmp").iterdir())
    assert not (fresh / ".paqad").exists()


def _crashing_repo(repo: Repo, paqad_cli) -> Path:
    """The shop indexed, then its state folder replaced by a file: `rag update` crashes on it."""
    from paqad import workspace

    make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    state = workspace.state_dir(repo.root)
    shutil.rmtree(state)
    state.write_text("not a folder\n", encoding="utf-8")
    return state


def test_crash_log_is_0600_and_masks_secrets_on_the_command_line(repo: Repo, paqad_cli) -> None:
    """The report holds the command line: a URL password, a token and a secret-named setting
    are masked; the file is the user's alone."""
    from paqad import workspace

    _crashing_repo(repo, paqad_cli)
    token = "ghp_" + "A1b2C3d4" * 5
    proc = paqad_cli("-c", "rag_embedding_base_url=https://me:s3cr3tpw@embed.invalid/v1", "-c", f"rag_shared_store=postgresql://bob:pgpw@db.invalid/x?sslkey={token}", "rag", "update", cwd=repo.root)
    crash = workspace.logs_dir(repo.root) / "crash.log"
    assert proc.returncode == 1 and proc.stderr.rstrip().endswith(f"(details in {crash})"), proc.stderr
    report = crash.read_text(encoding="utf-8")
    assert "s3cr3tpw" not in report and "pgpw" not in report and token not in report
    assert "rag_embedding_base_url=https://me:***@embed.invalid/v1" in report and "rag_shared_store=***" in report and "rag update" in report
    assert crash.stat().st_mode & 0o777 == 0o600


def test_crash_log_never_follows_a_symlink_and_never_lands_in_tmp(repo: Repo, paqad_cli, tmp_path: Path) -> None:
    """A symlink planted where the crash log goes is not followed (the file it names is left as it
    was); the report goes to a new 0600 file in the user's cache folder, and stderr says where."""
    from paqad import workspace

    _crashing_repo(repo, paqad_cli)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n", encoding="utf-8")
    logs = workspace.logs_dir(repo.root)
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "crash.log").unlink(missing_ok=True)
    (logs / "crash.log").symlink_to(victim)
    shared_tmp = tmp_path / "shared-tmp"
    shared_tmp.mkdir()
    cache = tmp_path / "cache"
    proc = paqad_cli("rag", "update", cwd=repo.root, env={"TMPDIR": str(shared_tmp), "PAQAD_CACHE_DIR": str(cache)})
    assert proc.returncode == 1
    assert victim.read_text(encoding="utf-8") == "untouched\n"
    [report] = list((cache / "crash").glob("paqad-crash-*.log"))
    assert proc.stderr.rstrip().endswith(f"(details in {report})"), proc.stderr
    assert report.stat().st_mode & 0o777 == 0o600 and "Traceback" in report.read_text(encoding="utf-8")
    assert not list(shared_tmp.iterdir())
