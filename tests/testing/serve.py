"""The resident service in tests: a private runtime folder per test, and no service outliving it.

Every test gets its own ``XDG_RUNTIME_DIR`` (a short folder under /tmp: a Unix socket path must
stay under 108 bytes, and pytest's tmp_path is long), so services started by one test are
invisible to the next and to the developer's own. After the test, :func:`stop_all` ends every
service that holds a lock in that folder (the pid is in the lock file) or carries the folder in
its environment (one still starting up): SIGCONT (a test may have frozen it), SIGTERM, then
SIGKILL if it is still there after 10 s.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from paqad.channel import client, paths
from testing.env import child_env, wait_for


@contextmanager
def runtime_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="pq", dir="/tmp"))
    folder.chmod(0o700)
    try:
        yield folder
    finally:
        stop_all(folder)
        shutil.rmtree(folder, ignore_errors=True)


def holders(folder: Path) -> list[int]:
    """The pids of the services holding a lock in ``folder``'s ``paqad/``."""
    out = []
    for lock in (folder / paths.DIRNAME).glob("*.lock"):
        if client.lock_held(str(lock)):
            try:
                out.append(int(lock.read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                pass
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our own child, not reaped yet) is dead for every purpose here
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def started_in(folder: Path) -> list[int]:
    """Services whose environment names ``folder`` as their runtime folder, those still starting
    up (no lock taken yet) included: only this test's processes carry it."""
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"XDG_RUNTIME_DIR={folder}".encode() in environ and b"serve" in cmdline:
            out.append(int(entry.name))
    return out


def stop_all(folder: Path) -> None:
    for pid in sorted(set(holders(folder)) | set(started_in(folder))):
        for sig in (signal.SIGCONT, signal.SIGTERM):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
        if not wait_for(lambda p=pid: not alive(p), timeout=10):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def start(root: Path, version: str | None = None, build: str | None = None, **env: str) -> int:
    """Start ``root``'s service as the doors do (detached), optionally claiming another paqad
    ``version`` (an older install, for the upgrade tests) or another ``build`` of this version (a
    checkout edited since); wait until it answers; its pid."""
    argv = client.serve_argv(root)
    if version is not None or build is not None:
        code = ("import sys, paqad; from paqad.channel import wire; "
                + (f"paqad.__version__ = {version!r}; " if version is not None else "")
                + (f"wire._BUILD[:] = [{build!r}]; " if build is not None else "")
                + "from paqad.cli.main import main; sys.exit(main(sys.argv[1:]))")
        argv = [sys.executable, "-P", "-c", code, *argv[argv.index("paqad") + 1 :]]
    proc = subprocess.Popen(argv, cwd=root, env=child_env(**env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    assert wait_ready(root), "the service did not come up"
    return proc.pid


def wait_ready(root: Path, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = client.request(root, "status", reply_timeout=2.0)
        if outcome.answered:
            return True
        time.sleep(0.1)
    return False


def service_pid(root: Path) -> int | None:
    outcome = client.request(root, "status", reply_timeout=2.0)
    return int(outcome.reply["info"]["pid"]) if outcome.reply else None
