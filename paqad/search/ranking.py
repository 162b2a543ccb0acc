"""Code-aware ranking: what a code searcher knows about a candidate that BM25F does not.

Applied to one query's fused pool (best first, ``fusion.Fused``) before the calibrated score, so
the confidence floor judges the new order. Each signal was added alone and kept only when it
helped on the tuning half of the semble benchmark without hurting our rulers (the ablation table
is in benchmarks/README.md, "Ranking stack"); every tuned constant below is read through ``P``
(``paqad.search.params``), so ``python -m benchmarks ablate`` switches it off per request.

- **definitions**: a query that is one identifier (``Session``, ``createStore``, ``Sinatra::Base``,
  ``flask.Blueprint``) looks up a declaration; the units *named* so (not those that only mention
  it) are lifted by ``DEFINITION_BOOST`` times the best fused score. Identifiers written inside a
  sentence ("where is `parseArgs` called", a traceback's frames) lift their declarations at
  ``EMBEDDED_SCALE`` of that; failing a declaration, a file named after the symbol lifts its best
  unit (``STEM_FILE_SCALE``), and a declaration in such a file gains ``DEFINITION_STEM_BONUS``
  more (dapper's ``SqlMapper.cs`` among 40 partial declarations).
- **path words**: a file whose name or folder carries the query's words (``sessions.py`` for
  "session management") is about the subject; its units gain ``PATH_BOOST`` times the best score
  times the share of the query's words it carries.
- **file coherence**: several candidates in one file say the file is the subject; its best unit
  gains ``COHERENCE_BOOST`` times the best score, scaled by the file's share of the pool's score.
- **path priors**: examples, docs, benchmarks, compat and vendored folders, re-export modules
  (``__init__.py``, ``index.ts``, ``mod.rs``...) and type stubs (``.d.ts``) are rarely where a thing is
  done; their scores are multiplied by ``paths.PATH_PRIORS`` unless the query names that kind of file
  (off: ``paths.PRIORS`` is empty; measured in benchmarks/README.md). What a path carries is
  ``paqad.search.paths``.
  Tests are demoted at index time (``paqad.index.fields.TEST_PRIOR``).
- **diversity** (:func:`diversify`): the delivered order gives each further unit of a file already
  shown ``DIVERSITY`` to the power of how many came before it, so ten results cover more than one
  file; the scores themselves are kept (a second passage of a file is no less confident). A report
  (an issue text of at least ``shape.TOP_FILE_MIN_WORDS`` distinct terms) is usually about one file and
  the function to change is often its second or third best unit: the best file's next
  ``TOP_FILE_FREE`` units go before diversity starts counting (SWE-bench sympy function Acc@5
  28.8 -> 34.8, file Acc unchanged; no semble query is that long).
- **split declarations**: a name lookup reads declarations' first parts first and searches the
  file named after the name for it (C# partial classes over dozens of files); the later parts of a
  split declaration take ``CONTINUATION_SCALE`` of the lift, so the head answers the bare name. It
  was dropped once on a lexical ablation that did not see it and restored when the whole semble
  benchmark with the default model did (its symbol queries 0.962 -> 0.937 without it). The part
  holding a declaration's first line also takes ``PART_ONE_BONUS`` more (nlohmann's
  ``adl_serializer`` over a later part of ``to_json``'s split struct).
- **types first**: a bare capitalised symbol (``Engine``) gives its type declarations (struct,
  class, interface...) ``TYPE_BONUS`` more than methods or functions of the same name (Go's
  interface methods ``Engine()``). Both were dropped on lexical tune-half rows (4a59aeb, 434bee8)
  and restored on Dec 8 when the whole semble benchmark with the default model missed them.
- **older API copies**: files under a version folder kept beside a newer one (zod's ``v3/``
  beside ``v4/``, pydantic's lone ``v1/`` whose files are also one level up;
  ``paths.older_copies``) are multiplied by ``OLDER_COPY_PRIOR`` unless the query names that
  version. Half A 0.8411 -> 0.8433 ungated (0.7 -> 0.5 chosen there), half B 0.8335 -> 0.8350.
- **title** (reports only): a report's first line names its subject (``cse() has strange
  behaviour``, ``Wrong Derivative kind attribute``): a declaration named there (called or
  capitalised) gets the definition lift times ``TITLE_SCALE``, its head part only; and file
  paths are matched against the title's words, not the whole report's (``TITLE_PATHS``). SWE-bench
  Lite sympy file Acc@5 76.6 -> 79.2, Acc@1 55.8 -> 58.4 -> 59.7, function Acc@5 43.9 -> 42.4.
  Twice the lift (``TITLE_SCALE`` 2), shared when more than ``TITLE_SPREAD`` (3) candidate files
  declare the name (``__eq__``, ``eval``: a name every other class declares singles none out):
  Acc@1 59.7 -> 62.3, function Acc@5 47.0 -> 50.0, Acc@5 79.2 both (2 alone: Acc@5 77.9; 3 alone:
  Acc@1 57.1; spread 8 as 3; 1.5 and 3 with spread 3: Acc@1 58.4, function 48.5).
- **report signals** (pointers and traceback frames, callees):
  ``paqad.search.reports``. What a query's text asks for is read by ``paqad.search.shape``.
- **names led by underscores** (``__matmul__``, ``_meta``) are identifiers in a sentence and in a
  report's title, as snake_case and camelCase ones are.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from paqad.search import pointers, reports, uptake_prior
from paqad.search.fusion import Fused
from paqad.search.params import Stage
from paqad.search.paths import names_version, older_copies, path_prior, path_words
from paqad.search.reports import DECLARED_MAX, DEFINITION_KINDS, INFO_FIELDS
from paqad.search.shape import QueryShape, defines, segments, shape
from paqad.tokenize import terms

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.index.records import StoredUnit

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

T = TypeVar("T")

ENABLED = True
DEFINITION_BOOST = 0.5
DEFINITION_STEM_BONUS = 0.5  # extra share when the file is named after the symbol too
EMBEDDED_SCALE = 0.5
PART_ONE_BONUS = 0.2  # extra share for the part of a split declaration that holds its first line
CONTINUATION_SCALE = 0.5  # share of the lift for a split declaration's later parts (its head is the declaration)
STEM_FILE_SCALE = 0.5  # a file named after the symbol, where no unit declares it by that name
PATH_BOOST = 1.0
PATH_MIN_SHARE = 0.1
COHERENCE_BOOST = 0.2
#: 0.6 until Dec 8 (chosen on semble alone, which grades files: a second unit of a listed file adds
#: nothing there). On nine rulers pooled, whose answers are units, 1.0 (off) is best but costs the
#: whole semble benchmark 0.0097 gated; 0.9 is the highest tried that keeps it at or above 0.85
#: (benchmarks/README.md, "Diversity judged on every ruler").
DIVERSITY = 0.9
DIVERSITY_WIDEN = 3  # the pool diversity draws from, in multiples of top_n
TOP_FILE_FREE = 2  # further units of the best file placed before diversity starts counting
RANK_POOL = 100  # candidates the signals read (paths and names: one query)
# A file whose name the code refers to from many units (``Logger.php``, ``mux.go``). 0.1 on Dec 3
# (lexical); 0.2 on Dec 7, chosen on semble half A with the default model (gated 0.8551 -> 0.8588,
# 0.3: 0.8597 but our rulers' gated MRR 0.4038 -> 0.3959); half B 0.8437 -> 0.8477; our rulers
# with the default model 0.3998 -> 0.4038, lexical 0.3451 -> 0.3352 (benchmarks/README.md).
CENTRAL_BOOST = 0.2
CENTRAL_SHARE = 0.02  # ... full lift when that many of all units refer to it
RELATIONS_BIT = 1 << 3  # the "relations" field's bit in a posting's mask (paqad.index.fields.FIELDS)
OLDER_COPY_PRIOR = 0.5  # a file in an older API copy kept beside the current one (``pydantic/v1/``, zod's ``v3/``), unless asked for
TITLE_SCALE = 2.0  # a report's title names what it is about: a declaration named there gets twice the definition lift (0: off)
TITLE_PATHS = True  # ... and its words, not the whole report's, are what file paths are matched against
TITLE_SPREAD = 3  # ... shared when more candidate files than this declare the name (lift x SPREAD / files; 0: never)
TYPE_BONUS = 0.3  # a bare capitalised symbol: extra share for a type declared so (Go's ``Engine`` struct over ``Engine()`` methods)

#: Declarations of types: what a bare capitalised name asks for first (``TYPE_BONUS``).
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "type", "protocol", "record", "object"})


def declared(index: Index, q: QueryShape) -> dict[int, StoredUnit]:
    """The declarations of the query's symbols (a name lookup, so a class whose long body ranks
    low on BM25F is found all the same), and the first unit of each file named after one of them
    (``conn.ex`` for ``Conn``: languages whose modules are files, or whose parser names a module by
    its full path): uid -> unit, at most ``DECLARED_MAX`` of each."""
    title = q.title if P.TITLE_SCALE else ()
    if not P.ENABLED or not P.DEFINITION_BOOST or not (q.symbols or title):
        return {}
    names = {segments(s)[-1] for s in q.symbols if segments(s)}
    asked = q.symbols + title
    keys = {_squash(n) for n in names}
    files = [p for p in index.paths() if _file_key(p) in keys][:DECLARED_MAX] if P.STEM_FILE_SCALE and keys else []
    found = index.units_named(names | set(title), INFO_FIELDS, DECLARED_MAX)
    if files:  # the file named after it holds its declaration, however many other files declare it too (C# partial classes)
        found.update(index.units_named(names, INFO_FIELDS, DECLARED_MAX, paths=files))
    out = {uid: u for uid, u in found.items() if u.kind in DEFINITION_KINDS and any(defines(u.name, u.qualified_name, s) for s in asked)}
    if files:
        out.update(index.first_units(files, INFO_FIELDS))
    return out


def _squash(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


@lru_cache(maxsize=16384)
def _file_key(path: str) -> str:
    """A file's name without its last extension, squashed (``Message_Pack.cs`` -> ``messagepack``)."""
    return _squash(PurePosixPath(path).name.rsplit(".", 1)[0])


def apply(index: Index, ranked: list[Fused], text: str, found: dict[int, StoredUnit] | None = None) -> list[Fused]:
    """``ranked`` re-scored by the signals (``fused`` changed in place on the first ``RANK_POOL``)
    and re-sorted; the rest keep their order below. ``found`` (:func:`declared`) are declarations
    of the query's symbols: those not among the candidates join them (at a fused score of 0, so
    only the definition signal places them)."""
    if not P.ENABLED or (not ranked and not found):
        return ranked

    head, tail = ranked[:RANK_POOL], ranked[RANK_POOL:]
    have = {c.uid for c in ranked}
    pointed = reports.pointed_files(index, text)
    head += [Fused(uid) for uid in (found or {}) if uid not in have]
    info = index.units([c.uid for c in head], INFO_FIELDS)
    if pointed:  # a pointed-at file with no candidate joins by its first unit
        missing = set(pointed) - {u.path for u in info.values()}
        extra = index.first_units(missing, INFO_FIELDS) if missing else {}
        head += [Fused(uid) for uid in extra if uid not in have]
        info.update(extra)
    q = shape(text)
    best = max(c.fused for c in head) or 1.0
    pool = Pool(index, head, info, q, best, dict.fromkeys((c.uid for c in head), 0.0), pointed)
    for signal in SIGNALS:
        if signal.speaks(pool):
            signal.lift(pool)
    add = pool.add
    older = index.cached("older-copies", lambda: older_copies(index.paths())) if P.OLDER_COPY_PRIOR != 1.0 else {}
    for c in head:
        u = info.get(c.uid)
        prior = path_prior(u.path, q.words) * _older_prior(u.path, older, text) * uptake_prior.factor(u.path) if u is not None else 1.0
        c.fused = (c.fused + add[c.uid]) * prior
    head.sort(key=lambda c: (-c.fused, c.lexical_rank or 1 << 30, c.uid))
    if q.report and reports.P.CALLEE_BOOST and head:
        tail = reports.callees(index, head, info, best, tail)
        head.sort(key=lambda c: (-c.fused, c.lexical_rank or 1 << 30, c.uid))
    return head + tail


@dataclass
class Pool:
    """One query's head as the signals see it: each adds its lift to ``add`` (uid -> score), in
    units of the pool's ``best`` fused score."""

    index: Index
    head: list[Fused]
    info: dict[int, StoredUnit]
    q: QueryShape
    best: float
    add: dict[int, float]
    pointed: dict[str, pointers.Pointer]


@dataclass(frozen=True)
class Signal:
    """A ranking signal: whether it speaks for this query (its constant on, the query's shape) and its lift."""

    name: str
    speaks: Callable[[Pool], object]
    lift: Callable[[Pool], None]


def _bare_symbol(q: QueryShape) -> bool:
    return bool(q.symbols) and not q.embedded


#: The additive signals, applied in this order; adding or removing one is one entry (its constant
#: in ``paqad.search.params.KNOBS`` to ablate it). The path priors and the older-copy prior multiply
#: after them, and a report's callees are placed last (:func:`apply`).
SIGNALS: tuple[Signal, ...] = (
    Signal("definitions", lambda p: (p.q.symbols or (p.q.title and P.TITLE_SCALE)) and P.DEFINITION_BOOST,
           lambda p: _definitions(p.head, p.info, p.q, p.best, p.add)),
    Signal("path_words", lambda p: p.q.words and P.PATH_BOOST,
           lambda p: _path_words_boost(p.head, p.info, p.q, p.best, p.add)),
    Signal("coherence", lambda p: P.COHERENCE_BOOST, lambda p: _coherence(p.head, p.info, p.best, p.add)),
    Signal("central", lambda p: P.CENTRAL_BOOST and not _bare_symbol(p.q) and not p.q.report,
           lambda p: _central_boost(p.index, p.head, p.info, p.best, p.add)),
    Signal("pointers", lambda p: p.pointed and reports.P.POINTER_BOOST,
           lambda p: reports.pointer_boost(p.head, p.info, p.pointed, p.best, p.add)),
)


def _older_prior(path: str, older: dict[str, str], text: str) -> float:
    """``OLDER_COPY_PRIOR`` for a file under an older copy of an API the query does not name by version."""
    for folder, version in older.items():
        if path.startswith(folder) and not names_version(text, version):
            return P.OLDER_COPY_PRIOR
    return 1.0


def _definitions(head: list[Fused], info: dict[int, StoredUnit], q: QueryShape, best: float, add: dict[int, float]) -> None:
    """Declarations of a queried symbol gain ``DEFINITION_BOOST`` (``EMBEDDED_SCALE`` of it for a
    symbol written inside a sentence; more in a file named after it, in the part holding the
    declaration's first line (``PART_ONE_BONUS``) and for a type asked by a capitalised name
    (``TYPE_BONUS``); ``CONTINUATION_SCALE`` of it for a split declaration's later parts); a
    report's title lifts the declarations it names (``TITLE_SCALE``); failing that, a file named
    after the symbol lifts its best unit by ``STEM_FILE_SCALE`` of the boost."""
    unit = P.DEFINITION_BOOST * best * (P.EMBEDDED_SCALE if q.embedded else 1.0)
    keys = {_squash(segments(s)[-1]) for s in q.symbols if segments(s)}
    capital = not q.embedded and any(segments(s)[-1][:1].isupper() for s in q.symbols if segments(s))
    lifted: set[str] = set()
    title = q.title if P.TITLE_SCALE else ()
    spread = reports.title_spread(head, info, q) if title and P.TITLE_SPREAD else {}
    for c in head:
        u = info.get(c.uid)
        if u is None or u.kind not in DEFINITION_KINDS:
            continue
        scale = unit * (1.0 if u.part == 1 else P.CONTINUATION_SCALE) if any(defines(u.name, u.qualified_name, s) for s in q.symbols) else 0.0
        if title and u.name in title and u.part == 1:  # the title's subject (its head: a split class's other parts stay put)
            shared = min(1.0, P.TITLE_SPREAD / spread[u.name]) if spread else 1.0
            scale = max(scale, P.DEFINITION_BOOST * best * P.TITLE_SCALE * shared)
        if not scale:
            continue
        named_file = _file_key(u.path) in keys or _file_key(u.path).rstrip("s") in keys
        part_one = P.PART_ONE_BONUS if u.part == 1 else 0.0
        typed = P.TYPE_BONUS if capital and u.kind in TYPE_KINDS else 0.0
        add[c.uid] += scale * (1.0 + (P.DEFINITION_STEM_BONUS if named_file else 0.0) + part_one + typed)
        lifted.add(u.path)
    if not P.STEM_FILE_SCALE:
        return
    for c in head:  # best first: each named file's best unit
        u = info.get(c.uid)
        if u is not None and u.path not in lifted and _file_key(u.path) in keys:
            add[c.uid] += unit * P.STEM_FILE_SCALE
            lifted.add(u.path)


def _path_words_boost(head: list[Fused], info: dict[int, StoredUnit], q: QueryShape, best: float, add: dict[int, float]) -> None:
    words = (q.title_words if P.TITLE_PATHS else frozenset()) or q.words  # a report's title says what it is about; its body mostly how
    least, boost = P.PATH_MIN_SHARE, P.PATH_BOOST  # read once: the loop runs over every head candidate
    shares: dict[str, float] = {}  # a file's share, once per file
    for c in head:
        u = info.get(c.uid)
        if u is None:
            continue
        share = shares.get(u.path)
        if share is None:
            share = shares[u.path] = len(words & path_words(u.path, words)) / len(words)
        if share >= least:
            add[c.uid] += boost * best * share


def _central_boost(index: Index, head: list[Fused], info: dict[int, StoredUnit], best: float, add: dict[int, float]) -> None:
    """Each candidate file's best unit gains ``CENTRAL_BOOST`` times how central the file is: the
    share of all units whose relations (calls, imports, bases) use the file's own name, up to
    ``CENTRAL_SHARE``. The file a codebase is built around is where "how does it work" is answered."""
    firsts: dict[str, Fused] = {}
    for c in head:
        u = info.get(c.uid)
        if u is not None and u.path not in firsts:
            firsts[u.path] = c
    keys = {path: _name_term(path) for path in firsts}
    found = index.terms([k for k in set(keys.values()) if k])
    n = max(1, index.meta().n_units)
    cache = index.cached("central_refs", dict)
    for path, c in firsts.items():
        info_t = found.get(keys[path] or "")
        if info_t is None:
            continue
        if info_t.tid not in cache:
            cache[info_t.tid] = index.posting_counts(info_t.tid, RELATIONS_BIT)[1]
        add[c.uid] += P.CENTRAL_BOOST * best * min(1.0, cache[info_t.tid] / (CENTRAL_SHARE * n))


@lru_cache(maxsize=16384)
def _name_term(path: str) -> str | None:
    """The index term of a file's whole name (``GsonBuilder.java`` -> ``gsonbuilder``)."""
    found = terms(PurePosixPath(path).name.split(".", 1)[0])
    return max(found, key=len) if found else None


def _coherence(head: list[Fused], info: dict[int, StoredUnit], best: float, add: dict[int, float]) -> None:
    total: dict[str, float] = {}
    top: dict[str, Fused] = {}
    for c in head:
        u = info.get(c.uid)
        if u is None:
            continue
        total[u.path] = total.get(u.path, 0.0) + c.fused
        if u.path not in top:
            top[u.path] = c  # head is best first
    most = max(total.values(), default=0.0) or 1.0
    boost = P.COHERENCE_BOOST
    for path, c in top.items():
        add[c.uid] += boost * best * total[path] / most


def diversify(items: Sequence[T], score: Callable[[T], float], path: Callable[[T], str], top_free: int = 0) -> list[T]:
    """``items`` (best first) reordered so that each further item of a file already placed counts
    at ``DIVERSITY`` ** (items of that file placed before it); a stable greedy pass. The best
    file's next ``top_free`` items count as if none of it were placed yet."""
    if P.DIVERSITY >= 1.0 or len(items) < 2:
        return list(items)
    # Each step takes the largest (score * DIVERSITY ** placed-of-its-file, earliest): a file's
    # factor changes only when one of its items is taken, so each file's best waits in a heap and
    # only the taken file's is recomputed (the greedy pass in O(n log n), same order and ties).
    scores = [score(x) for x in items]
    files: dict[str, list[int]] = {}
    for i, x in enumerate(items):
        files.setdefault(path(x), []).append(i)
    seen: dict[str, int] = {path(items[0]): -top_free} if top_free else {}
    diversity = P.DIVERSITY

    def best(p: str) -> tuple[float, int, str]:
        factor = diversity ** max(0, seen.get(p, 0))
        value, neg = max((scores[i] * factor, -i) for i in files[p])
        return -value, -neg, p

    heap = [best(p) for p in files]
    heapq.heapify(heap)
    out: list[T] = []
    while heap:
        _, i, p = heapq.heappop(heap)
        out.append(items[i])
        files[p].remove(i)
        seen[p] = seen.get(p, 0) + 1
        if files[p]:
            heapq.heappush(heap, best(p))
    return out
