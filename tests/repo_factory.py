"""Moved to the ``testing`` package (tests/testing/); this shim re-exports the old names until the
mechanical import rewrite (the last commit of the branch) removes it."""

from testing.env import LEXICAL, child_env, unshare_works, wait_for  # noqa: F401
from testing.repos import GIT_ID, README, PAYMENTS, SESSIONS, Repo, make_shop  # noqa: F401
