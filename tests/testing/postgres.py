"""A real PostgreSQL server for the tests: Debian's ``postgresql`` package, started in a temporary
folder and listening on a Unix socket only (``listen_addresses=''``), never on a TCP port.

``.ci/run`` installs the package when the machine lacks it. PostgreSQL refuses to run as root, so
as root the server runs as the ``postgres`` user the package creates (``runuser``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


def bindir() -> Path:
    """The newest installed server's ``bin`` folder; a one-line failure when there is none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]) if Path(p).parts[4].isdigit() else 0)
    if not found:
        raise RuntimeError("no PostgreSQL server installed: run `apt-get install postgresql` (.ci/run does)")
    return Path(found[-1]).parent


@dataclass
class Server:
    data: Path
    socket_dir: Path
    bin: Path

    @property
    def dsn(self) -> str:
        return f"host={self.socket_dir} dbname=postgres user=paqad"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> None:
        done = self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.data.parent / "server.log"), "-w", "-t", "60",
            "-o", f"-c listen_addresses='' -k {self.socket_dir} -c fsync=off", "start",
        )
        if done.returncode != 0:
            log = (self.data.parent / "server.log").read_text(errors="replace")[-2000:] if (self.data.parent / "server.log").exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {done.stderr.strip()} {log}")

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        """Stop and delete the cluster's folder."""
        self.stop()
        shutil.rmtree(self.data.parent, ignore_errors=True)


def start(tmp: Path) -> Server:
    """initdb (trust auth for the ``paqad`` superuser, on the socket only) and start. As root the
    folder is a fresh one under the system temp folder instead of ``tmp`` (pytest's folders are
    private to root, so the ``postgres`` user could not reach a folder inside them)."""
    bin_ = bindir()
    if os.geteuid() == 0:
        tmp = Path(tempfile.mkdtemp(prefix="paqad-pg-"))
    tmp.mkdir(parents=True, exist_ok=True)
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    server = Server(data, sock, bin_)
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres")
        shutil.chown(sock, "postgres")
        os.chmod(tmp, 0o755)
    done = server._run(str(bin_ / "initdb"), "-D", str(data), "-U", "paqad", "--auth=trust", "-E", "UTF8", "--no-sync")
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stderr.strip()}")
    server.start()
    return server
