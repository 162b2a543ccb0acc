"""API keys: the environment, ``secrets.env`` in the per-developer folder (mode 0600), and redaction."""

from __future__ import annotations

import os
import pickle
import stat
import warnings
from pathlib import Path

import pytest

from paqad import secrets, workspace
from paqad.errors import ConfigError
from paqad.secrets import Secret, SecretsFileWarning, get_secret, parse_dotenv, read_secrets, redact, set_secret

KEY = "sk-proj-Abcdefghijklmnop0123456789_XYZ"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in secrets.KNOWN_KEY_NAMES:
        monkeypatch.delenv(name, raising=False)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_set_secret_creates_0600_file_outside_the_work_tree(tmp_path: Path) -> None:
    old = os.umask(0)  # the mode must not depend on the user's umask
    try:
        path = set_secret(tmp_path, "OPENAI_API_KEY", KEY)
    finally:
        os.umask(old)
    assert path == (workspace.local_dir(tmp_path) / "secrets.env")
    assert _mode(path) == 0o600
    assert not path.is_relative_to(tmp_path) and not (tmp_path / ".paqad" / "secrets.env").exists()  # no git add, no pull reaches it
    assert f"OPENAI_API_KEY={KEY}" in path.read_text().splitlines()
    found = get_secret("OPENAI_API_KEY", tmp_path, environ={})
    assert found is not None and found.reveal() == KEY and found.source == str(path)


def test_set_secret_replaces_one_line_and_keeps_the_rest(tmp_path: Path) -> None:
    set_secret(tmp_path, "VOYAGE_API_KEY", "pa-first-value-123456")
    path = secrets.secrets_path(tmp_path)
    path.write_text(path.read_text() + "# my note\nOTHER=keep me\n")
    set_secret(tmp_path, "VOYAGE_API_KEY", "pa-second-value-654321")
    values = read_secrets(tmp_path)
    assert values == {"VOYAGE_API_KEY": "pa-second-value-654321", "OTHER": "keep me"}
    assert "# my note" in path.read_text()
    assert _mode(path) == 0o600


def test_values_that_need_quotes_round_trip(tmp_path: Path) -> None:
    value = 'tok with spaces # and "quotes" \\ end'
    set_secret(tmp_path, "PAQAD_EMBEDDING_API_KEY", value)
    assert read_secrets(tmp_path)["PAQAD_EMBEDDING_API_KEY"] == value


def test_environment_wins_and_empty_variables_count_as_unset(tmp_path: Path) -> None:
    set_secret(tmp_path, "OPENAI_API_KEY", KEY)
    from_env = get_secret("OPENAI_API_KEY", tmp_path, environ={"OPENAI_API_KEY": "sk-from-the-environment-0001"})
    assert from_env is not None and from_env.reveal() == "sk-from-the-environment-0001" and from_env.source == "env OPENAI_API_KEY"
    from_file = get_secret("OPENAI_API_KEY", tmp_path, environ={"OPENAI_API_KEY": "  "})
    assert from_file is not None and from_file.reveal() == KEY
    assert get_secret("VOYAGE_API_KEY", tmp_path, environ={}) is None
    assert get_secret("VOYAGE_API_KEY", None, environ={}) is None


def test_loose_mode_is_warned_about_and_fixed(tmp_path: Path) -> None:
    path = set_secret(tmp_path, "OPENAI_API_KEY", KEY)
    os.chmod(path, 0o644)
    with pytest.warns(SecretsFileWarning, match="0644.*set it to 0600"):
        assert get_secret("OPENAI_API_KEY", tmp_path, environ={}).reveal() == KEY
    assert _mode(path) == 0o600
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_secrets(tmp_path)  # a private file reads without a warning


def test_malformed_line_names_the_line_but_never_shows_it(tmp_path: Path) -> None:
    workspace.ensure(tmp_path)
    path = secrets.secrets_path(tmp_path)
    workspace.atomic_write_text(path, f"# keys\nOK=1234567\n{KEY}\n", mode=0o600)
    with pytest.raises(ConfigError, match="line 3") as caught:
        read_secrets(tmp_path)
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A=1\n", {"A": "1"}),
        ("export A = 'x y'\n", {"A": "x y"}),
        ('A="a \\"b\\" c"  # note\n', {"A": 'a "b" c'}),
        ("A=abc # comment\nB=a#b\n", {"A": "abc", "B": "a#b"}),
        ("\n  # only comments\n\nA=1\nA=2\n", {"A": "2"}),
        ("A=\n", {"A": ""}),
    ],
)
def test_parse_dotenv(text: str, expected: dict[str, str]) -> None:
    assert parse_dotenv(text) == expected


@pytest.mark.parametrize("text", ["no equals sign\n", "1BAD=x\n", "A='unterminated\n"])
def test_parse_dotenv_errors(text: str) -> None:
    with pytest.raises(ConfigError, match="line 1"):
        parse_dotenv(text)


def test_set_secret_refuses_bad_names_and_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        set_secret(tmp_path, "BAD NAME", "x")
    with pytest.raises(ConfigError):
        set_secret(tmp_path, "A", "two\nlines")
    with pytest.raises(ConfigError):
        set_secret(tmp_path, "A", "   ")


def test_redact_known_values_and_key_shapes() -> None:
    text = f"key {KEY} and Authorization: Bearer abc.def-123 and sk-unknownKEY1234567890 and pa-VoyageKey_1234567890 and my-own-secret-value"
    out = redact(text, ["my-own-secret-value", None, ""])
    assert KEY not in out and "abc.def-123" not in out and "sk-unknownKEY" not in out and "pa-VoyageKey" not in out
    assert "my-own-secret-value" not in out
    assert out.count("***") == 5
    assert redact("sk-short and task-runner and pa-ge", []) == "sk-short and task-runner and pa-ge"


def test_redact_remembers_keys_read_from_any_source(tmp_path: Path) -> None:
    odd = "zq9-not-a-known-shape-7731"
    assert redact(f"x {odd} y") == f"x {odd} y"
    get_secret("PAQAD_EMBEDDING_API_KEY", None, environ={"PAQAD_EMBEDDING_API_KEY": odd})
    assert redact(f"x {odd} y") == "x *** y"
    file_only = "qq-file-only-secret-4242"
    set_secret(tmp_path, "PAQAD_EMBEDDING_API_KEY", file_only)
    assert redact(file_only) == "***"
    assert redact("abc", ["abc"]) == "abc"  # too short to mask by value


def test_secret_never_shows_itself() -> None:
    secret = Secret(KEY, "env OPENAI_API_KEY")
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{[secret]}"
    assert secret.reveal() == KEY
    with pytest.raises(TypeError):
        pickle.dumps(secret)
