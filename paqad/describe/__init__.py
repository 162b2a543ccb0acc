"""Agent-written descriptions: the vocabulary the source never contained.

An agent reads a unit and writes one paragraph saying what it is for; ``put`` stores it in the
committed sidecar ``paqad.descriptions.json`` (its format and reading: :mod:`paqad.index.sidecar`),
keyed by unit id and the unit's ``content_hash``; ``pending`` and ``status`` say what is left
(:mod:`paqad.describe.ops`); ``promote`` turns descriptions into docstrings or doc comments as a
diff for review (:mod:`paqad.describe.promote`). The index applies a description only while the
hash matches, and never imports this package.
"""

from paqad.describe.ops import dump, pending, put, status
from paqad.describe.promote import promote

__all__ = ["dump", "pending", "promote", "put", "status"]
