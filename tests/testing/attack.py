"""A repository under attack, built as an attacker meets it: an upstream (bare), a victim's clone
with paqad set up and its hooks installed, and an attacker's clone that pushes. Whatever the
attacker commits reaches the victim through a real ``git pull``, which runs paqad's real git hook
shims; the victim's prompts go through the real installed host command (``testing.hosts.run_host``).

``MARKER`` code: every planted payload creates ``scene.marker`` (an absolute path in the test's
temp folder) if it ever runs; a test asserts it does not exist at the end.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from paqad import workspace
from testing.env import LEXICAL, paqad_exe
from testing.repos import Repo, clone, git, make_shop


@dataclass
class Scene:
    upstream: Path
    victim: Repo
    attacker: Repo
    marker: Path

    def payload(self, label: str) -> str:
        """Python that leaves a trace if it is ever imported or run, then fails the import."""
        return f"open({str(self.marker)!r}, 'a').write({label!r} + '\\n')\nraise ImportError('planted by the attacker')\n"

    def push(self, message: str = "innocent change") -> None:
        self.attacker.git("add", "-A")
        self.attacker.git("commit", "-q", "-m", message)
        self.attacker.git("push", "-q", "origin", "HEAD:main")

    def pull(self) -> None:
        """The victim's ``git pull`` (its post-merge hook runs), then wait for paqad's background work."""
        self.victim.git("pull", "-q", "--no-rebase", "origin", "main")
        settle(self.victim.root)

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([paqad_exe(), *args], cwd=self.victim.root, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120, check=False)

    def traces(self) -> list[str]:
        return self.marker.read_text().splitlines() if self.marker.exists() else []


def make_shop_repo(path: Path) -> Repo:
    """The shop, committed, in a new repository at ``path``."""
    return make_shop(Repo.init(path))


def make_scene(tmp_path: Path, agents: str = "claude") -> Scene:
    """Upstream seeded with the shop; the victim clones it, runs ``rag init`` and ``hooks install``
    and pushes what the README says to commit (``.paqad/``'s team files, the host config); the
    attacker clones after that."""
    seed = make_shop_repo(tmp_path / "seed")
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed.root), str(upstream))
    victim = clone(upstream, tmp_path / "victim")
    env = {**os.environ, **LEXICAL}
    for args in (("rag", "init"), ("hooks", "install", "--agents", agents)):
        done = subprocess.run([paqad_exe(), *args], cwd=victim.root, capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    victim.git("add", "-A")
    victim.git("commit", "-q", "-m", "paqad for the team", "--allow-empty")
    victim.git("push", "-q", "origin", "HEAD:main")
    settle(victim.root)
    attacker = clone(upstream, tmp_path / "attacker")
    return Scene(upstream, victim, attacker, tmp_path / "PWNED")


def settle(root: Path, timeout: float = 60.0) -> None:
    """Wait until no paqad process works for ``root`` but its resident service (the git shims'
    burst process and the runner's detached update end on their own)."""
    deadline = time.monotonic() + timeout
    needle = str(root).encode()
    while time.monotonic() < deadline:
        busy = [pid for pid in _paqad_pids() if needle in _cmdline_and_cwd(pid) and b" serve" not in _cmdline(pid)]
        burst = workspace.state_dir(root) / "git-burst.pid"
        if not busy and not burst.exists():
            return
        time.sleep(0.1)


def _paqad_pids() -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid() and b"paqad" in _cmdline(int(name)):
            out.append(int(name))
    return out


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ")
    except OSError:
        return b""


def _cmdline_and_cwd(pid: int) -> bytes:
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd").encode()
    except OSError:
        cwd = b""
    return _cmdline(pid) + b" " + cwd
