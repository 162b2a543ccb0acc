"""Index artifacts per commit (``rag_shared_index``) against a real PostgreSQL server started by the
tests on a Unix socket: one clone publishes, a second clone's ``rag init`` adopts it and answers a
search identically, parsing and embedding nothing; a descendant commit starts from its ancestor's
artifact and re-indexes only what differs; a crafted or corrupted artifact is refused in one line
and a local build runs; old artifacts expire; a store that is down or silent costs a timeout and
the clone builds locally; only committed code is published, and a team config cannot opt in."""

from __future__ import annotations

import json
import socket
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import psycopg
import pytest

from paqad import config
from paqad.errors import ConfigError
from paqad.index import store
from paqad.index.team import artifacts
from testing.repos import Repo, clone, make_shop

QUERY = "retry a card charge after a processor timeout"


def machine(tmp_path: Path, name: str, dsn: str) -> dict[str, str]:
    """The environment of one teammate's machine: its own HOME and empty user cache, the local
    model, and the shared store with artifacts on."""
    home = tmp_path / f"home-{name}"
    home.mkdir(exist_ok=True)
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PAQAD_RAG_EMBEDDING_PROVIDER": "local",
        "PAQAD_RAG_SHARED_STORE": dsn,
        "PAQAD_RAG_SHARED_INDEX": "true",
    }


def ok(done):
    assert done.returncode == 0, done.stderr
    return done


def published(repo: Repo, paqad_cli, tmp_path, dsn) -> dict:
    make_shop(repo)
    return json.loads(ok(paqad_cli("rag", "publish", "--json", cwd=repo.root, env=machine(tmp_path, "ci", dsn))).stdout)


def init(paqad_cli, root: Path, env: dict[str, str]):
    done = ok(paqad_cli("rag", "init", "--json", cwd=root, env=env))
    return json.loads(done.stdout), done.stderr


def ranking(paqad_cli, root: Path, env: dict[str, str]) -> list[tuple]:
    data = json.loads(ok(paqad_cli("rag", "probe", QUERY, "--json", cwd=root, env=env)).stdout)
    return [(r["id"], r["score"], r.get("scores")) for r in data["results"]]


def test_a_second_clone_adopts_the_published_index_and_answers_identically(repo: Repo, paqad_cli, tmp_path, dsn):
    pub = published(repo, paqad_cli, tmp_path, dsn)
    assert pub["commit"] == repo.head() and pub["units"] > 0 and 0 < pub["bytes"] < pub["index_bytes"]
    with psycopg.connect(dsn) as con:
        assert con.execute(f"SELECT commit_sha, bytes FROM {artifacts.ARTIFACTS}").fetchall() == [(repo.head(), pub["bytes"])]

    mate = clone(repo.root, tmp_path / "mate")
    env = machine(tmp_path, "mate", dsn)
    report, err = init(paqad_cli, mate.root, env)
    assert report["shared_index"]["status"] == "adopted" and report["shared_index"]["commit"] == repo.head()
    assert "downloaded from the shared store" in err
    # nothing parsed, nothing embedded: every file matched the work tree
    assert (report["files_changed"], report["files_removed"], report["files_unchanged"]) == (0, 0, report["files_indexed"])
    assert report["vectors"]["embedded"] == 0 and report["vectors"]["pending"] == 0
    assert not (Path(env["XDG_CACHE_HOME"]) / "paqad" / "embeddings.sqlite").exists() or report["vectors"]["cached"] == 0
    assert ranking(paqad_cli, mate.root, env) == ranking(paqad_cli, repo.root, machine(tmp_path, "ci", dsn))
    again, _ = init(paqad_cli, mate.root, env)  # an index exists now: updated, never replaced by a download
    assert again["shared_index"]["status"] == "none" and "index already" in again["shared_index"]["reason"]


def test_a_descendant_commit_starts_from_its_ancestors_index_and_reindexes_only_what_differs(repo: Repo, paqad_cli, tmp_path, dsn):
    published(repo, paqad_cli, tmp_path, dsn)
    mate = clone(repo.root, tmp_path / "mate")
    mate.git("checkout", "-q", "-b", "feature")
    mate.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier service.'''\n    return address\n")
    mate.write("README.md", (mate.root / "README.md").read_text() + "\n## Shipping\n\nParcels are handed to the courier service once the payment is captured.\n")
    mate.commit("shipping")
    mate.write("shop/sessions.py", (mate.root / "shop/sessions.py").read_text() + "\n\ndef forget_cookie() -> None:\n    '''Log out.'''\n")
    env = machine(tmp_path, "mate", dsn)
    report, _ = init(paqad_cli, mate.root, env)
    assert report["shared_index"]["status"] == "adopted" and report["shared_index"]["commit"] == repo.head() != mate.head()
    assert report["files_changed"] == 3 and report["files_removed"] == 0 and report["files_unchanged"] == report["files_indexed"] - 3
    data = json.loads(ok(paqad_cli("rag", "search", "hand the parcel to the courier", "--json", cwd=mate.root, env=env)).stdout)
    assert data["results"][0]["path"] == "shop/shipping.py"


def test_only_committed_code_is_published(repo: Repo, paqad_cli, tmp_path, dsn):
    make_shop(repo)
    repo.write("shop/draft.py", "def unfinished_idea():\n    '''Not committed yet.'''\n    return 1\n")
    done = paqad_cli("rag", "publish", cwd=repo.root, env=machine(tmp_path, "dev", dsn))
    assert done.returncode != 0 and "shop/draft.py" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    with psycopg.connect(dsn) as con:  # refused before connecting: nothing was written, not even the tables
        assert con.execute("SELECT to_regclass(%s)", (artifacts.ARTIFACTS,)).fetchone()[0] is None


def test_a_team_config_cannot_opt_in_and_publish_needs_both_settings(repo: Repo, paqad_cli, tmp_path):
    make_shop(repo)
    (repo.root / ".paqad" / "configs").mkdir(parents=True)
    (repo.root / ".paqad" / "configs" / "team.yaml").write_text("rag_shared_index: true\n")
    with pytest.raises(ConfigError, match="rag_shared_index"):
        config.load(repo.root, environ={})
    (repo.root / ".paqad" / "configs" / "team.yaml").unlink()
    done = paqad_cli("rag", "publish", cwd=repo.root, env={"PAQAD_RAG_SHARED_INDEX": "true"})
    assert done.returncode != 0 and "rag_shared_store" in done.stderr


# ---- crafted and corrupted artifacts --------------------------------------------------------


def _stored(dsn: str) -> tuple[int, bytes]:
    with psycopg.connect(dsn) as con:
        aid = con.execute(f"SELECT id FROM {artifacts.ARTIFACTS}").fetchone()[0]
        blob = b"".join(bytes(r[0]) for r in con.execute(f"SELECT data FROM {artifacts.CHUNKS} WHERE artifact = %s ORDER BY seq", (aid,)))
    return aid, zlib.decompress(blob)


def _replace(dsn: str, aid: int, raw: bytes, compress: bool = True, digest: bytes | None = None) -> None:
    """Put ``raw`` in the store as the artifact, its row made consistent with it (a crafter can)."""
    import hashlib

    blob = zlib.compress(raw) if compress else raw
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"DELETE FROM {artifacts.CHUNKS} WHERE artifact = %s", (aid,))
        con.execute(f"INSERT INTO {artifacts.CHUNKS} VALUES (%s, 0, %s)", (aid, blob))
        con.execute(
            f"UPDATE {artifacts.ARTIFACTS} SET bytes = %s, sha256 = %s WHERE id = %s", (len(blob), digest or hashlib.sha256(blob).digest(), aid)
        )


def _edited(raw: bytes, tmp_path: Path, sql: str, params: tuple = ()) -> bytes:
    path = tmp_path / "crafted.sqlite"
    path.write_bytes(raw)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(sql, params)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return path.read_bytes()


NAN = np.array([np.nan] * 384, "<f4").tobytes()
OUTSIDE = "UPDATE {t} SET path = '../../etc/passwd' WHERE path = 'README.md'"
CRAFTS = {  # how the artifact is crafted, and what the refusal names
    "not an index": (lambda raw, tmp: b"not an index at all" * 100, "not an SQLite database"),
    "a trigger": (lambda raw, tmp: _edited(raw, tmp, "CREATE TRIGGER t AFTER UPDATE ON files BEGIN DELETE FROM units; END"), "trigger 't'"),
    "a NaN vector": (
        lambda raw, tmp: _edited(raw, tmp, "UPDATE vectors SET vec = ? WHERE uid = (SELECT MIN(uid) FROM vectors)", (NAN,)),
        "not finite",
    ),
    "a short vector": (lambda raw, tmp: _edited(raw, tmp, "UPDATE vectors SET vec = x'00000000'"), "vectors are malformed"),
    "a path outside": (
        lambda raw, tmp: _edited(_edited(raw, tmp, OUTSIDE.format(t="units")), tmp, OUTSIDE.format(t="files")),
        "not a relative path",
    ),
    "a damaged count": (lambda raw, tmp: _edited(raw, tmp, "UPDATE meta SET value = '9999' WHERE key = 'n_units'"), "n_units is 9999"),
    "a newer schema": (lambda raw, tmp: _edited(raw, tmp, "UPDATE meta SET value = '99' WHERE key = 'schema_version'"), "schema version '99'"),
}
OTHERS = {"truncated zlib": "truncated", "a wrong digest": "SHA-256"}


@pytest.mark.parametrize("craft", [*CRAFTS, *OTHERS])
def test_a_crafted_or_corrupted_artifact_is_refused_in_one_line_and_a_local_build_runs(craft, repo: Repo, paqad_cli, tmp_path, dsn):
    published(repo, paqad_cli, tmp_path, dsn)
    aid, raw = _stored(dsn)
    if craft == "truncated zlib":
        _replace(dsn, aid, zlib.compress(raw)[:-100], compress=False)
    elif craft == "a wrong digest":
        _replace(dsn, aid, raw, digest=b"\0" * 32)
    else:
        _replace(dsn, aid, CRAFTS[craft][0](raw, tmp_path))
    mate = clone(repo.root, tmp_path / "mate")
    env = machine(tmp_path, "mate", dsn)
    report, err = init(paqad_cli, mate.root, env)
    assert report["shared_index"]["status"] == "refused" and report["mode"] == "full"
    assert (CRAFTS[craft][1] if craft in CRAFTS else OTHERS[craft]) in report["shared_index"]["reason"]
    warning = [line for line in err.splitlines() if "shared index" in line]
    assert len(warning) == 1 and warning[0].startswith("warning: the shared index of") and "building locally" in warning[0]
    assert report["files_changed"] == report["files_indexed"] > 0 and report["vectors"]["pending"] == 0
    con = sqlite3.connect(store.current_path(mate.root))
    assert con.execute("SELECT COUNT(*) FROM files WHERE path LIKE '../%'").fetchone()[0] == 0
    assert con.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0] == 0
    assert "shop/payments.py" in ok(paqad_cli("rag", "search", QUERY, cwd=mate.root, env=env)).stdout


# ---- expiry and a store that is not there ---------------------------------------------------


def test_old_artifacts_are_never_used_and_are_deleted_by_the_next_publish(repo: Repo, paqad_cli, tmp_path, dsn):
    published(repo, paqad_cli, tmp_path, dsn)
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"UPDATE {artifacts.ARTIFACTS} SET created_at = now() - interval '15 days'")
    mate = clone(repo.root, tmp_path / "mate")
    report, err = init(paqad_cli, mate.root, machine(tmp_path, "mate", dsn))
    assert report["shared_index"]["status"] == "none" and report["mode"] == "full" and "shared" not in err
    repo.write("shop/shipping.py", "def ship_parcel(address: str) -> str:\n    return address\n")
    repo.commit("shipping")
    again = json.loads(ok(paqad_cli("rag", "publish", "--json", cwd=repo.root, env=machine(tmp_path, "ci", dsn))).stdout)
    assert again["expired"] == 1
    with psycopg.connect(dsn) as con:
        assert con.execute(f"SELECT commit_sha FROM {artifacts.ARTIFACTS}").fetchall() == [(repo.head(),)]
        assert con.execute(f"SELECT COUNT(DISTINCT artifact) FROM {artifacts.CHUNKS}").fetchone()[0] == 1  # its chunks went with it
    short = {**machine(tmp_path, "mate2", dsn), "PAQAD_RAG_SHARED_INDEX_DAYS": "1"}
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"UPDATE {artifacts.ARTIFACTS} SET created_at = now() - interval '2 days'")
    report, _ = init(paqad_cli, clone(repo.root, tmp_path / "mate2").root, short)
    assert report["shared_index"]["status"] == "none"  # the reader's own setting bounds it too


@pytest.fixture
def silent_server():
    """A TCP listener on loopback that accepts and never answers: a store that hangs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield f"host=127.0.0.1 port={sock.getsockname()[1]} dbname=paqad user=paqad"
    sock.close()


@pytest.mark.parametrize("where", ["down", "silent"])
def test_a_store_that_is_down_or_silent_costs_a_timeout_then_a_local_build(where, repo: Repo, paqad_cli, tmp_path, silent_server):
    make_shop(repo)
    dsn = f"host={tmp_path / 'no-server-here'} dbname=paqad user=paqad" if where == "down" else silent_server
    report, err = init(paqad_cli, repo.root, machine(tmp_path, "dev", dsn))
    assert report["shared_index"]["status"] == "unavailable" and report["mode"] == "full" and report["files_indexed"] > 0
    warning = [line for line in err.splitlines() if "shared store" in line]
    assert len(warning) == 1 and "building locally" in warning[0]
    if where == "silent":
        assert "timeout" in warning[0].lower()
    done = paqad_cli("rag", "publish", cwd=repo.root, env=machine(tmp_path, "dev", dsn))
    assert done.returncode == 1 and "could not take the index" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_check_file_refuses_a_view_and_accepts_the_published_index(repo: Repo, paqad_cli, tmp_path, dsn):
    published(repo, paqad_cli, tmp_path, dsn)
    _, raw = _stored(dsn)
    good = tmp_path / "good.sqlite"
    good.write_bytes(raw)
    cfg = config.load(repo.root, environ=machine(tmp_path, "ci", dsn))
    artifacts.check_file(good, cfg)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(_edited(raw, tmp_path, "CREATE VIEW v AS SELECT text FROM units"))
    with pytest.raises(artifacts.ArtifactRefused, match="view 'v'"):
        artifacts.check_file(bad, cfg)
    lexical = config.load(repo.root, environ={**machine(tmp_path, "ci", dsn), "PAQAD_RAG_EMBEDDING_PROVIDER": "none"})
    with pytest.raises(artifacts.ArtifactRefused, match="other settings"):
        artifacts.check_file(good, lexical)
