"""Hosts found outside the repository: their CLI on PATH, or their folder in the home directory.

``paqad hooks install`` wires only the hosts the repository itself shows (a team repository
gets no config a teammate did not ask for); the others it finds on this machine are listed with
the command that adds each, so a new user is never left with ``"agents": []`` and no hint.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: host -> (its CLI's name, its folder under the home directory)
MARKS = {
    "claude": ("claude", ".claude"),
    "codex": ("codex", ".codex"),
    "gemini": ("gemini", ".gemini"),
    "cline": ("cline", ".cline"),
    "cursor": ("cursor-agent", ".cursor"),
    "copilot": ("copilot", ".copilot"),
    "qwen": ("qwen", ".qwen"),
    "droid": ("droid", ".factory"),
    "kiro": ("kiro-cli", ".kiro"),
    "opencode": ("opencode", ".config/opencode"),
}


def elsewhere(skip: list[str], home: Path | None = None, path: str | None = None) -> list[dict]:
    """Hosts (other than ``skip``) whose CLI is on PATH or whose home folder exists, with the fix."""
    home = home or Path.home()
    out = []
    for host, (cli, folder) in MARKS.items():
        if host in skip:
            continue
        seen = [f"`{cli}` on PATH"] if shutil.which(cli, path=path) else []
        if (home / folder).is_dir():
            seen.append(f"~/{folder}")
        if seen:
            out.append({"host": host, "found": " and ".join(seen), "command": f"paqad hooks install --agents {host}"})
    return out
