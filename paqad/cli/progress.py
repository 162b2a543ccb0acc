"""The line ``rag init`` and ``rag rebuild`` keep on stderr while a new index reaches full
quality, saying what already works::

    lexical search ready (2,181 units, 1.4 s) · stand-in vectors ready (3.0 s) · full vectors 640/2,181, ~38 s left at 41 units/s

On a terminal it is redrawn in place after each batch; into a pipe or a log it is written once
per stage change (lexical, stand-ins, the first measured rate, full), so a log holds no carriage
returns. The figures are the build's record (``paqad.index.timeline``), the ones ``rag status``
shows: the rate is the one observed over the last half minute, never an assumed one. ``--json``
keeps stdout; this is stderr only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from paqad.index import timeline

SEP = " · "


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    whole = round(s)
    return f"{whole // 60}m{whole % 60:02d}s"


def _left(eta: float | None, rate: float | None, source: str | None) -> str:
    if eta is None or not rate:
        return "estimating…"
    tail = " (the last fill's rate)" if source == "last fill" else ""
    return f"~{_seconds(eta)} left at {rate:,.0f} units/s{tail}"


def stages_text(d: timeline.Described, compact: bool = False) -> str:
    """One line from ``timeline.describe``'s dict: each stage that works, with the time it took
    from the command's start, then the model's fill as it stands. ``compact``: the stages that
    work without their times, for a narrow terminal (``lexical ✓ · stand-ins ✓ · full vectors ...``)."""
    took = d["seconds_to"]
    if took["lexical"] is None:
        return "stopped before lexical search was ready" if d.get("state") == "stopped" else "building the lexical index…"
    parts = ["lexical ✓" if compact else f"lexical search ready ({d['units']:,} units, {_seconds(took['lexical'])})"]
    if took["hybrid_interim"] is not None:
        parts.append("stand-ins ✓" if compact else f"stand-in vectors ready ({_seconds(took['hybrid_interim'])})")
    if d.get("embedder"):
        parts.append(_full_part(d))
    return SEP.join(parts)


def _full_part(d: timeline.Described) -> str:
    took = d["seconds_to"]
    if d["ready"]["full"]:
        return f"full vectors ready ({_seconds(took['full'])})" if took["full"] is not None else "full vectors ready"
    done, total, cached = d.get("done") or 0, d.get("total") or 0, d.get("cached") or 0
    head = f"full vectors {done:,}/{total:,}"
    if d.get("state") == "stopped":
        return f"{head}, stopped ({d.get('stopped')}); `paqad rag update` resumes"
    if cached and not done:
        if cached >= total:
            return f"{head}, all in the embedding cache"
        head += f" ({cached:,} from the embedding cache)"
    return f"{head}, {_left(d.get('eta_seconds'), d.get('rate'), d.get('rate_source'))}"


class StageLine:
    """Feeds from a full build's callbacks (``on_lexical``, ``on_interim``, ``progress``) and draws
    :func:`stages_text` of the build's record."""

    def __init__(self, root: Path, stream: IO[str] | None = None) -> None:
        self.root = root
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.drawn = ""
        self.stage = ""

    def lexical(self, _report: object = None) -> None:
        self._draw()

    def interim(self, _made: int = 0) -> None:
        self._draw()

    def __call__(self, done: int, total: int) -> None:
        self._draw()

    def close(self) -> None:
        """The last frame (full, or where the fill stopped), and the newline after it."""
        d = timeline.describe(self.root)
        if d is not None and d["seconds_to"]["lexical"] is not None:
            self._draw(d, final=True)
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()

    def _width(self) -> int:
        """The terminal's columns less one: a wrapped line could not be redrawn in place."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        return max(20, columns - 1) if columns else 10_000  # 0: a terminal of unknown size

    def _draw(self, d: timeline.Described | None = None, final: bool = False) -> None:
        if d is None:
            rec = timeline.active(self.root)
            d = rec.describe() if rec is not None else timeline.describe(self.root)
        if d is None:
            return
        text = stages_text(d)
        if self.tty:
            if text != self.drawn:
                width = self._width()
                shown = text if len(text) <= width else stages_text(d, compact=True)
                self.stream.write("\r\033[K" + shown[:width])
                self.stream.flush()
            self.drawn = text
            return
        stage = f"{d['stage']}:{d['state']}:{d.get('rate_source') == 'observed'}"
        if stage != self.stage or (final and text != self.drawn):
            self.stream.write(text + "\n")
            self.stream.flush()
            self.stage, self.drawn = stage, text
