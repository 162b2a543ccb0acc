"""What a search shows as a result's source: the live file's lines, never text the index alone vouches for.

Why: the index is untrusted (issue 31). A unit row can hold text of anyone's choosing under a real
``file:line`` (a crafted artifact, an index file that arrived by git), and ``rag search``, the
agent's ``search`` and MCP hand ``source`` to an agent as the code at that place. Delivery already
reads live files (``paqad.delivery.context``); the search result does the same here: the stored
text is shown only when the live file holds it at the unit's lines (for a ``module`` unit, whose
text is the lines outside every other unit: when its lines appear in order within its span).
Otherwise the source is the live file's lines ``start_line..end_line``, and the docstring and
signature the row claims are dropped (they came from the same untrusted row). The live file is
read as delivery reads it: confined to the repository (``paqad.confinement``; a row naming
``.env`` or ``.git/config`` reads nothing) and, when it is shown, masked by ``paqad.redaction``
like the index; a file that cannot be read gives no source at all.

Cost: one read per distinct file among the results (at most ``top_n``); the redaction (the
costly part: a whole file through the secret rules) runs only for a file whose raw lines differ
from a stored text, i.e. a span with a secret in it, or a row that lies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class LiveFiles:
    """The live files of one answer, each read (confined) at most once and redacted only when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._raw: dict[str, list[str] | None] = {}
        self._masked: dict[str, list[str]] = {}

    def source(self, unit: Any) -> tuple[str | None, bool]:
        """(the text to show for ``unit``, whether the stored text was kept). None: no live file."""
        rel = str(unit.path)
        if rel not in self._raw:
            self._raw[rel] = _read(self.root, rel)
        raw = self._raw[rel]
        start, end = int(unit.start_line), int(unit.end_line)
        if raw is None or start < 1 or start > len(raw):
            return None, False
        stop = min(max(end, start), len(raw))
        text, module = str(unit.text), str(unit.kind) == "module"
        if _faithful(text, raw[start - 1 : stop], module):  # the common case: no secret in the span, no redaction run
            return text, True
        if rel not in self._masked:
            from paqad import redaction

            self._masked[rel] = _lines(redaction.redact("".join(raw), rel))
        span = self._masked[rel][start - 1 : stop]
        if _faithful(text, span, module):
            return text, True
        return "".join(span), False


def _faithful(text: str, span: list[str], module: bool) -> bool:
    """True when ``text`` is what the live ``span`` holds (exactly, trailing newlines aside; for a
    module unit, its lines in order within the span)."""
    if not text.strip():
        return True  # nothing shown, nothing to lie with (an empty JSON key's unit)
    if not module:  # the parsers store "\r\n" as "\n"
        return text.replace("\r\n", "\n").rstrip() == "".join(span).replace("\r\n", "\n").rstrip()
    want = [line.rstrip() for line in text.rstrip().split("\n")]
    have = iter(line.rstrip() for line in span)
    return all(any(line == seen for seen in have) for line in want)


def _read(root: Path, rel: str) -> list[str] | None:
    from paqad import confinement

    try:
        path, _ = confinement.readable(root, rel)
        text = path.read_bytes().decode("utf-8", "replace")
    except (OSError, confinement.ConfinementError):
        return None
    return _lines(text)


def _lines(text: str) -> list[str]:
    """Lines as the parsers number them: split at "\n" only, each keeping its end (str.splitlines
    would also split at form feeds and U+2028, shifting every later line of such a file)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
