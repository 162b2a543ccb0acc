"""Which repository files paqad may read for an agent: one rule for ``open`` and for delivery.

A path comes from a request or from the index, and both are untrusted (an index can be crafted or
copied from elsewhere). It goes through ``workspace.join_within`` (no ``..``, no absolute path, no
symlink whose target leaves the repository); inside the repository ``.git/`` (remote URLs can
carry credentials) anywhere in the path (a nested repository's ``vendor/x/.git/config`` as much as
the top one's) and ``.paqad/`` as the first component (``secrets.env`` holds API keys) are refused, and so are secrets
files by name or path (``paqad.eligibility.secretfiles``, the predicate the indexer uses: ``.env``,
``*.env``, ``*.pem``, ``id_rsa*``, ``*.tfstate``, ``.git-credentials``, ``.docker/config.json``,
``secrets.yaml``, ... but not a source file such as ``secrets.py``), also
when reached through an in-repository symlink. paqad hands an agent source code, never
credentials; key shapes inside source files are masked by ``paqad.redaction``.
"""

from __future__ import annotations

from pathlib import Path

from paqad import workspace
from paqad.eligibility import secretfiles
from paqad.errors import UsageError

REFUSED_DIRS = (".git", workspace.DIRNAME)  # as the first path component
REFUSED_ANYWHERE = (".git",)  # as any component (a nested repository or a submodule's own .git)


class ConfinementError(UsageError):
    """A path paqad will not read for an agent; ``code`` is the agent protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def readable(root: Path, relative: str) -> tuple[Path, str]:
    """The file for ``relative`` and its repository-relative POSIX path (after symlinks), or
    ConfinementError: ``forbidden`` (outside, ``.git/``, ``.paqad/``, secrets), ``not_found``, ``not_a_file``."""
    try:
        full = workspace.join_within(root, relative)
    except ValueError as exc:
        raise ConfinementError("forbidden", str(exc)) from None
    rel = full.relative_to(root.resolve()).as_posix() if full != root.resolve() else "."
    first = rel.split("/", 1)[0]
    if first in REFUSED_DIRS:
        raise ConfinementError("forbidden", f"path {relative!r} is inside {first}/, which paqad never reads for an agent")
    for parts in (rel.split("/"), Path(relative).as_posix().split("/")):
        inside = next((p for p in parts if p in REFUSED_ANYWHERE), None)
        if inside:
            raise ConfinementError("forbidden", f"path {relative!r} is inside a {inside}/ folder, which paqad never reads for an agent")
    pattern = secretfiles.secrets_match(rel) or secretfiles.secrets_match(Path(relative).as_posix())
    if pattern:
        raise ConfinementError("forbidden", f"path {relative!r} looks like a secrets file ({pattern}); paqad never reads those for an agent")
    if not full.exists():
        raise ConfinementError("not_found", f"no file {relative!r} in the repository")
    if not full.is_file():
        raise ConfinementError("not_a_file", f"{relative!r} is not a regular file")
    return full, rel
