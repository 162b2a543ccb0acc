"""Every table and index paqad creates, in one place: the index generation, the embedding cache, the team store.

Three databases: an index generation (SQLite, ``paqad.index.store``; its format is
``SCHEMA_VERSION`` and the tables below), the user's embedding cache (SQLite,
``paqad.index.embedding.embed_cache``) and the team's PostgreSQL store (``paqad.index.embedding.shared_store``,
``paqad.index.team.artifacts``). The modules that own each database call the functions here; none
spells a ``CREATE`` of its own. SQLite keeps each ``CREATE`` statement's text in
``sqlite_master`` (without ``IF NOT EXISTS``), and ``paqad.index.team.artifact_check`` compares a
downloaded index's statements with the ones here, so a change of text is a change of the format.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 2  # 2: postings packed in blocks (paqad.index.postings)

# ---- an index generation --------------------------------------------------------------------

#: The model's vector per unit (``paqad.index.embedding.vectors``). Also created by every update, so an
#: index built before vectors existed gains it.
VECTORS = "CREATE TABLE IF NOT EXISTS vectors(uid INTEGER PRIMARY KEY, vec BLOB NOT NULL)"
#: Posting lists in packed blocks (``paqad.index.postings``) and each unit's terms.
POSTINGS = """
CREATE TABLE postings(tid INTEGER NOT NULL, blk INTEGER NOT NULL, uids BLOB NOT NULL, w BLOB NOT NULL,
                      mask BLOB NOT NULL, PRIMARY KEY(tid, blk)) WITHOUT ROWID;
CREATE TABLE unit_terms(uid INTEGER PRIMARY KEY, tids BLOB NOT NULL);
"""
#: A new generation: everything but the late additions below (``create_index`` adds them too).
INDEX = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL,
                   mtime_ns INTEGER NOT NULL, language TEXT NOT NULL, units INTEGER NOT NULL);
CREATE TABLE units(uid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, path TEXT NOT NULL,
                   language TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
                   qualified_name TEXT NOT NULL, signature TEXT NOT NULL, docstring TEXT NOT NULL,
                   start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL,
                   calls TEXT NOT NULL, imports TEXT NOT NULL, bases TEXT NOT NULL,
                   part INTEGER NOT NULL, parts INTEGER NOT NULL, content_hash TEXT NOT NULL,
                   lengths TEXT NOT NULL, is_test INTEGER NOT NULL DEFAULT 0);
CREATE INDEX units_path ON units(path);
CREATE INDEX units_name ON units(name);
CREATE TABLE terms(tid INTEGER PRIMARY KEY, term TEXT UNIQUE NOT NULL, df INTEGER NOT NULL);
""" + VECTORS + ";\n" + POSTINGS
#: The agent-written description applied to a unit (``paqad.describe``). Added by every build and
#: update, so an index from before descriptions existed gains it without a rebuild.
DESCRIPTIONS = "CREATE TABLE IF NOT EXISTS descriptions(uid INTEGER PRIMARY KEY, text TEXT NOT NULL)"
#: Declarations by name (the ranking stack's symbol lookups). Also added by every update; a reader
#: of an index without it looks up nothing.
NAME_INDEX = "CREATE INDEX IF NOT EXISTS units_name ON units(name)"
#: Stand-in vectors while the model embeds (``paqad.index.embedding.interim``), dropped when it is done.
INTERIM_TABLE = "interim_vectors"
INTERIM = f"CREATE TABLE IF NOT EXISTS {INTERIM_TABLE}(uid INTEGER PRIMARY KEY, vec BLOB NOT NULL)"


def create_index(con: sqlite3.Connection) -> None:
    """Every table of a new generation (``executescript``: it commits first)."""
    con.executescript(INDEX)
    add_late(con)


def add_late(con: sqlite3.Connection) -> None:
    """The tables and indexes added after schema 2, and ``vectors``, for an index built before them."""
    con.execute(VECTORS)
    con.execute(DESCRIPTIONS)
    con.execute(NAME_INDEX)


def has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def create_interim(con: sqlite3.Connection) -> None:
    con.execute(INTERIM)


# ---- the user's embedding cache (its own SQLite file) -----------------------------------------

EMBED_CACHE_FILE = "embeddings.sqlite"  # in workspace.cache_dir()

EMBED_CACHE = (
    "CREATE TABLE IF NOT EXISTS models(id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, dims INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors(model INTEGER NOT NULL, sha BLOB NOT NULL, vec BLOB NOT NULL, used INTEGER NOT NULL,"
    " PRIMARY KEY(model, sha))",
    "CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used)",
)


def create_embed_cache(con: sqlite3.Connection) -> None:
    for statement in EMBED_CACHE:
        con.execute(statement)


# ---- the team's PostgreSQL store ------------------------------------------------------------

SHARED_VECTORS_TABLE = "paqad_vectors"
SHARED_VECTORS = (
    f"CREATE TABLE IF NOT EXISTS {SHARED_VECTORS_TABLE} ("
    " model text NOT NULL, sha bytea NOT NULL, dims integer NOT NULL, vec bytea NOT NULL,"
    " PRIMARY KEY (model, sha))"
)
ARTIFACTS_TABLE = "paqad_index_artifacts"
CHUNKS_TABLE = "paqad_index_chunks"
ARTIFACTS = (
    f"CREATE TABLE IF NOT EXISTS {ARTIFACTS_TABLE} ("
    " id bigserial PRIMARY KEY, commit_sha text NOT NULL, build_key text NOT NULL,"
    " created_at timestamptz NOT NULL DEFAULT now(), bytes bigint NOT NULL, index_bytes bigint NOT NULL,"
    " sha256 bytea NOT NULL, paqad_version text NOT NULL, UNIQUE (commit_sha, build_key))",
    f"CREATE TABLE IF NOT EXISTS {CHUNKS_TABLE} ("
    f" artifact bigint NOT NULL REFERENCES {ARTIFACTS_TABLE}(id) ON DELETE CASCADE,"
    " seq integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (artifact, seq))",
)



# ---- the commit history (its own SQLite file, ``paqad.index.history``) ------------------------

HISTORY_FILE = "history.sqlite"  # in workspace.vectors_dir(), beside the index generations
HISTORY_VERSION = 3  # 2: hunks (four numbers each) in place of post-image line pairs; 3: renames
#: One row per commit kept (its masked message), the files it touched with their ``-U0`` hunks
#: (old start, count, new start, count) packed as int32s, and the message's terms (paqad's tokenizer, space-joined) in FTS5,
#: whose ``bm25()`` ranks them: one field, so FTS5's whole-row length normalisation is BM25's own.
HISTORY = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS commits(cid INTEGER PRIMARY KEY, sha TEXT UNIQUE NOT NULL, date INTEGER NOT NULL,"
    " subject TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS paths(pid INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL)",
    "CREATE TABLE IF NOT EXISTS touched(pid INTEGER NOT NULL, cid INTEGER NOT NULL, ranges BLOB NOT NULL,"
    " PRIMARY KEY(pid, cid)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS touched_cid ON touched(cid)",  # a found commit's files
    "CREATE TABLE IF NOT EXISTS renamed(cid INTEGER NOT NULL, pid INTEGER NOT NULL, old INTEGER NOT NULL,"
    " PRIMARY KEY(pid, cid)) WITHOUT ROWID",  # commit cid made path pid out of path old
    "CREATE INDEX IF NOT EXISTS renamed_old ON renamed(old)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS message_terms USING fts5(terms, content='', tokenize='unicode61 remove_diacritics 0')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS message_vocab USING fts5vocab(message_terms, 'row')",  # each term's document count
)


def create_history(con: sqlite3.Connection) -> None:
    for statement in HISTORY:
        con.execute(statement)
