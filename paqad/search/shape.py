"""What a query asks for, read from its text alone: the identifiers it looks up, whether it is a
pasted report (an issue text) rather than a question, and a report's title.

Kept apart from the signals that use it (``paqad.search.ranking`` and ``paqad.search.reports``):
reading the text is cheap, cached per query, and has no index to consult. Which of these readings
a signal uses is the signal's setting (``ranking.TITLE_SCALE``, ``ranking.TITLE_PATHS``), not this
module's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from paqad.search.params import Stage
from paqad.tokenize import terms

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

TOP_FILE_MIN_WORDS = 25  # a report: this many distinct terms (as evidence.LONG_QUERY_TERMS)
REPORT_CALLS = True  # a report's ``Type.method(`` names that method, as a backticked name would
TITLE_MAX_CHARS = 160  # a report's title: a first line this short, with the report's body below it

# One identifier, optionally qualified (``a.b``, ``a::b``, ``a\\b``, ``a->b``, ``a#b``).
_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:::|\.|\\|->|#)[A-Za-z_$][\w$]*)*[!?]?$")
_SEPARATORS = re.compile(r"::|\.|\\|->|#")
# Identifiers inside a sentence: camelCase, PascalCase with an inner capital, a run of capitals
# before a word (``HCursor``, ``IOException``; not ``IDs`` or ``URLs``), snake_case, a name led by
# underscores (``__matmul__``, ``_meta``), or anything in backticks.
_EMBEDDED = re.compile(r"`([^`\s]{2,80})`|\b([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}[a-z]{2,}\w*|[A-Za-z]+_\w+|_+[A-Za-z]\w*)\b")
# A method called on a type in a report (``Point.vel() should calculate the velocity``)
_METHOD_CALL = re.compile(r"(?<![\w.])([A-Z]\w*\.[a-z_]\w*)\(")
# A name a report's title calls (``cse() has strange behaviour``) or capitalises (``Wrong Derivative kind``).
_TITLE_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(|(?<![\w.])([A-Z]\w+|_+[A-Za-z]\w*)")


@dataclass(frozen=True)
class QueryShape:
    """What a query asks for, read from its text alone."""

    symbols: tuple[str, ...] = ()  # identifiers whose declarations the query looks up
    embedded: bool = False  # the symbols were written inside a sentence (``ranking.EMBEDDED_SCALE``)
    words: frozenset[str] = field(default_factory=frozenset)  # the query's index terms
    title: tuple[str, ...] = ()  # names a report's first line calls or capitalises (looked up as declarations; ``ranking.TITLE_SCALE``)
    title_words: frozenset[str] = field(default_factory=frozenset)  # a report title's index terms (``ranking.TITLE_PATHS``)

    @property
    def report(self) -> bool:
        """A pasted report (an issue text), not a question: the report signals apply."""
        return is_report(self.words)


def is_report(words: frozenset[str]) -> bool:
    return len(words) >= P.TOP_FILE_MIN_WORDS


def shape(text: str) -> QueryShape:
    return _shape(text, P.REPORT_CALLS, P.TOP_FILE_MIN_WORDS)


@lru_cache(maxsize=512)
def _shape(text: str, calls: bool, min_words: int) -> QueryShape:
    """:func:`shape`, cached per text and the constants it reads (a request may override them)."""
    stripped = text.strip().strip("`'\"")
    words = frozenset(terms(text))
    if _SYMBOL.match(stripped) and looks_like_symbol(stripped):
        return QueryShape((stripped,), False, words)
    found = [a or b for a, b in _EMBEDDED.findall(text)]
    if calls and is_report(words):
        found += _METHOD_CALL.findall(text)
    names = tuple(dict.fromkeys(n.strip("()") for n in found if _SYMBOL.match(n.strip("()"))))
    head = _title(text) if is_report(words) else ""
    title = tuple(dict.fromkeys(a or b for a, b in _TITLE_NAME.findall(head)))
    return QueryShape(names, bool(names), words, title, frozenset(terms(head)))


shape.cache_clear = _shape.cache_clear  # type: ignore[attr-defined]  # tests clear it


def _title(text: str) -> str:
    """A report's title: its first line, at most ``TITLE_MAX_CHARS``, with more text below it (a
    one-paragraph report has none: "")."""
    head, _, body = text.strip().partition("\n")
    return head if body.strip() and len(head) <= TITLE_MAX_CHARS else ""


def looks_like_symbol(token: str) -> bool:
    """A bare word is a symbol when it could not be an English word: it has a separator, an
    underscore, a capital after the first letter, or starts with a capital (``Session``)."""
    return bool(_SEPARATORS.search(token)) or "_" in token or token[:1].isupper() or any(c.isupper() for c in token[1:])


def segments(name: str) -> list[str]:
    return [s for s in _SEPARATORS.split(name) if s]


def defines(unit_name: str, qualified_name: str, symbol: str) -> bool:
    """Whether a unit named ``unit_name`` (qualified ``qualified_name``) declares ``symbol``: its
    own name is the symbol's last segment and the qualifiers both give agree (``flask.Blueprint``
    names the class ``Blueprint`` even where its qualified name carries no module)."""
    segs = segments(symbol)
    if not segs or unit_name.rstrip("!?") != segs[-1].rstrip("!?"):
        return False
    qual = segments(qualified_name) or [unit_name]
    n = min(len(qual), len(segs))
    return qual[-n:] == segs[-n:]
