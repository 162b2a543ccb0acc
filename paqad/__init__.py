"""paqad: local code retrieval for AI coding agents.

The library is the product; the CLI in :mod:`paqad.cli` is a thin layer over it.
"""

__version__ = "0.1.0"
