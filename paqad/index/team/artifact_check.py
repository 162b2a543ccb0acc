"""Is a downloaded index artifact a sound paqad index? The checks it passes before anything uses it.

An artifact (:mod:`paqad.index.team.artifacts`) comes from a server and whoever can write to it, so it
is checked like a crafted file, with the checks an update runs on a local index and more:
SQLite's header; a schema that is exactly paqad's (no trigger, view or other table: nothing in
the file runs as code, ``trusted_schema`` off and SQLite's defensive mode where Python has it);
the schema version and ``meta`` types (:func:`paqad.index.store.check_meta`); the whole-file
checks of :func:`paqad.index.integrity.problem`; the settings the index depends on
(``build.needs_full_rebuild``); relative paths inside a repository; and every vector's owner,
length and finite values. Whatever fails is one line (``ArtifactRefused``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.errors import IndexCorruptError, IndexOutdatedError
from paqad.index import integrity, schema, store
from paqad.index.writing import build

if TYPE_CHECKING:
    from paqad.config import Config

_MAGIC = b"SQLite format 3\x00"


class ArtifactRefused(Exception):
    """An artifact that failed a check (the message is one line: what was wrong)."""



def _reference_schema() -> set[tuple[str, str, str | None]]:
    """(type, name, sql) of everything a paqad index may hold, from a fresh index in memory."""
    con = sqlite3.connect(":memory:")
    try:
        schema.create_index(con)
        return {(t, n, s) for t, n, s in con.execute("SELECT type, name, sql FROM sqlite_master")}
    finally:
        con.close()


def _path_problem(path: object) -> bool:
    if not isinstance(path, str) or not path or "\x00" in path or path.startswith("/") or "\\" in path:
        return True
    return any(part in ("", ".", "..") for part in path.split("/"))


def check_file(path: Path, cfg: Config, root: Path | None = None) -> None:
    """Raise ``ArtifactRefused`` (one line) unless ``path`` is a sound paqad index built with the
    settings this repository would build with. Read-only; the file is never written here."""
    with path.open("rb") as handle:
        if handle.read(len(_MAGIC)) != _MAGIC:
            raise ArtifactRefused("it is not an SQLite database")
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise ArtifactRefused(f"SQLite cannot open it ({exc})") from None
    try:
        harden(con)
        _check_open(con, path, cfg, root)
    except (sqlite3.DatabaseError, ValueError, TypeError, OverflowError) as exc:
        raise ArtifactRefused(f"it is unreadable ({type(exc).__name__}: {str(exc)[:200]})") from None
    except IndexOutdatedError:
        raise ArtifactRefused("it was built by an older paqad (index schema older than this one)") from None
    except IndexCorruptError as exc:
        raise ArtifactRefused(exc.detail) from None
    finally:
        con.close()


def harden(con: sqlite3.Connection) -> None:
    """Nothing in the file's schema runs as code: no trusted schema, defensive mode where Python has it."""
    con.execute("PRAGMA trusted_schema=OFF")
    con.execute("PRAGMA cell_size_check=ON")
    defensive = getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE", None)
    if defensive is not None and hasattr(con, "setconfig"):
        con.setconfig(defensive, True)


def _check_open(con: sqlite3.Connection, path: Path, cfg: Config, root: Path | None) -> None:
    found = {(t, n, s) for t, n, s in con.execute("SELECT type, name, sql FROM sqlite_master")}
    extra = found - _reference_schema()
    if extra:
        kind, name, _ = sorted(extra, key=str)[0]
        raise ArtifactRefused(f"its schema holds a {kind} {name[:60]!r} that a paqad index does not have")
    meta = store.check_meta(con, path)  # schema version and meta types (IndexOutdatedError / IndexCorruptError)
    problem = integrity.problem(con)
    if problem:
        raise ArtifactRefused(problem)
    reason = build.needs_full_rebuild(meta, cfg)
    if reason:
        raise ArtifactRefused(f"it was built with other settings ({reason})")
    for table in ("files", "units"):
        for (p,) in con.execute(f"SELECT path FROM {table}"):
            if _path_problem(p):
                raise ArtifactRefused(f"{table} holds the path {str(p)[:60]!r}, not a relative path inside a repository")
    _check_vectors(con, int(meta.get("embedding_dims") or 0))


def _check_vectors(con: sqlite3.Connection, dims: int) -> None:
    """Every vector belongs to a unit, has ``dims`` float32 values, all finite."""
    import numpy as np  # ~170 ms: the prompt hook reads the index without numpy

    has = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'").fetchone()
    if not has:
        return
    bad = con.execute(
        "SELECT COUNT(*) FROM vectors WHERE typeof(vec) != 'blob' OR length(vec) != ? OR uid NOT IN (SELECT uid FROM units)", (4 * dims,)
    ).fetchone()[0]
    if bad:
        raise ArtifactRefused(f"{bad} vectors are malformed (wrong length, or no such unit)")
    cur = con.execute("SELECT vec FROM vectors")
    while rows := cur.fetchmany(4096):
        if not np.isfinite(np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4")).all():
            raise ArtifactRefused("a vector holds a value that is not finite")
