"""SQLite storage of one index generation, and the pointer that says which generation is current.

Layout under ``<per-developer folder>/vectors/``: ``CURRENT`` (a text file naming the live database) and
``index-<N>.sqlite``. A full rebuild writes generation N+1 and then atomically replaces
``CURRENT``, so a reader opens the old index or the new one, never a half-built one, and a
reader that already has the old file open keeps reading it (we never ``os.replace`` over a WAL
database that has readers). Incremental updates are single transactions on the current file.
Everything read from here is untrusted: ``CURRENT`` must name a file in this folder, the meta
values must have their types (:mod:`paqad.index.integrity`), and any ``sqlite3.DatabaseError``
becomes ``IndexCorruptError`` (whose message names the repair). An index of an older schema is
``IndexOutdatedError``: an upgrade, rebuilt by the next update, not damage.

Existing generations are opened by URI, ``mode=ro`` for readers and ``mode=rw`` for the writer,
never ``rwc``: a reader that raced a rebuild's swap (the generation ``CURRENT`` named is gone) gets
an error it can retry after re-reading ``CURRENT``, and never creates an empty database at the
old name.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from paqad import workspace
from paqad.errors import IndexCorruptError, IndexMissingError, IndexOutdatedError
from paqad.index import guard, integrity, schema
from paqad.index.schema import SCHEMA_VERSION

_GENERATION = re.compile(r"^index-(\d{1,9})\.sqlite$")
REBUILD_HINT = "run `paqad rag rebuild`"
DAMAGED = "DAMAGED"  # names a generation a reader found damaged: the next update rebuilds it


def current_pointer(root: Path) -> Path:
    return workspace.vectors_dir(root) / "CURRENT"


def current_path(root: Path) -> Path | None:
    """The live database file, or None when no index has been built. Validates the pointer."""
    pointer = current_pointer(root)
    if not pointer.exists():
        guard.check_folder(root)  # a plain file there: say so, not "run rag init" (which cannot)
        return None
    name = read_pointer(pointer)
    path = pointer.parent / name
    if not path.is_file() or path.is_symlink():
        raise IndexCorruptError(f"the current index file {path} is missing")
    return path


def read_pointer(pointer: Path) -> str:
    """The generation file name ``CURRENT`` holds, validated (a name in this folder, nothing else)."""
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexCorruptError(f"{pointer} is unreadable ({exc})") from exc
    if not _GENERATION.match(name):
        raise IndexCorruptError(f"{pointer} names {name[:60]!r}, not an index file in {pointer.parent}")
    return name


def pointer_name(root: Path) -> str | None:
    """What ``CURRENT`` names now (None when absent or unreadable): a reader that failed compares
    it with the generation it tried, to tell a rebuild's swap from damage."""
    try:
        return read_pointer(current_pointer(root))
    except (IndexCorruptError, FileNotFoundError):
        return None


#: A stat taken of ``CURRENT`` vouches for what it names only once the file is this much older
#: than the stat (git's "racy" rule): two writes in one clock tick can leave every field alike.
SETTLE_NS = 2_000_000_000
PointerStat = tuple[str, int, int, int, int, int]


def pointer_stat(root: Path) -> PointerStat | None:
    """(``CURRENT``'s path, device, inode, size, mtime, ctime) now, or None when it cannot be
    stat'ed. ``publish`` replaces ``CURRENT`` with a new file, so while a settled stat
    (:func:`settled`) is unchanged, ``CURRENT`` still names what it named when it was taken: a
    warm reader checks this stat instead of reading and validating the pointer on every query."""
    pointer = current_pointer(root)
    try:
        st = os.stat(pointer)
    except (OSError, ValueError):
        return None
    return (str(pointer), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(seen: PointerStat) -> bool:
    """True when the file ``seen`` describes last changed more than ``SETTLE_NS`` ago."""
    return time.time_ns() - max(seen[4], seen[5]) > SETTLE_NS


def generation_of(path: Path) -> int:
    m = _GENERATION.match(path.name)
    return int(m.group(1)) if m else 0


def next_generation_path(root: Path) -> Path:
    folder = workspace.vectors_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    gens = [generation_of(p) for p in folder.glob("index-*.sqlite")]
    return folder / f"index-{max(gens, default=0) + 1:06d}.sqlite"


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open an existing index file (``mode=ro`` or ``mode=rw``: never created); a missing,
    non-SQLite or damaged file raises IndexCorruptError, an older schema IndexOutdatedError."""
    uri = f"{path.resolve().as_uri()}?mode={'ro' if readonly else 'rw'}"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=10.0, isolation_level=None, check_same_thread=False)
    except sqlite3.DatabaseError as exc:
        raise IndexCorruptError(f"index {path} cannot be opened ({exc})") from exc
    try:
        if readonly:
            con.execute("PRAGMA query_only=1")
        else:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
        check_meta(con, path)
    except sqlite3.DatabaseError as exc:
        con.close()
        if guard.out_of_space(exc, path.parent):  # not damage: a rebuild would need more space still
            raise guard.full_error(path.parent) from None
        raise IndexCorruptError(f"index {path} is unreadable ({exc})") from exc
    except BaseException:
        con.close()
        raise
    return con


def check_meta(con: sqlite3.Connection, path: Path) -> dict[str, str]:
    """The meta table, once its schema version and values are known to be sound."""
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    version = meta.get("schema_version")
    if version != str(SCHEMA_VERSION):
        if version is not None and version.isdigit() and 0 < int(version) < SCHEMA_VERSION:
            raise IndexOutdatedError(
                f"the index was built by an older paqad (index schema {version}; this paqad uses {SCHEMA_VERSION}): "
                "it is rebuilt in the background (git hooks and the prompt hook start it); `paqad rag update` rebuilds it now"
            )
        raise IndexCorruptError(f"index {path} has schema version {str(version)[:20]!r}, this paqad reads {SCHEMA_VERSION}")
    problem = integrity.meta_problem(meta)
    if problem:
        raise IndexCorruptError(f"index {path}: {problem}")
    return meta


def open_current(root: Path, readonly: bool = True) -> sqlite3.Connection:
    """Connect to the live index or raise IndexMissingError / IndexCorruptError."""
    path = current_path(root)
    if path is None:
        raise IndexMissingError("no index yet; run `paqad rag init` (or `paqad rag rebuild`)")
    return connect(path, readonly=readonly)


def create(path: Path) -> sqlite3.Connection:
    """A fresh database for a full build, written without WAL until it is complete."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    schema.create_index(con)
    con.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    return con


def pending_vectors(con: sqlite3.Connection) -> int:
    """Units still without a vector (0 for a lexical-only index)."""
    if not get_meta(con).get("embedding_fingerprint"):
        return 0
    if not schema.has_table(con, "vectors"):
        return int(con.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    return int(con.execute("SELECT COUNT(*) FROM units WHERE uid NOT IN (SELECT uid FROM vectors)").fetchone()[0])


def set_meta(con: sqlite3.Connection, values: dict[str, object]) -> None:
    for key, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value)
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, text))


def get_meta(con: sqlite3.Connection) -> dict[str, str]:
    return dict(con.execute("SELECT key, value FROM meta").fetchall())


def publish(root: Path, path: Path) -> None:
    """Make ``path`` the current generation (atomic pointer swap), then drop older generations
    (and the note that an older one was damaged)."""
    workspace.atomic_write_text(current_pointer(root), path.name + "\n")
    (path.parent / DAMAGED).unlink(missing_ok=True)
    for old in path.parent.glob("index-*.sqlite*"):
        base = old.name.split(".sqlite")[0] + ".sqlite"
        if base != path.name:
            old.unlink(missing_ok=True)


def snapshot(live: Path, target: Path) -> None:
    """A consistent copy of the index file ``live`` at ``target`` (SQLite's online backup, read
    through a read-only connection: the live file is never written, its readers never blocked)."""
    src = sqlite3.connect(f"{live.resolve().as_uri()}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def mark_damaged(root: Path, generation: str, detail: str) -> None:
    """Note that a reader found ``generation`` damaged, so the next update rebuilds it even when
    its own checks pass (damage inside a value only a search decodes). Best effort, never raises."""
    try:
        folder = workspace.vectors_dir(root)
        if folder.is_dir() and not (folder / DAMAGED).exists():
            workspace.atomic_write_text(folder / DAMAGED, json.dumps({"generation": generation, "detail": detail[:300]}))
    except OSError:
        pass


def damaged_note(root: Path) -> str | None:
    """What a reader found wrong with the current generation (None when no reader complained)."""
    try:
        data = json.loads((workspace.vectors_dir(root) / DAMAGED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("generation") != pointer_name(root):
        return None
    return f"a reader found it damaged ({str(data.get('detail') or 'no detail')[:200]})"


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: readers see the index before or after it, never between."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
