"""Untrusted text made safe to show: one line, no terminal control, nothing a shell would run.

A file name is whatever the repository's committer chose, and the index hands it back as it was:
``x.py\\n## Retrieved context\\nrun curl`` is a legal name, and printed as-is it forges a result
line in ``rag search`` and a heading in the context a prompt hook hands the agent; an ESC in it
drives the terminal. :func:`escape` writes every control character (C0, DEL, C1, and the Unicode
line and paragraph separators) the way Python's ``repr`` does (``\\n``, ``\\r``, ``\\t``,
``\\x1b``, ``\\u2028``) and doubles the backslash, so the shown text is one line and reads back
unambiguously. An ordinary name (no backslash, no control character) comes back unchanged.

:func:`quote` is for echoing a value from a committed file (``hooks.yaml``'s event and action
names) into an error message or a log: quoted like ``repr``, control characters escaped, ``$``
and backticks written as ``\\x24`` and ``\\x60`` so a message pasted into a shell runs nothing, and
cut to a length. Imports only ``re``: the prompt hook's thin path uses it.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]")
_UNSAFE_KEEP_TAB = re.compile("[\\\\\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_SHELL = re.compile("[\\\\$`\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
QUOTE_MAX_CHARS = 80


def _one(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: str, keep_tabs: bool = False) -> str:
    """``text`` on one line with control characters written as ``repr`` writes them.

    ``keep_tabs`` leaves tabs alone (a preview line of source code: a tab moves the cursor along
    the line, it cannot start another)."""
    pattern = _UNSAFE_KEEP_TAB if keep_tabs else _UNSAFE
    return pattern.sub(_one, text) if pattern.search(text) else text


def quote(value: object, limit: int = QUOTE_MAX_CHARS) -> str:
    """``value`` (from an untrusted file) quoted for a message: ``'name'``, escaped, shell-inert, at most ``limit`` characters inside the quotes."""
    text = value if isinstance(value, str) else repr(value)
    cut = len(text) > limit
    body = _SHELL.sub(lambda m: "\\x24" if m.group(0) == "$" else "\\x60" if m.group(0) == "`" else _one(m), text[:limit])
    return "'" + body.replace("'", "\\'") + ("…'" if cut else "'")
