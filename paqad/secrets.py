"""API keys: where they come from, how they are stored, and how they are kept out of text.

A key is never a setting: ``paqad.config`` has no key for one, so it cannot end up in a committed
``.paqad/configs/*`` file or in ``paqad config list``. A key is looked up, in order:

1. the environment: ``OPENAI_API_KEY``, ``VOYAGE_API_KEY``, ``PAQAD_EMBEDDING_API_KEY`` (the key of
   an OpenAI-compatible endpoint) or whatever name the caller asks for; an empty variable counts
   as unset;
2. ``secrets.env`` in the work tree's per-developer folder (``paqad.localstate``, outside the
   repository, so it is never committed, indexed, or replaced by a pull): ``KEY=value`` lines,
   dotenv style (blank lines and ``#`` comments are skipped, an ``export`` prefix is allowed, a
   value may be wrapped in single or double quotes, an unquoted value loses a `` # comment`` after
   whitespace; there is no ``${VAR}`` expansion).

``set_secret`` writes the file with mode 0600 from the first byte (a temp file made by ``mkstemp``,
then ``os.replace``). Reading a file that others can read or write (any of the 0o077 bits set, on
POSIX) does not refuse: it warns with ``SecretsFileWarning`` and tightens the mode to 0600, the
way a user who copied the file with a permissive umask would want. Refusing would break
``paqad rag update`` in a git hook, where nobody reads the message; warning and fixing keeps the
key private from then on and still says that it was exposed.

``redact(text)`` replaces every key this process has read (from either source), every key passed
to it, a ``Bearer`` token, and anything shaped like an OpenAI (``sk-…``) or Voyage (``pa-…``) key
with ``***``, and the other known secret shapes (``paqad.redaction``: cloud keys, tokens,
private-key blocks) with ``[REDACTED:<kind>]``. Every error message and log line that could carry a key goes through it.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from paqad import redaction, workspace
from paqad.errors import ConfigError

SECRETS_FILENAME = "secrets.env"
MASK = "***"

#: The environment variables paqad reads keys from, by provider.
OPENAI_KEY = "OPENAI_API_KEY"
VOYAGE_KEY = "VOYAGE_API_KEY"
COMPATIBLE_KEY = "PAQAD_EMBEDDING_API_KEY"
KNOWN_KEY_NAMES = (OPENAI_KEY, VOYAGE_KEY, COMPATIBLE_KEY)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Key shapes redacted even when the value itself is not known: OpenAI (sk-, sk-proj-...), Voyage
#: (pa-...), and whatever follows "Bearer" in a header echoed back.
_SHAPES = re.compile(r"\b(?:sk|pa)-[A-Za-z0-9_\-]{12,}|(?<=Bearer )[^\s\"',;]+", re.IGNORECASE)
#: Values shorter than this are not redacted by value (a 2-character "key" would mask half a text);
#: no real provider key is that short.
_MIN_REDACT_LEN = 6

_seen: set[str] = set()
_seen_lock = threading.Lock()


class SecretsFileWarning(UserWarning):
    """``secrets.env`` (in paqad's per-developer folder) was readable or writable by others; paqad set it to 0600."""


class Secret:
    """A key that does not show itself: ``repr``/``str`` give ``***``; ``reveal()`` gives the value.

    Holding keys in this wrapper keeps them out of a provider's ``repr``, a ``vars()`` dump and a
    traceback's locals printed by a test runner.
    """

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str = "") -> None:
        self._value = value
        #: Where it came from, for messages: ``env OPENAI_API_KEY`` or ``secrets.env`` (in paqad's per-developer folder).
        self.source = source

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[object, ...]:  # never pickled into a cache or a subprocess by accident
        raise TypeError("a Secret cannot be pickled")


def secrets_path(root: Path) -> Path:
    """The work tree's keys file: in its per-developer folder, never in the repository."""
    return workspace.local_dir(root) / SECRETS_FILENAME


def get_secret(name: str, root: Path | None = None, environ: Mapping[str, str] | None = None) -> Secret | None:
    """The key ``name`` from the environment, else from ``root``'s ``secrets.env`` (in paqad's per-developer folder), else None.

    Whatever is found is remembered for ``redact``. A malformed secrets file raises ``ConfigError``
    naming the line number (never the line: it may hold a key).
    """
    _check_name(name)
    env = os.environ if environ is None else environ
    value = env.get(name, "")
    if value.strip():
        remember(value.strip())
        return Secret(value.strip(), f"env {name}")
    if root is None:
        return None
    values = read_secrets(root)
    value = values.get(name, "")
    if value:
        return Secret(value, str(secrets_path(root)))
    return None


def read_secrets(root: Path) -> dict[str, str]:
    """All ``KEY=value`` pairs of ``secrets.env`` (in paqad's per-developer folder) ({} when there is none); all are remembered.

    A file with group or other permission bits is warned about and set to 0600 first.
    """
    path = secrets_path(root)
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    if os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
        _tighten(path, stat.S_IMODE(st.st_mode))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({type(exc).__name__})") from None
    values = parse_dotenv(text, str(path))
    for value in values.values():
        remember(value)
    return values


def set_secret(root: Path, name: str, value: str) -> Path:
    """Store ``name=value`` in the work tree's ``secrets.env`` (mode 0600), keeping the file's
    other lines. The file lives in the per-developer folder outside the repository, so no
    ``git add`` can commit it and no pull can replace it."""
    _check_name(name)
    value = value.strip()
    if not value or any(c in value for c in "\r\n\x00"):
        raise ConfigError(f"The value for {name} must be one non-empty line.")
    workspace.ensure(root)
    path = secrets_path(root)
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    line = f"{name}={_quote(value)}"
    out: list[str] = []
    replaced = False
    for existing in lines:
        if _line_name(existing) == name:
            if not replaced:
                out.append(line)
                replaced = True
            continue
        out.append(existing)
    if not replaced:
        if not lines:
            out.append("# API keys for paqad's remote providers. Never commit this file (mode 0600).")
        out.append(line)
    workspace.atomic_write_text(path, "\n".join(out) + "\n", mode=0o600)
    remember(value)
    return path


def parse_dotenv(text: str, origin: str = SECRETS_FILENAME) -> dict[str, str]:
    """``KEY=value`` lines -> dict; later lines win. Errors name the line number only."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            raise ConfigError(f"{origin}, line {number}: expected KEY=value (the line is not shown: it may hold a key)")
        values[name] = _unquote(value.strip(), origin, number)
    return values


def remember(value: str) -> None:
    """Make ``redact`` mask ``value`` from now on in this process."""
    if len(value) >= _MIN_REDACT_LEN:
        with _seen_lock:
            _seen.add(value)


def redact(text: str, secrets: Iterable[str | Secret | None] = ()) -> str:
    """``text`` with every known key, every key in ``secrets``, and key-shaped strings replaced by ``***``."""
    if not text:
        return text
    values = {s.reveal() if isinstance(s, Secret) else s for s in secrets if s}
    with _seen_lock:
        values |= _seen
    for value in sorted((v for v in values if len(v) >= _MIN_REDACT_LEN), key=len, reverse=True):
        text = text.replace(value, MASK)
    return redaction.redact(_SHAPES.sub(MASK, text))


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ConfigError(f"{name!r} is not a valid secret name (letters, digits and _, not starting with a digit).")


def _tighten(path: Path, mode: int) -> None:
    try:
        os.chmod(path, 0o600)
        done = "paqad set it to 0600"
    except OSError as exc:
        done = f"paqad could not change it ({exc.strerror}); run: chmod 600 {path}"
    warnings.warn(
        f"{path} had mode {mode:04o}, readable or writable by other users; {done}. "
        "If others could read it, consider the keys in it exposed and rotate them.",
        SecretsFileWarning,
        stacklevel=3,
    )


def _line_name(line: str) -> str:
    line = line.strip()
    if not line or line.startswith("#"):
        return ""
    if line.startswith("export "):
        line = line[len("export ") :]
    return line.partition("=")[0].strip()


def _quote(value: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_\-.:/+=@~]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unquote(value: str, origin: str, number: int) -> str:
    if value[:1] in ("'", '"'):
        quote = value[0]
        end = value.find(quote, 1)
        while quote == '"' and end > 0 and value[end - 1] == "\\" and not _escaped_backslash(value, end - 1):
            end = value.find(quote, end + 1)
        if end < 0:
            raise ConfigError(f"{origin}, line {number}: unterminated quote")
        inner = value[1:end]
        if quote == '"':
            inner = re.sub(r"\\(.)", r"\1", inner)
        return inner
    comment = re.search(r"\s#", value)
    return value[: comment.start()].rstrip() if comment else value


def _escaped_backslash(value: str, index: int) -> bool:
    """True when the backslash at ``index`` is itself escaped (an even run of backslashes ends there)."""
    run = 0
    while index - run >= 0 and value[index - run] == "\\":
        run += 1
    return run % 2 == 0
