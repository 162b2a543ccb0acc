"""What every embedding provider is (the ``Provider`` protocol) and the text-preparation version.

Apart from :mod:`paqad.embed` (the registry and ``unit_text``) so that provider modules import
this, not the package that imports them: no import cycle between the registry and its providers.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

#: Bumped whenever ``unit_text`` (or a provider's own text preparation) changes its output.
TEXT_PREP_VERSION = 1


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@runtime_checkable
class Provider(Protocol):
    """An embedding model. Vectors are float32 and L2-normalised; row ``i`` belongs to ``texts[i]``."""

    name: str
    model: str
    text_prep_version: int

    @property
    def dims(self) -> int:
        """Vector size. Read-only here, so a provider may compute it (a remote one learns it from
        its first answer) as well as store it."""
        ...

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Shape ``(len(texts), dims)``; an empty list gives shape ``(0, dims)``."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Shape ``(dims,)``, with the model's query prefix where it wants one."""
        ...
