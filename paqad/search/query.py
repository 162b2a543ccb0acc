"""Query analysis: which of the query's terms the index knows, and how rare each one is.

Rarity comes from the corpus, never from a stopword list: a term found in more than
``UBIQUITY`` of all units (and at least ``MIN_UBIQUITOUS_DF`` of them) is *ubiquitous* and drops
out of scoring and of the evidence tests on both sides. Terms the index has never seen are
*absent*; they count against coverage at the rarity of a term seen once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paqad.index.fields import idf
from paqad.search.params import Stage
from paqad.tokenize import terms

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.index.records import TermInfo

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

UBIQUITY = 0.12
# A present term that names code (a declaration's name, signature or relations) in less than this
# share of the units containing it is a *prose* word of this corpus ("where", "which", "we"):
# it ranks, but like a ubiquitous term it is no evidence that the repository implements anything.
# Derived from the corpus's own postings, so it is not a stopword list and adapts per repository.
PROSE_SHARE = 0.05
MIN_UBIQUITOUS_DF = 8
# Terms in more than this share of units are not even scored: their idf is near zero and their
# posting lists are the longest, so they cost the most time for the least ranking signal.
SCORE_CUTOFF = 0.5
# Long pasted reports: score only the rarest present terms, so ranking does not drown in common
# words and latency stays bounded.
MAX_SCORED_TERMS = 96


@dataclass
class QueryTerm:
    term: str
    count: int
    tid: int | None
    df: int
    idf: float
    status: str  # "distinctive" | "ubiquitous" | "prose" | "absent"
    ident_share: float = 1.0  # share of the units containing it where it is part of an identifier


@dataclass
class AnalyzedQuery:
    text: str
    n_units: int
    terms: list[QueryTerm] = field(default_factory=list)
    variants: list[QueryTerm] = field(default_factory=list)  # other forms of present words: rank only

    @property
    def distinctive(self) -> list[QueryTerm]:
        return [t for t in self.terms if t.status == "distinctive"]

    @property
    def absent(self) -> list[QueryTerm]:
        return [t for t in self.terms if t.status == "absent"]

    @property
    def ubiquitous(self) -> list[QueryTerm]:
        return [t for t in self.terms if t.status == "ubiquitous"]

    @property
    def prose(self) -> list[QueryTerm]:
        return [t for t in self.terms if t.status == "prose"]

    def scored(self) -> list[QueryTerm]:
        """The terms used for ranking: every present term below ``SCORE_CUTOFF``, rarest first,
        at most ``MAX_SCORED_TERMS``. Ubiquitous terms rank (weakly, by their low idf) but never
        count as evidence."""
        limit = P.SCORE_CUTOFF * self.n_units
        present = [t for t in self.terms if t.status not in ("absent",) and (t.df <= limit or t.df < P.MIN_UBIQUITOUS_DF)]
        ranked = sorted(present, key=lambda t: (-t.idf, t.term))[:P.MAX_SCORED_TERMS]
        return ranked + [t for t in self.variants if t.df <= limit or t.df < P.MIN_UBIQUITOUS_DF]


#: Derivational endings (after ``tokenize.stem``) that an absent query word may lose to find the
#: index's own form of the word: "serialization" → "serializ" (serialize, serializer),
#: "execution" → "execut" (execute, executor), "management" → "manag" (manager). Longest first.
DERIVATIONAL = ("abiliti", "ization", "isation", "ation", "ition", "ment", "ness", "ion", "iti", "abl", "ibl", "al", "iv", "er", "or", "ic")
#: The stripped word must keep at least this many letters, and an index term may add at most
#: ``DERIVED_TAIL`` letters to it, so short roots never fan out over unrelated words.
DERIVED_MIN_ROOT = 5
DERIVED_TAIL = 4
DERIVE = True
#: A query word the index *does* use may still be written differently in the code it is about:
#: "validation" occurs in a few comments while the helpers are named ``Validate``/``validate``
#: (``validat``). Its derived form (``derived``) joins the ranking as a *variant* at
#: ``VARIANT_WEIGHT`` of its rarity; variants are never evidence (the gate reads ``terms`` only).
VARIANTS = True
VARIANT_WEIGHT = 0.3

#: English function words (the closed classes: articles, pronouns, prepositions, conjunctions,
#: auxiliaries, determiners, wh-words and a few sentence adverbs). Not a stopword list for ranking:
#: a function word the index uses is scored and judged by the corpus like any other word. One the
#: index never uses is dropped instead of counting as *absent*: "across", "through" or "whether"
#: missing from a repository says nothing about whether it implements the question's subject,
#: yet an absent word weighs as much as the rarest one in the coverage test.
FUNCTION_WORDS = frozenset(terms(
    "a an the this that these those it its they them their there here we us our you your he him his "
    "she her i me my what which who whom whose how when where why whether "
    "about above across after against along among around at before behind below beneath beside besides "
    "between beyond by down during for from in inside into near of off on onto out outside over per since "
    "through throughout to toward towards under underneath until unto up upon via with within without "
    "and or but nor so yet if then than because although though while unless whereas whereby wherein "
    "am is are was were be been being do does did doing done have has had having can could may might must "
    "shall should will would all any each every some no not both either neither such other another "
    "also only just very too again already ever never once still even however thus therefore instead rather"
))
DROP_ABSENT_FUNCTION_WORDS = True


def derived(index: Index, term: str) -> TermInfo | None:
    """The index's commonest term that is ``term`` with a different derivational ending (see
    ``DERIVATIONAL``), for a query word the index never uses in this form; None if there is none.
    Morphology, not synonyms: a repository that says "serialize" answers "serialization"."""
    if not P.DERIVE or not term.isascii() or not term.isalpha():
        return None
    for suffix in DERIVATIONAL:
        root = term[: -len(suffix)]
        if term.endswith(suffix) and len(root) >= DERIVED_MIN_ROOT:
            found = [t for t in index.terms_with_prefix(root, len(root) + DERIVED_TAIL, limit=1) if t.df > 0]
            return found[0] if found else None
    return None


def analyze(index: Index, text: str, n_units: int) -> AnalyzedQuery:
    """The query's terms, each with its id, document frequency, rarity and status in this index.
    A term the index lacks is looked up in its derivational forms (``derived``) before it is absent;
    an absent function word (``FUNCTION_WORDS``) is left out."""
    counts = Counter(terms(text))
    known = index.terms(list(counts))
    for term in [t for t in counts if t not in known]:
        alt = derived(index, term)
        if alt is not None:
            counts[alt.term] += counts.pop(term)
            known[alt.term] = alt
    out = AnalyzedQuery(text, n_units)
    unseen_idf = idf(1, max(n_units, 1))
    for term, count in counts.items():
        entry = known.get(term)
        tid, df = (entry.tid, entry.df) if entry is not None else (None, 0)
        if tid is None or df <= 0:
            if P.DROP_ABSENT_FUNCTION_WORDS and term in FUNCTION_WORDS:
                continue
            out.terms.append(QueryTerm(term, count, None, 0, unseen_idf, "absent"))
            continue
        ubiq = df >= P.MIN_UBIQUITOUS_DF and df > P.UBIQUITY * n_units
        out.terms.append(QueryTerm(term, count, tid, df, idf(df, n_units), "ubiquitous" if ubiq else "distinctive"))
    if P.VARIANTS and len(out.terms) < P.LONG_QUERY_WORDS and not _bare_name(text):
        out.variants = _variants(index, out.terms, n_units)
    return out


#: Reports are not given variants: they carry many forms of their words already, and each variant
#: costs a range scan of the terms.
LONG_QUERY_WORDS = 25


def _bare_name(text: str) -> bool:
    """One identifier-like token (``HTTPDigestAuth``, ``parse_args``, ``flask.Blueprint``): a name,
    looked up as written, so no other forms of its words join it."""
    token = text.strip().strip("`'\"")
    return bool(token) and len(token.split()) == 1 and any(c.isupper() or c in "_.:#" for c in token[1:])


def _variants(index: Index, present: list[QueryTerm], n_units: int) -> list[QueryTerm]:
    """Other forms the index uses of the query's present words (``derived``), not already in the
    query: scored at ``VARIANT_WEIGHT`` of their rarity, never evidence."""
    have = {t.term for t in present}
    out: list[QueryTerm] = []
    for qt in present:
        if qt.status == "absent" or qt.term in FUNCTION_WORDS:
            continue
        alt = derived(index, qt.term)
        if alt is None or alt.term in have:
            continue
        have.add(alt.term)
        out.append(QueryTerm(alt.term, qt.count, alt.tid, alt.df, idf(alt.df, n_units), "variant"))
    return out

