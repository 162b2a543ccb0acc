"""paqad: local code retrieval for AI coding agents.

The library is the product; the CLI in :mod:`paqad.cli` is a thin layer over it. Its public face
is :class:`~paqad.repository.Repository`, one work tree after ``paqad rag init``::

    from paqad import Repository

    repo = Repository("/home/ann/src/shop")
    for hit in repo.search("where is the session cookie signed").results[:3]:
        print(f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.qualified_name}")

(imported on first use: ``import paqad`` stays as light as the hook clients need it).
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["Repository", "__version__"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from paqad.repository import Repository


def __getattr__(name: str) -> object:
    if name == "Repository":
        from paqad.repository import Repository  # lazy: the whole stack; `import paqad` stays as light as a hook client

        return Repository
    raise AttributeError(f"module 'paqad' has no attribute {name!r}")
