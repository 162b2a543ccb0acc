"""Fixtures that build real git repositories in temp folders, keep the developer's home and git
config out of every test and every subprocess it starts, and fail a test that writes inside the
source checkout."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testing import repos
from testing import serve as serve_testing
from testing.env import LEXICAL, paqad_exe, user_cache_home
from testing.repos import Repo

CHECKOUT = Path(__file__).resolve().parent.parent
# benchmarks/ is a package of the checkout (``python -m benchmarks NAME``); the tests of its pure parts
# import it as ``from benchmarks import score``. Appended, not prepended: an installed paqad (CI installs
# the wheel) still comes before the checkout's source.
if str(CHECKOUT) not in sys.path:
    sys.path.append(str(CHECKOUT))
# What a test run itself leaves in the checkout (bytecode, hypothesis' example database).
RUN_LITTER = ("__pycache__/", ".hypothesis/", ".pytest_cache/")

GITCONFIG = """\
[user]
\tname = paqad tests
\temail = tests@paqad.invalid
[commit]
\tgpgsign = false
[tag]
\tgpgsign = false
[init]
\tdefaultBranch = main
"""


#: Test tiers (issue 33): ``pytest -m core`` is the quick loop (rule-level tests in this process:
#: no installed CLI, no subprocess, no server); ``cli`` drives the installed CLI and real hooks in
#: real repositories; ``service`` starts resident ``paqad serve`` processes; ``postgres`` starts a
#: PostgreSQL server; ``hosts`` runs the real agent-host CLIs from npm. A file's tier is its
#: first match here; a file not listed is ``cli`` (the safe default for the quick loop).
TIERS: dict[str, frozenset[str]] = {
    "hosts": frozenset({"hosts_e2e_test.py", "claude_mcp_hook_e2e_test.py"}),
    "postgres": frozenset({"shared_store_test.py", "shared_index_test.py", "shared_index_trust_test.py"}),
    "service": frozenset({"serve_test.py", "serve_wire_test.py", "hook_clock_test.py", "doors_agree_test.py", "mcp_hook_test.py", "runtime_refused_test.py"}),
    "core": frozenset(
        {
            "architecture_test.py", "audit_test.py", "collect_test.py", "context_delivery_test.py", "depth_test.py", "docs_reference_test.py", "embed_remote_test.py",
            "embed_static_test.py", "embed_text_test.py", "floor_score_test.py", "gate_one_unknown_test.py", "interim_test.py",
            "parse_languages_test.py", "parse_prose_test.py", "parse_treesitter_test.py", "pointers_test.py", "query_derived_test.py",
            "query_variants_test.py", "ranking_test.py", "reembed_test.py", "refresh_context_test.py", "runner_test.py", "secrets_test.py",
            "tokenize_test.py", "transport_client_test.py", "localstate_test.py", "fit_gate_test.py", "outside_ruler_test.py",
            "docstring_ruler_test.py", "search_params_test.py", "ablate_test.py", "benchmarks_package_test.py",
            "issues_test.py", "outside_d4j_test.py", "history_test.py",
        }
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        tier = next((tier for tier, files in TIERS.items() if name in files), "cli")
        item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(scope="session", autouse=True)
def _user_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Per-developer state (``paqad.localstate``: settings, index, logs, the launcher) for the whole
    run in one temp folder, never the developer's. Session-wide, not per test: a module-scoped
    fixture builds its index before any test's own environment exists, and a test that points HOME
    elsewhere (for a host's own files) must still find the work tree's state. Each test's
    repositories have paths of their own, so their folders never meet."""
    folder = tmp_path_factory.mktemp("data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(folder))
        patch.delenv("PAQAD_DATA_DIR", raising=False)
        yield folder


@pytest.fixture(scope="session")
def _gitconfig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("git") / "gitconfig"
    path.write_text(GITCONFIG, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, _gitconfig: Path) -> None:
    """No user or system git config, no templates, no PAQAD_* from the developer's shell; a
    fresh HOME and user cache folder (XDG_CACHE_HOME); one git identity for every git the test or its subprocesses run (the global
    config is a file of ours: a commit made by a paqad subprocess or a hook needs it too)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # The user-level embedding cache of this test alone (the developer's may be elsewhere than
    # ~/.cache: XDG_CACHE_HOME or PAQAD_CACHE_DIR from the shell would otherwise reach it).
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache_home(home)))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(_gitconfig))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    for key in list(os.environ):
        if key.startswith("PAQAD_") or key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS"):
            monkeypatch.delenv(key)
    # Lexical only unless a test asks for the model: embedding every test repository with the
    # real model would take the suite from ~3 to ~10 minutes. The tests of the default itself
    # (and of every provider) say which provider they use, or drop this with `default_provider`.
    for key, value in LEXICAL.items():
        monkeypatch.setenv(key, value)
    # No resident service unless a test asks for one (`serving`): a service per prompt-hook test
    # would put a warm-up's CPU beside every timed hook on a 2-core machine. The service tests
    # switch it on; each test has its own runtime folder (`_runtime_dir`), emptied after it.
    monkeypatch.setenv("PAQAD_RAG_SERVE", "false")
    monkeypatch.setenv("PAQAD_RAG_SERVE_IDLE_TIMEOUT", "60")  # a backstop: no service outlives a stuck teardown long


@pytest.fixture(autouse=True)
def _runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private ``XDG_RUNTIME_DIR`` per test; every service started in it is stopped afterwards."""
    with serve_testing.runtime_dir() as folder:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
        yield folder


@pytest.fixture
def serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the doors use (and start) the resident service, as by default for users."""
    monkeypatch.setenv("PAQAD_RAG_SERVE", "true")


def _checkout_state() -> set[str] | None:
    """``git status`` of the source checkout, run litter left out; None outside a git checkout
    (an unpacked sdist), where there is nothing cheap to compare."""
    done = subprocess.run(
        ["git", "-C", str(CHECKOUT), "status", "--porcelain", "--ignored=matching", "--untracked-files=normal"],
        capture_output=True, text=True, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, check=False,
    )
    if done.returncode != 0:
        return None
    return {line for line in done.stdout.splitlines() if not any(litter in line for litter in RUN_LITTER)}


@pytest.fixture(autouse=True)
def _checkout_untouched() -> Iterator[None]:
    """Fail the test that created or changed a file in the source checkout (a test must write
    under tmp_path): compare the checkout's ``git status`` (ignored files included, so a stray
    ``.paqad/`` shows) before and after each test."""
    before = _checkout_state()
    yield
    after = _checkout_state()
    if before is not None and after is not None and after - before:
        pytest.fail(f"the test wrote inside the source checkout {CHECKOUT}: {sorted(after - before)}")


@pytest.fixture
def default_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run with the shipped default embedding provider (the local model), as a user would."""
    for key in LEXICAL:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty real git repository (no commits yet)."""
    return Repo.init(tmp_path / "repo")


@pytest.fixture
def shop_hooks() -> str | None:
    """The agents whose prompt hooks ``shop`` installs (``hooks install --agents``): none here; a
    test file that needs them overrides this fixture with its own returning, say, ``"claude"``."""
    return None


@pytest.fixture
def shop(repo: Repo, paqad_cli: Callable[..., subprocess.CompletedProcess[str]], shop_hooks: str | None) -> Repo:
    """The shop (``repos.make_shop``), committed and indexed by the installed CLI's ``rag init``
    (lexical, as ``_isolated_env`` pins), with ``shop_hooks``' hooks installed. A file that needs
    more set up overrides ``shop`` with a fixture of the same name that asks for this one."""
    repos.make_shop(repo)
    steps = [("rag", "init", "--provider", "none")] + ([("hooks", "install", "--agents", shop_hooks)] if shop_hooks else [])
    for args in steps:
        done = paqad_cli(*args, cwd=repo.root)
        assert done.returncode == 0, done.stderr
    return repo


@pytest.fixture
def detached(repo: Repo) -> Repo:
    """The shop with HEAD detached at its first commit (``repos.make_detached``)."""
    return repos.make_detached(repo)


@pytest.fixture
def submodule(repo: Repo, tmp_path: Path) -> Repo:
    """The shop with a submodule at vendor/invoices; the fixture is the submodule's work tree
    (``repos.make_submodule``), ``repo`` the superproject."""
    return repos.make_submodule(repo, tmp_path / "invoices-lib")


@pytest.fixture
def bare(repo: Repo, tmp_path: Path) -> Path:
    """A bare repository cloned from the shop (``repos.make_bare``)."""
    return repos.make_bare(repos.make_shop(repo), tmp_path / "shop.git")


@pytest.fixture
def paqad_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed ``paqad`` console script; returns the CompletedProcess."""
    exe = paqad_exe()

    def run(*args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, input=input, env=full_env, timeout=120, check=False)

    return run


# ---- remotes that would ask for credentials or never answer (git_test, drift_test) ----------


class _WantsCredentials(http.server.BaseHTTPRequestHandler):
    """What a private HTTPS host answers an anonymous client: 401 with a Basic challenge."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def private_remote() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WantsCredentials)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/shop.git"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_remote() -> Iterator[str]:
    """A server that accepts the connection and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/shop.git"
    sock.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say what the real-host tests covered: which CLIs (with their pinned versions) were driven,
    and that Kiro and Cursor, which have no npm CLI, are tested from their documented JSON only."""
    ran = [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, []) if getattr(r, "when", "") == "call" and "hosts_e2e_test.py::" in r.nodeid]
    if not ran:
        return
    from testing import host_clis

    shown = ", ".join(f"{host} {host_clis.version(host)}" for host in host_clis.PACKAGES)
    terminalreporter.write_line(f"hosts e2e: real CLIs from npm ({shown}) against a fake model on 127.0.0.1; Kiro and Cursor have no npm CLI: tested from their documented hook JSON only (paqad/hooks/hosts/recorded/)")


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory):
    """A throwaway PostgreSQL server on a Unix socket (``testing/postgres.py``), one per test module
    that asks for it (the team store and index-artifact tests)."""
    from testing import postgres

    srv = postgres.start(tmp_path_factory.mktemp("pg"))
    yield srv
    srv.remove()


@pytest.fixture
def dsn(pg_server):
    """``pg_server`` with paqad's team-store tables dropped: each artifact test starts from an empty store."""
    import psycopg

    from paqad.index.embedding import shared_store
    from paqad.index.team import artifacts

    with psycopg.connect(pg_server.dsn, autocommit=True) as con:
        for table in (artifacts.CHUNKS, artifacts.ARTIFACTS, shared_store.TABLE):
            con.execute(f"DROP TABLE IF EXISTS {table}")
    return pg_server.dsn
