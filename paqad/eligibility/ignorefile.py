"""``.paqad/rag.ignore.yaml``: extra ``exclude`` patterns and ``include`` overrides (gitwildmatch).

A malformed file is a ConfigError naming the file and key; it never falls back to defaults,
because silently indexing what a team meant to exclude is the worse failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pathspec
import yaml

from paqad import workspace, yamlio
from paqad.errors import ConfigError

KEYS = ("exclude", "include")


@dataclass(frozen=True)
class IgnoreRules:
    """Compiled patterns; ``None`` spec means no patterns of that kind."""

    exclude: pathspec.GitIgnoreSpec | None
    include: pathspec.GitIgnoreSpec | None
    exclude_lines: tuple[str, ...] = ()
    include_lines: tuple[str, ...] = ()

    def excluded(self, path: str) -> str | None:
        """The exclude pattern matching ``path``, or None."""
        return _matching(self.exclude, self.exclude_lines, path)

    def included(self, path: str) -> str | None:
        """The include pattern matching ``path``, or None."""
        return _matching(self.include, self.include_lines, path)


def _matching(spec: pathspec.GitIgnoreSpec | None, lines: tuple[str, ...], path: str) -> str | None:
    if spec is None:
        return None
    result = spec.check_file(path)
    return lines[result.index] if result.include and result.index is not None else None


def load(root: Path) -> IgnoreRules:
    """Read and validate the ignore file; a missing file means no extra rules."""
    path = workspace.ignore_file(root)
    if workspace.team_file(root, path) is None:  # absent, or reached through a symlink (never read)
        return IgnoreRules(None, None)
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix it or delete it") from exc
    if data is None:
        return IgnoreRules(None, None)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with keys {', '.join(KEYS)}, got {type(data).__name__}")
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; allowed keys: {', '.join(KEYS)}")
    exclude = _patterns(path, data, "exclude")
    include = _patterns(path, data, "include")
    return IgnoreRules(_compile(path, "exclude", exclude), _compile(path, "include", include), exclude, include)


def _patterns(path: Path, data: dict, key: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise ConfigError(f"{path}: key {key!r} must be a list of gitwildmatch pattern strings")
    return tuple(p.strip() for p in value)


def _compile(path: Path, key: str, lines: tuple[str, ...]) -> pathspec.GitIgnoreSpec | None:
    if not lines:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception as exc:  # pathspec raises several types for a bad pattern
        raise ConfigError(f"{path}: key {key!r} has an invalid pattern ({exc})") from exc
