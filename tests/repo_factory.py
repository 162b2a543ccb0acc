"""A tiny helper that makes real git repositories for tests (the way pre-commit's testing/ does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# An environment for ``config.load(..., environ=LEXICAL)``: nothing from the developer's shell,
# and the lexical configuration (the shipped default embeds with the local model).
LEXICAL = {"PAQAD_RAG_EMBEDDING_PROVIDER": "none"}

def child_env(**extra: str) -> dict[str, str]:
    """The environment for a ``python -c`` child: the hub's offline switches removed (an offline
    test must prove nothing is fetched without them). Run the child with ``cwd`` outside the
    source tree, so it imports the installed paqad (CI) or PYTHONPATH's (a developer's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return {**env, **extra}


def unshare_works() -> bool:
    """Whether ``unshare -rn`` (a user + network namespace: no interface up) can run here."""
    exe = shutil.which("unshare")
    return bool(exe) and subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=30).returncode == 0


GIT_ID = ["-c", "user.name=paqad tests", "-c", "user.email=tests@paqad.invalid", "-c", "commit.gpgsign=false"]


def wait_for(predicate, timeout: float = 30.0):
    """Poll ``predicate`` until it returns something truthy (background hooks finish later)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


@dataclass
class Repo:
    root: Path

    @classmethod
    def init(cls, root: Path) -> "Repo":
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

    def git(self, *args: str) -> str:
        out = subprocess.run(["git", *GIT_ID, *args], cwd=self.root, check=True, capture_output=True, text=True)
        return out.stdout

    def commit(self, message: str = "commit") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, "--allow-empty")


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
