"""Signals of a pasted report (an issue text), which a question never triggers.

An issue carries its own pointers (paths and traceback frames, the function it names in its
title) and is usually about one file. These signals read them; the ranking stack
(``paqad.search.ranking.apply``) adds what they give to the fused scores. Each was kept on
SWE-bench Lite sympy (benchmarks/README.md, "Long queries"); no semble query is a report.

- **pointers** (``paqad.search.pointers``): a file the query names by path, traceback frame or
  dotted module lifts its best unit by ``POINTER_BOOST``, or the function its frame names when
  that function is a candidate.
- **callees**: when a report's best unit is a function or method, the functions it calls that are
  declared in its own file (its ``calls``, up to ``CALLEE_MAX``) gain ``CALLEE_BOOST``, never
  passing their caller: an issue names the entry point it used (``col_insert()``, ``cse()``,
  ``convert_to``) and the fix is as often in the helper doing the work (``_eval_col_insert``,
  ``tree_cse``, ``_get_conversion_matrix_for_expr``). SWE-bench Lite sympy function Acc@5
  43.9 -> 47.0 (0.3: 43.9, 0.6: 43.9, 1.0: 47.0), file Acc unchanged (the lifted units are in the
  best file); what ``rag search`` delivers: a gold function as its own passage 42.4 % -> 45.5 %.
- **title spread** (:func:`title_spread`): how many candidate files declare a name the title
  gives, so a name every other class declares (``__eq__``) shares the title's lift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paqad.search import pointers
from paqad.search.fusion import Fused
from paqad.search.params import Stage
from paqad.search.shape import QueryShape

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.index.records import StoredUnit

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

INFO_FIELDS = ("uid", "path", "name", "qualified_name", "kind", "part")  # what every signal reads of a unit
DECLARED_MAX = 32  # declarations of a name looked up per lookup
POINTER_BOOST = 0.5  # a file the query names by path, traceback frame or dotted module
CALLEE_BOOST = 1.0  # a report's best function: what it calls in its own file, lifted by this share of the best score up to just below it (0: off)
CALLEE_KINDS = frozenset({"function", "method"})
CALLEE_MAX = 3  # ... at most this many of them, those ranked best first, then in the order called
#: Declarations a name lookup is after; modules, prose sections and config keys only mention names.
DEFINITION_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type", "macro", "constant", "variable", "object", "protocol", "record", "module_def", "impl"})


def callees(index: Index, head: list[Fused], info: dict[int, StoredUnit], best: float, tail: list[Fused]) -> list[Fused]:
    """A report's best unit, when a function or method, lifts the functions it calls that are
    declared in its own file by ``CALLEE_BOOST``: an issue names the entry point it used
    (``col_insert()``, ``cse()``, ``convert_to``) while the fix is as often in the helper that
    does the work (``_eval_col_insert``, ``tree_cse``). At most ``CALLEE_MAX`` of them, never
    above their caller; callees missing from the pool join it (from the tail when ranked there).
    Returns the tail without the units that joined."""
    top = info.get(head[0].uid)
    if top is None or top.kind not in CALLEE_KINDS:
        return tail
    read = index.units([head[0].uid], ("calls",)).get(head[0].uid)
    calls = [n for n in (read.calls if read is not None else []) if n != top.name]
    found = {uid: u for uid, u in index.units_named(calls, INFO_FIELDS, DECLARED_MAX, paths=[top.path]).items()
             if u.kind in CALLEE_KINDS and uid != head[0].uid} if calls else {}
    if not found:
        return tail
    in_head = {c.uid: c for c in head}
    moved = {c.uid: c for c in tail if c.uid in found}
    order = {name: i for i, name in reversed(list(enumerate(calls)))}
    pool = {**moved, **in_head}
    ceiling = head[0].fused * (1 - 1e-9)  # a callee never passes the unit that calls it
    chosen = sorted(found, key=lambda uid: (-(pool[uid].fused if uid in pool else 0.0), order.get(found[uid].name, 1 << 30), uid))
    for uid in chosen[:CALLEE_MAX]:
        c = in_head.get(uid)
        if c is None:
            c = moved.get(uid) or Fused(uid)
            head.append(c)
            info[uid] = found[uid]
        c.fused = min(c.fused + P.CALLEE_BOOST * best, ceiling)
    lifted = set(chosen[:CALLEE_MAX])
    return [c for c in tail if c.uid not in lifted]


def title_spread(head: list[Fused], info: dict[int, StoredUnit], q: QueryShape) -> dict[str, int]:
    """How many files among the candidates declare each title name: a name every other class
    declares (``__eq__``, ``eval``, ``__init__``) does not single out one of them, so the title's
    lift is shared (``ranking.TITLE_SPREAD``)."""
    files: dict[str, set[str]] = {}
    for c in head:
        u = info.get(c.uid)
        if u is not None and u.kind in DEFINITION_KINDS and u.part == 1 and u.name in q.title:
            files.setdefault(u.name, set()).add(u.path)
    return {name: len(paths) for name, paths in files.items()}


def pointed_files(index: Index, text: str) -> dict[str, pointers.Pointer]:
    """Indexed files the query names (``paqad.search.pointers``): path -> pointer."""
    if not P.POINTER_BOOST:
        return {}
    found = pointers.extract(text)
    if not found:
        return {}
    return pointers.resolve(found, _path_table(index))


def _path_table(index: Index) -> pointers.PathTable:
    return index.cached("path_table", lambda: pointers.PathTable(index.paths()))


def pointer_boost(head: list[Fused], info: dict[int, StoredUnit], pointed: dict[str, pointers.Pointer], best: float, add: dict[int, float]) -> None:
    """A file the query names lifts its best unit, or, when its traceback frame names a function
    in it, that function instead."""
    done: set[str] = set()
    by_name = {(u.path, u.name) for u in info.values()}
    for c in head:  # best first
        u = info.get(c.uid)
        if u is None or u.path not in pointed:
            continue
        named = frozenset(n for n in (pointed[u.path].name,) if n)
        if any((u.path, n) in by_name for n in named):
            if u.name in named:  # a frame's own function among the candidates: it takes the lift
                add[c.uid] += P.POINTER_BOOST * best
            continue
        if u.path in done:
            continue
        add[c.uid] += P.POINTER_BOOST * best
        done.add(u.path)
