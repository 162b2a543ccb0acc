"""The index's writers when the repository or the disk is not what they expect (issue 31, findings
11 and 12): a file name that is not UTF-8 is skipped in one line and the rest is indexed; a full
disk (a real 2 MiB tmpfs mounted over the index folder) is one line naming the folder and leaves
no ``.building`` file; the index folder taken by a plain file is one line from the builder and
from search, which advise a command that works once the file is moved."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from paqad import workspace
from paqad.index import store
from testing.repos import Repo, make_shop

NON_UTF8 = "caf\udce9.py"  # the bytes b"caf\xe9.py" on disk, as Python decodes them (surrogateescape)
BODY = "def compute_the_total_of_the_invoice_lines(lines):\n    return sum(line.amount for line in lines)\n"


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stderr
    return done


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The command failed with exactly one line on stderr (no traceback, no crash log)."""
    assert done.returncode == 1, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("paqad: error: "), done.stderr
    assert "crash.log" not in done.stderr and "Traceback" not in done.stderr
    return lines[0]


# ---- finding 11: a name that is not UTF-8 ----------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_skipped_in_one_line_and_the_rest_is_indexed(repo: Repo, paqad_cli):
    make_shop(repo, commit=False)
    repo.write(NON_UTF8, BODY)
    repo.write("shop/invoices.py", BODY.replace("compute_the_total", "sum_up_the_total"))
    repo.commit("a name in Latin-1")
    for command in (("rag", "init"), ("rag", "rebuild"), ("rag", "update")):
        done = ok(paqad_cli(*command, cwd=repo.root))
        warning = [line for line in done.stderr.splitlines() if "not valid UTF-8" in line]
        assert warning == ["warning: 1 file(s) not indexed: the name is not valid UTF-8 (caf\\xe9.py); rename them to index them"], done.stderr
    repo.write("shop/invoices.py", BODY.replace("compute_the_total", "add_up_the_total"))
    repo.commit("an update after it")
    assert "1 changed" in ok(paqad_cli("rag", "update", cwd=repo.root)).stdout
    found = ok(paqad_cli("rag", "search", "add up the total of the invoice lines", cwd=repo.root)).stdout
    assert "shop/invoices.py" in found
    assert "shop/payments.py" in ok(paqad_cli("rag", "search", "retry a card charge after a processor timeout", cwd=repo.root)).stdout


# ---- finding 12: a full disk, and the folder taken by a file ---------------------------------


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``folder`` (root only; skipped elsewhere)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:100]})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Write a filler file until the disk holding ``folder`` is full."""
    filler = folder / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def big_repo(repo: Repo, files: int = 60) -> Repo:
    make_shop(repo, commit=False)
    for i in range(files):
        repo.write(f"pkg/mod{i}.py", "".join(f"def handler_{i}_{j}(request_{j}):\n    return request_{j}.value_{i} + {j}\n\n" for j in range(120)))
    repo.commit("many modules")
    return repo


def test_a_full_disk_is_one_line_naming_the_folder_and_leaves_no_building_file(repo: Repo, paqad_cli):
    big_repo(repo)
    folder = workspace.vectors_dir(repo.root)
    with small_disk(folder, "2m"):
        line = one_error_line(paqad_cli("rag", "init", cwd=repo.root))
        assert "is full" in line and str(folder) in line
        assert sorted(p.name for p in folder.iterdir() if ".building" in p.name) == []
        repo.git("rm", "-rq", "pkg")  # a smaller tree fits: its index is built
        repo.commit("fewer modules")
        ok(paqad_cli("rag", "rebuild", cwd=repo.root))
        filler = fill(folder)
        repo.write("shop/more.py", "".join(f"def more_{j}(x):\n    return x * {j}\n\n" for j in range(300)))
        line = one_error_line(paqad_cli("rag", "update", cwd=repo.root))  # an update: not "corrupt", not rebuilt
        assert "is full" in line and str(folder) in line
        line = one_error_line(paqad_cli("rag", "rebuild", cwd=repo.root))
        assert "is full" in line and not [p for p in folder.iterdir() if ".building" in p.name]
        filler.unlink()
        ok(paqad_cli("rag", "update", cwd=repo.root))
        assert "shop/payments.py" in ok(paqad_cli("rag", "search", "retry a card charge after a processor timeout", cwd=repo.root)).stdout


def test_a_disk_that_fills_while_embedding_is_one_line_and_no_door_calls_it_damage(repo: Repo, paqad_cli):
    big_repo(repo, files=3)
    env = {"PAQAD_RAG_EMBEDDING_PROVIDER": "local"}
    folder = workspace.vectors_dir(repo.root)
    with small_disk(folder, "8m"):
        ok(paqad_cli("rag", "init", cwd=repo.root, env=env))
        con = sqlite3.connect(store.current_path(repo.root), isolation_level=None)
        con.execute("DELETE FROM vectors")  # every unit pending again, the file shrunk to what stays
        con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        filler = fill(folder)
        line = one_error_line(paqad_cli("rag", "update", cwd=repo.root, env=env))
        assert "is full" in line and str(folder) in line
        # SQLite cannot even open the index without room for its -shm file: a full disk, not damage to rebuild
        line = one_error_line(paqad_cli("rag", "search", "retry a card charge after a processor timeout", cwd=repo.root, env=env))
        assert "is full" in line and "corrupt" not in line and not (folder / store.DAMAGED).exists()
        filler.unlink()
        done = ok(paqad_cli("rag", "update", cwd=repo.root, env=env))
        assert "Updated:" in done.stdout and "0 pending" in done.stdout
        assert "shop/payments.py" in ok(paqad_cli("rag", "search", "retry a card charge after a processor timeout", cwd=repo.root, env=env)).stdout


def test_the_index_folder_taken_by_a_file_is_one_line_and_search_advises_what_works(repo: Repo, paqad_cli):
    make_shop(repo)
    folder = workspace.vectors_dir(repo.root)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder\n", encoding="utf-8")
    for command in (("rag", "init"), ("rag", "search", "retry a card charge")):
        line = one_error_line(paqad_cli(*command, cwd=repo.root))
        assert f"{folder} is a file, not a folder" in line and "move or delete that file" in line
    folder.unlink()  # what the line says to do, then the command it names
    ok(paqad_cli("rag", "init", cwd=repo.root))
    assert store.current_path(repo.root) is not None


def test_a_killed_build_or_adoption_leaves_nothing_the_next_build_keeps(repo: Repo, paqad_cli):
    make_shop(repo)
    ok(paqad_cli("rag", "init", cwd=repo.root))
    folder = workspace.vectors_dir(repo.root)
    gone_pid = _gone_pid()
    left = [folder / "index-000099.sqlite.building", folder / f".fetched-{gone_pid}.sqlite", folder / f".publish-{gone_pid}.sqlite"]
    for path in left:
        path.write_bytes(b"\0" * 4096)
    ok(paqad_cli("rag", "rebuild", cwd=repo.root))
    assert [p.name for p in left if p.exists()] == []


def _gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid
