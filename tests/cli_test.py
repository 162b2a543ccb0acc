"""End to end through the installed ``paqad`` console script, in real git repositories."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from paqad import workspace
from paqad.cli.main import cli
from testing.repos import make_shop


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        path = (*prefix, name)
        out.append(path)
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, path))
    return out


ALL_COMMANDS = _commands(cli)


def test_full_session(repo, paqad_cli):
    make_shop(repo)
    init = paqad_cli("rag", "init", "--json", cwd=repo.root)
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout)["files_indexed"] == 3

    found = paqad_cli("rag", "search", "where is the session cookie signed", "--json", cwd=repo.root / "shop")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["answered"] and data["results"][0]["qualified_name"] == "sign_cookie"

    text = paqad_cli("rag", "search", "where is the session cookie signed", cwd=repo.root)
    assert "shop/sessions.py:7-10" in text.stdout

    probe = paqad_cli("rag", "probe", "kubernetes helm chart", "--json", cwd=repo.root)
    assert probe.returncode == 0 and json.loads(probe.stdout)["diagnosis"] is None

    silent = json.loads(paqad_cli("rag", "search", "kubernetes helm chart", "--json", cwd=repo.root).stdout)
    assert silent["results"] == [] and silent["diagnosis"]["reason"] == "no_query_term_in_index"

    status = json.loads(paqad_cli("rag", "status", "--json", cwd=repo.root).stdout)
    assert status["rag_enabled"] is True and status["index"]["units"] > 5

    repo.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier for the address.'''\n    return address\n")
    upd = json.loads(paqad_cli("rag", "update", "--json", cwd=repo.root).stdout)
    assert (upd["files_changed"], upd["files_unchanged"]) == (1, 3)
    assert "ship_parcel" in paqad_cli("rag", "search", "hand the parcel to the courier", cwd=repo.root).stdout

    assert json.loads(paqad_cli("rag", "rebuild", "--json", cwd=repo.root).stdout)["files_indexed"] == 4

    cleared = paqad_cli("rag", "clear", "--yes", cwd=repo.root)
    assert cleared.returncode == 0 and not (workspace.vectors_dir(repo.root)).exists()
    assert paqad_cli("config", "get", "rag_enabled", cwd=repo.root).stdout.strip() == "false"
    missing = paqad_cli("rag", "search", "charge", cwd=repo.root)
    assert missing.returncode == 1 and "paqad rag init" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


def test_explain(repo, paqad_cli):
    make_shop(repo)
    repo.write(".env", "SECRET=" + "x" * 80)
    repo.write("node_modules/x/index.js", "module.exports = function () { return 'a long enough line of javascript'; };\n")
    kept = json.loads(paqad_cli("rag", "explain", "shop/payments.py", "--json", cwd=repo.root).stdout)
    assert kept["kept"] and kept["filter"] is None
    env = paqad_cli("rag", "explain", ".env", cwd=repo.root)
    assert env.returncode == 0 and "not indexed" in env.stdout
    nm = json.loads(paqad_cli("rag", "explain", "node_modules/x/index.js", "--json", cwd=repo.root).stdout)
    assert nm["filter"] == "ignore"
    outside = paqad_cli("rag", "explain", "../../etc/passwd", cwd=repo.root)
    assert outside.returncode == 2 and "not inside" in outside.stderr


def test_config_commands_and_errors(repo, paqad_cli):
    make_shop(repo)
    assert paqad_cli("config", "set", "rag_top_n", "7", cwd=repo.root).returncode == 0
    listed = {row["key"]: row for row in json.loads(paqad_cli("config", "list", "--json", cwd=repo.root).stdout)}
    assert listed["rag_top_n"]["value"] == 7 and listed["rag_top_n"]["source"] == str(workspace.local_config_path(repo.root))
    env = paqad_cli("config", "get", "rag_top_n", "--json", cwd=repo.root, env={"PAQAD_RAG_TOP_N": "9"})
    assert json.loads(env.stdout) == {"key": "rag_top_n", "value": 9, "source": "env PAQAD_RAG_TOP_N"}
    flag = paqad_cli("-c", "rag_top_n=11", "config", "get", "rag_top_n", cwd=repo.root)
    assert flag.stdout.strip() == "11"
    bad = paqad_cli("config", "set", "rag_top_n", "zero", cwd=repo.root)
    assert bad.returncode == 2 and "rag_top_n" in bad.stderr and "an integer" in bad.stderr
    unknown = paqad_cli("config", "get", "rag_nope", cwd=repo.root)
    assert unknown.returncode == 2 and "unknown setting" in unknown.stderr
    repo.write_local("rag_top_n: [\n")
    broken = paqad_cli("rag", "status", cwd=repo.root)
    assert broken.returncode == 2 and str(workspace.local_config_path(repo.root)) in broken.stderr


def test_usage_errors_exit_2(repo, paqad_cli):
    make_shop(repo)
    assert paqad_cli("rag", "clear", cwd=repo.root).returncode == 2
    assert paqad_cli("rag", "search", cwd=repo.root).returncode == 2
    assert paqad_cli("rag", "search", "   ", cwd=repo.root).returncode == 2
    assert paqad_cli("rag", "nosuch", cwd=repo.root).returncode == 2


def test_outside_git_and_alias(tmp_path, paqad_cli):
    (tmp_path / "lib.py").write_text("def parse_invoice_total(text):\n    '''Read the invoice total from the text.'''\n    return text\n")
    alias = shutil.which("paqad-ai", path=str(Path(sys.executable).parent))
    assert alias
    proc = subprocess.run([alias, "rag", "init"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = paqad_cli("rag", "search", "read the invoice total", "--json", cwd=tmp_path)
    assert json.loads(out.stdout)["results"][0]["name"] == "parse_invoice_total"


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=[" ".join(p) for p in ALL_COMMANDS])
def test_every_command_has_help_with_example(path, paqad_cli, tmp_path):
    """The installed command's --help; docs/reference/cli.md is generated from the same text
    (tests/docs_reference_test.py holds the page to it, and every setting to docs/reference/settings.md)."""
    proc = paqad_cli(*path, "--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert "Example:" in proc.stdout


def test_a_mistyped_agent_host_says_which_one_was_meant(repo, paqad_cli):
    make_shop(repo)
    done = paqad_cli("hooks", "install", "--agents", "claud", cwd=repo.root)
    assert done.returncode == 2 and "unknown agent 'claud' (did you mean claude?)" in done.stderr, done.stderr
    assert not (repo.root / ".claude").exists()
