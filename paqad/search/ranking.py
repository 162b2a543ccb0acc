"""Code-aware ranking: what a code searcher knows about a candidate that BM25F does not.

Applied to one query's fused pool (best first, ``fusion.Fused``) before the calibrated score, so
the confidence floor judges the new order. Each signal was added alone and kept only when it
helped on the tuning half of the semble benchmark without hurting our rulers (the ablation table
is in benchmarks/README.md, "Ranking stack"); every constant below is a module constant so
``benchmarks/tune_rank.py`` can switch it off or sweep it.

- **definitions**: a query that is one identifier (``Session``, ``createStore``, ``Sinatra::Base``,
  ``flask.Blueprint``) looks up a declaration; the units *named* so (not those that only mention
  it) are lifted by ``DEFINITION_BOOST`` times the best fused score, more when their file is named
  after it too. Identifiers written inside a sentence ("where is `parseArgs` called") lift their
  declarations at ``EMBEDDED_SCALE`` of that.
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
  (an issue text of at least ``TOP_FILE_MIN_WORDS`` distinct terms) is usually about one file and
  the function to change is often its second or third best unit: the best file's next
  ``TOP_FILE_FREE`` units go before diversity starts counting (SWE-bench sympy function Acc@5
  28.8 -> 34.8, file Acc unchanged; no semble query is that long).
- **pointers** (``paqad.search.pointers``): a file the query names by path, traceback frame or
  dotted module lifts its best unit by ``POINTER_BOOST``; where frames name functions in it, each
  of those functions takes the lift instead, looked up by name when BM25F missed it
  (``FRAMES_ALL``).
- **split declarations**: a name lookup reads declarations' first parts first and searches the
  file named after the name for it (C# partial classes over dozens of files); the later parts of a
  split declaration take ``CONTINUATION_SCALE`` of the lift, so the head answers the bare name.
- **types first**: a bare capitalised symbol (``Engine``) gives its type declarations (struct,
  class, interface...) ``TYPE_BONUS`` more than methods or functions of the same name (Go's
  interface methods ``Engine()``). Half A unchanged, half B 0.8335 -> 0.8350 ungated.
- **older API copies**: files under a version folder kept beside a newer one (zod's ``v3/``
  beside ``v4/``, pydantic's lone ``v1/`` whose files are also one level up;
  ``paths.older_copies``) are multiplied by ``OLDER_COPY_PRIOR`` unless the query names that
  version. Half A 0.8411 -> 0.8433 ungated (0.7 -> 0.5 chosen there), half B 0.8335 -> 0.8350.
- **title** (reports only): a report's first line names its subject (``cse() has strange
  behaviour``, ``Wrong Derivative kind attribute``): a declaration named there (called or
  capitalised) gets the full definition lift (``TITLE_SCALE``), its head part only; and file
  paths are matched against the title's words, not the whole report's (``TITLE_PATHS``). SWE-bench
  Lite sympy file Acc@5 76.6 -> 79.2, Acc@1 55.8 -> 58.4 -> 59.7, function Acc@5 43.9 -> 42.4.
- **named for a type** (reports only): a function or method whose name ends in ``_<Type>`` for a
  type the report names or builds in its code (``_print_Product`` for ``Product(1, (n, 1, oo))``:
  printers, visitors and handlers keep one type's code so) joins the candidates and gains
  ``NAMED_FOR_BOOST``.
- **callees** (reports only): when a report's best unit is a function or method, the functions it
  calls that are declared in its own file (its ``calls``, up to ``CALLEE_MAX``) gain
  ``CALLEE_BOOST``, never passing their caller: an issue names the entry point it used
  (``col_insert()``, ``cse()``, ``convert_to``) and the fix is as often in the helper doing the
  work (``_eval_col_insert``, ``tree_cse``, ``_get_conversion_matrix_for_expr``). SWE-bench Lite
  sympy function Acc@5 43.9 -> 47.0 (0.3: 43.9, 0.6: 43.9, 1.0: 47.0), file Acc unchanged (the
  lifted units are in the best file); what ``rag search`` delivers: a gold function as its own
  passage 42.4 % -> 45.5 % of issues.
- **names led by underscores** (``__matmul__``, ``_meta``) are identifiers in a sentence and in a
  report's title, as snake_case and camelCase ones are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from paqad.search import pointers
from paqad.search.paths import names_version, older_copies, path_prior, path_words
from paqad.tokenize import terms

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.search.fusion import Fused

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
PATH_SYMBOL_SCALE = 0.3  # path words in a bare-symbol query (the definition signal speaks there)
COHERENCE_BOOST = 0.2
DIVERSITY = 0.6
DIVERSITY_WIDEN = 3  # the pool diversity draws from, in multiples of top_n
TOP_FILE_FREE = 2  # further units of the best file placed before diversity starts counting
TOP_FILE_MIN_WORDS = 25  # ... for a report (this many distinct terms, as evidence.LONG_QUERY_TERMS)
RANK_POOL = 100  # candidates the signals read (paths and names: one query)
DECLARED_MAX = 32  # declarations of a queried symbol looked up by name
CENTRAL_BOOST = 0.1  # a file whose name the code refers to from many units (``Logger.php``, ``mux.go``)
CENTRAL_SHARE = 0.02  # ... full lift when that many of all units refer to it
RELATIONS_BIT = 1 << 3  # the "relations" field's bit in a posting's mask (paqad.index.fields.FIELDS)
POINTER_BOOST = 0.5  # a file the query names by path, traceback frame or dotted module
NAMED_FOR_BOOST = 0.5  # a report's function named for a type it names (``_print_Product`` for ``Product(...)``)
NAMED_FOR_MAX = 64  # such functions looked up per report
REPORT_CALLS = True  # a report's ``Type.method(`` names that method, as a backticked name would
REPORT_VARIABLE_CALLS = True  # ... and a backticked ``variable.method(`` names ``method``
FRAMES_ALL = True  # every traceback frame of a pointed file names a function that takes the lift
TYPE_BONUS = 0.3  # a bare capitalised symbol: extra share for a type declared so (Go's ``Engine`` struct over ``Engine()`` methods)
OLDER_COPY_PRIOR = 0.5  # a file in an older API copy kept beside the current one (``pydantic/v1/``, zod's ``v3/``), unless asked for
TITLE_SCALE = 1.0  # a report's title names what it is about: a declaration named there gets the full lift (0: off)
TITLE_PATHS = True  # ... and its words, not the whole report's, are what file paths are matched against
TITLE_MAX_CHARS = 160  # ... the title: a first line this short, with the report's body below it
CALLEE_BOOST = 1.0  # a report's best function: what it calls in its own file, lifted by this share of the best score up to just below it (the fix is often a helper it calls; 0: off)
CALLEE_KINDS = frozenset({"function", "method"})
CALLEE_MAX = 3  # ... at most this many of them, those ranked best first, then in the order called

#: Declarations of types: what a bare capitalised name asks for first (``TYPE_BONUS``).
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "type", "protocol", "record", "object"})
#: Declarations a name lookup is after; modules, prose sections and config keys only mention names.
DEFINITION_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type", "macro", "constant", "variable", "object", "protocol", "record", "module_def", "impl"})

# One identifier, optionally qualified (``a.b``, ``a::b``, ``a\\b``, ``a->b``, ``a#b``).
_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:::|\.|\\|->|#)[A-Za-z_$][\w$]*)*[!?]?$")
_SEPARATORS = re.compile(r"::|\.|\\|->|#")
# Identifiers inside a sentence: camelCase, PascalCase with an inner capital, a run of capitals
# before a word (``HCursor``, ``IOException``; not ``IDs`` or ``URLs``), snake_case, a name led by
# underscores (``__matmul__``, ``_meta``), or anything in backticks.
_EMBEDDED = re.compile(r"`([^`\s]{2,80})`|\b([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}[a-z]{2,}\w*|[A-Za-z]+_\w+|_+[A-Za-z]\w*)\b")
# A method called on a type in a report (``Point.vel() should calculate the velocity``)
_METHOD_CALL = re.compile(r"(?<![\w.])([A-Z]\w*\.[a-z_]\w*)\(")
# ... and on a variable, inside backticks (```expr.atoms()``` names the method ``atoms``)
_VARIABLE_CALL = re.compile(r"`[a-z_]\w*\.([a-z_]\w*)\([^`]*`")
# A name a report's title calls (``cse() has strange behaviour``) or capitalises (``Wrong Derivative kind``).
_TITLE_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(|(?<![\w.])([A-Z]\w+|_+[A-Za-z]\w*)")
# A capitalised name called in a report's code (``Product(1, (n, 1, oo))``): a type it builds.
_TYPE_CALL = re.compile(r"(?<![\w.])([A-Z][A-Za-z0-9]{2,})\(")

@dataclass(frozen=True)
class QueryShape:
    """What a query asks for, read from its text alone."""

    symbols: tuple[str, ...] = ()  # identifiers whose declarations the query looks up
    embedded: bool = False  # the symbols were written inside a sentence (lift at EMBEDDED_SCALE)
    words: frozenset[str] = field(default_factory=frozenset)  # the query's index terms
    title: tuple[str, ...] = ()  # names a report's first line calls or capitalises (looked up as declarations)
    title_words: frozenset[str] = field(default_factory=frozenset)  # a report title's index terms (TITLE_PATHS)

    @property
    def report(self) -> bool:
        """A pasted report (an issue text), not a question: the report signals apply."""
        return is_report(self.words)


def is_report(words: frozenset[str]) -> bool:
    return len(words) >= TOP_FILE_MIN_WORDS


@lru_cache(maxsize=512)
def shape(text: str) -> QueryShape:
    stripped = text.strip().strip("`'\"")
    words = frozenset(terms(text))
    if _SYMBOL.match(stripped) and _looks_like_symbol(stripped):
        return QueryShape((stripped,), False, words)
    found = [a or b for a, b in _EMBEDDED.findall(text)]
    if REPORT_CALLS and is_report(words):
        found += _METHOD_CALL.findall(text)
        if REPORT_VARIABLE_CALLS:
            found += [m for m in _VARIABLE_CALL.findall(text) if len(m) >= 4]
    names = tuple(dict.fromkeys(n.strip("()") for n in found if _SYMBOL.match(n.strip("()"))))
    head = _title(text) if is_report(words) else ""
    title = tuple(dict.fromkeys(a or b for a, b in _TITLE_NAME.findall(head))) if TITLE_SCALE else ()
    return QueryShape(names, bool(names), words, title, frozenset(terms(head)) if TITLE_PATHS else frozenset())


def _title(text: str) -> str:
    """A report's title: its first line, at most ``TITLE_MAX_CHARS``, with more text below it (a
    one-paragraph report has none: "")."""
    head, _, body = text.strip().partition("\n")
    return head if body.strip() and len(head) <= TITLE_MAX_CHARS else ""


def _looks_like_symbol(token: str) -> bool:
    """A bare word is a symbol when it could not be an English word: it has a separator, an
    underscore, a capital after the first letter, or starts with a capital (``Session``)."""
    return bool(_SEPARATORS.search(token)) or "_" in token or token[:1].isupper() or any(c.isupper() for c in token[1:])


def _segments(name: str) -> list[str]:
    return [s for s in _SEPARATORS.split(name) if s]


def defines(unit_name: str, qualified_name: str, symbol: str) -> bool:
    """Whether a unit named ``unit_name`` (qualified ``qualified_name``) declares ``symbol``: its
    own name is the symbol's last segment and the qualifiers both give agree (``flask.Blueprint``
    names the class ``Blueprint`` even where its qualified name carries no module)."""
    segs = _segments(symbol)
    if not segs or unit_name.rstrip("!?") != segs[-1].rstrip("!?"):
        return False
    qual = _segments(qualified_name) or [unit_name]
    n = min(len(qual), len(segs))
    return qual[-n:] == segs[-n:]


INFO_FIELDS = ("uid", "path", "name", "qualified_name", "kind", "part")


def declared(index: Index, q: QueryShape) -> dict[int, Any]:
    """The declarations of the query's symbols (a name lookup, so a class whose long body ranks
    low on BM25F is found all the same), and the first unit of each file named after one of them
    (``conn.ex`` for ``Conn``: languages whose modules are files, or whose parser names a module by
    its full path): uid -> unit, at most ``DECLARED_MAX`` of each."""
    if not ENABLED or not DEFINITION_BOOST or not (q.symbols or q.title):
        return {}
    names = {_segments(s)[-1] for s in q.symbols if _segments(s)}
    asked = q.symbols + q.title
    keys = {_squash(n) for n in names}
    files = [p for p in index.paths() if _file_key(p) in keys][:DECLARED_MAX] if STEM_FILE_SCALE and keys else []
    found = index.units_named(names | set(q.title), INFO_FIELDS, DECLARED_MAX)
    if files:  # the file named after it holds its declaration, however many other files declare it too (C# partial classes)
        found.update(index.units_named(names, INFO_FIELDS, DECLARED_MAX, paths=files))
    out = {uid: u for uid, u in found.items() if u.kind in DEFINITION_KINDS and any(defines(u.name, u.qualified_name, s) for s in asked)}
    if files:
        out.update(index.first_units(files, INFO_FIELDS))
    return out


def _squash(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _file_key(path: str) -> str:
    """A file's name without its last extension, squashed (``Message_Pack.cs`` -> ``messagepack``)."""
    return _squash(PurePosixPath(path).name.rsplit(".", 1)[0])


def apply(index: Index, ranked: list[Fused], text: str, found: dict[int, Any] | None = None) -> list[Fused]:
    """``ranked`` re-scored by the signals (``fused`` changed in place on the first ``RANK_POOL``)
    and re-sorted; the rest keep their order below. ``found`` (:func:`declared`) are declarations
    of the query's symbols: those not among the candidates join them (at a fused score of 0, so
    only the definition signal places them)."""
    if not ENABLED or (not ranked and not found):
        return ranked
    from paqad.search.fusion import Fused

    head, tail = ranked[:RANK_POOL], ranked[RANK_POOL:]
    have = {c.uid for c in ranked}
    pointed = pointed_files(index, text)
    head += [Fused(uid) for uid in (found or {}) if uid not in have]
    info = index.units([c.uid for c in head], INFO_FIELDS)
    if pointed:  # a pointed-at file with no candidate joins by its first unit
        missing = set(pointed) - {u.path for u in info.values()}
        extra = index.first_units(missing, INFO_FIELDS) if missing else {}
        head += [Fused(uid) for uid in extra if uid not in have]
        info.update(extra)
    frames, framed = frame_units(index, text, pointed)
    q = shape(text)
    named_for = _named_for(index, text, q) if NAMED_FOR_BOOST and q.report else {}
    if framed or named_for:  # looked up by name: they join the head, from the tail if ranked there
        joining = {**framed, **named_for}
        in_head = {c.uid for c in head}
        moved = {c.uid: c for c in tail if c.uid in joining}
        tail = [c for c in tail if c.uid not in moved]
        head += [moved.get(uid) or Fused(uid) for uid in joining if uid not in in_head]
        info.update(joining)
    best = max(c.fused for c in head) or 1.0
    add = dict.fromkeys((c.uid for c in head), 0.0)
    for uid in named_for:
        add[uid] += NAMED_FOR_BOOST * best
    if (q.symbols or q.title) and DEFINITION_BOOST:
        _definitions(head, info, q, best, add)
    if q.words and PATH_BOOST:
        _path_words_boost(head, info, q, best * (PATH_SYMBOL_SCALE if q.symbols and not q.embedded else 1.0), add)
    if COHERENCE_BOOST:
        _coherence(head, info, best, add)
    if CENTRAL_BOOST and not (q.symbols and not q.embedded) and not q.report:
        _central_boost(index, head, info, best, add)
    if pointed and POINTER_BOOST:
        _pointer_boost(head, info, pointed, frames, best, add)
    older = index.cached("older-copies", lambda: older_copies(index.paths())) if OLDER_COPY_PRIOR != 1.0 else {}
    for c in head:
        u = info.get(c.uid)
        prior = path_prior(u.path, q.words) * _older_prior(u.path, older, text) if u is not None else 1.0
        c.fused = (c.fused + add[c.uid]) * prior
    head.sort(key=lambda c: (-c.fused, c.lexical_rank or 1 << 30, c.uid))
    if q.report and CALLEE_BOOST and head:
        tail = _callees(index, head, info, best, tail)
        head.sort(key=lambda c: (-c.fused, c.lexical_rank or 1 << 30, c.uid))
    return head + tail


def _callees(index: Index, head: list[Fused], info: dict[int, Any], best: float, tail: list[Fused]) -> list[Fused]:
    """A report's best unit, when a function or method, lifts the functions it calls that are
    declared in its own file by ``CALLEE_BOOST``: an issue names the entry point it used
    (``col_insert()``, ``cse()``, ``convert_to``) while the fix is as often in the helper that
    does the work (``_eval_col_insert``, ``tree_cse``). At most ``CALLEE_MAX`` of them, never
    above their caller; callees missing from the pool join it (from the tail when ranked there).
    Returns the tail without the units that joined."""
    from paqad.search.fusion import Fused

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
        c.fused = min(c.fused + CALLEE_BOOST * best, ceiling)
    lifted = set(chosen[:CALLEE_MAX])
    return [c for c in tail if c.uid not in lifted]


def _older_prior(path: str, older: dict[str, str], text: str) -> float:
    """``OLDER_COPY_PRIOR`` for a file under an older copy of an API the query does not name by version."""
    for folder, version in older.items():
        if path.startswith(folder) and not names_version(text, version):
            return OLDER_COPY_PRIOR
    return 1.0


def _definitions(head: list[Fused], info: dict[int, Any], q: QueryShape, best: float, add: dict[int, float]) -> None:
    """Declarations of a queried symbol gain ``DEFINITION_BOOST``, more in a file named after it
    and in the part holding the declaration's first line; failing that, a file named after the
    symbol lifts its best unit by ``STEM_FILE_SCALE`` of the boost."""
    unit = DEFINITION_BOOST * best * (EMBEDDED_SCALE if q.embedded else 1.0)
    keys = {_squash(_segments(s)[-1]) for s in q.symbols if _segments(s)}
    capital = not q.embedded and any(_segments(s)[-1][:1].isupper() for s in q.symbols if _segments(s))
    lifted: set[str] = set()
    for c in head:
        u = info.get(c.uid)
        if u is None or u.kind not in DEFINITION_KINDS:
            continue
        scale = unit * (1.0 if u.part == 1 else CONTINUATION_SCALE) if any(defines(u.name, u.qualified_name, s) for s in q.symbols) else 0.0
        if q.title and u.name in q.title and u.part == 1:  # the title's subject (its head: a split class's other parts stay put)
            scale = max(scale, DEFINITION_BOOST * best * TITLE_SCALE)
        if not scale:
            continue
        named_file = _file_key(u.path) in keys or _file_key(u.path).rstrip("s") in keys
        typed = TYPE_BONUS if capital and u.kind in TYPE_KINDS else 0.0
        add[c.uid] += scale * (1.0 + (DEFINITION_STEM_BONUS if named_file else 0.0) + (PART_ONE_BONUS if u.part == 1 else 0.0) + typed)
        lifted.add(u.path)
    if not STEM_FILE_SCALE:
        return
    for c in head:  # best first: each named file's best unit
        u = info.get(c.uid)
        if u is not None and u.path not in lifted and _file_key(u.path) in keys:
            add[c.uid] += unit * STEM_FILE_SCALE
            lifted.add(u.path)


def report_types(text: str, q: QueryShape) -> frozenset[str]:
    """Type names a report speaks of: its capitalised identifiers (``SeqFormula``, ``BlockMatrix``)
    and the capitalised names its code calls (``Product(...)``)."""
    named = {_segments(s)[-1] for s in q.symbols if _segments(s)}
    named |= set(_TYPE_CALL.findall(text))
    return frozenset(n for n in named if n[:1].isupper() and n.isidentifier() and "_" not in n)


def _named_for(index: Index, text: str, q: QueryShape) -> dict[int, Any]:
    """Functions and methods named for a type the report names (``_print_Product``, ``visit_Call``):
    where a visitor, printer or handler keeps the code for that one type."""
    types = report_types(text, q)
    if not types:
        return {}
    found = index.units_named_after(types, ("function", "method"), INFO_FIELDS, NAMED_FOR_MAX)
    return {uid: u for uid, u in found.items() if any(u.name.endswith("_" + t) for t in types)}


def pointed_files(index: Index, text: str) -> dict[str, pointers.Pointer]:
    """Indexed files the query names (``paqad.search.pointers``): path -> pointer."""
    if not POINTER_BOOST:
        return {}
    found = pointers.extract(text)
    if not found:
        return {}
    return pointers.resolve(found, _path_table(index))


def _path_table(index: Index) -> pointers.PathTable:
    return index.cached("path_table", lambda: pointers.PathTable(index.paths()))


def frame_units(index: Index, text: str, pointed: dict[str, pointers.Pointer]) -> tuple[dict[str, frozenset[str]], dict[int, Any]]:
    """The functions the query's traceback frames name in its pointed files (path -> names), and
    their units (looked up by name, so a frame's function joins the candidates even when BM25F
    missed it)."""
    if not FRAMES_ALL or not pointed:
        return {}, {}
    frames = {p: n for p, n in pointers.frame_names(pointers.extract(text), _path_table(index)).items() if p in pointed}
    if not frames:
        return {}, {}
    found = index.units_named(set().union(*frames.values()), INFO_FIELDS, DECLARED_MAX)
    return frames, {uid: u for uid, u in found.items() if u.name in frames.get(u.path, ())}


def _pointer_boost(head: list[Fused], info: dict[int, Any], pointed: dict[str, pointers.Pointer], frames: dict[str, frozenset[str]],
                   best: float, add: dict[int, float]) -> None:
    """A file the query names lifts its best unit, or, when traceback frames name functions in
    it, each of those functions instead."""
    done: set[str] = set()
    by_name = {(u.path, u.name) for u in info.values()}
    for c in head:  # best first
        u = info.get(c.uid)
        if u is None or u.path not in pointed:
            continue
        named = frames.get(u.path) or frozenset(n for n in (pointed[u.path].name,) if n)
        if any((u.path, n) in by_name for n in named):
            if u.name in named:  # a frame's own function among the candidates: it takes the lift
                add[c.uid] += POINTER_BOOST * best
            continue
        if u.path in done:
            continue
        add[c.uid] += POINTER_BOOST * best
        done.add(u.path)


def _path_words_boost(head: list[Fused], info: dict[int, Any], q: QueryShape, best: float, add: dict[int, float]) -> None:
    for c in head:
        u = info.get(c.uid)
        if u is None:
            continue
        words = q.title_words or q.words  # a report's title says what it is about; its body mostly how
        share = len(words & path_words(u.path, words)) / len(words)
        if share >= PATH_MIN_SHARE:
            add[c.uid] += PATH_BOOST * best * share


def _central_boost(index: Index, head: list[Fused], info: dict[int, Any], best: float, add: dict[int, float]) -> None:
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
        add[c.uid] += CENTRAL_BOOST * best * min(1.0, cache[info_t.tid] / (CENTRAL_SHARE * n))


def _name_term(path: str) -> str | None:
    """The index term of a file's whole name (``GsonBuilder.java`` -> ``gsonbuilder``)."""
    found = terms(PurePosixPath(path).name.split(".", 1)[0])
    return max(found, key=len) if found else None


def _coherence(head: list[Fused], info: dict[int, Any], best: float, add: dict[int, float]) -> None:
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
    for path, c in top.items():
        add[c.uid] += COHERENCE_BOOST * best * total[path] / most


def diversify(items: Sequence[T], score: Callable[[T], float], path: Callable[[T], str], top_free: int = 0) -> list[T]:
    """``items`` (best first) reordered so that each further item of a file already placed counts
    at ``DIVERSITY`` ** (items of that file placed before it); a stable greedy pass. The best
    file's next ``top_free`` items count as if none of it were placed yet."""
    if DIVERSITY >= 1.0 or len(items) < 2:
        return list(items)
    remaining = list(items)
    seen: dict[str, int] = {path(items[0]): -top_free} if top_free else {}
    out: list[T] = []
    while remaining:
        best_i = max(range(len(remaining)), key=lambda i: (score(remaining[i]) * DIVERSITY ** max(0, seen.get(path(remaining[i]), 0)), -i))
        item = remaining.pop(best_i)
        seen[path(item)] = seen.get(path(item), 0) + 1
        out.append(item)
    return out
