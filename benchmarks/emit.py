"""How the speed benchmarks hand over their result: one JSON object on stdout, and the same
text in ``--json OUT`` when asked (so a run can be kept beside benchmarks/README.md's figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def emit(result: dict[str, Any], out: str | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        Path(out).write_text(text + "\n")
