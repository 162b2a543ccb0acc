"""Pointers a query carries to files of this repository: paths, traceback frames, dotted modules.

An issue pasted as a query names its own places: ``File ".../sympy/core/basic.py", line 1035, in
subs`` (or pytest's ``sympy/core/expr.py:124: in __eq__``), ``see src/flask/app.py:812``,
``sympy.printing.mathematica``. Each is matched against the
indexed paths by suffix (a traceback's absolute prefix, ``site-packages/`` or a checkout folder,
falls away; so does a path relative to a subfolder), and the ranking stack lifts the files found
(``paqad.search.reports.POINTER_BOOST``). Text only: nothing is read from disk, and a path that
is not indexed matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

# a/b/c.ext, optionally :line; at least one folder or an extension of letters, no URL scheme
_PATH = re.compile(r"(?<![\w:/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5})(?::(\d+))?(?![\w/])")
_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?')
# pytest's short traceback: ``sympy/core/expr.py:124: in __eq__``
_PYTEST_FRAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.py):(\d+): in ([\w<>]+)")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,8})(?![\w(])")
MAX_POINTERS = 40  # a pasted log can name hundreds; the first ones are the report's own
MAX_FILES = 12  # files one query may point at


@dataclass(frozen=True)
class Pointer:
    path: str  # as written, normalised to forward slashes
    line: int | None = None
    name: str | None = None  # the frame's function
    dotted: bool = False  # a dotted module path (``a.b.c``), matched without its extension


@lru_cache(maxsize=256)
def extract(text: str) -> tuple[Pointer, ...]:
    """The pointers in ``text``, frames first, each once, at most ``MAX_POINTERS``."""
    out: dict[tuple[str, bool, str], Pointer] = {}  # frames of one file in several functions are kept apart
    for m in _FRAME.finditer(text):
        p = m.group(1).replace("\\", "/")
        out.setdefault((p, False, m.group(3) or ""), Pointer(p, int(m.group(2)), m.group(3)))
    for m in _PYTEST_FRAME.finditer(text):
        p = m.group(1).lstrip("./")
        out.setdefault((p, False, m.group(3) or ""), Pointer(p, int(m.group(2)), m.group(3)))
    framed = {k[0] for k in out}
    for m in _PATH.finditer(text):
        p = m.group(1).replace("\\", "/").lstrip("./")
        if ("/" in p or _looks_like_file(p)) and p not in framed:
            out.setdefault((p, False, ""), Pointer(p, int(m.group(2)) if m.group(2) else None))
    for m in _DOTTED.finditer(text):
        dotted = m.group(1)
        if not _looks_like_file(dotted):
            out.setdefault((dotted.replace(".", "/"), True, ""), Pointer(dotted.replace(".", "/"), dotted=True))
    return tuple(list(out.values())[:MAX_POINTERS])


def _looks_like_file(token: str) -> bool:
    """``app.py`` is a file; ``e.g`` or ``1.0e-4`` are not (a known-looking extension of 1-5 letters)."""
    stem, _, ext = token.rpartition(".")
    return bool(stem) and ext.isalpha() and ext.lower() in _EXTENSIONS


_EXTENSIONS = frozenset(
    "py pyi js jsx ts tsx mjs cjs go rs java kt kts scala swift c h cc cpp hpp cxx hh cs rb php ex exs erl hs lua zig pl pm ml mli "
    "sh bash zsh sql tf hcl md rst txt yaml yml toml json ini cfg xml html css vue svelte dart jl r".split()
)


class PathTable:
    """The indexed paths by file name and by name without extension, so a pointer is checked
    against the few files sharing its name, not every path (built once per index generation)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.by_stem: dict[str, list[str]] = {}
        for p in paths:
            name = p.rsplit("/", 1)[-1]
            self.by_name.setdefault(name, []).append(p)
            self.by_stem.setdefault(name.rsplit(".", 1)[0], []).append(p)

    def matches(self, ptr: Pointer) -> list[str]:
        want = ptr.path.strip("/")
        last = want.rsplit("/", 1)[-1]
        if not ptr.dotted:
            return [p for p in self.by_name.get(last, ()) if _suffix(p, want) or _suffix(want, p)]
        modules = [p for p in self.by_stem.get(last, ()) if _suffix(p.rsplit(".", 1)[0], want)]
        packages = [p for p in self.by_name.get("__init__.py", ()) if _suffix(p.rsplit("/", 1)[0], want)] if not modules else []
        return modules or packages


def resolve(pointers: Iterable[Pointer], table: PathTable) -> dict[str, Pointer]:
    """Indexed path -> the pointer naming it, for pointers that name exactly one indexed file by
    suffix (an ambiguous ``__init__.py`` names nothing), at most ``MAX_FILES``."""
    out: dict[str, Pointer] = {}
    for ptr in pointers:
        hits = table.matches(ptr)
        if len(hits) == 1 and hits[0] not in out:
            out[hits[0]] = ptr
        if len(out) >= MAX_FILES:
            break
    return out


def _suffix(longer: str, shorter: str) -> bool:
    """``shorter`` is ``longer`` or a trailing run of its folders (``a/b/c.py`` ends with ``b/c.py``)."""
    return longer == shorter or longer.endswith("/" + shorter)
