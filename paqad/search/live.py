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
from a stored text, i.e. a span with a secret in it, or a row that lies. A warm process keeps the
lines of the files it read (``_KEPT``), each under the identity ``os.stat`` gives the path now
(device, inode, size, mtime, ctime): a later answer whose path still reaches that very file,
unchanged, reuses them without reading or confining it again (the confinement and the read were
most of a warm lexical query's CPU: benchmarks/README.md, "Query cost"). Any other identity (an
edit, a replaced file, a symlink swapped in) reads and confines afresh; a file changed less than
``_SETTLE_NS`` ago is not kept, as git does not trust such a stat either (two writes within one
clock tick can leave mtime and size alike).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paqad import redaction

if TYPE_CHECKING:
    from paqad.index.records import StoredUnit

_KEPT: OrderedDict[tuple[str, ...], tuple[tuple[int, ...], list[str]]] = OrderedDict()  # (root, rel[, kind])
_KEPT_MASKED: dict[tuple[str, ...], list[str]] = {}  # the redacted lines of a kept file, once needed
_KEPT_BYTES = [0]
_KEPT_MAX_BYTES = 8 << 20  # file bytes kept per process, least recently used dropped first
_SETTLE_NS = 2_000_000_000
_LOCK = threading.Lock()


class LiveFiles:
    """The live files of one answer, each read (confined) at most once and redacted only when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._raw: dict[str, list[str] | None] = {}
        self._masked: dict[str, list[str]] = {}

    def source(self, unit: StoredUnit) -> tuple[str | None, bool]:
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
            self._masked[rel] = _masked(self.root, rel, raw)
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


_RAW = "lines"  # the kind raw lines are kept under (``_masked`` finds them by it)


def _read(root: Path, rel: str) -> list[str] | None:
    """The lines of ``root/rel`` (confined), or None; from ``_KEPT`` when the path still reaches
    the file they were read from, unchanged."""
    return kept_view(root, rel, _RAW, lambda: _read_confined(root, rel))


def kept_view(root: Path, rel: str, kind: str, make: Callable[[], list[str] | None]) -> list[str] | None:
    """``make()``: another reader's lines of the file ``root/rel`` (``kind`` names which; the
    delivery's redacted ones), kept as ``_read`` keeps raw lines: reused while the path reaches the
    same unchanged file, and kept only when the file did not change while ``make`` read it."""
    key = (str(root), rel, kind)
    ident = _identity(root, rel)
    if ident is not None:
        with _LOCK:
            hit = _KEPT.get(key)
            if hit is not None and hit[0] == ident:
                _KEPT.move_to_end(key)
                return hit[1]
    value = make()
    if value is not None and ident is not None and time.time_ns() - max(ident[3], ident[4]) > _SETTLE_NS and _identity(root, rel) == ident:
        _keep(key, ident, value)
    return value


def _masked(root: Path, rel: str, raw: list[str]) -> list[str]:
    """``raw`` through the redaction, once per kept file (the lines ``_read`` gave, so the same file)."""
    key = (str(root), rel, _RAW)  # the raw lines' key: a kept file's masked lines go with them
    with _LOCK:
        hit = _KEPT.get(key)
        masked = _KEPT_MASKED.get(key) if hit is not None and hit[1] is raw else None
    if masked is None:
        masked = _lines(redaction.redact("".join(raw), rel))
        with _LOCK:
            hit = _KEPT.get(key)
            if hit is not None and hit[1] is raw:
                _KEPT_MASKED[key] = masked
    return masked


def _identity(root: Path, rel: str) -> tuple[int, ...] | None:
    """(device, inode, size, mtime, ctime) of the regular file ``root/rel`` reaches now, or None."""
    try:
        st = os.stat(os.path.join(root, rel))
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _keep(key: tuple[str, ...], ident: tuple[int, ...], lines: list[str]) -> None:
    with _LOCK:
        old = _KEPT.pop(key, None)
        _KEPT_MASKED.pop(key, None)
        if old is not None:
            _KEPT_BYTES[0] -= old[0][2]
        if ident[2] > _KEPT_MAX_BYTES:
            return
        _KEPT[key] = (ident, lines)
        _KEPT_BYTES[0] += ident[2]
        while _KEPT_BYTES[0] > _KEPT_MAX_BYTES:
            gone, (dropped, _) = _KEPT.popitem(last=False)
            _KEPT_MASKED.pop(gone, None)
            _KEPT_BYTES[0] -= dropped[2]


def _read_confined(root: Path, rel: str) -> list[str] | None:
    from paqad import confinement  # lazily: `rag search` through the service reads no live file (hook_modules)

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
