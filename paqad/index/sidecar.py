"""The descriptions sidecar ``paqad.descriptions.json``: its format, and what the index applies from it.

Agents write descriptions through :mod:`paqad.describe`; the index reads them here (``for_index``,
``description_for``) into each unit's ``description`` field, only while the unit's
``content_hash`` matches. The file is untrusted input (committed, edited by hand, merged by git):
a file that is not JSON, not the shape below, or larger than ``MAX_SIDECAR_BYTES`` is a one-line
``ConfigError`` for the ``describe`` commands and no descriptions for the index; an entry with the
wrong types, an empty text or one longer than ``MAX_DESCRIPTION_CHARS`` is ignored and counted.

Format::

    {"version": 1,
     "descriptions": {"src/app.py::Cart.total": {"content_hash": "3f2a…", "text": "…"}}}
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from paqad.errors import ConfigError

SIDECAR_NAME = "paqad.descriptions.json"
SIDECAR_VERSION = 1
#: A description is one paragraph. 1,000 characters is several times what the embedding sees
#: (30% of ``embed.UNIT_TEXT_MAX_CHARS``) and keeps one entry from swamping a unit's description field.
MAX_DESCRIPTION_CHARS = 1000
#: A larger sidecar is refused as a whole rather than parsed (about 100,000 full entries).
MAX_SIDECAR_BYTES = 64 * 1024 * 1024
_HASH = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Entry:
    content_hash: str
    text: str


@dataclass
class Sidecar:
    """The parsed sidecar: valid entries, how many were ignored, and the raw object to rewrite."""

    entries: dict[str, Entry] = field(default_factory=dict)
    invalid: int = 0
    raw: dict = field(default_factory=lambda: {"version": SIDECAR_VERSION, "descriptions": {}})
    sha: str = ""
    error: str | None = None


def sidecar_path(root: Path) -> Path:
    return root / SIDECAR_NAME


def normalize(text: str) -> str:
    """One paragraph: whitespace runs become one space, control characters are dropped."""
    kept = "".join(ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) != "Cc")
    return " ".join(kept.split())


def read_sidecar(root: Path, strict: bool = True) -> Sidecar:
    """The sidecar at ``root`` (empty when absent). A malformed file raises ``ConfigError`` when
    ``strict``, else yields an empty ``Sidecar`` whose ``error`` says why (the index's way)."""
    path = sidecar_path(root)
    try:
        return _parse_sidecar(path)
    except ConfigError as exc:
        if strict:
            raise
        return Sidecar(sha="invalid", error=str(exc))


def _parse_sidecar(path: Path) -> Sidecar:
    if not path.exists() and not path.is_symlink():
        return Sidecar()
    fix = "fix it or delete it (descriptions are then pending again)"
    if path.is_symlink() or not path.is_file():
        raise ConfigError(f"{path}: not a regular file; {fix}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror}); {fix}") from exc
    if len(data) > MAX_SIDECAR_BYTES:
        raise ConfigError(f"{path}: {len(data)} bytes, more than the {MAX_SIDECAR_BYTES} allowed; {fix}")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); {fix}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("descriptions"), dict):
        raise ConfigError(f'{path}: expected {{"version": 1, "descriptions": {{...}}}}; {fix}')
    if raw.get("version") != SIDECAR_VERSION:
        raise ConfigError(f"{path}: version {raw.get('version')!r}, this paqad reads version {SIDECAR_VERSION}; {fix}")
    out = Sidecar(raw=raw, sha=hashlib.sha256(data).hexdigest())
    for key, value in raw["descriptions"].items():
        entry = _entry(value)
        if entry is None:
            out.invalid += 1
        else:
            out.entries[key] = entry
    return out


def _entry(value: object) -> Entry | None:
    """A valid entry, or None (wrong types, bad hash, empty or too-long text)."""
    if not isinstance(value, dict):
        return None
    digest, text = value.get("content_hash"), value.get("text")
    if not isinstance(digest, str) or not isinstance(text, str) or not _HASH.match(digest):
        return None
    text = normalize(text)
    if not text or len(text) > MAX_DESCRIPTION_CHARS:
        return None
    return Entry(digest, text)


def for_index(root: Path) -> Sidecar:
    """What the index applies: never raises (a broken sidecar means no descriptions)."""
    try:
        return read_sidecar(root, strict=False)
    except Exception as exc:  # noqa: BLE001 - the index and the prompt hook must never fail on it
        return Sidecar(sha="invalid", error=f"{type(exc).__name__}: {exc}")


def description_for(sidecar: Sidecar, unit_id: str, content_hash: str) -> str:
    """The description that applies to this unit now ("" when none, or when the code changed)."""
    entry = sidecar.entries.get(unit_id)
    return entry.text if entry is not None and entry.content_hash == content_hash else ""
