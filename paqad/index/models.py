"""The embedding models an index names, loaded once per process and shared by the builder and every ``Index``.

Here, below the vector lifecycle (``paqad.index.embedding``), because the reader needs the query
model of the index it reads and must not import what writes the vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from paqad.embed import get_provider

if TYPE_CHECKING:
    from paqad.embed import Provider

_PROVIDERS: dict[tuple[str, ...], Provider] = {}  # the process's loaded models


def provider_for(name: str, model: str = "", base_url: str = "", root: Path | None = None) -> Provider | None:
    """The (process-wide, lazily loading) provider for a setting pair; ``None`` for ``none``.
    ``root`` is the repository whose ``secrets.env`` (in paqad's per-developer folder) may hold a remote provider's key (not
    the working directory: ``paqad --root R`` run from elsewhere must find R's key)."""
    if name in ("", "none"):
        return None
    key = (name, model, base_url, str(root) if root is not None and name != "local" else "")
    if key not in _PROVIDERS:
        _PROVIDERS[key] = get_provider(name, model) if name == "local" else get_provider(name, model, base_url=base_url, root=root)
    return _PROVIDERS[key]
