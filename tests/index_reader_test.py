"""``Index``: typed records of the real index, generations noticed by an open reader, corrupt files
reported with the fix, and no SQL against the index outside ``paqad/index/``."""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path

import pytest

import paqad
from paqad import config, tokenize
from paqad.errors import IndexCorruptError, IndexMissingError
from paqad.graph import model
from paqad.index import store
from paqad.index.reader import Index
from paqad.index.records import UNIT_COLUMNS, StoredUnit
from paqad.index.writing import build
from paqad.search import pipeline
from paqad.search.request import SearchRequest
from testing.env import LEXICAL
from testing.repos import Repo, make_shop

EXTRA = "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier.'''\n    return address\n"


@pytest.fixture
def shop(repo: Repo) -> Repo:
    make_shop(repo)
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def _raw_units(root: Path) -> list[sqlite3.Row]:
    con = sqlite3.connect(store.current_path(root))
    con.row_factory = sqlite3.Row
    try:
        return con.execute("SELECT * FROM units ORDER BY uid").fetchall()
    finally:
        con.close()


def test_stored_units_round_trip_every_column_of_the_units_table(shop: Repo) -> None:
    rows = _raw_units(shop.root)
    assert tuple(rows[0].keys()) == UNIT_COLUMNS  # the record's columns are the schema's, in order
    index = Index.open(shop.root)
    units = index.all_units(UNIT_COLUMNS)
    assert len(units) == len(rows) == index.meta().n_units > 5
    for unit, row in zip(units, rows):
        for column in UNIT_COLUMNS:
            stored, read = row[column], getattr(unit, column)
            if column in ("calls", "imports", "bases", "lengths"):
                assert read == json.loads(stored), column
            elif column == "is_test":
                assert read is bool(stored)
            else:
                assert read == stored and type(read) is type(stored), column
    retry = next(u for u in units if u.id == "shop/payments.py::retry_charge")
    assert retry.kind == "function" and "charge" in retry.calls and retry.text.startswith("def retry_charge")
    # A unit read with a few columns carries those; the others keep their defaults.
    slim = index.unit(retry.id, ("path", "start_line", "end_line"))
    assert slim == StoredUnit(id=retry.id, path=retry.path, start_line=retry.start_line, end_line=retry.end_line)
    assert index.units([retry.uid], ("text",))[retry.uid].text == retry.text
    assert index.unit("shop/payments.py::nowhere", ("path",)) is None
    with pytest.raises(ValueError, match="not columns of units"):
        index.units([retry.uid], ("text; DROP TABLE units",))
    index.close()


def test_a_damaged_list_column_reads_as_empty_not_as_an_exception(shop: Repo) -> None:
    con = sqlite3.connect(store.current_path(shop.root))
    con.execute("UPDATE units SET calls = '{not json' WHERE id = 'shop/payments.py::retry_charge'")
    con.commit()
    con.close()
    unit = Index.open(shop.root).unit("shop/payments.py::retry_charge", ("calls", "imports"))
    assert unit is not None and unit.calls == [] and isinstance(unit.imports, list)


def test_an_open_index_notices_an_update_and_a_rebuild(shop: Repo, paqad_cli) -> None:
    index = Index.open(shop.root)
    first = index.generation
    assert first is not None and index.changes == 0 and index.unit("shop/extra.py::ship_parcel", ("id",)) is None
    graph_before = model.load(index)
    assert model.load(index) is graph_before  # cached while nothing changed
    shop.write("shop/extra.py", EXTRA)
    assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0
    updated = index.refresh()
    assert updated.name == first.name and updated.data_version != first.data_version and index.changes == 1
    assert index.unit("shop/extra.py::ship_parcel", ("kind",)).kind == "function"  # type: ignore[union-attr]
    assert model.load(index) is not graph_before and "shop/extra.py::ship_parcel" in model.load(index).graph
    rebuilt = paqad_cli("rag", "rebuild", cwd=shop.root)
    assert rebuilt.returncode == 0, rebuilt.stderr
    now = index.refresh()
    assert now.name != first.name and now.name == store.current_path(shop.root).name and index.changes == 2  # type: ignore[union-attr]
    assert store.generation_of(Path(now.name)) == store.generation_of(Path(first.name)) + 1
    assert index.unit("shop/extra.py::ship_parcel", ("path",)) is not None
    assert pipeline.run(index, SearchRequest("hand the parcel to the courier")).results[0].id == "shop/extra.py::ship_parcel"
    assert index.refresh() == now and index.changes == 2  # nothing moved since


def test_a_warm_reader_trusts_an_unchanged_pointer_and_still_notices_every_change(shop: Repo, paqad_cli, monkeypatch) -> None:
    """Once ``CURRENT`` settled, a refresh stats it instead of reading it (issue 34: reading and
    validating it twice was a tenth of a warm lexical query); an update, a rebuild's swap and a
    pointer rewritten in place are each still noticed."""
    monkeypatch.setattr(store, "SETTLE_NS", -(10**12))  # every stat counts as settled
    reads: list[Path] = []
    real = store.read_pointer
    monkeypatch.setattr(store, "read_pointer", lambda pointer: reads.append(pointer) or real(pointer))
    index = Index.open(shop.root)
    first, opened = index.generation, len(reads)
    assert first is not None and opened >= 1
    assert index.refresh() == first and index.refresh() == first and len(reads) == opened  # the pointer not read again
    shop.write("shop/extra.py", EXTRA)
    assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0
    updated = index.refresh()
    assert updated.name == first.name and updated.data_version != first.data_version and index.changes == 1
    assert paqad_cli("rag", "rebuild", cwd=shop.root).returncode == 0
    rebuilt = index.refresh()
    assert rebuilt.name != first.name and rebuilt.name == store.current_path(shop.root).name and index.changes == 2  # type: ignore[union-attr]
    assert index.unit("shop/extra.py::ship_parcel", ("path",)) is not None
    pointer = store.current_pointer(shop.root)
    with pointer.open("r+") as handle:  # rewritten in place (same inode, same size): the stat moves all the same
        handle.write("x" * len(pointer.read_text()))
    with pytest.raises(IndexCorruptError, match="not an index file"):
        index.refresh()


def test_one_operation_reads_one_generation_and_the_next_sees_an_update(shop: Repo, paqad_cli) -> None:
    """Inside ``reading`` (a search) the kept values answer for the generation refreshed at its
    start without asking SQLite again (issue 34); an update committed meanwhile by another process
    is what the next operation reads."""
    index = Index.open(shop.root)
    with index.reading() as seen:
        before = index.meta()
        shop.write("shop/extra.py", EXTRA)
        assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0
        assert index.meta() is before and index.generation == seen
    with index.reading() as now:
        assert now.data_version != seen.data_version and index.meta().n_units > before.n_units
    assert pipeline.run(index, SearchRequest("hand the parcel to the courier")).results[0].id == "shop/extra.py::ship_parcel"


def test_term_lookups_kept_for_a_generation_follow_an_update(shop: Repo, paqad_cli) -> None:
    """``terms`` keeps what it looked up, words the index lacks included (issue 34); a commit to
    the index looks them up afresh, so a word an update brings in is found."""
    index = Index.open(shop.root)
    assert "parcel" not in index.terms(["parcel", "refund"]) and "refund" in index.terms(["refund"])
    assert index.terms(["refund", "refund"])["refund"] is index.terms(["refund"])["refund"]  # kept, not read again
    assert [t.term for t in index.terms_with_prefix("parc", 12)] == []
    assert ("parc", 12, 32) in index.cached("terms-with-prefix", dict)  # kept for the generation
    shop.write("shop/extra.py", EXTRA)
    assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0
    index.refresh()
    assert index.terms(["parcel"])["parcel"].df >= 1
    assert "parcel" in [t.term for t in index.terms_with_prefix("parc", 12)]


def test_unit_records_kept_for_a_generation_follow_an_update(shop: Repo, paqad_cli) -> None:
    """``units`` keeps the records it read for the generation (issue 34: a warm search asks for
    the same candidates query after query); a commit to the index (an update) reads them afresh."""
    index = Index.open(shop.root)
    uid = next(u.uid for u in index.all_units(("uid", "id")) if u.id == "shop/sessions.py::sign_cookie")
    first = index.units([uid], ("uid", "path", "start_line", "end_line"))[uid]
    assert index.units([uid, uid], ("uid", "path", "start_line", "end_line"))[uid] is first  # kept, not read again
    sessions = shop.root / "shop/sessions.py"
    sessions.write_text("# a line above moves every unit down\n" + sessions.read_text())
    assert paqad_cli("rag", "update", cwd=shop.root).returncode == 0
    index.refresh()
    moved = {u.id: u for u in index.units(range(1, 10_000), ("uid", "id", "start_line")).values()}
    assert moved["shop/sessions.py::sign_cookie"].start_line == first.start_line + 1
    assert list(moved.values()) == sorted(moved.values(), key=lambda u: u.uid)  # row-id order, as SQLite gave it


@pytest.mark.parametrize("damage", ["garbage", "schema"])
def test_a_corrupt_index_file_is_index_corrupt_error_with_the_rebuild_hint(shop: Repo, damage: str) -> None:
    db = store.current_path(shop.root)
    if damage == "garbage":
        db.write_bytes(b"not an index at all " * 200)
    else:
        con = sqlite3.connect(db)
        con.execute("DROP TABLE terms")
        con.commit()
        con.close()
    with pytest.raises(IndexCorruptError, match=r"run `paqad rag rebuild`"):
        index = Index.open(shop.root)
        index.terms(["charge"])


def test_an_index_open_when_its_file_is_damaged_says_so_and_recovers_after_a_rebuild(shop: Repo) -> None:
    index = Index.open(shop.root)
    (charge,) = tokenize.terms("charge")
    assert index.terms([charge])[charge].df >= 1
    store.current_path(shop.root).write_bytes(b"\0garbage" * 4096)
    with pytest.raises(IndexCorruptError, match=r"run `paqad rag rebuild`"):
        index.refresh()
        index.terms(["charge"])
    build.build_full(shop.root, config.load(shop.root, environ=LEXICAL))
    assert index.refresh().name == store.current_path(shop.root).name  # type: ignore[union-attr]
    assert index.terms([charge])[charge].df >= 1


def test_no_index_is_index_missing_error(repo: Repo) -> None:
    make_shop(repo)
    with pytest.raises(IndexMissingError, match="paqad rag init"):
        Index.open(repo.root)
    lazy = Index.shared(repo.root)  # the shared one opens nothing until an operation refreshes it
    with pytest.raises(IndexMissingError):
        lazy.refresh()


# Modules outside paqad/index/ that may call .execute() and why (none today: every read of the
# index goes through paqad.index.reader.Index, every write through the builder).
SQL_ALLOWED: dict[str, str] = {}
_SQL_CALLS = frozenset({"execute", "executemany", "executescript"})


def test_no_module_outside_the_index_package_executes_sql() -> None:
    package = Path(paqad.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith("index/") or rel in SQL_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SQL_CALLS:
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
    scanned = sum(1 for p in package.rglob("*.py") if not p.relative_to(package).as_posix().startswith("index/"))
    assert scanned > 50  # the scan really read the package
    index_sql = [p for p in (package / "index").rglob("*.py") if ".execute(" in p.read_text(encoding="utf-8")]
    found = {p.relative_to(package / "index").as_posix() for p in index_sql}
    assert found >= {"reader.py", "writing/build.py", "store.py"}  # ...and it would see SQL where there is some


def test_a_common_name_cannot_crowd_out_a_rare_one_in_a_name_lookup(repo: Repo):
    repo.write("calc/ops.py", "\n\n".join(
        f"class Op{i}:\n    def __mul__(self, other):\n        return ('mul', {i}, other)\n" for i in range(6)
    ) + "\n\nclass Matrix:\n    def __matmul__(self, other):\n        return ('matmul', other)\n\n    def _print_Matrix(self):\n        return 'M'\n")
    repo.commit("ops")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    index = Index.shared(repo.root)
    found = index.units_named({"__mul__", "__matmul__"}, ("name", "qualified_name"), limit=3)
    names = sorted(u.qualified_name for u in found.values())
    assert "Matrix.__matmul__" in names and sum(n.endswith(".__mul__") for n in names) == 3  # the limit is per name
    after = index.units_named_after({"Matrix"}, ("method",), ("name", "qualified_name"))
    assert [u.qualified_name for u in after.values()] == ["Matrix._print_Matrix"]


def test_a_name_lookup_by_suffix_is_case_sensitive_so_lowercase_lookalikes_cannot_fill_its_limit(repo: Repo):
    # sympy-14317: ``LIKE '%_Poly'`` also matched every ``to_poly`` and ``test_latex`` (SQLite's LIKE
    # ignores ASCII case), and the limit filled with them before latex.py's ``_print_Poly``.
    repo.write("calc/polys.py", "\n\n".join(f"def to{i}_poly(x):\n    return x + {i}\n" for i in range(8)) + "\n")
    repo.write("calc/printer.py", "class LatexPrinter:\n    def _print_Poly(self, p):\n        return 'poly'\n")
    repo.commit("polys")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    index = Index.shared(repo.root)
    found = index.units_named_after({"Poly"}, ("function", "method"), ("name", "qualified_name"), limit=4)
    assert [u.qualified_name for u in found.values()] == ["LatexPrinter._print_Poly"]
    assert index.units_named_after({"poly"}, ("function", "method"), ("name",), limit=20)  # the lowercase name still finds its own
    assert index.units_named_after({"Po*y", "P[o]ly"}, ("method",), ("name",)) == {}  # a glob character is not a name
