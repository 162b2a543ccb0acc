"""A per-repository file prior learned from what the agent did with delivered passages (issue 35,
item 2). Off unless the user turns it on (``rag_uptake_prior``), because it did not win on the
rulers' held-out halves (benchmarks/README.md, "A prior learned from uptake").

The evidence: for each delivery, which files the agent then opened or edited (*used*), which
delivered files it left alone (*ignored*), and which files it opened that were not delivered
(*missed*: it found them itself, often after paqad stayed silent). A file the agent keeps ignoring
in this repository is a weaker answer here than BM25 and the embedding think; one it keeps opening
is a stronger one. So the ranking multiplies a candidate's score by its file's factor

    ((used + missed + 1) / (ignored + 1)) ** STRENGTH, bounded to [FLOOR, CEILING],

for files seen at least ``MIN_SEEN`` times; every other file keeps 1.0. It is a ranking prior like
``paths.path_prior`` (``paqad.search.ranking``), never evidence for the gate: a file opened often
does not make an unrelated question answerable.

The factors are learned where the uptake is read (``paqad report``, :mod:`paqad.hooks.usage`) and
kept in the per-developer state folder (``FILE``), never in the work tree; a request built from
settings with the prior on carries them (``SearchRequest.file_prior``), and :func:`using` puts them
in force for one search, as ``paqad.search.params`` does with constants, so the service and the
benchmarks pass them without any module state.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from paqad import workspace
from paqad.search.params import Stage

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

STRENGTH = 0.5
FLOOR = 0.5
CEILING = 2.0
MIN_SEEN = 2  # deliveries and openings of a file before its factor moves
MAX_FILES = 2000  # factors carried by one request, the strongest first
FILE = "uptake-prior.json"  # in the per-developer state folder (``workspace.state_dir``)


@dataclass(frozen=True)
class FileUptake:
    """What the agent did with one file over the recorded turns."""

    used: int = 0  # delivered, then opened, searched for or edited
    ignored: int = 0  # delivered, then left alone
    missed: int = 0  # opened, not delivered

    @property
    def seen(self) -> int:
        return self.used + self.ignored + self.missed


def learn(counts: Mapping[str, FileUptake]) -> tuple[tuple[str, float], ...]:
    """The factors of ``counts``: (path, factor) for every file seen often enough whose factor is
    not 1, the furthest from 1 first, at most ``MAX_FILES``."""
    out: list[tuple[str, float]] = []
    for path, c in counts.items():
        if c.seen < P.MIN_SEEN:
            continue
        factor = ((c.used + c.missed + 1) / (c.ignored + 1)) ** P.STRENGTH
        factor = min(P.CEILING, max(P.FLOOR, factor))
        if factor != 1.0:
            out.append((path, round(factor, 4)))
    out.sort(key=lambda pf: (-abs(pf[1] - 1.0), pf[0]))
    return tuple(out[:MAX_FILES])


_ACTIVE: ContextVar[dict[str, float]] = ContextVar("paqad_uptake_prior", default={})  # noqa: B039 - never mutated


@contextmanager
def using(factors: tuple[tuple[str, float], ...]) -> Iterator[None]:
    """``factors`` in force for the search run inside (``pipeline.run`` enters it per request)."""
    token = _ACTIVE.set(dict(factors))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def factor(path: str) -> float:
    """The factor of ``path`` for the search in force (1.0 without a prior)."""
    active = _ACTIVE.get()
    return active.get(path, 1.0) if active else 1.0


def save(root: Path, factors: tuple[tuple[str, float], ...]) -> None:
    """Keep ``factors`` for ``root``'s searches (atomically, in the per-developer state folder)."""
    target = workspace.state_dir(root) / FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(target, json.dumps({"version": 1, "factors": [list(pf) for pf in factors]}), durable=False)


_LOADED: dict[str, tuple[tuple[int, int], tuple[tuple[str, float], ...]]] = {}


def load(root: Path) -> tuple[tuple[str, float], ...]:
    """The factors kept for ``root`` (none when there is no file, or it is a symlink or not what
    :func:`save` writes); read again only when the file changes."""
    path = workspace.state_dir(root) / FILE
    try:
        st = os.lstat(path)
    except OSError:
        return ()
    key = (st.st_mtime_ns, st.st_size)
    cached = _LOADED.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    factors = _read(path) if os.path.isfile(path) and not os.path.islink(path) and st.st_size < 1 << 20 else ()
    _LOADED[str(path)] = (key, factors)
    return factors


def _read(path: Path) -> tuple[tuple[str, float], ...]:
    """Only well-formed pairs: a relative path and a finite factor inside [FLOOR, CEILING]."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    pairs = data.get("factors") if isinstance(data, dict) else None
    out: list[tuple[str, float]] = []
    for pair in pairs if isinstance(pairs, list) else []:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], (int, float))):
            continue
        p, f = pair[0], float(pair[1])
        if p and not p.startswith("/") and ".." not in p.split("/") and math.isfinite(f) and FLOOR <= f <= CEILING:
            out.append((p, f))
    return tuple(out[:MAX_FILES])
