"""numpy's BLAS on one thread in every paqad process (issue 34): OpenBLAS otherwise runs each
matrix product on a thread per core and keeps them spinning, which cost a warm service prompt a
third more CPU on two cores. Real processes: a service started as the doors start it, and the
console script's entry point; a value the user set is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import localstate
from paqad.channel import client
from testing.repos import Repo


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.parametrize("mine", [None, "2"])
def test_a_service_started_by_a_door_has_one_blas_thread_unless_the_user_chose(shop: Repo, monkeypatch: pytest.MonkeyPatch, mine: str | None) -> None:
    for var in localstate.BLAS_THREADS:
        monkeypatch.delenv(var, raising=False)
    if mine is not None:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", mine)
    pid = client.start(shop.root)
    assert pid is not None and client.wait_ready(shop.root, timeout=60)
    env = _environ(pid)
    assert env["OPENBLAS_NUM_THREADS"] == (mine or "1") and env["MKL_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ or mine  # the door's own process is left as it was


def test_the_console_script_sets_it_before_anything_loads_numpy(tmp_path: Path) -> None:
    code = (
        "import os, sys\nfrom paqad.cli.main import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('MKL_NUM_THREADS'), 'numpy' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in localstate.BLAS_THREADS}
    done = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split()[-3:] == ["1", "1", "False"]
    kept = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, env={**env, "OPENBLAS_NUM_THREADS": "4"}, capture_output=True, text=True, check=True)
    assert kept.stdout.split()[-3:] == ["4", "1", "False"]
