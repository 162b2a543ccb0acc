"""The team-shared embedding store (``rag_shared_store``) against a real PostgreSQL server started
by the tests on a Unix socket: a second machine (its own user cache) embeds nothing a first one
embedded; a store that is down costs a timeout and nothing else; bad vectors in the store are
never used; concurrent writers are safe; a committed team config cannot point paqad at a store;
TLS is required for a remote host."""

from __future__ import annotations

import sqlite3
import threading
import time

import numpy as np
import psycopg
import pytest

from paqad import config
from paqad.errors import ConfigError
from paqad.index import store
from paqad.index.embedding import shared_store
from paqad.index.writing import build
from testing.repos import Repo, clone, make_shop


@pytest.fixture
def fresh_store(pg_server):
    with psycopg.connect(pg_server.dsn, autocommit=True) as con:
        con.execute(f"DROP TABLE IF EXISTS {shared_store.TABLE}")
    return pg_server.dsn


def local_cfg(root, dsn):
    return config.load(root, cli_overrides={"rag_embedding_provider": "local", "rag_shared_store": dsn}, environ={})


def rows(dsn):
    with psycopg.connect(dsn) as con:
        return con.execute(f"SELECT model, sha, dims, length(vec) FROM {shared_store.TABLE}").fetchall()


def other_machine(monkeypatch, tmp_path, name):
    """A teammate: another HOME and so another, empty user cache."""
    home = tmp_path / name
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))


def test_a_teammates_clone_embeds_nothing_the_first_machine_embedded(repo: Repo, tmp_path, monkeypatch, fresh_store):
    make_shop(repo)
    first = build.build_full(repo.root, local_cfg(repo.root, fresh_store))
    assert first.vectors is not None and first.vectors.embedded == first.units > 0
    stored = rows(fresh_store)
    assert len(stored) == first.units and {r[2] for r in stored} == {384} and {r[3] for r in stored} == {768}
    # only keys, hashes and vectors: no text, no path in any row
    assert all(b"def " not in bytes(r[1]) and "shop/" not in r[0] for r in stored)

    other_machine(monkeypatch, tmp_path, "teammate")
    mate = clone(repo.root, tmp_path / "mate-clone")
    second = build.build_full(mate.root, local_cfg(mate.root, fresh_store))
    assert second.vectors is not None and second.vectors.embedded == 0 and second.vectors.cached == second.units  # goal: <= 5 %
    a = sqlite3.connect(store.current_path(repo.root)).execute("SELECT vec FROM vectors ORDER BY uid").fetchall()
    b = sqlite3.connect(store.current_path(mate.root)).execute("SELECT vec FROM vectors ORDER BY uid").fetchall()
    assert a == b  # the same index either way


def test_a_store_that_is_down_costs_a_timeout_and_nothing_else(repo: Repo, tmp_path):
    make_shop(repo)
    nowhere = f"host={tmp_path / 'no-server-here'} dbname=paqad user=paqad"
    started = time.monotonic()
    report = build.build_full(repo.root, local_cfg(repo.root, nowhere))
    assert report.vectors is not None and report.vectors.embedded == report.units and report.vectors.pending == 0
    assert time.monotonic() - started < 120  # generous: the model embeds too; the store itself is bounded by CONNECT_TIMEOUT_S
    s = shared_store.SharedStore(nowhere)
    assert s.get("m", [b"x" * 32], 384) == {} and s.error and "Operational" in s.error


def test_a_stopped_server_mid_run_turns_the_store_off_without_an_error(pg_server, fresh_store):
    s = shared_store.SharedStore(fresh_store)
    s.put("m#prep1", {b"a" * 32: np.ones(4, np.float16).tobytes()}, 4)
    assert s.written == 1
    pg_server.stop()
    try:
        assert s.get("m#prep1", [b"a" * 32], 4) == {} and s.error
        s.put("m#prep1", {b"b" * 32: np.ones(4, np.float16).tobytes()}, 4)  # off: no raise
    finally:
        pg_server.start()


def test_vectors_from_the_store_are_checked_before_use(fresh_store):
    s = shared_store.SharedStore(fresh_store)
    good = np.full(4, 0.5, np.float16).tobytes()
    s.put("m", {b"g" * 32: good}, 4)
    with psycopg.connect(fresh_store, autocommit=True) as con:
        bad = [
            ("m", b"n" * 32, 4, np.array([0.1, np.nan, 0.2, 0.3], np.float16).tobytes()),  # not finite
            ("m", b"s" * 32, 4, good[:6]),  # too short for its dims
            ("m", b"d" * 32, 8, np.ones(8, np.float16).tobytes()),  # other dims
        ]
        con.cursor().executemany(f"INSERT INTO {shared_store.TABLE} VALUES (%s, %s, %s, %s)", bad)
    reader = shared_store.SharedStore(fresh_store)
    got = reader.get("m", [b"g" * 32, b"n" * 32, b"s" * 32, b"d" * 32], 4)
    assert got == {b"g" * 32: good} and reader.rejected == 3
    assert reader.get("other-model", [b"g" * 32], 4) == {}  # the model key is part of the lookup


def test_concurrent_writers_of_the_same_vectors_are_safe(fresh_store):
    items = {bytes([i]) * 32: np.full(4, i / 100, np.float16).tobytes() for i in range(200)}
    stores = [shared_store.SharedStore(fresh_store) for _ in range(4)]
    threads = [threading.Thread(target=s.put, args=("m", items, 4)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s.error is None for s in stores)
    assert len(rows(fresh_store)) == 200


def test_a_committed_team_config_cannot_choose_a_store(repo: Repo):
    make_shop(repo)
    repo.write(".paqad/configs/10-team.yaml", "rag_shared_store: postgresql://paqad@db.example.com/paqad\n")
    with pytest.raises(ConfigError, match="rag_shared_store"):
        config.load(repo.root, environ={})


def test_tls_is_required_for_a_remote_host_and_not_for_a_socket():
    assert shared_store.conninfo("postgresql://paqad@db.example.com/paqad")["sslmode"] == "require"
    assert "sslmode" not in shared_store.conninfo("host=/run/postgresql dbname=paqad")
    assert "sslmode" not in shared_store.conninfo("postgresql://paqad@127.0.0.1/paqad")
    with pytest.raises(ConfigError, match="sslmode=disable"):
        shared_store.conninfo("postgresql://paqad@db.example.com/paqad?sslmode=disable")
    with pytest.raises(ConfigError, match="not a PostgreSQL connection string"):
        shared_store.conninfo("this is = not a dsn = at all")
