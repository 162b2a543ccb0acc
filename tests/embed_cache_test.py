"""The user-level embedding cache: shared by clones and worktrees (real model, real git), bounded
with eviction, safe for concurrent writer processes, never fatal when its file is damaged, holding
no text, and the per-tree cache of earlier versions moved into it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paqad import config, workspace
from paqad.index.embedding import embed_cache, vectors
from paqad.index.embedding.embed_cache import UserEmbedCache
from paqad.index.writing import build
from paqad.search import pipeline
from testing.env import child_env
from testing.repos import Repo, add_worktree, clone, make_shop

FP = "test:model:0:prep1"
DIMS = 384


def local_cfg(root: Path, **extra: str) -> config.Config:
    return config.load(root, cli_overrides={"rag_embedding_provider": "local", **extra}, environ={})


def sha(i: int) -> bytes:
    return hashlib.sha256(f"text {i}".encode()).digest()


def half(i: int) -> bytes:
    rng = np.random.default_rng(i)
    return rng.standard_normal(DIMS).astype("<f2").tobytes()


def cache_file() -> Path:
    return workspace.cache_dir() / embed_cache.FILE_NAME


def test_the_cache_lives_in_xdg_cache_home_and_tests_never_reach_the_real_one(tmp_path):
    assert workspace.cache_dir() == Path(os.environ["XDG_CACHE_HOME"]) / "paqad"
    assert Path(os.environ["XDG_CACHE_HOME"]).is_relative_to(Path(os.environ["HOME"]))  # the test's own HOME
    assert workspace.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "paqad"
    assert workspace.cache_dir({"XDG_CACHE_HOME": "relative/ignored"}) == Path.home() / ".cache" / "paqad"
    assert workspace.cache_dir({"XDG_CACHE_HOME": str(tmp_path), "PAQAD_CACHE_DIR": str(tmp_path / "x")}) == tmp_path / "x"


def test_a_second_clone_and_a_worktree_embed_nothing_that_the_first_embedded(repo: Repo, tmp_path):
    make_shop(repo)
    first = build.build_full(repo.root, local_cfg(repo.root))
    assert first.vectors is not None and first.vectors.embedded == first.units > 0 and first.vectors.cached == 0

    other = clone(repo.root, tmp_path / "second-clone")
    second = build.build_full(other.root, local_cfg(other.root))
    assert second.vectors is not None and second.units == first.units
    assert second.vectors.embedded == 0 and second.vectors.cached == second.units  # goal: <= 5% embedded

    tree = add_worktree(repo, tmp_path / "linked-tree")
    tree.write("shop/extra.py", "def shipping_cost(weight_grams: int) -> int:\n    '''Postage for a parcel.'''\n    return weight_grams // 10\n")
    third = build.build_full(tree.root, local_cfg(tree.root))
    assert third.vectors is not None and third.vectors.embedded <= 2 and third.vectors.cached >= first.units - 1
    # The shared vectors answer like fresh ones: the same hit from every tree.
    q = "sign a session cookie with a secret"
    tops = [pipeline.search(r, q).results[0].qualified_name for r in (repo.root, other.root, tree.root)]
    assert len(set(tops)) == 1


def test_an_index_is_byte_identical_whether_its_vectors_came_from_the_model_or_the_cache(repo: Repo, tmp_path):
    make_shop(repo)
    build.build_full(repo.root, local_cfg(repo.root))
    fresh = _vector_blobs(repo.root)
    other = clone(repo.root, tmp_path / "again")
    report = build.build_full(other.root, local_cfg(other.root))
    assert report.vectors is not None and report.vectors.embedded == 0
    assert _vector_blobs(other.root) == fresh


def _vector_blobs(root: Path) -> list[bytes]:
    from paqad.index import store

    con = store.open_current(root)
    try:
        return [bytes(r[0]) for r in con.execute("SELECT v.vec FROM vectors v JOIN units u USING(uid) ORDER BY u.id")]
    finally:
        con.close()


def test_the_cache_holds_hashes_and_float16_vectors_only_never_text(repo: Repo):
    make_shop(repo)
    build.build_full(repo.root, local_cfg(repo.root))
    data = b"".join(Path(f"{cache_file()}{s}").read_bytes() for s in ("", "-wal") if Path(f"{cache_file()}{s}").exists())
    for word in (b"retry_charge", b"sign_cookie", b"PaymentGateway", b"shop/"):
        assert word not in data
    con = sqlite3.connect(cache_file())
    assert {r[0] for r in con.execute("SELECT length(vec) FROM vectors")} == {2 * DIMS}
    assert {r[0] for r in con.execute("SELECT length(sha) FROM vectors")} == {32}
    con.close()


def test_compact_about_a_kilobyte_a_vector(tmp_path):
    cache = UserEmbedCache(tmp_path / "c.sqlite")
    for start in range(0, 4000, 500):
        cache.put(FP, {sha(i): half(i) for i in range(start, start + 500)}, DIMS)
    per_vector = cache.live_bytes() / cache.count()
    assert cache.count() == 4000 and per_vector < 1100  # the per-tree cache took about 4,700
    cache.close()


def test_eviction_keeps_the_cache_near_its_limit_and_drops_the_least_recently_used(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = UserEmbedCache(path, limit_mb=1.0)
    cache.put(FP, {sha(i): half(i) for i in range(300)}, DIMS)
    # The first 300 were used long ago; everything after is used today.
    assert cache.con is not None
    cache.con.execute("UPDATE vectors SET used = 1")
    for start in range(300, 3000, 300):
        cache.put(FP, {sha(i): half(i) for i in range(start, start + 300)}, DIMS)
    assert cache.evicted > 0 and cache.live_bytes() <= 1024 * 1024
    assert cache.get(FP, [sha(i) for i in range(300)], DIMS) == {}  # the old ones went first
    newest = cache.get(FP, [sha(i) for i in range(2700, 3000)], DIMS)
    assert len(newest) == 300 and newest[sha(2999)] == half(2999)
    cache.close()
    assert path.stat().st_size < 1.5 * 1024 * 1024  # freed pages are reused: the file stays near the limit


def test_a_hit_refreshes_its_last_use_so_eviction_spares_it(tmp_path):
    cache = UserEmbedCache(tmp_path / "c.sqlite", limit_mb=1.0)
    cache.put(FP, {sha(i): half(i) for i in range(600)}, DIMS)
    assert cache.con is not None
    cache.con.execute("UPDATE vectors SET used = 1")
    assert len(cache.get(FP, [sha(i) for i in range(100)], DIMS)) == 100  # used today again
    start = 600
    while not cache.evicted:  # until the first eviction (about 1,100 vectors fill a megabyte)
        cache.put(FP, {sha(i): half(i) for i in range(start, start + 100)}, DIMS)
        start += 100
    assert len(cache.get(FP, [sha(i) for i in range(100)], DIMS)) == 100  # refreshed: spared
    assert len(cache.get(FP, [sha(i) for i in range(100, 600)], DIMS)) == 500 - cache.evicted  # only unrefreshed ones went
    assert len(cache.get(FP, [sha(i) for i in range(600, start)], DIMS)) == start - 600
    cache.close()


def test_fingerprints_and_dims_never_mix(tmp_path):
    cache = UserEmbedCache(tmp_path / "c.sqlite")
    cache.put(FP, {sha(1): half(1)}, DIMS)
    assert cache.get("other:model", [sha(1)], DIMS) == {}
    assert cache.get(FP, [sha(1)], 768) == {}
    cache.put(FP, {sha(2): b"\0" * 1536}, 768)  # same fingerprint, other dims: refused
    assert cache.get(FP, [sha(2)], DIMS) == {} and cache.get(FP, [sha(2)], 768) == {}
    cache.close()


def test_size_zero_turns_the_cache_off(repo: Repo):
    make_shop(repo)
    c = local_cfg(repo.root, rag_embedding_cache_mb="0")
    build.build_full(repo.root, c)
    again = build.build_full(repo.root, c)
    assert again.vectors is not None and again.vectors.embedded == again.units and not cache_file().exists()


WRITER = """
import hashlib, sys
import numpy as np
from pathlib import Path
from paqad.index.embedding.embed_cache import UserEmbedCache
path, who = Path(sys.argv[1]), int(sys.argv[2])
cache = UserEmbedCache(path)
for batch in range(20):
    items = {}
    for i in range(50):
        n = (batch * 50 + i) * 2 + who  # the two writers interleave keys, and share every tenth
        key = n if n % 10 else 0
        items[hashlib.sha256(f"text {key}-{n}".encode()).digest()] = np.full(384, n, dtype="<f2").tobytes()
    cache.put("test:model:0:prep1", items, 384)
    assert cache.con is not None, cache.broken
print(cache.count())
"""


def test_two_processes_write_the_same_cache_at_once_and_lose_nothing(tmp_path):
    path = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(who)], cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for who in (0, 1)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    cache = UserEmbedCache(path)
    assert cache.count() == 2000
    sample = cache.get(FP, [hashlib.sha256(b"text 1-1").digest(), hashlib.sha256(b"text 0-10").digest()], DIMS)
    assert np.frombuffer(sample[hashlib.sha256(b"text 1-1").digest()], "<f2")[0] == 1
    cache.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_cache_file_is_rebuilt_and_never_fatal(repo: Repo, damage: str):
    make_shop(repo)
    first = build.build_full(repo.root, local_cfg(repo.root))
    path = cache_file()
    assert path.exists()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if damage == "garbage":
        path.write_bytes(b"this is not a database, just bytes " * 200)
    else:
        data = path.read_bytes()
        path.write_bytes(data[:100] + b"\xff" * 4000 + data[4100:])
    again = build.build_full(repo.root, local_cfg(repo.root))
    assert again.vectors is not None and again.vectors.pending == 0
    assert again.vectors.embedded + again.vectors.cached == first.units
    # The next tree finds a working cache again.
    cache = UserEmbedCache(path)
    assert cache.broken == "" and cache.count() == first.units
    cache.close()


def test_a_cache_that_goes_bad_mid_run_is_skipped_not_raised(tmp_path):
    cache = UserEmbedCache(tmp_path / "c.sqlite")
    cache.put(FP, {sha(1): half(1)}, DIMS)
    assert cache.con is not None
    cache.con.close()  # any failing query from here on
    cache.put(FP, {sha(2): half(2)}, DIMS)
    assert cache.get(FP, [sha(1)], DIMS) == {} and cache.broken.startswith("skipped")


def test_an_unwritable_cache_folder_only_turns_the_cache_off(repo: Repo, tmp_path, monkeypatch):
    make_shop(repo)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("PAQAD_CACHE_DIR", str(blocked / "paqad"))
    report = build.build_full(repo.root, local_cfg(repo.root))
    assert report.vectors is not None and report.vectors.pending == 0 and report.vectors.embedded == report.units


def test_the_per_tree_cache_of_earlier_versions_moves_into_the_user_cache(repo: Repo):
    make_shop(repo)
    c = local_cfg(repo.root)
    first = build.build_full(repo.root, c)
    # Rebuild the old per-tree file from the user cache's vectors (what an earlier paqad wrote).
    cache = vectors.open_cache(repo.root, c)
    assert cache.con is not None
    fp = vectors.fingerprint(vectors.provider_for("local", "", "", repo.root))
    rows = cache.con.execute("SELECT sha, vec FROM vectors").fetchall()
    cache.close()
    old = workspace.vectors_dir(repo.root) / vectors.TREE_CACHE_NAME
    con = sqlite3.connect(old)
    con.execute(
        "CREATE TABLE cache(fingerprint TEXT NOT NULL, text_sha TEXT NOT NULL, prep INTEGER NOT NULL, dims INTEGER NOT NULL,"
        " vec BLOB NOT NULL, PRIMARY KEY(fingerprint, text_sha, prep)) WITHOUT ROWID"
    )
    con.executemany(
        "INSERT INTO cache VALUES (?, ?, 1, 384, ?)",
        ((fp, bytes(s).hex(), np.frombuffer(v, "<f2").astype("<f4").tobytes()) for s, v in rows),
    )
    con.commit()
    con.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache_file()}{suffix}").unlink(missing_ok=True)

    again = build.build_full(repo.root, c)
    assert again.vectors is not None and again.vectors.embedded == 0 and again.vectors.cached == first.units
    assert not old.exists()


def test_rag_init_says_when_lexical_search_is_ready_and_what_embedding_is_left(repo: Repo, tmp_path, paqad_cli, default_provider):
    make_shop(repo)
    first = paqad_cli("rag", "init", cwd=repo.root)
    assert first.returncode == 0, first.stderr
    line = next(ln for ln in first.stderr.splitlines() if ln.startswith("lexical search ready ("))
    units = int(line.split("ready (")[1].split(" units")[0])
    # no fill of this tree measured a rate yet: no figure is made up
    assert units > 0 and f"full vectors 0/{units}, estimating…" in line and f"{units} embedded, 0 from cache" in first.stdout

    other = clone(repo.root, tmp_path / "clone")
    second = paqad_cli("rag", "init", cwd=other.root)
    assert second.returncode == 0, second.stderr
    assert f"full vectors 0/{units}, all in the embedding cache" in second.stderr
    assert f"0 embedded, {units} from cache" in second.stdout

    status = paqad_cli("rag", "status", cwd=other.root)
    assert "embedding cache (every work tree of this user): " in status.stdout and str(cache_file()) in status.stdout

    lexical = paqad_cli("rag", "init", "--provider", "none", cwd=other.root)
    assert lexical.returncode == 0 and [ln for ln in lexical.stderr.splitlines() if ln.startswith("lexical search ready (")]
    assert "full vectors" not in lexical.stderr
