"""A damaged index is repaired where the hooks can repair it; an older one is upgraded; a reader
never mistakes a rebuild's swap for damage (issue 14, findings 2 and 3).

Every kind of damage a probe found (invalid ``meta`` values, malformed posting blocks, unit rows
with no file, random page damage) is one "corrupt index" line from the CLI, no traceback, and
``paqad rag update`` (what the git hooks run) and the background refresh rebuild it, saying so in
the audit log. Real indexes, real damage, the installed CLI.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from paqad import audit, config, workspace
from paqad.errors import IndexCorruptError, IndexOutdatedError
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.writing import build
from testing.env import LEXICAL, wait_for
from testing.hosts import run_host
from testing.repos import Repo

QUESTION = "retry charge after transient processor error backoff"
EXPECTED = "shop/payments.py::retry_charge"
GHOST = (
    "INSERT INTO units(id, path, language, kind, name, qualified_name, signature, docstring, start_line, end_line, text,"
    " calls, imports, bases, part, parts, content_hash, lengths) VALUES ('ghost.py::retry_charge', 'ghost.py', 'python',"
    " 'function', 'retry_charge', 'retry_charge', '', 'retry', 1, 2, 'def retry_charge(): pass', '[]', '[]', '[]', 1, 1,"
    " 'x', '[1, 1, 1, 1, 1]')"
)
DAMAGE = {
    "n_units_not_a_number": "UPDATE meta SET value = 'abc' WHERE key = 'n_units'",
    "field_totals_not_json": "UPDATE meta SET value = '{x' WHERE key = 'field_totals'",
    "posting_block_malformed": "UPDATE postings SET w = x'0102'",
    "unit_without_a_file": GHOST,
}


def _damage(root: Path, sql: str) -> None:
    con = sqlite3.connect(store.current_path(root))
    con.execute(sql)
    con.commit()
    con.close()


def _first_id(paqad_cli, root: Path) -> str | None:
    done = paqad_cli("rag", "search", QUESTION, "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    return results[0]["id"] if results else None


def _clean_units(root: Path, columns: str = "id, path, start_line, end_line, content_hash") -> list[tuple]:
    con = sqlite3.connect(store.current_path(root))
    try:
        return sorted(con.execute(f"SELECT {columns} FROM units").fetchall())
    finally:
        con.close()


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_each_kind_of_damage_is_one_corrupt_index_line_and_rag_update_rebuilds(shop: Repo, paqad_cli, kind: str) -> None:
    clean = _clean_units(shop.root)
    _damage(shop.root, DAMAGE[kind])
    search = paqad_cli("rag", "search", QUESTION, cwd=shop.root)
    if kind != "unit_without_a_file":  # a row without postings is never read by a search; update finds it
        assert search.returncode == 1 and "Traceback" not in search.stderr and "unexpected" not in search.stderr
        assert search.stderr.startswith("paqad: error: corrupt index: ") and len(search.stderr.strip().splitlines()) == 1
        assert "`paqad rag update` rebuilds it" in search.stderr
    update = paqad_cli("rag", "update", cwd=shop.root)
    assert update.returncode == 0 and update.stderr == "", update.stderr
    assert "the previous index was damaged" in update.stdout
    assert _clean_units(shop.root) == clean  # the ghost unit is gone, nothing else changed
    assert _first_id(paqad_cli, shop.root) == EXPECTED
    assert any("index-rebuilt-after-corruption" in line for line in audit.read(shop.root))


@pytest.mark.parametrize("seed", range(8))
def test_random_page_damage_is_repaired_by_rag_update(shop: Repo, paqad_cli, seed: int) -> None:
    """The probe that repaired 1 of 8: a few random bytes in random pages of the live file. The
    indexed columns (id, path) come back as a clean build has them; a damaged value no index
    covers (a unit's text) can only be found by the reader that decodes it (the next test)."""
    clean = _clean_units(shop.root, "id, path")
    db = store.current_path(shop.root)
    data = bytearray(db.read_bytes())
    rng = random.Random(seed)
    pages = len(data) // 4096
    for page in rng.sample(range(1, pages), k=min(3, pages - 1)):  # page 0 holds the header
        for _ in range(16):
            data[page * 4096 + rng.randrange(4096)] = rng.randrange(256)
    db.write_bytes(bytes(data))
    update = paqad_cli("rag", "update", cwd=shop.root)
    assert update.returncode == 0 and update.stderr == "", (seed, update.stderr)
    assert _clean_units(shop.root, "id, path") == clean
    assert _first_id(paqad_cli, shop.root) == EXPECTED


def test_the_prompt_hooks_background_refresh_repairs_what_a_reader_found(shop: Repo, paqad_cli) -> None:
    """Field masks no index can hold (the byte '~' = 126 sets bits past the fields'), in blocks SQLite and the update's own
    checks find sound: the prompt hook's search meets them and stays silent, notes the damage,
    and the background refresh it starts rebuilds (the hook itself never rebuilds in a prompt's budget)."""
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=shop.root).returncode == 0
    _damage(shop.root, "UPDATE postings SET mask = CAST(replace(substr(hex(zeroblob(length(mask))), 1, length(mask)), '0', '~') AS BLOB)")
    damaged = store.current_path(shop.root)
    proc = run_host(shop.root, "claude", prompt=QUESTION)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert wait_for(lambda: any("index-rebuilt-after-corruption" in line for line in audit.read(shop.root)), timeout=60)
    assert wait_for(lambda: store.current_path(shop.root) != damaged, timeout=60)
    assert _first_id(paqad_cli, shop.root) == EXPECTED
    assert "a reader found it damaged" in next(line for line in audit.read(shop.root) if "corruption" in line)


def test_an_older_schema_is_an_upgrade_not_corruption(shop: Repo, paqad_cli) -> None:
    _damage(shop.root, "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(IndexOutdatedError):
        Index.open(shop.root)
    search = paqad_cli("rag", "search", QUESTION, cwd=shop.root)
    assert search.returncode == 1 and "older paqad" in search.stderr and "corrupt" not in search.stderr
    update = paqad_cli("rag", "update", cwd=shop.root)
    assert update.returncode == 0 and "upgraded" in update.stdout
    assert any("index-upgraded" in line for line in audit.read(shop.root))
    assert not any("corruption" in line for line in audit.read(shop.root))
    assert _first_id(paqad_cli, shop.root) == EXPECTED


def test_the_prompt_hook_upgrades_an_older_index_in_the_background(shop: Repo, paqad_cli) -> None:
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=shop.root).returncode == 0
    _damage(shop.root, "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    proc = run_host(shop.root, "claude", prompt=QUESTION)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = [json.loads(line) for line in (workspace.logs_dir(shop.root) / "hooks.log").read_text().splitlines()]
    answer = next(e for e in lines if e["action"] == "context:claude")
    assert answer["status"] == "stale" and "upgrade" in answer["detail"]
    assert wait_for(lambda: any("index-upgraded" in line for line in audit.read(shop.root)), timeout=60)
    assert wait_for(lambda: _readable(shop.root), timeout=60)


def _readable(root: Path) -> bool:
    try:
        Index.open(root).close()
    except (IndexOutdatedError, IndexCorruptError):
        return False
    return True


def test_a_reader_opening_a_generation_a_rebuild_just_removed_retries_on_the_new_one(shop: Repo, monkeypatch) -> None:
    """The race of finding 3, made to happen every time: the reader reads ``CURRENT``, and before
    it opens the file named there a real rebuild publishes the next generation and deletes it."""
    cfg = config.load(shop.root, environ=LEXICAL)
    real = store.current_path
    raced: list[str] = []

    def swap_after_reading(root: Path) -> Path | None:
        path = real(root)
        if not raced and path is not None:
            build.build_full(root, cfg)
            raced.append(path.name)
        return path

    monkeypatch.setattr(store, "current_path", swap_after_reading)
    index = Index.open(shop.root)
    assert raced and index.generation is not None and index.generation.name != raced[0]
    assert index.unit(EXPECTED, ("path",)) is not None
    assert not (store.current_pointer(shop.root).parent / raced[0]).exists()  # nothing created at the old name


def test_opening_a_missing_generation_creates_nothing(shop: Repo) -> None:
    gone = store.current_path(shop.root).with_name("index-000099.sqlite")
    for readonly in (True, False):
        with pytest.raises(IndexCorruptError):
            store.connect(gone, readonly=readonly)
        assert not gone.exists()
