"""The environment of the test process and of the children it starts: which ``paqad`` runs, the
lexical pin, the offline switches removed, and polling for work a background hook finishes later."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# An environment for ``config.load(..., environ=LEXICAL)``: nothing from the developer's shell,
# and the lexical configuration (the shipped default embeds with the local model).
LEXICAL = {"PAQAD_RAG_EMBEDDING_PROVIDER": "none"}

#: The folder of this interpreter's console scripts: the ``paqad`` installed with it comes first.
BIN = Path(sys.executable).parent


def paqad_exe() -> str:
    """The installed ``paqad`` console script (this venv's first, then PATH's)."""
    exe = shutil.which("paqad", path=str(BIN)) or shutil.which("paqad")
    assert exe, "the paqad console script is not installed"
    return exe


def user_cache_home(home: Path) -> Path:
    """The XDG_CACHE_HOME every test gets (inside its fresh HOME): the user-level embedding cache
    is then ``<home>/.cache/paqad/embeddings.sqlite``, never the developer's."""
    return home / ".cache"


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a ``python -c`` child: the hub's offline switches removed (an offline
    test must prove nothing is fetched without them). Run the child with ``cwd`` outside the
    source tree, so it imports the installed paqad (CI) or PYTHONPATH's (a developer's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return {**env, **extra}


def unshare_works() -> bool:
    """Whether ``unshare -rn`` (a user + network namespace: no interface up) can run here."""
    exe = shutil.which("unshare")
    return exe is not None and subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=30, check=False).returncode == 0


def wait_for(predicate: Callable[[], T], timeout: float = 30.0) -> T:
    """Poll ``predicate`` until it returns something truthy (background hooks finish later)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()
