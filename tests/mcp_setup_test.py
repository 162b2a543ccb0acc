"""Setting paqad up where the user is (issue 34, item 4): ``paqad mcp install`` registers the hosts
that are present, refuses without the MCP SDK, and writes entries that run the hooks' launcher;
every fix command paqad prints names the source this paqad was installed from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import origin
from paqad.hooks import mcp_install
from paqad.hooks.hosts import found, launcher
from testing.env import BIN
from testing.repos import Repo

#: An ``initialize`` request, as a host sends it first.
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
#: Runs paqad's CLI in this interpreter as if the MCP SDK were not installed (a None entry in
#: sys.modules makes ``import mcp`` fail and ``find_spec('mcp')`` answer None, as without it).
WITHOUT_SDK = "import sys; sys.modules['mcp'] = None; from paqad.cli.main import main; sys.exit(main(sys.argv[1:]))"


def bare_path() -> str:
    """PATH with this venv's scripts and the system's, and no agent host's CLI on it."""
    path = f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"
    clis = [cli for cli, _ in (*found.MARKS.values(), *mcp_install.MARKS.values())]
    assert not [c for c in clis if shutil.which(c, path=path)], "a host CLI is installed system-wide; this test needs a machine without"
    return path


def path_without_paqad() -> str:
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != BIN.resolve()]
    path = os.pathsep.join(keep)
    assert shutil.which("paqad", path=path) is None
    return path


def test_install_registers_only_the_hosts_present(repo: Repo, paqad_cli) -> None:
    """A repository with Cursor's folder on a machine with no host: Cursor only, the rest listed as skipped."""
    repo.write(".cursor/rules/style.mdc", "Use tabs.\n")
    done = paqad_cli("mcp", "install", "--json", cwd=repo.root, env={"PATH": bare_path()})
    assert done.returncode == 0, done.stderr
    actions = {h["host"]: h["action"] for h in json.loads(done.stdout)["hosts"]}
    assert actions.pop("cursor") == "installed" and set(actions.values()) == {"skipped"}
    assert (repo.root / ".cursor/mcp.json").is_file()
    assert not [h for h, cfg in mcp_install.HOSTS.items() if h != "cursor" and (repo.root / cfg.rel).exists()]

    # A host CLI on PATH makes it present too; --host registers a host that is not.
    cli_dir = repo.root.parent / "clis"
    cli_dir.mkdir()
    (cli_dir / "gemini").write_text("#!/bin/sh\nexit 0\n")
    (cli_dir / "gemini").chmod(0o755)
    more = paqad_cli("mcp", "install", "--json", cwd=repo.root, env={"PATH": f"{cli_dir}{os.pathsep}{bare_path()}"})
    assert {h["host"]: h["action"] for h in json.loads(more.stdout)["hosts"]}["gemini"] == "installed"
    named = paqad_cli("mcp", "install", "--host", "droid", "--json", cwd=repo.root, env={"PATH": bare_path()})
    assert [h["action"] for h in json.loads(named.stdout)["hosts"]] == ["installed"]


def test_install_with_no_host_anywhere_says_so_and_exits_1(repo: Repo, paqad_cli) -> None:
    done = paqad_cli("mcp", "install", cwd=repo.root, env={"PATH": bare_path()})
    assert done.returncode == 1 and "nothing registered; name one with --host" in done.stderr
    assert not [cfg.rel for cfg in mcp_install.HOSTS.values() if (repo.root / cfg.rel).exists()]


def test_install_without_the_sdk_refuses_in_one_line_and_writes_nothing(repo: Repo) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SDK, "mcp", "install", "--host", "claude,cursor"], cwd=repo.root, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "cannot start without the MCP SDK" in line and origin.pip_install("mcp") in line
    assert not (repo.root / ".mcp.json").exists() and not (repo.root / ".cursor").exists()


@pytest.mark.parametrize("host", ["claude", "cursor", "vscode", "gemini"])
def test_the_entries_run_the_hooks_launcher(repo: Repo, paqad_cli, host: str) -> None:
    """The entry, run as the host runs it (command + args; ``${workspaceFolder}`` filled in where
    the host does that) with no paqad on PATH, starts the server through the per-user launcher."""
    done = paqad_cli("mcp", "install", "--host", host, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert launcher.is_our_shim(launcher.shim_path())  # written by `mcp install`, for this paqad
    config = mcp_install.HOSTS[host]
    entry = json.loads((repo.root / config.rel).read_text())[config.key]["paqad"]
    argv = [entry["command"], *(a.replace("${workspaceFolder}", str(repo.root)) for a in entry["args"])]
    assert str(Path.home()) not in json.dumps(entry) and sys.executable not in json.dumps(entry)  # committed: no machine path
    env = {**os.environ, "PATH": path_without_paqad()}
    served = subprocess.run(argv, cwd=repo.root, input=json.dumps(HELLO) + "\n", capture_output=True, text=True, env=env, timeout=60, check=False)
    reply = json.loads(served.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "paqad", served.stderr


def shadow_install(tmp_path: Path, direct_url: dict | None) -> Path:
    """A folder for PYTHONPATH holding a ``paqad`` dist-info with this paqad's metadata and the given
    ``direct_url.json``: importlib.metadata finds it before the real one, as if paqad had come from there."""
    real = Path(str(origin.importlib.metadata.distribution("paqad")._path))  # type: ignore[attr-defined]
    folder = tmp_path / "shadow"
    info = folder / real.name
    info.mkdir(parents=True)
    shutil.copy(real / "METADATA", info / "METADATA")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return folder


#: direct_url.json (None: none, as from an index) -> the requirement for the mcp extra, and for a reinstall.
SOURCES = {
    "git": (
        {"url": "https://git.example.org/team/paqad.git", "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567", "requested_revision": "main"}},
        "'paqad[mcp] @ git+https://git.example.org/team/paqad.git@0123456789abcdef0123456789abcdef01234567'",
        "'paqad @ git+https://git.example.org/team/paqad.git@0123456789abcdef0123456789abcdef01234567'",
    ),
    "folder": ({"url": "file:///src/my%20paqad", "dir_info": {}}, "'/src/my paqad[mcp]'", "'/src/my paqad'"),
    "editable": ({"url": "file:///src/paqad", "dir_info": {"editable": True}}, "-e '/src/paqad[mcp]'", "-e /src/paqad"),
    "wheel": ({"url": "file:///wheels/paqad-0.1.0-py3-none-any.whl", "archive_info": {}}, "'paqad[mcp] @ file:///wheels/paqad-0.1.0-py3-none-any.whl'", "'paqad @ file:///wheels/paqad-0.1.0-py3-none-any.whl'"),
    "index": (None, "'paqad[mcp]'", "paqad"),
}


@pytest.mark.parametrize("kind", list(SOURCES))
def test_every_fix_command_names_the_install_source(repo: Repo, tmp_path: Path, kind: str) -> None:
    direct_url, spec, plain = SOURCES[kind]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(shadow_install(tmp_path, direct_url)), os.environ.get("PYTHONPATH")) if p)}
    expected = f"{sys.executable} -m pip install {spec}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", WITHOUT_SDK, *args], cwd=repo.root, capture_output=True, text=True, env=env, timeout=60, check=False)

    serve = run("mcp", "--root", str(repo.root))
    install = run("mcp", "install", "--host", "claude")
    assert serve.returncode == 2 and expected in serve.stderr, serve.stderr
    assert install.returncode == 1 and expected in install.stderr, install.stderr
    assert "pip install 'paqad[" not in (serve.stderr + install.stderr).replace(f"install {spec}", "")
    damaged = subprocess.run(
        [sys.executable, "-c", "from paqad.embed.files import ShippedFile; ShippedFile('paqad.embed', 'data/all-MiniLM-L6-v2/tokenizer.json', '0' * 64).locate()"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60, check=False,
    )
    assert f"{sys.executable} -m pip install --force-reinstall {plain}" in damaged.stderr, damaged.stderr


def test_an_older_paqads_path_entry_is_rewritten_to_the_launcher(repo: Repo, paqad_cli) -> None:
    """Entries an older paqad wrote (``paqad`` from PATH) become the launcher's, in JSON and in
    Codex's TOML (the block replaced where it was, the user's settings around it untouched)."""
    user = '# mine\nmodel = "o3"\n\n[mcp_servers.paqad]\ncommand = "paqad"\nargs = ["mcp"]\n\n[mcp_servers.docs]\ncommand = "npx"\n'
    repo.write(".codex/config.toml", user)
    repo.write(".cursor/mcp.json", json.dumps({"mcpServers": {"paqad": {"type": "stdio", "command": "paqad", "args": ["mcp", "--root", "${workspaceFolder}"]}}}))
    done = paqad_cli("mcp", "install", "--host", "codex,cursor", "--json", cwd=repo.root)
    assert [h["action"] for h in json.loads(done.stdout)["hosts"]] == ["installed", "installed"], done.stdout
    import tomllib

    toml = (repo.root / ".codex/config.toml").read_text()
    assert toml.startswith('# mine\nmodel = "o3"\n') and tomllib.loads(toml)["mcp_servers"] == {"docs": {"command": "npx"}, "paqad": mcp_install.HOSTS["codex"].entry}
    assert json.loads((repo.root / ".cursor/mcp.json").read_text())["mcpServers"]["paqad"] == mcp_install.HOSTS["cursor"].entry
    gone = paqad_cli("mcp", "uninstall", "--host", "codex", cwd=repo.root)
    assert gone.returncode == 0 and (repo.root / ".codex/config.toml").read_text() == user  # restored byte for byte
