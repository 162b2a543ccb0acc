"""A team-shared embedding store on PostgreSQL (``rag_shared_store``): vectors by model and text hash.

Why: every clone, worktree and teammate otherwise embeds the whole repository again. With a store,
a unit embedded once by anyone (or by CI) is fetched by everyone else: the user cache first, then
the store, then the model (``Tiered``).

What leaves the machine, and only to the server the user named: the cache key of the model (its
fingerprint and text-preparation version), the SHA-256 of each embedded text, its dimension count
and the float16 vector. Never a path, a name or the text itself.

Vectors read back are untrusted: a row counts only when its model key is the one asked for, its
dimension count and byte length match, and every value is finite; anything else is ignored (and
the unit embedded locally). The store never fails a build or a prompt: a connection or a statement
is bounded by a timeout (``CONNECT_TIMEOUT_S``, ``STATEMENT_TIMEOUT_MS``), and after the first error
the store is off for the rest of the run. No extension is needed (vectors are ``bytea`` by key).
"""

from __future__ import annotations

import ipaddress
import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.errors import ConfigError
from paqad.index import schema

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.abc import ConnDict
    from psycopg.rows import TupleRow

    from paqad.index.embedding.embed_cache import UserEmbedCache

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_MS = 5000
_CHUNK = 500  # shas per SELECT / rows per INSERT batch
TABLE = schema.SHARED_VECTORS_TABLE
_SAFE_SSL = ("require", "verify-ca", "verify-full")
PASSWORD_SECRET = "PGPASSWORD"


def _local_host(host: str) -> bool:
    """A Unix socket folder, or a loopback name or address: TLS is not required there."""
    if not host or host.startswith("/") or host.startswith("@"):
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def conninfo(dsn: str, password: str | None = None) -> ConnDict:
    """The connection parameters for ``dsn``, with TLS required unless every host is local.
    Raises ``ConfigError`` (one line) for a DSN that is not one, or one that turns TLS off for a
    remote host."""
    from psycopg.conninfo import conninfo_to_dict  # optional: the team extra

    try:
        params = conninfo_to_dict(dsn)
    except Exception as exc:  # psycopg.ProgrammingError: not a connection string
        raise ConfigError(f"rag_shared_store is not a PostgreSQL connection string: {str(exc).splitlines()[0]}") from None
    hosts = [h for h in str(params.get("host") or "").split(",")]
    if not all(_local_host(h) for h in hosts):
        mode = str(params.get("sslmode") or "")
        if mode and mode not in _SAFE_SSL:
            raise ConfigError(f"rag_shared_store: sslmode={mode} for a remote host; use sslmode=require (or verify-full), or a loopback host or Unix socket")
        params.setdefault("sslmode", "require")
    if password and "password" not in params:
        params["password"] = password
    params["connect_timeout"] = CONNECT_TIMEOUT_S
    params["options"] = f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"
    params.setdefault("application_name", "paqad")
    return params


def valid(blob: bytes, dims: int) -> bool:
    """A vector from the store is used only if it has the right size and only finite values."""
    if len(blob) != 2 * dims:
        return False
    import numpy as np  # lazily: ``vectors`` imports this module on the lexical search path

    return bool(np.isfinite(np.frombuffer(blob, dtype=np.float16)).all())


class SharedStore:
    """Read and write float16 vectors by (model key, text sha) on one PostgreSQL database."""

    def __init__(self, dsn: str, password: str | None = None) -> None:
        self.params = conninfo(dsn, password)
        self.con: Connection[TupleRow] | None = None
        self.error: str | None = None
        self.hits = 0
        self.written = 0
        self.rejected = 0
        self._opened = False

    def _connection(self) -> Connection[TupleRow] | None:
        if self._opened:
            return self.con
        self._opened = True
        try:
            import psycopg  # optional (the team extra), and only once a store is used
            from psycopg.conninfo import make_conninfo  # lazy: as above

            self.con = psycopg.connect(make_conninfo("", **self.params), autocommit=True)
            try:
                self.con.execute(schema.SHARED_VECTORS)
            except psycopg.Error as exc:  # no right to create it: reading an existing table still works
                log.info("shared store: %s", str(exc).splitlines()[0])
        except Exception as exc:  # ImportError (no psycopg), OperationalError (down, refused, timeout), ...
            self._off(exc)
        return self.con

    def _off(self, exc: BaseException) -> None:
        self.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
        log.warning("shared embedding store off for this run: %s", self.error)
        self.close()

    def get(self, model: str, shas: Iterable[bytes], dims: int) -> dict[bytes, bytes]:
        """float16 vector bytes by sha for the shas the store holds and that pass ``valid``."""
        wanted = list(dict.fromkeys(shas))
        con = self._connection() if wanted else None
        if con is None:
            return {}
        found: dict[bytes, bytes] = {}
        try:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                rows = con.execute(f"SELECT sha, dims, vec FROM {TABLE} WHERE model = %s AND sha = ANY(%s)", (model, chunk)).fetchall()
                for sha, row_dims, vec in rows:
                    blob = bytes(vec)
                    if row_dims == dims and valid(blob, dims):
                        found[bytes(sha)] = blob
                    else:
                        self.rejected += 1
        except Exception as exc:
            self._off(exc)
            return {}
        self.hits += len(found)
        return found

    def put(self, model: str, items: dict[bytes, bytes], dims: int) -> None:
        """Write vectors in batches; a row someone else wrote first is kept (concurrent writers)."""
        rows = [(model, sha, dims, blob) for sha, blob in items.items() if valid(blob, dims)]
        con = self._connection() if rows else None
        if con is None:
            return
        try:
            with con.cursor() as cur:
                for i in range(0, len(rows), _CHUNK):
                    cur.executemany(
                        f"INSERT INTO {TABLE} (model, sha, dims, vec) VALUES (%s, %s, %s, %s) ON CONFLICT (model, sha) DO NOTHING",
                        rows[i : i + _CHUNK],
                    )
            self.written += len(rows)
        except Exception as exc:
            self._off(exc)

    def close(self) -> None:
        if self.con is not None:
            try:
                self.con.close()
            except Exception:
                pass
        self.con = None


class Tiered:
    """The user cache, then the shared store: the interface ``vectors`` uses for the cache alone.
    Store hits are copied into the user cache; fresh vectors go to both."""

    def __init__(self, local: UserEmbedCache, shared: SharedStore) -> None:
        self.local = local
        self.shared = shared

    def get(self, model: str, shas: Iterable[bytes], dims: int) -> dict[bytes, bytes]:
        wanted = list(dict.fromkeys(shas))
        found = self.local.get(model, wanted, dims)
        rest = [s for s in wanted if s not in found]
        if rest:
            remote = self.shared.get(model, rest, dims)
            if remote:
                self.local.put(model, remote, dims)
                found.update(remote)
        return found

    def put(self, model: str, items: dict[bytes, bytes], dims: int) -> None:
        self.local.put(model, items, dims)
        self.shared.put(model, items, dims)

    def close(self) -> None:
        self.shared.close()
        self.local.close()

    @property
    def con(self) -> sqlite3.Connection | None:
        """The user cache's connection (None when it is off)."""
        return self.local.con

    def __getattr__(self, name: str) -> object:  # count, hits, misses, live_bytes: the user cache's
        return getattr(self.local, name)


def open_store(root: Path, dsn: str) -> SharedStore | None:
    """The store for ``rag_shared_store`` (empty: none), the password from ``.pgpass`` (libpq reads
    it) or ``PGPASSWORD`` in the environment or ``secrets.env`` (in paqad's per-developer folder)."""
    if not dsn:
        return None
    try:
        import psycopg  # noqa: F401  (the optional extra: pip install 'paqad[team]')
    except ImportError:
        from paqad import origin  # ~60 ms to import: only to say psycopg is missing

        log.warning("rag_shared_store is set but psycopg is not installed (%s): the store is off", origin.pip_install("team"))
        return None
    from paqad import secrets  # ~60 ms to import: only once a store is configured

    secret = secrets.get_secret(PASSWORD_SECRET, root)
    return SharedStore(dsn, secret.reveal() if secret is not None else None)
