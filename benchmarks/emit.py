"""What the speed benchmarks share: how they hand over their result (one JSON object on stdout,
and the same text in ``--json OUT`` when asked, so a run can be kept beside benchmarks/README.md's
figures), a call's wall and CPU time, and an installed distribution's size. Standard library only:
the embedding benchmarks' children import it before the model they time."""

from __future__ import annotations

import importlib.metadata
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def emit(result: dict[str, Any], out: str | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        Path(out).write_text(text + "\n")


def timed(fn: Callable[[Any], object], arg: Any) -> tuple[float, float]:
    """Wall seconds and process CPU seconds of ``fn(arg)``."""
    t, c = time.perf_counter(), time.process_time()
    fn(arg)
    return time.perf_counter() - t, time.process_time() - c


def dist_mb(name: str) -> float:
    """Size on disk (MB, 10^6 bytes) of the installed distribution ``name``; 0 when it is not installed."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return 0.0
    paths = (Path(str(dist.locate_file(f))) for f in dist.files or [])
    return sum(p.stat().st_size for p in paths if p.is_file()) / 1e6
