"""``paqad mcp install``: register ``paqad mcp`` in each agent host's project MCP config.

| host | file | where the entry goes |
|---|---|---|
| Claude Code | ``.mcp.json`` | ``mcpServers.paqad`` |
| Codex | ``.codex/config.toml`` | ``[mcp_servers.paqad]`` (Codex reads it for trusted projects) |
| Cursor | ``.cursor/mcp.json`` | ``mcpServers.paqad`` |
| VS Code | ``.vscode/mcp.json`` | ``servers.paqad`` |

Merging rules: the user's entries are kept in their order (JSON files are re-indented, their
content is not changed; the TOML file is appended to, never rewritten); an existing ``paqad``
entry that differs from ours is the user's choice and is left alone (``kept``); running it again
changes nothing; a file that cannot be parsed (JSON with comments included) is reported and left
untouched. The first change keeps the original bytes (``paqad.hooks.hosts.base.edit_file``), so
``paqad mcp uninstall`` restores the file exactly when nobody edited it since.

The files and entries are declared by each host module (``MCP``, :mod:`paqad.hooks.hosts.base`).
Every entry runs what the hook commands run: ``sh -c`` with paqad's per-user launcher first, then
``paqad`` on PATH (``launcher.SERVE``; the file is committed, so it names no machine path), and
``install`` writes that launcher for this interpreter, as ``paqad hooks install`` does. Cursor
and VS Code interpolate ``${workspaceFolder}``, so their entry names the repository explicitly;
the others start project servers in the project, where ``paqad mcp`` finds the repository itself.
An older paqad's entry (``paqad`` from PATH) is rewritten.

Without ``--host``, only the hosts that are present are registered: the repository shows the
host (its ``detect``, or the MCP config file is already there), or this machine has it (its CLI
on PATH or its folder in the home directory, :mod:`paqad.hooks.hosts.found`). ``--host all``
registers every one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paqad import origin, workspace
from paqad.errors import ConfigError, UsageError
from paqad.hooks import hosts
from paqad.hooks.hosts import base, found, launcher

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

SERVER = base.MCP_SERVER

class MergeError(ConfigError):
    """The host's file cannot be merged into safely; it is left untouched."""


# The one host registry (paqad.hooks.hosts) says which project MCP configs each host reads.
HOSTS: dict[str, base.McpConfig] = {config.name: config for host in hosts.HOSTS.values() for config in host.MCP}
# `paqad hooks install --mcp`: the hook hosts that also read a project MCP config.
FROM_HOOK_HOSTS = {host.NAME: config.name for host in hosts.HOSTS.values() for config in host.MCP}


@dataclass
class InstallState:
    host: str
    path: str
    action: str  # installed | unchanged | kept | skipped | error | removed | restored
    note: str | None = None

    def to_dict(self) -> JSONObject:
        return asdict(self)


HAS_SDK = "import importlib.util, sys; sys.exit(importlib.util.find_spec('mcp') is None)"


def sdk_requirement() -> str:
    """The MCP SDK requirement of paqad's ``mcp`` extra (``mcp<3,>=2.3``)."""
    return next(iter(origin.extra_requirements("mcp")), "mcp>=2.3,<3")


def cannot_start(path_env: str | None = None) -> str | None:
    """Why the registered ``paqad mcp`` could not start, or None when it can.

    This interpreter must import the MCP SDK (``paqad mcp install`` points the launcher at it), and
    so must the one the entries start: the per-user launcher's interpreter, or, when it has none
    that runs paqad, the one the ``paqad`` on PATH (``path_env``, default this process's) starts
    (its console script's ``#!`` line), which may be another installation. Each message ends with
    the fix, a command that works as printed (paqad's own install source, :mod:`paqad.origin`)."""
    if importlib.util.find_spec("mcp") is None:
        return f"not registered: `paqad mcp` cannot start without the MCP SDK ({sys.executable}); {origin.pip_install('mcp')}, then run this again"
    exe, how = launcher.resolve(path_env)
    if exe is None:
        return (
            f"not registered: the entry runs paqad's launcher ({launcher.SHIM_DISPLAY}), else paqad on PATH, and neither is there; "
            "paqad mcp install (it writes the launcher), then run this again"
        )
    python = exe if how == "shim" else script_python(exe)
    if python is None or _same_file(python, sys.executable):
        return None
    try:
        # -P and a neutral folder: a repository's importlib/ or mcp/ must not answer for the installed ones
        ok = subprocess.run([python, "-P", "-c", HAS_SDK], cwd=os.sep, capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        who = f"paqad's launcher ({launcher.shim_path()})" if how == "shim" else f"the paqad on PATH ({exe})"
        return f"not registered: {who} runs {python}, which lacks the MCP SDK; {origin.pip_command(sdk_requirement(), python=python)}, then run this again"
    return None


#: An MCP config name -> the host module that declares it.
OWNER = {config.name: host for host in hosts.HOSTS.values() for config in host.MCP}
#: Marks of a host on this machine beyond :data:`found.MARKS` (VS Code is no hook host of its own).
MARKS = {"vscode": ("code", ".vscode")}


def present(root: Path, name: str, home: Path | None = None, path_env: str | None = None) -> str | None:
    """How host ``name`` shows it is in use here (None: it does not): in the repository, or on this machine."""
    config, owner = HOSTS[name], OWNER[name]
    top = config.rel.split("/")[0]
    if (root / config.rel).exists() or ("/" in config.rel and (root / top).is_dir()):
        return f"{top} in the repository"
    if owner.detect(root):
        return f"the repository uses {owner.NAME}"
    cli, folder = MARKS.get(name) or found.MARKS.get(owner.NAME, ("", ""))
    if cli and shutil.which(cli, path=path_env):
        return f"`{cli}` on PATH"
    if folder and ((home or Path.home()) / folder).is_dir():
        return f"~/{folder}"
    return None


def script_python(exe: str) -> str | None:
    """The interpreter a console script names on its ``#!`` line (None: not a Python script)."""
    try:
        with open(exe, "rb") as handle:
            first = handle.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = shlex.split(first[2:])
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        words = words[1:]
    if not words or "python" not in os.path.basename(words[0]):
        return None
    return shutil.which(words[0]) or words[0]


def _same_file(a: str, b: str) -> bool:
    """The same interpreter path, symlinks not followed: a venv's ``python`` links to its base
    interpreter, which runs with other packages than the venv's."""
    return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def _old_core(host: base.McpConfig) -> JSONObject:
    """The command and arguments an older paqad wrote for this host (``paqad`` from PATH)."""
    return base.MCP_OLD_WORKSPACE if "${workspaceFolder}" in host.entry["args"] else base.MCP_OLD_PLAIN


def _older_entry(host: base.McpConfig, entry: object) -> bool:
    """An entry an older paqad wrote: ``paqad`` from PATH, or ours without the keys added since
    (such as ``alwaysLoad``); its other keys are ours."""
    if not isinstance(entry, dict) or entry == host.entry:
        return False
    rest = {k: v for k, v in entry.items() if k not in ("command", "args")}
    if any(host.entry.get(k) != v for k, v in rest.items()):
        return False
    core = {"command": entry.get("command"), "args": entry.get("args")}
    return core in (_old_core(host), {"command": host.entry["command"], "args": host.entry["args"]})


def host_names(value: str) -> list[str]:
    """Parse ``--host``: names separated by commas, or ``all``; an unknown name is a usage error."""
    names = [v.strip().lower() for v in value.split(",") if v.strip()]
    if names == ["all"]:
        return list(HOSTS)
    if not names:
        raise UsageError(f"--host: name a host; choose from {', '.join(HOSTS)}, all")
    unknown = [n for n in names if n not in HOSTS]
    if unknown:
        raise UsageError(f"--host: unknown host {unknown[0]!r}; choose from {', '.join(HOSTS)}, all")
    return list(dict.fromkeys(names))


def install(root: Path, name: str) -> InstallState:
    host = HOSTS[name]
    try:
        path = workspace.repo_file(root, host.rel)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        servers = _servers(host, old)
        if servers.get(SERVER) == host.entry:
            return InstallState(name, host.rel, "unchanged")
        older = SERVER in servers and _older_entry(host, servers[SERVER])
        if SERVER in servers and not older:
            return InstallState(name, host.rel, "kept", f"an entry named {SERVER!r} is already there and differs from paqad's; left as is")
        new = _add_toml(host, old, servers[SERVER] if older else None) if host.toml else _add_json(host, old)
        base.edit_file(root, f"mcp-{name}", host.rel, lambda _old: new)
    except (MergeError, OSError, UnicodeDecodeError, workspace.SymlinkRefused) as exc:
        return InstallState(name, host.rel, "error", str(exc))
    return InstallState(name, host.rel, "installed")


def uninstall(root: Path, name: str) -> InstallState:
    host = HOSTS[name]
    try:
        action = base.restore_file(root, f"mcp-{name}", host.rel, lambda text: _strip(host, text))
    except (OSError, UnicodeDecodeError) as exc:
        return InstallState(name, host.rel, "error", str(exc))
    return InstallState(name, host.rel, action)


def _servers(host: base.McpConfig, text: str | None) -> dict[str, Any]:
    """The host's server map from the file's text ({} when absent); MergeError when unreadable."""
    data = _parse(host, text)
    servers = data.get(host.key, {})
    if not isinstance(servers, dict):
        raise MergeError(f"{host.rel}: {host.key!r} is not a table of servers; fix it, then run `paqad mcp install` again")
    return servers


def _parse(host: base.McpConfig, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = tomllib.loads(text) if host.toml else json.loads(text)
    except ValueError as exc:
        kind = "TOML" if host.toml else "JSON (comments are not supported)"
        raise MergeError(f"{host.rel}: not valid {kind} ({exc}); fix it, then run `paqad mcp install` again") from None
    if not isinstance(data, dict):
        raise MergeError(f"{host.rel}: expected an object at the top level")
    return data


def _add_json(host: base.McpConfig, old: str | None) -> str:
    data = _parse(host, old)
    data.setdefault(host.key, {})[SERVER] = host.entry  # new, or an older paqad's entry brought up to date
    return base.dump_json(data)


def _toml_block(host: base.McpConfig, entry: dict[str, Any] | None = None) -> str:
    lines = [f"[{host.key}.{SERVER}]"] + [f"{k} = {json.dumps(v)}" for k, v in (entry or host.entry).items()]
    return "\n".join(lines) + "\n"


def _add_toml(host: base.McpConfig, old: str | None, older: dict[str, Any] | None = None) -> str:
    """Append ``[mcp_servers.paqad]`` (or put it where an older paqad's block is, written as paqad
    writes it); checked by parsing the result, so a file where this would change anything else
    (``mcp_servers`` as an inline table, say) is refused instead."""
    text = old or ""
    stale = _toml_block(host, older) if older is not None else None
    if stale is not None and stale in text:
        text = text.replace(stale, "", 1)
        old = text
    elif stale is not None:
        raise MergeError(f"{host.rel}: an older paqad entry is there, not as paqad wrote it; replace it by hand with:\n{_toml_block(host)}")
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    new = text + sep + _toml_block(host)
    before = _parse(host, old)
    before.get(host.key, {}).pop(SERVER, None)
    try:
        after = tomllib.loads(new)
    except ValueError as exc:
        raise MergeError(f"{host.rel}: cannot append [{host.key}.{SERVER}] to this file ({exc}); add it by hand:\n{_toml_block(host)}") from None
    if after.get(host.key, {}).pop(SERVER, None) != host.entry or {k: v for k, v in after.items() if v != {}} != {k: v for k, v in before.items() if v != {}}:
        raise MergeError(f"{host.rel}: appending [{host.key}.{SERVER}] would change other settings; add it by hand")
    return new


def _strip(host: base.McpConfig, text: str) -> str | None:
    """``text`` without paqad's entry (only when it is exactly ours); None when nothing is left."""
    if host.toml:
        for block in (_toml_block(host), _toml_block(host, _old_core(host))):
            for candidate in ("\n" + block, block):
                if candidate in text:
                    out = text.replace(candidate, "", 1)
                    return out if out.strip() else None
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    servers = data.get(host.key) if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not (servers.get(SERVER) == host.entry or _older_entry(host, servers.get(SERVER))):
        return text
    del servers[SERVER]
    if not servers:
        del data[host.key]
    return base.dump_json(data) if data else None
