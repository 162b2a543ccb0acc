"""The one record type every parser produces and every later stage consumes.

``CodeUnit`` is a versioned contract (see DESIGN.md): new information arrives in new fields,
existing fields keep their meaning. ``UNIT_SCHEMA_VERSION`` is bumped when that happens.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

UNIT_SCHEMA_VERSION = 1

# Kinds a parser may emit. Code: function, method, class (also struct/interface/trait/enum,
# mapped by each language), module (code outside any declaration). Prose and data: section
# (Markdown heading), key (top-level YAML/JSON key), document (a file with no finer structure).
KINDS = (
    "function",
    "method",
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "module",
    "section",
    "key",
    "document",
)


@dataclass
class CodeUnit:
    """One declaration, prose section or leftover module code, with its exact 1-based line span.

    ``text`` is the exact source of lines ``start_line..end_line`` (for a ``module`` unit: the
    lines outside every other unit, joined). ``part`` / ``parts`` number the pieces of a unit
    that was split because it was longer than the cap; pieces share ``qualified_name``.
    """

    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    text: str
    signature: str = ""
    docstring: str = ""
    calls: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)
    part: int = 1
    parts: int = 1
    id: str = ""
    content_hash: str = ""

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if not self.id:
            self.id = make_unit_id(self.path, self.kind, self.qualified_name, self.part)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def make_unit_id(path: str, kind: str, qualified_name: str, part: int = 1) -> str:
    """A stable id: the same declaration keeps its id when lines around it move.

    Readable (``path::qualified_name``) so agents and rulers can name units; a kind suffix
    disambiguates a class and a module section that share a name, and ``#N`` numbers split parts.
    Overloads that share a qualified name are disambiguated by the parser (``name@2``).
    """
    base = f"{path}::{qualified_name}" if qualified_name else f"{path}::<{kind}>"
    if kind == "module":
        base = f"{path}::<module>"
    return base if part == 1 else f"{base}#{part}"
