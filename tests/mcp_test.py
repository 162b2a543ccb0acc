"""``paqad mcp``: end to end with the official SDK's own stdio client, and ``paqad mcp install``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import jsonschema
import pytest

from paqad import origin, workspace
from paqad.hooks.hosts import base, launcher
from testing.agents import call_all, text_of
from testing.env import BIN, paqad_exe
from testing.repos import Repo, make_shop

EXE = paqad_exe()
TOOLS = {"search", "research", "neighbors", "open", "describe_pending", "describe_put", "stats"}


def test_tools_answer_over_stdio_and_bad_calls_are_tool_errors(shop: Repo) -> None:
    calls = [
        ("search", {"query": "retry a card charge with exponential backoff", "top_n": 3}),
        ("open", {"path": "shop/sessions.py", "start_line": 7, "max_lines": 4}),
        ("stats", {}),
        ("search", {"query": 42}),
        ("search", {"query": "x", "top_n": 0}),
        ("search", {"query": "x", "surprise": True}),
        ("open", {"path": "../../etc/passwd"}),
        ("open", {"path": ".paqad/vectors/CURRENT"}),
        ("launch", {}),
        ("research", {"query": "retry charge card processor transaction id", "top_n": 1}),
        ("search", {"query": "sign the session cookie"}),
    ]
    tools, results = call_all(shop.root, calls)
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["additionalProperties"] is False and tool.description
    search_schema = next(t for t in tools if t.name == "search").input_schema
    assert search_schema["required"] == ["query"] and search_schema["properties"]["top_n"]["maximum"] == 200

    found, span, stats, *bad, research, last = results
    assert found.is_error is False
    assert found.structured_content["results"][0]["id"] == "shop/payments.py::retry_charge"
    assert "## shop/payments.py:" in text_of(found) and "retry_charge" in text_of(found)
    assert span.structured_content["text"].startswith("def sign_cookie(") and span.structured_content["end_line"] == 10
    assert "def sign_cookie(" in text_of(span) and text_of(span).startswith("shop/sessions.py:7-10 of ")
    assert stats.structured_content["protocol_version"] == 1 and stats.structured_content["index"]["built"] is True

    codes = [text_of(r).split(":")[0] for r in bad]
    assert all(r.is_error for r in bad)
    assert codes == ["bad_params", "bad_params", "bad_params", "forbidden", "forbidden", "unknown_action"]
    assert "query must be a string" in text_of(bad[0])

    assert research.is_error is False
    assert any(r["id"] == "shop/payments.py::retry_charge" and r["new_terms"] for r in research.structured_content["related"])
    assert last.structured_content["results"][0]["id"] == "shop/sessions.py::sign_cookie"  # the server outlived the bad calls


def test_tools_declare_annotations_and_output_schemas_that_replies_meet(shop: Repo) -> None:
    calls = [
        ("search", {"query": "retry a card charge with exponential backoff"}),
        ("search", {"query": "kubernetes autoscaler pods"}),
        ("research", {"query": "retry charge card processor transaction id"}),
        ("open", {"unit_id": "shop/sessions.py::sign_cookie"}),
        ("neighbors", {"unit_id": "shop/payments.py::retry_charge"}),
        ("describe_pending", {"limit": 2}),
        ("stats", {}),
    ]
    tools, results = call_all(shop.root, calls)
    by_name = {t.name: t for t in tools}
    for name, tool in by_name.items():
        assert tool.output_schema is not None and tool.annotations is not None and tool.annotations.title, name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.annotations.open_world_hint is False and tool.annotations.destructive_hint is False
        assert tool.annotations.read_only_hint is (name != "describe_put"), name
    for (name, _), result in zip(calls, results):
        assert result.is_error is False, text_of(result)
        jsonschema.validate(result.structured_content, by_name[name].output_schema)
    refused = results[1]
    assert refused.structured_content["answered"] is False and refused.structured_content["results"] == []
    assert refused.structured_content["not_answered"]["reason"] and "hint:" in text_of(refused)


def test_search_replies_carry_each_source_once_and_nothing_twice(shop: Repo) -> None:
    query = "retry a card charge with exponential backoff"
    _, (found, research) = call_all(shop.root, [("search", {"query": query, "top_n": 3}), ("research", {"query": query, "top_n": 3})])
    full = json.loads(subprocess.run([EXE, "rag", "search", query, "--json", "--top-n", "3"], cwd=shop.root, capture_output=True, text=True, check=True).stdout)
    compact = found.structured_content
    assert [r["id"] for r in compact["results"]] == [r["id"] for r in full["results"]]
    assert [r["score"] for r in compact["results"]] == [r["score"] for r in full["results"]]
    text = text_of(found)
    for mine, theirs in zip(compact["results"], full["results"]):
        assert set(mine) <= {"id", "lines", "kind", "score", "source", "truncated", "low_confidence"}
        assert mine["source"] == theirs["source"] and mine["lines"] == [theirs["start_line"], theirs["end_line"]]
        assert text.count(theirs["source"].rstrip("\n")) == 1  # the source once in the text
        if theirs["docstring"]:
            assert json.dumps(compact).count(json.dumps(theirs["docstring"].split("\n")[0])[1:-1]) == 1  # inside the source only
    sources = sum(len(r["source"]) for r in compact["results"])
    overhead = len(json.dumps(compact, separators=(",", ":"))) - sources - len(json.dumps(compact.pop("freshness"), separators=(",", ":")))  # once per reply
    assert overhead < 200 + 120 * len(compact["results"]) and len(text) - sources < 200 + 160 * len(compact["results"])
    assert len(json.dumps(full)) > 1.5 * len(json.dumps(compact))
    assert research.structured_content["results"] == compact["results"] and "related" in research.structured_content


# ---- the client goes away -------------------------------------------------------------------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "sign the session cookie"}}}


def _started(shop: Repo) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([EXE, "mcp", "--root", str(shop.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode() + b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "paqad"
    return proc


@pytest.mark.parametrize("how", ["eof", "stdout_closed", "sigterm", "sighup", "sigint"])
def test_a_client_hanging_up_ends_the_server_with_0_and_no_crash_log(shop: Repo, how: str) -> None:
    proc = _started(shop)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    if how == "stdout_closed":  # the host died: the next reply hits a closed pipe
        proc.stdout.close()
    proc.stdin.write((json.dumps(CALL) + "\n").encode())
    proc.stdin.flush()
    if how.startswith("sig"):
        if how != "sigint":
            time.sleep(0.3)  # mid-request or idle: either way the session ends at once
        proc.send_signal(getattr(signal, how.upper()))
    else:
        time.sleep(0.5)
        proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    err = proc.stderr.read().decode()
    assert "unexpected" not in err and "Traceback" not in err, err
    assert not (workspace.logs_dir(shop.root) / "crash.log").exists()


def test_without_the_sdk_paqad_mcp_says_what_to_install(shop: Repo) -> None:
    # A None entry in sys.modules makes `import mcp` raise ImportError, as on a machine without it.
    code = "import sys; sys.modules['mcp'] = None; from paqad.cli.main import main; sys.exit(main(['mcp', '--root', sys.argv[1]]))"
    done = subprocess.run([sys.executable, "-c", code, str(shop.root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert origin.pip_install("mcp") in done.stderr  # this paqad's own install source, not a PyPI name


# ---- install ------------------------------------------------------------------------------

USER_JSON = {
    ".mcp.json": {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--ro"]}, "zeta": {"command": "z"}}, "note": 1},
    ".cursor/mcp.json": {"mcpServers": {"db": {"url": "http://localhost:9000/mcp"}}},
    ".vscode/mcp.json": {"inputs": [{"id": "tok", "type": "promptString"}], "servers": {"other": {"type": "stdio", "command": "x"}}},
}
USER_TOML = '# my codex settings\nmodel = "o3"  # the model\n\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n'
KEYS = {".mcp.json": "mcpServers", ".cursor/mcp.json": "mcpServers", ".vscode/mcp.json": "servers"}


def test_install_merges_keeps_user_entries_is_idempotent_and_uninstall_restores(repo: Repo, paqad_cli) -> None:
    originals = {}
    for rel, data in USER_JSON.items():
        originals[rel] = repo.write(rel, json.dumps(data)).read_bytes()
    originals[".codex/config.toml"] = repo.write(".codex/config.toml", USER_TOML).read_bytes()

    four = "claude,codex,cursor,vscode"
    done = paqad_cli("mcp", "install", "--host", four, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert {h["host"]: h["action"] for h in json.loads(done.stdout)["hosts"]} == dict.fromkeys(("claude", "codex", "cursor", "vscode"), "installed")
    assert json.loads((repo.root / ".mcp.json").read_text())["mcpServers"]["paqad"]["alwaysLoad"] is True  # never deferred behind tool search

    for rel, data in USER_JSON.items():
        merged = json.loads((repo.root / rel).read_text())
        servers = merged[KEYS[rel]]
        assert list(servers)[:-1] == list(data[KEYS[rel]]) and list(servers)[-1] == "paqad"
        assert {k: v for k, v in servers.items() if k != "paqad"} == data[KEYS[rel]]
        assert list(merged) == list(data) and all(merged[k] == v for k, v in data.items() if k != KEYS[rel])
        assert servers["paqad"]["command"] == "sh" and launcher.SERVE in servers["paqad"]["args"][1]  # the hooks' launcher
    assert json.loads((repo.root / ".vscode/mcp.json").read_text())["servers"]["paqad"]["args"][2:] == ["paqad-mcp", "--root", "${workspaceFolder}"]
    toml_text = (repo.root / ".codex/config.toml").read_text()
    assert toml_text.startswith(USER_TOML)  # comments and order untouched: appended to, never rewritten
    parsed = tomllib.loads(toml_text)
    assert parsed["mcp_servers"]["paqad"] == base.MCP_PLAIN and parsed["mcp_servers"]["docs"]["args"] == ["-y", "docs-mcp"]

    snapshot = {rel: (repo.root / rel).read_bytes() for rel in originals}
    again = paqad_cli("mcp", "install", "--host", four, "--json", cwd=repo.root)
    assert {h["action"] for h in json.loads(again.stdout)["hosts"]} == {"unchanged"}
    assert {rel: (repo.root / rel).read_bytes() for rel in originals} == snapshot

    gone = paqad_cli("mcp", "uninstall", "--host", four, cwd=repo.root)
    assert gone.returncode == 0, gone.stderr
    assert {rel: (repo.root / rel).read_bytes() for rel in originals} == originals


def test_install_from_nothing_and_uninstall_cleans_up(repo: Repo, paqad_cli) -> None:
    done = paqad_cli("mcp", "install", "--host", "claude,cursor", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert json.loads((repo.root / ".mcp.json").read_text()) == {"mcpServers": {"paqad": {"type": "stdio", "command": "sh", "args": ["-c", launcher.SERVE], "alwaysLoad": True}}}
    assert (repo.root / ".cursor/mcp.json").is_file() and not (repo.root / ".vscode").exists()
    assert paqad_cli("mcp", "uninstall", "--host", "claude,cursor", cwd=repo.root).returncode == 0
    assert not (repo.root / ".mcp.json").exists() and not (repo.root / ".cursor").exists()


def test_malformed_files_are_reported_and_left_untouched(repo: Repo, paqad_cli) -> None:
    bad = {
        ".mcp.json": "{ // comments are not JSON\n}",
        ".vscode/mcp.json": '{"servers": ["not", "a", "map"]}',
        ".codex/config.toml": 'mcp_servers = { docs = { command = "npx" } }\n',
        ".cursor/mcp.json": "[]",
    }
    for rel, text in bad.items():
        repo.write(rel, text)
    done = paqad_cli("mcp", "install", "--host", ",".join(("claude", "vscode", "codex", "cursor")), "--json", cwd=repo.root)
    assert done.returncode == 0  # --json reports; the plain form exits 1 (below)
    states = {h["host"]: h for h in json.loads(done.stdout)["hosts"]}
    assert {h["action"] for h in states.values()} == {"error"}
    assert "not valid JSON" in states["claude"]["note"] and "not a table of servers" in states["vscode"]["note"]
    assert "add it by hand" in states["codex"]["note"]
    assert {rel: (repo.root / rel).read_text() for rel in bad} == bad
    plain = paqad_cli("mcp", "install", "--host", "claude", cwd=repo.root)
    assert plain.returncode == 1 and "error" in plain.stdout


def test_a_different_paqad_entry_is_the_users_and_is_kept(repo: Repo, paqad_cli) -> None:
    mine = {"mcpServers": {"paqad": {"command": "/opt/paqad/bin/paqad", "args": ["mcp"]}}}
    repo.write(".mcp.json", json.dumps(mine))
    done = paqad_cli("mcp", "install", "--host", "claude", "--json", cwd=repo.root)
    (state,) = json.loads(done.stdout)["hosts"]
    assert state["action"] == "kept" and "differs" in state["note"]
    assert json.loads((repo.root / ".mcp.json").read_text()) == mine


def test_unknown_host_is_a_usage_error(repo: Repo, paqad_cli) -> None:
    done = paqad_cli("mcp", "install", "--host", "emacs", cwd=repo.root)
    assert done.returncode == 2 and "unknown host 'emacs'" in done.stderr


def on_path() -> str:
    """PATH with this venv's scripts first: the paqad the MCP entries start is this one."""
    return f"{BIN}{os.pathsep}{os.environ['PATH']}"


def test_hooks_install_offers_mcp(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    done = paqad_cli("hooks", "install", "--agents", "claude,gemini", "--mcp", "--json", cwd=repo.root, env={"PATH": on_path()})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(m["host"], m["action"]) for m in data["mcp"]] == [("claude", "installed"), ("gemini", "installed")]
    assert json.loads((repo.root / ".gemini/settings.json").read_text())["mcpServers"]["paqad"] == base.MCP_PLAIN
    assert "paqad" in json.loads((repo.root / ".mcp.json").read_text())["mcpServers"]
    without = paqad_cli("hooks", "install", "--agents", "claude", "--json", cwd=repo.root)
    assert "mcp" not in json.loads(without.stdout)


def test_an_older_paqads_entry_is_brought_up_to_date(repo: Repo, paqad_cli) -> None:
    repo.write(".mcp.json", json.dumps({"mcpServers": {"paqad": {"type": "stdio", "command": "paqad", "args": ["mcp"]}}}))
    done = paqad_cli("mcp", "install", "--host", "claude", "--json", cwd=repo.root)
    assert [h["action"] for h in json.loads(done.stdout)["hosts"]] == ["installed"]
    assert json.loads((repo.root / ".mcp.json").read_text())["mcpServers"]["paqad"]["alwaysLoad"] is True


@pytest.fixture(scope="module")
def python_without_sdk(tmp_path_factory) -> Path:
    """A real second interpreter that cannot import the MCP SDK: a fresh venv with nothing in it."""
    folder = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import mcp"], capture_output=True, check=False).returncode != 0
    return python


def paqad_on_path(folder: Path, python: Path) -> str:
    """PATH whose first ``paqad`` is a console script started by ``python`` (as pip writes one)."""
    script = folder / "paqad"
    script.write_text(f"#!{python}\nimport sys\nsys.exit(0)\n", encoding="utf-8")
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_hooks_install_registers_mcp_through_its_launcher_whatever_paqad_is_on_path(repo: Repo, paqad_cli, python_without_sdk, tmp_path) -> None:
    """The entry runs the per-user launcher `hooks install` writes for this paqad (which has the
    SDK) before any paqad on PATH: a paqad there without the SDK, or none at all, does not matter."""
    path = paqad_on_path(tmp_path, python_without_sdk)
    done = paqad_cli("hooks", "install", "--agents", "claude", "--mcp", "--json", cwd=repo.root, env={"PATH": path})
    assert [m["action"] for m in json.loads(done.stdout)["mcp"]] == ["installed"]
    bare = tmp_path / "empty"
    bare.mkdir()
    nowhere = paqad_cli("hooks", "install", "--agents", "claude", "--mcp", "--json", cwd=repo.root, env={"PATH": f"{bare}{os.pathsep}/usr/bin:/bin"})
    assert [m["action"] for m in json.loads(nowhere.stdout)["mcp"]] == ["unchanged"]


def test_doctor_flags_a_registered_server_that_cannot_start(repo: Repo, paqad_cli, python_without_sdk, tmp_path) -> None:
    make_shop(repo)
    assert paqad_cli("hooks", "install", "--agents", "claude", "--mcp", cwd=repo.root, env={"PATH": on_path()}).returncode == 0
    clean = json.loads(paqad_cli("doctor", "--json", cwd=repo.root, env={"PATH": on_path()}).stdout)["findings"]
    assert [f["level"] for f in clean if f["host"] == "mcp"] == ["ok"]
    # The launcher's interpreter no longer runs paqad, so the entry falls back to the paqad on PATH, whose interpreter lacks the SDK.
    launcher.write_shim(str(python_without_sdk))
    try:
        broken = json.loads(paqad_cli("doctor", "--json", cwd=repo.root, env={"PATH": paqad_on_path(tmp_path, python_without_sdk)}).stdout)["findings"]
    finally:
        launcher.write_shim()
    [finding] = [f for f in broken if f["host"] == "mcp"]
    assert finding["level"] == "error" and "lacks the MCP SDK" in finding["what"] and f"the paqad on PATH ({tmp_path / 'paqad'})" in finding["what"]
    assert finding["fix"] == f"{python_without_sdk} -m pip install 'mcp<3,>=2.3'"
