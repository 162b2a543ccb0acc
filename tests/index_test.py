"""The index: incremental by content hash, one writer, always the old index or the new one."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from paqad import config, workspace
from paqad.errors import IndexCorruptError, IndexMissingError, LockedError
from paqad.index import postings, store
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline
from testing.env import LEXICAL
from testing.repos import make_shop


def _cfg(repo):
    return config.load(repo.root, environ=LEXICAL)


def _units(repo):
    con = store.open_current(repo.root)
    try:
        return {row[0]: row[1] for row in con.execute("SELECT id, content_hash FROM units")}
    finally:
        con.close()


def test_full_build_units_and_meta(repo):
    make_shop(repo)
    report = build.build_full(repo.root, _cfg(repo))
    assert report.files_indexed == 3
    ids = _units(repo)
    assert "shop/payments.py::retry_charge" in ids
    assert "shop/payments.py::PaymentGateway.charge" in ids
    assert "README.md::Shop > Payments" in ids
    assert (repo.root / ".paqad" / ".gitignore").exists()
    assert store.current_path(repo.root).name == "index-000001.sqlite"


def test_incremental_update_touches_only_changed_files(repo):
    make_shop(repo)
    build.build_full(repo.root, _cfg(repo))
    before = _units(repo)
    report = build.update(repo.root, _cfg(repo))
    assert (report.files_changed, report.files_removed, report.files_unchanged) == (0, 0, 3)
    text = (repo.root / "shop" / "sessions.py").read_text().replace("Return the cookie value", "Give back the cookie value")
    repo.write("shop/sessions.py", text)
    os.utime(repo.root / "shop" / "payments.py")  # touched, same content: not re-parsed
    (repo.root / "README.md").unlink()
    report = build.update(repo.root, _cfg(repo))
    assert (report.files_changed, report.files_removed, report.files_unchanged) == (1, 1, 1)
    after = _units(repo)
    assert after["shop/payments.py::retry_charge"] == before["shop/payments.py::retry_charge"]
    assert after["shop/sessions.py::verify_cookie"] != before["shop/sessions.py::verify_cookie"]
    assert not any(k.startswith("README.md") for k in after)
    resp = pipeline.search(repo.root, "give back the cookie value")
    assert resp.results and resp.results[0].id == "shop/sessions.py::verify_cookie"


def test_incremental_equals_full_rebuild(repo):
    make_shop(repo)
    build.build_full(repo.root, _cfg(repo))
    repo.write("shop/extra.py", "def ship_parcel(address):\n    '''Hand the parcel to the courier for the given address.'''\n    return address\n")
    build.update(repo.root, _cfg(repo))
    incremental = _units(repo)
    con = store.open_current(repo.root)
    df_inc = dict(con.execute("SELECT term, df FROM terms").fetchall())
    con.close()
    build.build_full(repo.root, _cfg(repo))
    con = store.open_current(repo.root)
    df_full = dict(con.execute("SELECT term, df FROM terms").fetchall())
    con.close()
    assert incremental == _units(repo)
    assert df_inc == df_full


def test_missing_index_is_a_clear_error(repo):
    make_shop(repo)
    with pytest.raises(IndexMissingError, match="paqad rag init"):
        pipeline.search(repo.root, "charge a card")


def test_repository_with_no_commits(repo):
    make_shop(repo, commit=False)
    report = build.build_full(repo.root, _cfg(repo))
    assert report.files_indexed == 3


@pytest.mark.parametrize("damage", ["garbage", "truncate", "pointer_escape", "pointer_garbage", "wrong_schema"])
def test_corrupt_or_crafted_index_reports_rebuild(repo, damage):
    make_shop(repo)
    build.build_full(repo.root, _cfg(repo))
    db = store.current_path(repo.root)
    pointer = store.current_pointer(repo.root)
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "truncate":
        db.write_bytes(db.read_bytes()[:1024])
    elif damage == "pointer_escape":
        pointer.write_text("../../../../etc/passwd\n")
    elif damage == "pointer_garbage":
        pointer.write_bytes(b"\xff\xfe\x00")
    else:
        con = sqlite3.connect(db)
        con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
        con.commit()
        con.close()
    with pytest.raises(IndexCorruptError, match="paqad rag rebuild"):
        pipeline.search(repo.root, "charge a card")
    build.build_full(repo.root, _cfg(repo))
    assert pipeline.search(repo.root, "charge a card processor").results


def test_crafted_paths_in_index_are_only_data(repo):
    """A unit whose stored path escapes the repository is reported, never opened."""
    make_shop(repo)
    build.build_full(repo.root, _cfg(repo))
    con = sqlite3.connect(store.current_path(repo.root))
    con.execute("UPDATE units SET path = '../../etc/passwd' WHERE id = 'shop/payments.py::retry_charge'")
    con.commit()
    con.close()
    resp = pipeline.search(repo.root, "retry charge after transient processor error backoff")
    hit = next(r for r in resp.results if r.name == "retry_charge")
    assert hit.path == "../../etc/passwd" and "root:" not in (hit.source or "")


def test_single_writer_lock(repo):
    make_shop(repo)
    lock = build.writer_lock(repo.root)
    lock.acquire()
    try:
        with pytest.raises(LockedError, match="another paqad process"):
            build.build_full(repo.root, _cfg(repo), lock_timeout=0.2)
    finally:
        lock.release()


def _big_repo(repo, files=250):
    rnd = random.Random(7)
    words = "alpha beta gamma delta parcel invoice ledger socket buffer cursor widget token router cache".split()
    for i in range(files):
        funcs = []
        for j in range(12):
            a, b = rnd.sample(words, 2)
            funcs.append(f"def {a}_{b}_{i}_{j}(x):\n    '''Handle the {a} and the {b} for item {i}.'''\n    return x + {j}\n")
        repo.write(f"pkg/mod_{i:03d}.py", "\n\n".join(funcs))
    repo.commit("big")


def _assert_consistent(repo):
    """Every file row's unit count matches its unit rows, and every posting names a live unit."""
    con = store.open_current(repo.root)
    try:
        files = dict(con.execute("SELECT path, units FROM files").fetchall())
        counted = dict(con.execute("SELECT path, COUNT(*) FROM units GROUP BY path").fetchall())
        orphans = postings.orphans(con)
    finally:
        con.close()
    assert files == counted
    assert orphans == 0


def test_sigkill_during_build_or_update_leaves_previous_index_usable(repo):
    _big_repo(repo)
    build.build_full(repo.root, _cfg(repo))
    baseline = _units(repo)
    rnd = random.Random(11)
    code = "import sys; from paqad.cli.main import main; sys.exit(main(sys.argv[1:]))"
    for attempt in range(6):
        verb = "rebuild" if attempt % 2 == 0 else "update"
        if verb == "update":
            repo.write(f"pkg/mod_{attempt:03d}.py", f"def changed_{attempt}(y):\n    '''Changed function number {attempt} for the kill test.'''\n    return y\n")
        proc = subprocess.Popen([sys.executable, "-c", code, "--root", str(repo.root), "rag", verb], cwd=repo.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.05, 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        units = _units(repo)  # must open cleanly: old or new, never half
        assert len(units) >= len(baseline) - 11 * 6
        _assert_consistent(repo)
        assert pipeline.search(repo.root, "parcel invoice handle", gate=False).results
    build.update(repo.root, _cfg(repo))
    assert "pkg/mod_001.py::changed_1" in _units(repo)
    leftovers = [p.name for p in (workspace.vectors_dir(repo.root)).iterdir() if p.name.endswith(".building")]
    build.build_full(repo.root, _cfg(repo))
    assert not [p for p in (workspace.vectors_dir(repo.root)).iterdir() if p.name.endswith(".building")], leftovers


def _posting_sets(root) -> dict[str, set[tuple[str, int]]]:
    """term -> {(unit id, field mask)}, read through the block format; checks df on the way."""
    con = store.open_current(root)
    try:
        ids = dict(con.execute("SELECT uid, id FROM units"))
        out = {}
        for tid, term, df in con.execute("SELECT tid, term, df FROM terms").fetchall():
            uids, _, masks = postings.read(con, tid)
            assert list(uids) == sorted(uids), term
            assert len(uids) == df, (term, len(uids), df)
            out[term] = {(ids[int(u)], int(m)) for u, m in zip(uids, masks)}
        return out
    finally:
        con.close()


def test_incremental_updates_leave_the_same_postings_as_a_full_build(repo):
    """Removing, changing and adding files through updates rewrites exactly the right blocks."""
    _big_repo(repo)
    cfg = config.load(repo.root)
    build.build_full(repo.root, cfg)
    (repo.root / "pkg/mod_003.py").unlink()
    repo.write("pkg/mod_007.py", "def fresh_lobster_pipeline(x):\n    '''Boil the lobster.'''\n    return x\n")
    repo.write("pkg/new_one.py", "class Harbour:\n    def moor_the_boat(self, rope):\n        return rope\n")
    build.update(repo.root, cfg)
    repo.write("pkg/mod_010.py", "def another_thing(y):\n    return y * 2\n")
    build.update(repo.root, cfg)
    updated = _posting_sets(repo.root)
    build.build_full(repo.root, cfg)
    assert updated == _posting_sets(repo.root)
    _assert_consistent(repo)


def test_a_crafted_posting_block_is_a_clear_error_not_a_crash(repo):
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root))
    path = store.current_path(repo.root)
    con = sqlite3.connect(path)
    con.execute("UPDATE postings SET mask = x'ff' || mask")  # one mask more than ids, in every block
    con.commit()
    con.close()
    Index.forget(repo.root)
    with pytest.raises(IndexCorruptError):
        pipeline.search(repo.root, "retry the charge")
