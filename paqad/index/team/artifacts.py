"""Index artifacts per commit in the team store (``rag_shared_index``): publish once, adopt anywhere.

Why: with the shared embedding store a second clone no longer embeds, but it still parses and
indexes every file. An artifact is the whole index of one commit: CI (or any clean checkout) runs
``paqad rag publish``, and ``paqad rag init`` on a clone at that commit, or at a descendant of it,
downloads it, checks it, makes it the live index and then updates only the files that differ.

Which artifact a clone takes: the one of the nearest commit among HEAD and its last
``ANCESTORS`` ancestors (``git rev-list --topo-order``). A feature branch cut from ``main`` thus
starts from ``main``'s artifact and re-indexes the files it changed; the update compares content
hashes, so an artifact of another commit costs work, never a wrong index.

What is sent (only to the server ``rag_shared_store`` names, TLS unless loopback or a socket):
the index file of the commit, zlib-compressed: every indexed unit's text after secret redaction,
its path, names, signature, docstring and line numbers, the terms and postings, the float32
vectors, each file's path, size, mtime and SHA-256, applied descriptions, and the settings and
versions in ``meta``; beside it the commit hash, the build key (a hash of the versions and
settings an index depends on), byte counts and the time. That is source text: a separate opt-in
from the embedding store, refused in a committed team config. ``publish`` refuses a work tree
whose indexed files differ from HEAD, so only committed code leaves the machine.

What is received is untrusted, checked like a crafted index before anything uses it
(:func:`paqad.index.team.artifact_check.check_file`): SQLite's header, a schema that is exactly paqad's (no triggers, no views,
no other tables), the ``meta`` types and schema version, ``integrity.problem`` (SQLite's check,
orphan units, posting blocks), the settings the index depends on, relative paths, and every
vector's length and finite values. Its inflation stops at the size its row declares, before
writing past it (a zlib bomb costs no more disk than an honest index). A refused artifact is one
line on stderr and the audit log, and the clone builds locally. Then its text is verified, not
trusted (:mod:`paqad.index.team.verify`): every unit of a file whose content here matches is compared
with a fresh parse of the file, and a file whose rows differ is re-derived before the index goes live. The store being down, slow or refusing costs at most
``CONNECT_TIMEOUT_S`` plus ``FETCH_DEADLINE_S``, then the local build runs.

Expiry: ``rag_shared_index_days``. ``publish`` deletes older artifacts in the transaction that
adds its own, and a clone never takes an older one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import __version__, audit, git, workspace
from paqad.errors import UsageError
from paqad.index import fields, guard, schema, store
from paqad.index.embedding import shared_store, vectors
from paqad.index.team import verify
from paqad.index.team.artifact_check import ArtifactRefused, check_file
from paqad.index.writing import build
from paqad.parse import PARSER_VERSION
from paqad.tokenize import TOKENIZER_VERSION

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

    from paqad.config import Config
    from paqad.jsontypes import JSONObject

log = logging.getLogger(__name__)

ARTIFACTS = schema.ARTIFACTS_TABLE
CHUNKS = schema.CHUNKS_TABLE
ANCESTORS = 100  # HEAD and this many ancestors are looked up (one query)
CHUNK_BYTES = 2 << 20  # per row and statement: well inside STATEMENT_TIMEOUT_MS on a LAN
FETCH_DEADLINE_S = 60.0  # the whole download, past the connection's own timeout
MAX_ARTIFACT_BYTES = 1 << 30  # compressed, as the row declares it and as received
MAX_INDEX_BYTES = 4 << 30  # decompressed, as the row declares it; inflation stops at the declared size
INFLATE_STEP = 1 << 22  # bytes inflated per step: what is held before the declared-size check


class StoreUnavailable(Exception):
    """The store could not be asked (down, slow, refused, no psycopg): the caller builds locally."""


@dataclass(frozen=True)
class Found:
    """An artifact's row: what it declares (compressed ``size``, ``index_bytes`` once inflated)."""

    id: int
    commit: str
    size: int  # compressed
    sha256: bytes
    index_bytes: int


def build_key(cfg: Config, root: Path | None = None) -> str:
    """What an index depends on beyond the files (``build.needs_full_rebuild``'s checks and the
    schema): only an artifact with the same key can be updated in place here."""
    parts = {
        "schema": schema.SCHEMA_VERSION,
        "tokenizer": str(TOKENIZER_VERSION),
        "parser": str(PARSER_VERSION),
        "ranking": str(fields.RANKING_VERSION),
        "max_unit_lines": str(cfg.rag_max_unit_lines),
        "embedding": str(vectors.index_meta(cfg, root)["embedding_fingerprint"]),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def enabled(cfg: Config) -> bool:
    return bool(cfg.rag_shared_index and cfg.rag_shared_store)


# ---- the server side ---------------------------------------------------------------------------


class ArtifactStore:
    """The two artifact tables on the ``rag_shared_store`` database (the store's connection rules:
    TLS unless local, password from ``.pgpass`` or ``PGPASSWORD``, connect and statement timeouts)."""

    def __init__(self, root: Path, dsn: str) -> None:
        try:
            import psycopg  # noqa: F401  (the optional extra: pip install 'paqad[team]')
        except ImportError:
            from paqad import origin  # ~60 ms to import: only to say psycopg is missing

            raise StoreUnavailable(f"psycopg is not installed ({origin.pip_install('team')})") from None
        from paqad import secrets  # ~60 ms to import: only once a store is configured

        secret = secrets.get_secret(shared_store.PASSWORD_SECRET, root)
        self.params = shared_store.conninfo(dsn, secret.reveal() if secret is not None else None)
        self.con: Connection[TupleRow]  # opened by __enter__

    def __enter__(self) -> ArtifactStore:
        import psycopg  # optional: the team extra
        from psycopg.conninfo import make_conninfo  # optional: as above

        try:
            self.con = psycopg.connect(make_conninfo("", **self.params), autocommit=True)
        except Exception as exc:
            raise StoreUnavailable(_one_line(exc)) from None
        for statement in schema.ARTIFACTS:
            try:
                self.con.execute(statement)
            except psycopg.Error as exc:  # no right to create: reading existing tables still works
                log.info("index artifacts: %s", _one_line(exc))
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.con.close()
        except Exception:
            pass

    def publish(self, commit: str, key: str, blob: bytes, index_bytes: int, days: int, version: str) -> int:
        """Store ``blob`` as the artifact of (commit, key) in one transaction (readers see the old
        one or the whole new one), deleting artifacts older than ``days`` first. The number deleted."""
        digest = hashlib.sha256(blob).digest()
        with self.con.transaction():
            expired = self.con.execute(f"DELETE FROM {ARTIFACTS} WHERE created_at < now() - make_interval(days => %s)", (days,)).rowcount
            self.con.execute(f"DELETE FROM {ARTIFACTS} WHERE commit_sha = %s AND build_key = %s", (commit, key))
            row = self.con.execute(
                f"INSERT INTO {ARTIFACTS} (commit_sha, build_key, bytes, index_bytes, sha256, paqad_version)"
                " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (commit, key, len(blob), index_bytes, digest, version),
            ).fetchone()
            if row is None:  # pragma: no cover - INSERT ... RETURNING returns its row
                raise StoreUnavailable("the artifact row was not inserted")
            with self.con.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {CHUNKS} (artifact, seq, data) VALUES (%s, %s, %s)",
                    [(row[0], i, blob[off : off + CHUNK_BYTES]) for i, off in enumerate(range(0, len(blob), CHUNK_BYTES))],
                )
        return max(0, int(expired or 0))

    def find(self, commits: list[str], key: str, days: int) -> Found | None:
        """The unexpired artifact of the first of ``commits`` that has one."""
        if not commits:
            return None
        rows = self.con.execute(
            f"SELECT id, commit_sha, bytes, sha256, index_bytes FROM {ARTIFACTS} WHERE build_key = %s AND commit_sha = ANY(%s)"
            " AND created_at >= now() - make_interval(days => %s)",
            (key, commits, days),
        ).fetchall()
        order = {c: i for i, c in enumerate(commits)}
        rows.sort(key=lambda r: order.get(r[1], len(order)))
        return Found(int(rows[0][0]), str(rows[0][1]), int(rows[0][2]), bytes(rows[0][3]), int(rows[0][4])) if rows else None

    def fetch(self, artifact: int, declared: int, digest: bytes, deadline: float) -> bytes:
        """The artifact's bytes, chunk by chunk; refused past its declared size, the size cap or the
        deadline, or when the bytes do not hash to the recorded digest."""
        if not 0 < declared <= MAX_ARTIFACT_BYTES:
            raise ArtifactRefused(f"it declares {declared} bytes (at most {MAX_ARTIFACT_BYTES})")
        parts: list[bytes] = []
        got, seq = 0, 0
        while got < declared:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"the download took longer than {FETCH_DEADLINE_S:g} s")
            row = self.con.execute(f"SELECT data FROM {CHUNKS} WHERE artifact = %s AND seq = %s", (artifact, seq)).fetchone()
            if row is None:
                raise ArtifactRefused(f"chunk {seq} is missing ({got} of {declared} bytes)")
            data = bytes(row[0])
            got += len(data)
            if got > declared:
                raise ArtifactRefused(f"it holds more than the {declared} bytes it declares")
            parts.append(data)
            seq += 1
        blob = b"".join(parts)
        if hashlib.sha256(blob).digest() != digest:
            raise ArtifactRefused("its bytes do not match their recorded SHA-256")
        return blob


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


# ---- publish ------------------------------------------------------------------------------------


@dataclass
class PublishReport:
    commit: str
    units: int
    index_bytes: int
    bytes: int
    expired: int
    seconds: float


def publish(root: Path, cfg: Config, update: Callable[[], object] | None = None) -> PublishReport:
    """Update the index, check that it is HEAD's (no indexed file differs from the commit), check
    it like a downloaded one, compress it and store it as HEAD's artifact. Raises ``UsageError``
    (one line) when not set up or the work tree differs, ``StoreUnavailable`` when the store is."""
    if not enabled(cfg):
        raise UsageError(
            "publishing an index needs rag_shared_store and rag_shared_index (an index holds source text): "
            "`paqad config set rag_shared_store ...` and `paqad config set rag_shared_index true`"
        )
    commit = git.head_commit(root)
    if commit is None:
        raise UsageError("this repository has no commit yet: an artifact is the index of a commit")
    started = time.perf_counter()
    (update or (lambda: build.update(root, cfg)))()
    tmp = workspace.vectors_dir(root) / f".publish-{os.getpid()}.sqlite"
    try:
        with build.writer_lock(root):
            live = store.current_path(root)
            if live is None:
                raise UsageError("no index to publish; run `paqad rag init`")
            store.snapshot(live, tmp)
        _refuse_uncommitted(root, tmp)
        try:
            check_file(tmp, cfg, root)
        except ArtifactRefused as exc:
            raise UsageError(f"the index is not sound enough to publish ({exc}); run `paqad rag rebuild`") from None
        units = _units(tmp)
        raw = tmp.read_bytes()
    finally:
        tmp.unlink(missing_ok=True)
    blob = zlib.compress(raw, 6)
    with ArtifactStore(root, cfg.rag_shared_store) as server:
        try:
            expired = server.publish(commit, build_key(cfg, root), blob, len(raw), cfg.rag_shared_index_days, __version__)
        except Exception as exc:  # psycopg.Error: refused, timeout, no right to write
            raise StoreUnavailable(_one_line(exc)) from None
    report = PublishReport(commit, units, len(raw), len(blob), expired, round(time.perf_counter() - started, 3))
    audit.log(root, "INFO", "index-published", commit=commit, bytes=len(blob), units=units, expired=expired)
    return report


def _units(path: Path) -> int:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    finally:
        con.close()


def _refuse_uncommitted(root: Path, index_file: Path) -> None:
    """Only committed code leaves the machine: no indexed file may be staged, modified or untracked."""
    con = sqlite3.connect(f"{index_file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        indexed = {r[0] for r in con.execute("SELECT path FROM files")}
    finally:
        con.close()
    differ = sorted(indexed & (set(git.staged_files(root)) | set(git.unstaged_files(root)) | set(git.untracked_files(root))))
    if differ:
        more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
        raise UsageError(
            f"the index holds files that differ from the commit ({', '.join(differ[:3])}{more}); "
            "publish from a clean checkout of the commit (only committed code is published)"
        )


# ---- adopt --------------------------------------------------------------------------------------


@dataclass
class AdoptReport:
    """What ``rag init`` did with the store: ``adopted``, ``none`` (no artifact for these commits),
    ``refused`` (one failed check), ``unavailable`` (the store could not be asked)."""

    status: str
    commit: str | None = None
    reason: str = ""
    bytes: int = 0
    seconds: float = 0.0
    stats_refreshed: int = 0
    rederived: list[str] = field(default_factory=list)  # files whose unit rows did not match the file (paqad.index.team.verify)
    details: JSONObject = field(default_factory=dict)

    def line(self) -> str | None:
        """The one line ``rag init`` prints on stderr (None when there is nothing to say)."""
        short = (self.commit or "")[:12]
        if self.status == "adopted" and self.rederived:
            return (
                f"warning: the shared index of {short} held unit text that does not match {len(self.rederived)} file(s) "
                f"({', '.join(self.rederived[:3])}); re-indexed them from the files here"
            )
        if self.status == "adopted":
            return f"index of {short} downloaded from the shared store ({self.bytes / 1e6:.1f} MB, {self.seconds:.1f} s); updating what differs"
        if self.status == "refused":
            return f"warning: the shared index of {short} was refused ({self.reason}); building locally"
        if self.status == "unavailable":
            return f"warning: the shared store could not be asked ({self.reason}); building locally"
        return None


def adopt(root: Path, cfg: Config) -> AdoptReport:
    """On a clone without an index, make the artifact of HEAD or its nearest ancestor the live index (checked, then an atomic
    pointer swap under the writer lock), with the stat of every file whose content matches the
    work tree refreshed so the update after it parses only files that differ. Never raises for
    the store or the artifact: the report says what happened and the caller builds locally."""
    started = time.perf_counter()
    if store.current_pointer(root).exists():
        return AdoptReport("none", reason="this clone has an index already: it is updated, not replaced")
    commits = git.recent_commits(root, ANCESTORS + 1)
    if not commits:
        return AdoptReport("none", reason="no commits")
    workspace.ensure(root)
    folder = workspace.vectors_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    guard.sweep(root, building=False)  # a killed adoption's .fetched file (no lock held here)
    tmp = folder / f".fetched-{os.getpid()}.sqlite"
    found: Found | None = None
    try:
        deadline = time.monotonic() + FETCH_DEADLINE_S
        with ArtifactStore(root, cfg.rag_shared_store) as server:
            found = server.find(commits, build_key(cfg, root), cfg.rag_shared_index_days)
            if found is None:
                return AdoptReport("none")
            blob = server.fetch(found.id, found.size, found.sha256, deadline)
        _inflate(blob, tmp, found.index_bytes)
        del blob
        check_file(tmp, cfg, root)
        checked = verify.verify_and_refresh(root, cfg, tmp)
        with build.writer_lock(root):
            if store.current_pointer(root).exists():  # a build (a git hook's) finished meanwhile: keep it
                return AdoptReport("none", found.commit, reason="an index was built meanwhile: it is updated, not replaced")
            target = store.next_generation_path(root)
            os.replace(tmp, target)
            store.publish(root, target)
    except StoreUnavailable as exc:
        audit.log(root, "WARN", "shared-index-unavailable", error=str(exc))
        return AdoptReport("unavailable", found.commit if found else None, reason=str(exc))
    except ArtifactRefused as exc:
        audit.log(root, "WARN", "shared-index-refused", commit=found.commit if found else "", error=str(exc))
        return AdoptReport("refused", found.commit if found else None, reason=str(exc))
    except Exception as exc:  # psycopg.Error mid-query (statement timeout, server gone), OSError
        audit.log(root, "WARN", "shared-index-unavailable", error=_one_line(exc))
        return AdoptReport("unavailable", found.commit if found else None, reason=_one_line(exc))
    finally:
        for scratch in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-wal", "-shm", "-journal"))):
            scratch.unlink(missing_ok=True)
    seconds = round(time.perf_counter() - started, 3)
    report = AdoptReport("adopted", found.commit, bytes=found.size, seconds=seconds, stats_refreshed=checked.refreshed, rederived=checked.rederived)
    if checked.rederived:
        audit.log(root, "WARN", "shared-index-rederived", commit=found.commit, files=len(checked.rederived), first=checked.rederived[0][:200])
    audit.log(root, "INFO", "shared-index-adopted", commit=found.commit, bytes=found.size, refreshed=checked.refreshed)
    return report


def _inflate(blob: bytes, target: Path, declared: int) -> None:
    """Decompress ``blob`` to ``target``: an SQLite file of exactly the ``declared`` size (at most
    ``MAX_INDEX_BYTES``). Refused before anything past the declared size is written, so a zlib bomb
    costs at most the declared bytes of disk, and before anything at all is written when the
    first bytes are not an SQLite header that declares that size (a stream of zeros costs none)."""
    if not 0 < declared <= MAX_INDEX_BYTES:
        raise ArtifactRefused(f"it declares {declared} bytes once inflated (at most {MAX_INDEX_BYTES})")
    inflater = zlib.decompressobj()
    written = 0
    try:
        with target.open("wb") as out:
            data = inflater.decompress(blob, INFLATE_STEP)
            if not data:
                raise ArtifactRefused("it inflates to nothing")
            _check_header(data, declared)
            while data:
                if written + len(data) > declared:
                    raise ArtifactRefused(f"it inflates past the {declared} bytes it declares")
                out.write(data)
                written += len(data)
                data = inflater.decompress(inflater.unconsumed_tail, INFLATE_STEP)
    except zlib.error as exc:
        raise ArtifactRefused(f"it is not a zlib stream ({exc})") from None
    if not inflater.eof or inflater.unused_data or written != declared:
        raise ArtifactRefused("its zlib stream is truncated or followed by other bytes")


def _check_header(head: bytes, declared: int) -> None:
    """The first inflated bytes are an SQLite header whose page size times page count is ``declared``
    (the size ``publish`` records is the snapshot file's, which SQLite keeps in its header)."""
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise ArtifactRefused("it is not an SQLite database")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    valid_for, changes = head[92:96], head[24:28]
    if valid_for == changes and page * pages != declared:
        raise ArtifactRefused(f"its SQLite header says {page * pages} bytes, the row {declared}")
