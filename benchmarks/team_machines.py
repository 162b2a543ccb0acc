"""What the team benchmarks (``shared_store.py``, ``index_artifact.py``) share: the arguments, a
throwaway PostgreSQL server, a clone standing for the team's origin, and "machines" that differ
only in their user cache (``XDG_CACHE_HOME``), so each starts with nothing embedded."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.testing import postgres

HERE = Path(__file__).resolve().parent


@dataclass
class Team:
    base: Path  # the temporary folder holding everything
    dsn: str  # the server's connection string
    origin: Path  # the clone every "machine" clones from

    def machine(self, name: str) -> None:
        """From now on this process is machine ``name``: its own, empty user cache."""
        os.environ["XDG_CACHE_HOME"] = str(self.base / name / "cache")

    def clone(self, name: str) -> Path:
        """A fresh clone of the origin, for machine ``name`` (which this process becomes)."""
        path = self.base / name
        subprocess.run(["git", "clone", "-q", str(self.origin), str(path)], check=True)
        self.machine(name)
        return path


def arguments(doc: str | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default=str(HERE / ".cache" / "semble" / "repos" / "requests"))
    ap.add_argument("--runs", type=int, default=3)
    return ap.parse_args()


@contextmanager
def team(repo: str, prefix: str) -> Iterator[Team]:
    """A server and an origin for ``repo`` (machine "A" is the one that publishes); removed after."""
    src = Path(repo)
    if not (src / ".git").exists():
        sys.exit(f"{src} is not a git repository (run `python -m benchmarks semble fetch` first)")
    base = Path(tempfile.mkdtemp(prefix=prefix))
    server = postgres.start(base / "pg")
    try:
        origin = base / "origin"
        subprocess.run(["git", "clone", "-q", str(src), str(origin)], check=True)
        print(f"machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} at start; repository {src.name}")
        t = Team(base, server.dsn, origin)
        t.machine("A")
        yield t
        print(f"load {os.getloadavg()[0]:.1f} at the end")
    finally:
        server.remove()
        shutil.rmtree(base, ignore_errors=True)
