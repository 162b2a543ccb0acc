"""Where paqad's package data lives: the top-level ``stackpacks/`` and ``hooks/`` folders.

The design card keeps those folders at the repository's top level. A wheel force-includes them
as ``paqad/_data/<name>`` (under ``_data`` so they never clash with the ``paqad.hooks`` package);
an editable install or a source checkout has no ``_data`` and reads the top-level folders
themselves, so ``pip install -e .`` works with the same files.
"""

from __future__ import annotations

import importlib.resources
from importlib.resources.abc import Traversable
from pathlib import Path

DATA_DIR = "_data"


def data_dir(name: str) -> Traversable:
    """The shipped folder ``name`` (``stackpacks`` or ``hooks``): package data, else the checkout's."""
    packaged = importlib.resources.files("paqad") / DATA_DIR / name
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / name
