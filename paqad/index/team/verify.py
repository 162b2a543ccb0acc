"""An adopted index's units checked against the files they name, before the index goes live.

Why: an artifact (``paqad.index.team.artifacts``) is written by whoever can write to the team store.
Its rows can pass every structural check of ``artifact_check`` and still carry text of the
attacker's choosing under a real ``file:line`` with the real file hash kept; the update after
adoption then sees the hash match and keeps it (``0 changed``), and every door shows it as source.
So the index's text is verified, not trusted: every file whose content here hashes to the indexed
hash is parsed again (the parser is fast; embedding is what adoption saves) and its unit rows are
compared field by field with what this paqad derives from the file. A file whose rows differ is
re-derived in the downloaded file before it goes live (``build.apply_files``: its units, terms and
postings replaced, its vectors dropped so the update embeds them again), and counted. A file whose
content differs here keeps no trusted stat (``mtime_ns = -1``), so the update re-parses it whatever
size and mtime the artifact claims.

The fields compared are those the parser derives from the file's text and path (never the ones
that depend on this clone's descriptions sidecar or stack packs, which the update reconciles).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.eligibility import collect
from paqad.index.sidecar import for_index
from paqad.index.team.artifact_check import harden
from paqad.index.writing import build
from paqad.units import CodeUnit

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.eligibility.collect import Eligibility
    from paqad.index.writing.build import ParsedFile

_UNIT_COLUMNS = (
    "id, kind, name, qualified_name, signature, docstring, start_line, end_line, text, calls, imports, bases, part, parts, content_hash"
)


@dataclass
class Verified:
    """What :func:`verify_and_refresh` found: files whose stat was refreshed (trusted as they
    are), files re-derived because their rows did not match, files left for the update."""

    refreshed: int = 0
    rederived: list[str] = field(default_factory=list)
    stale: int = 0


def verify_and_refresh(root: Path, cfg: Config, index_file: Path) -> Verified:
    """Check every indexed file whose content here matches its indexed hash; re-derive those whose
    unit rows differ from the parse; give the matching ones this work tree's size and mtime (so
    the update after adoption skips them) and the others none (so it re-parses them)."""

    elig = collect.Eligibility(root, cfg.rag_max_file_size)
    sidecar = for_index(root)
    listed = set(elig.listed)
    out = Verified()
    fresh: list[tuple[int, int, str]] = []
    stale: list[str] = []
    redo: list[ParsedFile | None] = []
    con = sqlite3.connect(index_file, isolation_level=None)
    try:
        harden(con)
        for path, digest in con.execute("SELECT path, hash FROM files").fetchall():
            derived = _reparsed(root, elig, cfg, path, digest) if path in listed else None
            if derived is None:
                stale.append(path)
            elif _rows(con, path) != derived[0]:
                redo.append(build.parse_text(root, elig, path, derived[1], cfg, sidecar))
            else:
                st = (root / path).stat()
                fresh.append((st.st_size, st.st_mtime_ns, path))
        con.execute("BEGIN")
        con.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", fresh)
        con.executemany("UPDATE files SET mtime_ns = -1 WHERE path = ?", [(p,) for p in stale])
        con.execute("COMMIT")
    finally:
        con.close()
    items = [i for i in redo if i is not None]
    if items:
        build.apply_files(index_file, items)
    out.refreshed, out.rederived, out.stale = len(fresh), [i.path for i in items], len(stale)
    return out


def _reparsed(root: Path, elig: Eligibility, cfg: Config, path: str, digest: str) -> tuple[list[tuple], str] | None:
    """(the unit rows this paqad derives from the file, its text) when its content here hashes to
    ``digest``; the parse alone, without the field terms a build also counts (a third of its time)."""
    decision, text = elig.decide(path)
    if not decision.kept or text is None or decision.rule is None:
        return None
    if hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != digest:
        return None
    return _derived(build.derive_units(path, text, decision.rule, cfg)), text


def _rows(con: sqlite3.Connection, path: str) -> list[tuple]:
    return [tuple(r) for r in con.execute(f"SELECT {_UNIT_COLUMNS} FROM units WHERE path = ? ORDER BY uid", (path,))]


def _derived(units: list[CodeUnit]) -> list[tuple]:
    return [
        (
            u.id, u.kind, u.name, u.qualified_name, u.signature, u.docstring, u.start_line, u.end_line, u.text,
            json.dumps(u.calls), json.dumps(u.imports), json.dumps(u.bases), u.part, u.parts, u.content_hash,
        )
        for u in units
    ]
