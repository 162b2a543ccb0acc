"""Agent hosts as test resources: the JSON each host sends on stdin for its hook events, recorded
under ``paqad/hooks/hosts/recorded/<host>/<event>.json`` (package data: ``paqad doctor`` replays them) (field sets checked against the hosts' own CLIs and
hook documentation), and a driver that feeds one to the command paqad installed for that host.

A recorded file holds placeholders, strings that are exactly ``{{cwd}}``, ``{{prompt}}`` or
``{{session_id}}``; ``host_json`` replaces each with the value given (of any JSON type).
``run_host`` is the host's side of the hook: it reads the command from the host's installed
config (``.claude/settings.json``, ``.clinerules/hooks/...``) and runs it through ``sh -c`` in the
repository with the JSON on stdin, as the host would (the way pre-commit's ``run_language`` drives
a language), so the test exercises the real ``paqad hook run ...`` line, PATH lookup included.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from paqad.hooks import doctor
from paqad.hooks import hosts as hosts_pkg
from paqad.hooks.hosts import HOSTS
from testing.env import BIN

RESOURCES = Path(hosts_pkg.__file__).parent / "recorded"  # packaged: `paqad doctor` replays them too
#: The recorded event name -> paqad's hint in the installed command (``paqad hook run HINT``).
HINTS = doctor.HINTS
DEFAULTS = {"session_id": "s-1", "initial_prompt": None, "file_path": None, "content": "", "agent_id": "a-1"}


def events(host: str) -> list[str]:
    """The events recorded for ``host`` (file stems under its resource folder)."""
    return sorted(p.stem for p in (RESOURCES / host).glob("*.json"))


def host_json(host: str, event: str = "prompt", **fields: Any) -> Any:
    """The recorded JSON of ``host`` for ``event`` with its placeholders filled from ``fields``
    (``cwd``, ``prompt``, ``session_id``; ``session_id`` defaults to "s-1"). A placeholder
    without a value is an error, not an empty string: the payload would lie about the host."""
    values = {**DEFAULTS, **fields}
    data = json.loads((RESOURCES / host / f"{event}.json").read_text(encoding="utf-8"))

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        if isinstance(node, str) and node.startswith("{{") and node.endswith("}}"):
            name = node[2:-2]
            if name not in values:
                raise KeyError(f"{host}/{event}.json needs {name}=")
            return str(values[name]) if isinstance(values[name], Path) else values[name]
        return node

    return fill(data)


def configured_command(root: Path, host: str, hint: str = "prompt-submit") -> str:
    """The shell command paqad wrote into ``host``'s config for ``hint`` (an installed host)."""
    module: Any = HOSTS[host]  # a host module: CONFIG and EVENTS are module constants
    if host == "cline":
        return str(root / (".clinerules/hooks/TaskStart" if hint == "session-start" else ".clinerules/hooks/UserPromptSubmit"))
    if host == "opencode":  # the plugin's command, as the plugin runs it
        text = (root / module.CONFIG).read_text(encoding="utf-8")
        return str(json.loads(text.split("const COMMAND = ", 1)[1].split(";\n", 1)[0]))
    data = json.loads((root / module.CONFIG).read_text(encoding="utf-8"))
    if host == "kiro":
        for host_event, event_hint in module.EVENTS.items():
            if event_hint == hint:
                return str(data["hooks"][host_event][-1]["command"])
        raise AssertionError(f"{host} has no installed command for {hint}")
    for host_event, event_hint in module.EVENTS.items():
        if event_hint == hint:
            entry = data["hooks"][host_event][-1]
            hook = entry["hooks"][0] if "hooks" in entry else entry
            return str(hook.get("command") or hook["bash"])
    raise AssertionError(f"{host} has no installed command for {hint}")


class HostRun(subprocess.CompletedProcess[str]):
    """The completed hook command, with how long it took (``seconds``: what the host waited)."""

    seconds: float = 0.0


def run_host(root: Path, host: str, event: str = "prompt", *, stdin: str | None = None, path: str | None = None, **fields: Any) -> HostRun:
    """Run ``host``'s installed command for ``event`` in ``root`` with the recorded JSON on stdin
    (``fields`` fill it; ``cwd`` defaults to ``root``), or with ``stdin`` verbatim (garbage-input
    tests). ``path`` replaces PATH (default: this venv's scripts first, so ``paqad`` resolves)."""
    text = stdin if stdin is not None else json.dumps(host_json(host, event, **{"cwd": root, **fields}))
    env = {**os.environ, "PATH": path if path is not None else f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    started = time.perf_counter()
    done = subprocess.run(["sh", "-c", configured_command(root, host, HINTS[event])], cwd=root, input=text, capture_output=True, text=True, env=env, timeout=60, check=False)
    run = HostRun(done.args, done.returncode, done.stdout, done.stderr)
    run.seconds = time.perf_counter() - started
    return run
