"""Secrets with no provider prefix: a password inside a URL, and a value assigned to a name that
says it is a secret (``SMTP_PASSWORD = "..."``, ``DB_PASSWORD=...``, ``"private_key_id": "..."``,
``AccountKey=...;``). Only the value is masked; the name stays, so the code still reads.

gitleaks's ``generic-api-key`` (ported in :mod:`paqad.redaction_rules`) covers high-entropy values
(Shannon entropy above 3.5 with a digit); a typed password (``hunter2``, ``Tr0ub4dor&3``) is below
that, so this module keys on the name instead and decides by the *value's form* whether it is a
literal secret or code:

* masked: a quoted literal (``"s3cr3t!"``), a bare token in ``.env``/YAML/INI/connection-string
  form (``DB_PASSWORD=hunter2``, ``password: Tr0ub4dor``, ``AccountKey=...;``);
* not masked: an expression (``request.form["password"]``, ``get_token()``, ``self.token``), a
  placeholder (``${DB_PASSWORD}``, ``<password>``, ``%s``, ``{{ secret }}``, ``***``), a type
  (``password: str``), an empty or boolean or null value, a keyword argument passed on
  (``password=password``), and a quoted *name* (``"access_token"``, ``"PASSWORD"``: lower- or
  upper-case words joined by ``_``/``-``, how field and setting names look).

The URL rule is RFC 3986's userinfo (``scheme://user:password@host``; ``redis://:password@host``
has an empty user). Sources for the names: detect-secrets's ``KeywordDetector`` deny-list
(password, passwd, pwd, secret, token, api_key, private_key, ...; github.com/Yelp/detect-secrets,
Apache-2.0) plus Azure's connection-string keys (``AccountKey``, ``SharedAccessKey``, Azure
Storage docs, "Configure a connection string") and Google's service-account JSON
(``private_key_id``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from paqad.redaction_rules import anchored_matches

#: Lower-case substrings one of which a text must hold before either regex runs.
URL_ANCHORS = ("://",)
ASSIGN_ANCHORS = ("pass", "pwd", "secret", "token", "key", "credential")

URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@'\"`<>\[\]{}]*:(?P<value>[^\s/?#@'\"`<>\[\]{}]+)@(?=[A-Za-z0-9\[_])", re.ASCII)

#: The secret word the key ends with; every alternative starts with one of ASSIGN_ANCHORS, so the
#: regex is tried only where an anchor occurs. A key ending in "key" must also name a secret key
#: (``_KEY_NAMES``: api_key, AccountKey, private_key_id, ...; not ``sort_key`` or ``cache_key``).
_NAME = r"passw(?:or)?d|passphrase|(?<![A-Za-z])pass|(?<![A-Za-z])pwd|secret(?:[_.-]?key)?|token|key(?:[_.-]?id)?|credentials?"
SECRET_ASSIGNMENT = re.compile(
    rf"(?P<name>(?i:{_NAME}))(?![\w.-])(?P<sep>[\"']?[ \t]*(?::=|=>|=(?!=)|:(?![:=]))[ \t]*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s'\"`,;&)\]}]+)(?P<after>[,;)&]?)",
    re.ASCII,
)
_ANCHOR_RX = re.compile("|".join(ASSIGN_ANCHORS))  # on the lower-cased text
_KEY_NAMES = re.compile(
    r"(?:api|access|private|account|shared[_.-]?access|auth|secret|signing|encryption|master|client)[_.-]?key(?:[_.-]?id)?$|apikey$", re.IGNORECASE
)

_PLACEHOLDER = re.compile(r"\[REDACTED:|^[$%<{#]|^(?:\*+|x+|X+|\.+|-+|_+|0+)$|\{\{|\$\{|\{[\w.]*\}")
_NOT_VALUES = frozenset({"none", "null", "nil", "true", "false", "undefined", "empty", "changeme"})
_TYPES = frozenset(
    {"str", "string", "bytes", "int", "integer", "bool", "boolean", "float", "number", "any", "object", "text", "char", "secretstr", "secretbytes", "optional"}
)
_WORDS = re.compile(r"^(?:[a-z]+(?:[_.-][a-z]+)*|[A-Z]+(?:[_.-][A-Z]+)*)$")  # a name, not a secret
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_CODE = re.compile(r"[()\[\]{}]|^[A-Za-z_]\w*\.[A-Za-z_]")
_NAME_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token", "key", "apikey", "secretkey", "accesskey", "privatekey", "credential", "credentials"})


def _plain(value: str) -> str:
    return re.sub(r"[_.\-\s]", "", value.lower())


def _is_placeholder(value: str, name: str) -> bool:
    low = value.lower()
    return (
        not value.strip()
        or bool(_PLACEHOLDER.search(value))
        or low in _NOT_VALUES
        or _plain(value) in _NAME_WORDS
        or _plain(value) == _plain(name)
        or low in ("password", "yourpassword", "mypassword", "secret", "token")
    )


def quoted_secret(value: str, name: str) -> bool:
    """A quoted literal assigned to a secret name is a secret unless it is a name or a placeholder."""
    return len(value) >= 4 and not any(c.isspace() for c in value) and not _WORDS.match(value) and not _is_placeholder(value, name)


def bare_secret(value: str, name: str, sep: str, after: str) -> bool:
    """An unquoted value is a secret in ``.env``/YAML/connection-string form, not when it is code."""
    if len(value) < 3 or _is_placeholder(value, name) or _CODE.search(value) or _DOTTED.match(value):
        return False
    if value.lower() in _TYPES:
        return False  # password: str
    if sep[:1] in " \t" and sep.strip() == ":":
        return False  # prose or reST, not YAML (which has no space before the colon): "pass :func:"
    if not _IDENTIFIER.match(value):
        return after != ")"  # hunter2! or a base64 key; not the last argument of a call
    if after == ";" and sep.strip() == "=":
        return True  # a connection string: Password=hunter;
    if after in (",", ")"):
        return False  # a keyword argument passed on: password=pw,
    glued = not sep.startswith((" ", "\t"))  # DB_PASSWORD=x, password: x (code puts spaces around =)
    if any(c.isdigit() for c in value):
        mixed = not value.islower() and not value.isupper()  # Ini9Pass: a password, not a variable name
        return glued or name.isupper() or mixed and sep.strip() == "="
    return glued and sep.strip() == "=" and name.isupper()  # .env: DB_PASSWORD=postgres


def _assignment_secret(m: re.Match[str], line_name: str) -> tuple[int, int] | None:
    value, sep, after = m.group("value"), m.group("sep"), m.group("after")
    if m.group("name").lower().startswith("key") and not _KEY_NAMES.search(line_name):
        return None  # sort_key = "...", a dict key: not a secret name
    if value[:1] in "\"'":
        return (m.start("value") + 1, m.end("value") - 1) if quoted_secret(value[1:-1], line_name) else None
    return m.span("value") if bare_secret(value, line_name, sep, after) else None


def _key_name(text: str, m: re.Match[str]) -> str:
    """The whole key the secret word ends (``SMTP_PASSWORD``, not just ``PASSWORD``)."""
    start = m.start("name")
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    return text[start : m.end("name")]


def mask_assignments(text: str, mark: Callable[[str, str], str], lowered: str) -> tuple[str, int]:
    """``text`` with the values of secret-named assignments replaced by ``mark(kind, value)``."""
    matches = anchored_matches(SECRET_ASSIGNMENT, text, _ANCHOR_RX, lowered)
    return _mask(matches, text, mark, "secret-assignment", lambda m: _assignment_secret(m, _key_name(text, m)))


def mask_url_passwords(text: str, mark: Callable[[str, str], str], lowered: str) -> tuple[str, int]:
    """``text`` with the password of every ``scheme://user:password@host`` replaced."""

    def span(m: re.Match[str]) -> tuple[int, int] | None:
        value = m.group("value")
        return None if len(value) < 3 or _is_placeholder(value, "password") else m.span("value")  # u:p@ is a test URL

    return _mask(URL_PASSWORD.finditer(text), text, mark, "url-password", span)


def _mask(matches: Iterable[re.Match[str]], text: str, mark: Callable[[str, str], str], kind: str, pick: Callable[[re.Match[str]], tuple[int, int] | None]) -> tuple[str, int]:
    out: list[str] = []
    done = n = 0
    for m in matches:
        span = pick(m)
        if span is None or span[0] < done or span[0] >= span[1]:
            continue
        out += [text[done : span[0]], mark(kind, text[span[0] : span[1]])]
        done, n = span[1], n + 1
    if not n:
        return text, 0
    out.append(text[done:])
    return "".join(out), n
