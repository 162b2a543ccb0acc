"""Typed records of what an index stores, read back by :class:`paqad.index.reader.Index`.

One record describes a stored unit (:class:`StoredUnit`, the ``units`` table's columns): search
results, graph nodes, ``describe`` rows and the evaluation's docstring questions are all made from
it, so a column added to ``units`` is added here once. A reader asks only for the columns it needs
(``fields``; the unit's text is the large one): the columns not read keep their defaults, so a
record says nothing about a column it was not read with.

``calls``, ``imports`` and ``bases`` are stored as JSON lists; they are decoded here, tolerating a
damaged value (the index is untrusted input: a bad list reads as empty, never as an exception).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paqad.jsontypes import JSON

#: The ``units`` table's columns, in the schema's order (``paqad.index.schema.INDEX``).
UNIT_COLUMNS: tuple[str, ...] = (
    "uid", "id", "path", "language", "kind", "name", "qualified_name", "signature", "docstring",
    "start_line", "end_line", "text", "calls", "imports", "bases", "part", "parts", "content_hash",
    "lengths", "is_test",
)
_JSON_LISTS = frozenset({"calls", "imports", "bases", "lengths"})
_BOOLS = frozenset({"is_test"})


@dataclass(slots=True)
class StoredUnit:
    """One row of ``units``: a declaration (or a module's leftover lines, a section, a key) as indexed.

    ``uid`` is the row id the postings and vectors refer to; ``id`` is the public
    ``path::qualified_name`` (``#N`` for the N-th part of a split unit). ``lengths`` are the
    unit's per-field token counts (BM25F), ``is_test`` whether its file is a test file.
    """

    uid: int = 0
    id: str = ""
    path: str = ""
    language: str = ""
    kind: str = ""
    name: str = ""
    qualified_name: str = ""
    signature: str = ""
    docstring: str = ""
    start_line: int = 0
    end_line: int = 0
    text: str = ""
    calls: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)
    part: int = 1
    parts: int = 1
    content_hash: str = ""
    lengths: list[int] = field(default_factory=list)
    is_test: bool = False

    @classmethod
    def from_row(cls, row: sqlite3.Row, names: tuple[str, ...] | None = None) -> StoredUnit:
        """A record from a row read with ``sqlite3.Row`` over any subset of ``UNIT_COLUMNS``
        (``names``: only those of the row's columns, when it carries others too)."""
        values: dict[str, Any] = dict(zip(row.keys(), row)) if names is None else {k: row[k] for k in names}
        for key in _JSON_LISTS.intersection(values):
            values[key] = json_list(values[key])
        for key in _BOOLS.intersection(values):
            values[key] = bool(values[key])
        return cls(**values)


def json_list(text: object) -> list[JSON]:
    """A JSON list column decoded; anything that is not a JSON list reads as empty."""
    if not isinstance(text, str):
        return []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    return value if isinstance(value, list) else []


def check_fields(names: tuple[str, ...]) -> str:
    """The SQL column list for ``names``; refuses a name that is not a ``units`` column (the
    list is interpolated into SQL, so only the schema's own names may pass)."""
    unknown = [n for n in names if n not in UNIT_COLUMNS]
    if unknown or not names:
        raise ValueError(f"not columns of units: {unknown or names}")
    return ", ".join(names)


#: Column sets the readers use (the text column only where it is shown or tokenized).
RESULT_FIELDS = ("uid", "id", "path", "language", "kind", "name", "qualified_name", "signature", "start_line", "end_line", "docstring", "text")
SPAN_FIELDS = ("uid", "id", "path", "qualified_name", "kind", "parts", "start_line", "end_line")
GRAPH_FIELDS = ("uid", "id", "path", "language", "kind", "name", "qualified_name", "start_line", "end_line", "part", "calls", "imports", "bases")


@dataclass(frozen=True)
class IndexMeta:
    """The ``meta`` table: what the index was built with, typed for the readers that need it."""

    values: dict[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    @property
    def n_units(self) -> int:
        return int(self.values.get("n_units", "0") or 0)

    @property
    def embedding_provider(self) -> str:
        return self.values.get("embedding_provider", "none")

    @property
    def embedding_model(self) -> str:
        return self.values.get("embedding_model", "")

    @property
    def embedding_base_url(self) -> str:
        return self.values.get("embedding_base_url", "")

    @property
    def embedding_fingerprint(self) -> str:
        return self.values.get("embedding_fingerprint", "")

    @property
    def embedding_dims(self) -> int:
        return int(self.values.get("embedding_dims", "0") or 0)

    @property
    def has_vectors(self) -> bool:
        """Whether this index was built with an embedding provider (its vectors may be pending)."""
        return bool(self.embedding_fingerprint)

    @property
    def active_packs(self) -> list[str]:
        return [str(p) for p in json_list(self.values.get("active_packs", "[]"))]


@dataclass(frozen=True)
class TermInfo:
    """A term the index knows: its id (the postings' key) and document frequency."""

    term: str
    tid: int
    df: int


@dataclass(frozen=True)
class Generation:
    """Which index a reader sees: the generation's file name and SQLite's ``data_version`` on the
    reader's connection (it moves when another connection commits: an update, a vector batch)."""

    name: str
    data_version: int


@dataclass(frozen=True)
class VectorRows:
    """The ``vectors`` table in uid order: unit ids and their packed little-endian float32 vectors."""

    uids: list[int]
    blobs: list[bytes]


@dataclass(frozen=True)
class Counts:
    """Sizes for ``rag status``: files and their bytes, units by language and by kind, pending vectors."""

    files: int
    source_bytes: int
    units_by_language: dict[str, int]
    units_by_kind: dict[str, int]
    vectors_pending: int
