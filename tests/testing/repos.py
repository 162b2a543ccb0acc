"""Real git repositories in temp folders (``git init``, real commits), the shop content most tests
index, and factories for the states a user's repository can be in: no commits yet, a detached
HEAD, a submodule, a merge left conflicted, a bare repository and its clone, a linked worktree,
``core.hooksPath`` (husky). Every git call runs the real ``git``; nothing is faked."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

# Identity and no signing on the command line too, so a call works even where the suite's
# GIT_CONFIG_GLOBAL (tests/conftest.py) is not in effect (a test that builds its own env).
GIT_ID = ["-c", "user.name=paqad tests", "-c", "user.email=tests@paqad.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run real git in ``cwd`` with the test identity; the completed process (text)."""
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=check, capture_output=True, text=True)


@dataclass
class Repo:
    """A git work tree at ``root``; ``write`` files, run ``git``, ``commit`` everything."""

    root: Path

    @classmethod
    def init(cls, root: Path) -> Repo:
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        return cls(root)

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def write_local(self, text: str) -> Path:
        """Write the developer's own settings (``config.yaml`` in the work tree's per-developer
        folder, outside the repository: :mod:`paqad.localstate`)."""
        from paqad import workspace

        path = workspace.local_config_path(self.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def git(self, *args: str) -> str:
        return git(self.root, *args).stdout

    def commit(self, message: str = "commit") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, "--allow-empty")

    def head(self) -> str:
        """The commit HEAD points at (full hash)."""
        return self.git("rev-parse", "HEAD").strip()

    def branch(self) -> str | None:
        """The checked-out branch, or None on a detached HEAD."""
        done = git(self.root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
        return done.stdout.strip() or None


# The shop again, but nothing in it shares a word with "resend a payment after a transient error":
# only meaning connects the question to retry_charge.
CARDS = '''\
"""Card processing for the shop."""

import time


class CardGateway:
    """Talks to the card processor."""

    def charge(self, amount_cents: int, card_token: str) -> str:
        """Charge a card and return the processor's transaction id."""
        return self._post("/charges", {"amount": amount_cents, "card": card_token})

    def refund(self, transaction_id: str) -> None:
        """Give the money back for an earlier charge."""
        self._post("/refunds", {"id": transaction_id})

    def _post(self, route: str, body: dict) -> str:
        return route + str(body)


def retry_charge(gateway: CardGateway, amount_cents: int, card_token: str, attempts: int = 3) -> str:
    """Charge again after a temporary processor failure, sleeping with exponential backoff."""
    for attempt in range(attempts):
        try:
            return gateway.charge(amount_cents, card_token)
        except ProcessorTimeout:
            time.sleep(2 ** attempt)
    raise ProcessorTimeout("processor unavailable")
'''

PAYMENTS = '''\
"""Payment processing for the shop."""

import time


class PaymentGateway:
    """Talks to the card processor."""

    def charge(self, amount_cents: int, card_token: str) -> str:
        """Charge a card and return the processor's transaction id."""
        return self._post("/charges", {"amount": amount_cents, "card": card_token})

    def refund(self, transaction_id: str) -> None:
        """Give the money back for an earlier charge."""
        self._post("/refunds", {"id": transaction_id})

    def _post(self, route: str, body: dict) -> str:
        return route + str(body)


def retry_charge(gateway: PaymentGateway, amount_cents: int, card_token: str, attempts: int = 3) -> str:
    """Charge again after a transient processor error, sleeping with exponential backoff."""
    for attempt in range(attempts):
        try:
            return gateway.charge(amount_cents, card_token)
        except TimeoutError:
            time.sleep(2 ** attempt)
    raise TimeoutError("processor unavailable")
'''

SESSIONS = '''\
"""Signed session cookies."""

import hmac
import hashlib


def sign_cookie(value: str, secret: bytes) -> str:
    """Sign the session cookie value with an HMAC so the client cannot tamper with it."""
    mac = hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()
    return f"{value}.{mac}"


def verify_cookie(signed: str, secret: bytes) -> str | None:
    """Return the cookie value when its signature matches, otherwise None."""
    value, _, mac = signed.rpartition(".")
    return value if hmac.compare_digest(sign_cookie(value, secret), signed) else None
'''

README = '''\
# Shop

A small shop backend used by the paqad tests.

## Payments

Cards are charged through the payment gateway; failed charges are retried with backoff.

## Sessions

Session cookies are signed with HMAC.
'''


def make_shop(repo: Repo, commit: bool = True) -> Repo:
    """A small realistic repository: two Python modules and a README."""
    repo.write("shop/payments.py", PAYMENTS)
    repo.write("shop/sessions.py", SESSIONS)
    repo.write("README.md", README)
    if commit:
        repo.commit("shop")
    return repo


# ---- the states a repository can be in ----------------------------------------------------------

SHIPPING = "def ship_parcel(address: str) -> str:\n    '''Hand the parcel to the courier service.'''\n    return address\n"
INVOICES = "def parse_invoice(text: str) -> list[str]:\n    '''Split a supplier invoice into its line items.'''\n    return text.splitlines()\n"
CHARGE_DOC = '"""Charge a card and return the processor\'s transaction id."""'
FEATURE_DOC = '"""Bill the customer\'s credit card through the merchant bank."""'
MAIN_DOC = '"""Debit the bank card via the processor."""'


def make_detached(repo: Repo) -> Repo:
    """The shop with two commits, HEAD detached at the first (``git checkout --detach HEAD~1``),
    the state of a bisect or a CI checkout of a tag."""
    make_shop(repo)
    repo.write("shop/shipping.py", SHIPPING)
    repo.commit("shipping")
    repo.git("checkout", "-q", "--detach", "HEAD~1")
    assert repo.branch() is None
    return repo


def make_submodule(repo: Repo, library: Path, path: str = "vendor/invoices") -> Repo:
    """The shop with a submodule at ``path``: a separate repository made at ``library`` (one
    Python module, ``invoices.py``) added with ``git submodule add`` and committed. Returns the
    submodule's work tree (its ``.git`` is a file pointing into ``.git/modules``)."""
    make_shop(repo)
    lib = Repo.init(library)
    lib.write("invoices.py", INVOICES)
    lib.commit("invoices")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), path)
    repo.commit("vendor the invoice library")
    sub = Repo(repo.root / path)
    assert (sub.root / ".git").is_file() and (sub.root / "invoices.py").is_file()
    return sub


def make_diverged(repo: Repo) -> Repo:
    """The shop with branches ``feature`` and ``main`` that both edit the ``charge`` docstring of
    shop/payments.py (``feature`` also adds shop/shipping.py); ``main`` checked out, not merged."""
    make_shop(repo)
    payments = repo.root / "shop/payments.py"
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("shop/payments.py", payments.read_text().replace(CHARGE_DOC, FEATURE_DOC))
    repo.write("shop/shipping.py", SHIPPING)
    repo.commit("feature: merchant bank wording, shipping")
    repo.git("checkout", "-q", "main")
    repo.write("shop/payments.py", payments.read_text().replace(CHARGE_DOC, MAIN_DOC))
    repo.commit("main: processor wording")
    return repo


def merge_conflicted(repo: Repo, branch: str = "feature") -> Repo:
    """``git merge BRANCH`` that stops conflicted: markers in shop/payments.py (the only unmerged
    path), shop/shipping.py merged cleanly and staged, MERGE_HEAD present."""
    merge = git(repo.root, "merge", "-q", branch, check=False)
    assert merge.returncode == 1, merge.stdout + merge.stderr
    assert repo.git("diff", "--name-only", "--diff-filter=U").split() == ["shop/payments.py"]
    return repo


def make_merge_conflict(repo: Repo) -> Repo:
    """The shop in the middle of a conflicted merge (``make_diverged`` then ``merge_conflicted``)."""
    return merge_conflicted(make_diverged(repo))


def make_bare(source: Repo, path: Path) -> Path:
    """A bare repository cloned from ``source`` (``git clone --bare``): a git dir, no work tree."""
    subprocess.run(["git", "clone", "-q", "--bare", str(source.root), str(path)], check=True, capture_output=True)
    assert git(path, "rev-parse", "--is-bare-repository").stdout.strip() == "true"
    return path


def clone(origin: Path, path: Path) -> Repo:
    """A normal clone (work tree + .git) of ``origin``, e.g. of a bare repository."""
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True, capture_output=True)
    return Repo(path)


def add_worktree(repo: Repo, path: Path, branch: str = "other") -> Repo:
    """A linked worktree of ``repo`` on a new ``branch`` (its ``.git`` is a file; hooks are shared)."""
    repo.git("worktree", "add", "-q", "-b", branch, str(path))
    return Repo(path)


def use_hooks_path(repo: Repo, folder: str = "githooks") -> Path:
    """Point ``core.hooksPath`` at ``folder`` (relative to the work tree) and create it."""
    repo.git("config", "core.hooksPath", folder)
    (repo.root / folder).mkdir(parents=True, exist_ok=True)
    return repo.root / folder


def make_husky(repo: Repo) -> Path:
    """husky's layout: ``core.hooksPath=.husky/_`` with the user's hooks in ``.husky/``."""
    use_hooks_path(repo, ".husky/_")
    return repo.root / ".husky"
