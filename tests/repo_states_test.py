"""paqad in the states a real repository can be in, each made with real git (tests/testing/repos.py):
a detached HEAD, a superproject with a submodule, a merge stopped on a conflict, a bare repository
and its clone, a linked worktree. Each test says what paqad does there today."""

from __future__ import annotations

import json
import os
from pathlib import Path

from testing import repos
from testing.env import wait_for
from testing.repos import Repo

RETRY = "retry a card charge with exponential backoff"
PARCEL = "hand the parcel to the courier"


def search(paqad_cli, root: Path, query: str) -> dict:
    done = paqad_cli("rag", "search", query, "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def first_id(paqad_cli, root: Path, query: str) -> str | None:
    found = search(paqad_cli, root, query)
    return found["results"][0]["id"] if found["answered"] else None


def hooks_folder(repo: Repo) -> Path:
    return Path(repo.git("rev-parse", "--path-format=absolute", "--git-path", "hooks").strip())


def hook_state(paqad_cli, root: Path) -> dict[str, str]:
    done = paqad_cli("hooks", "status", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return {h["hook"]: h["state"] for h in json.loads(done.stdout)["hooks"]}


# ---- detached HEAD ------------------------------------------------------------------------------


def test_detached_head_indexes_searches_and_its_hooks_keep_the_index_fresh(detached: Repo, paqad_cli) -> None:
    head = detached.head()
    assert paqad_cli("rag", "init", cwd=detached.root).returncode == 0
    assert first_id(paqad_cli, detached.root, RETRY) == "shop/payments.py::retry_charge"
    assert first_id(paqad_cli, detached.root, PARCEL) is None  # shipping.py is in the later commit
    install = paqad_cli("hooks", "install", cwd=detached.root)
    assert install.returncode == 0, install.stderr
    assert hook_state(paqad_cli, detached.root)["post-commit"] == "installed"
    assert (hooks_folder(detached) / "post-checkout").is_file()
    detached.write("shop/shipping.py", repos.SHIPPING)
    detached.commit("shipping, committed on the detached HEAD")  # runs the post-commit shim
    assert wait_for(lambda: first_id(paqad_cli, detached.root, PARCEL) == "shop/shipping.py::ship_parcel")
    update = paqad_cli("rag", "update", cwd=detached.root)
    assert update.returncode == 0 and "0 changed" in update.stdout, update.stdout + update.stderr
    assert detached.branch() is None and detached.git("rev-parse", "HEAD~1").strip() == head  # paqad moved no ref


# ---- submodule ----------------------------------------------------------------------------------


def test_a_submodules_files_are_not_in_the_superprojects_index(repo: Repo, submodule: Repo, paqad_cli) -> None:
    """Today paqad indexes what ``git ls-files`` lists; a submodule is one gitlink entry there, so its
    files stay out of the superproject's index (``rag explain`` calls them "ignored by git")."""
    init = paqad_cli("rag", "init", cwd=repo.root)
    assert init.returncode == 0, init.stderr
    assert first_id(paqad_cli, repo.root, RETRY) == "shop/payments.py::retry_charge"
    assert search(paqad_cli, repo.root, "split a supplier invoice into its line items")["answered"] is False
    explain = paqad_cli("rag", "explain", "vendor/invoices/invoices.py", cwd=repo.root)
    assert explain.returncode == 0 and "not indexed" in explain.stdout and "git ls-files" in explain.stdout, explain.stdout
    gitlink = paqad_cli("rag", "explain", "vendor/invoices", cwd=repo.root)
    assert gitlink.returncode == 0 and "not indexed" in gitlink.stdout
    assert not (submodule.root / ".paqad").exists()


def test_inside_a_submodule_paqad_works_on_the_submodule(repo: Repo, submodule: Repo, paqad_cli) -> None:
    """From the submodule's work tree paqad sees the submodule as its repository: its own index,
    its hooks in the superproject's .git/modules/<name>/hooks, the superproject's hooks untouched."""
    assert paqad_cli("rag", "init", cwd=submodule.root).returncode == 0
    assert (submodule.root / ".paqad").is_dir() and not (repo.root / ".paqad").exists()
    assert first_id(paqad_cli, submodule.root, "split a supplier invoice into its line items") == "invoices.py::parse_invoice"
    assert paqad_cli("hooks", "install", cwd=submodule.root).returncode == 0
    folder = hooks_folder(submodule)
    assert folder.is_relative_to(repo.root / ".git" / "modules") and (folder / "post-commit").is_file()
    assert not (hooks_folder(repo) / "post-commit").exists()
    submodule.write("credit_notes.py", "def issue_credit_note(invoice: str) -> str:\n    '''Cancel part of an invoice with a credit note.'''\n    return invoice\n")
    submodule.commit("credit notes")
    assert wait_for(lambda: first_id(paqad_cli, submodule.root, "cancel part of an invoice with a credit note") == "credit_notes.py::issue_credit_note")


# ---- merge conflict ----------------------------------------------------------------------------


def test_during_a_merge_conflict_the_index_still_updates(repo: Repo, paqad_cli) -> None:
    """``rag update`` mid-merge indexes what is in the work tree: the cleanly merged new file, and
    the conflicted file as it is now. Today a file with conflict markers does not parse, so its
    declarations give way to one ``document`` unit that answers nothing until the merge is
    resolved; the next update brings them back."""
    repos.make_diverged(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert first_id(paqad_cli, repo.root, RETRY) == "shop/payments.py::retry_charge"
    repos.merge_conflicted(repo)
    assert "<<<<<<< HEAD" in (repo.root / "shop/payments.py").read_text()
    update = paqad_cli("rag", "update", cwd=repo.root)
    assert update.returncode == 0 and update.stderr == "", update.stderr
    assert update.stdout.startswith("Updated: 2 changed"), update.stdout
    assert first_id(paqad_cli, repo.root, PARCEL) == "shop/shipping.py::ship_parcel"
    probe = json.loads(paqad_cli("rag", "probe", RETRY, "--json", cwd=repo.root).stdout)
    conflicted = [r for r in probe["results"] if r["path"] == "shop/payments.py"]
    assert [(r["kind"], r["id"]) for r in conflicted] == [("document", "shop/payments.py::payments.py")]
    assert search(paqad_cli, repo.root, RETRY)["answered"] is False
    repo.git("checkout", "--theirs", "shop/payments.py")
    repo.commit("merge feature, their wording")
    assert paqad_cli("rag", "update", cwd=repo.root).returncode == 0
    assert first_id(paqad_cli, repo.root, RETRY) == "shop/payments.py::retry_charge"
    assert first_id(paqad_cli, repo.root, "bill the customer credit card through the merchant bank") == "shop/payments.py::PaymentGateway.charge"


# ---- bare repository and its clone ----------------------------------------------------------


def test_root_at_a_bare_repository_is_a_clear_error(bare: Path, paqad_cli, tmp_path: Path) -> None:
    """A bare repository has no work tree to index or hooks to keep fresh: each command says so in
    one line and exits 2, writing nothing into the git dir."""
    before = sorted(p.relative_to(bare) for p in bare.rglob("*"))
    for args in (("rag", "init"), ("rag", "search", "charge"), ("hooks", "install")):
        done = paqad_cli("--root", str(bare), *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.returncode, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "bare" in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    assert sorted(p.relative_to(bare) for p in bare.rglob("*")) == before


def test_a_clone_of_a_bare_repository_works_like_any_repository(bare: Path, paqad_cli, tmp_path: Path) -> None:
    clone = repos.clone(bare, tmp_path / "clone")
    assert paqad_cli("rag", "init", cwd=clone.root).returncode == 0
    assert first_id(paqad_cli, clone.root, RETRY) == "shop/payments.py::retry_charge"
    assert paqad_cli("hooks", "install", cwd=clone.root).returncode == 0
    assert (clone.root / ".git/hooks/post-merge").is_file() and not (bare / "hooks/post-merge").exists()


# ---- linked worktree ----------------------------------------------------------------------------


def test_a_linked_worktree_has_its_own_index_and_shares_the_hooks(repo: Repo, paqad_cli, tmp_path: Path) -> None:
    repos.make_shop(repo)
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert paqad_cli("hooks", "install", cwd=repo.root).returncode == 0
    other = repos.add_worktree(repo, tmp_path / "other")
    assert paqad_cli("rag", "init", cwd=other.root).returncode == 0
    assert (other.root / ".paqad").is_dir() and hooks_folder(other) == hooks_folder(repo)
    other.write("shop/shipping.py", repos.SHIPPING)
    other.commit("shipping, in the worktree")
    assert wait_for(lambda: first_id(paqad_cli, other.root, PARCEL) == "shop/shipping.py::ship_parcel")
    assert first_id(paqad_cli, repo.root, PARCEL) is None  # the main work tree has no shipping.py


def test_the_checkout_guard_sees_a_file_written_into_the_source_tree() -> None:
    """tests/conftest.py fails a test that writes inside the checkout; prove its probe sees one."""
    import conftest

    before = conftest._checkout_state()
    probe = conftest.CHECKOUT / f".paqad-guard-probe-{os.getpid()}"
    probe.write_text("x")
    try:
        after = conftest._checkout_state()
    finally:
        probe.unlink()
    assert before is not None and after is not None and after - before == {f"?? {probe.name}"}
    assert conftest._checkout_state() == before
