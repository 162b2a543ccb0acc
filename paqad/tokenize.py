"""Text to index terms, the same for documents and queries.

Decisions (measured on the rulers, see benchmarks/README.md):
- identifiers split on ``_`` and camelCase (``retryCharge``, ``retry_charge`` → ``retry``, ``charge``)
  and also kept whole with separators removed (``retrycharge``) so an exact identifier still wins;
- lower-cased; one-letter parts dropped; no stopword list (rarity comes from the corpus);
- a light suffix stemmer folds plurals and common verb endings (``signed``/``signing`` → ``sign``);
- CJK runs become overlapping bigrams (a lone CJK character stays a unigram).
``TOKENIZER_VERSION`` is stored in the index; a change forces a rebuild.
"""

from __future__ import annotations

import re
from functools import lru_cache

TOKENIZER_VERSION = 3  # 3: a compound whose split dropped one-letter pieces is kept whole too (not a letter with digits)

_WORD = re.compile(r"[^\W\d_][\w]*|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MAX_TERM = 40

STEM = True
KEEP_COMPOUND = True
SPLIT_IDENTIFIERS = True


def terms(text: str) -> list[str]:
    """All terms of ``text`` in order, with repeats (term frequency matters to BM25)."""
    out: list[str] = []
    for chunk in _CJK.split(text):
        _latin_terms(chunk, out)
    for run in _CJK.findall(text):
        out.extend(_cjk_terms(run))
    return out


def _latin_terms(text: str, out: list[str]) -> None:
    for match in _WORD.finditer(text):
        out.extend(_word_terms(match.group(0)))


@lru_cache(maxsize=200_000)
def _word_terms(word: str) -> tuple[str, ...]:
    """Terms of one identifier-ish word; cached because code repeats identifiers constantly."""
    if word.isdigit():
        return (word,) if 2 <= len(word) <= 8 else ()
    if not SPLIT_IDENTIFIERS:
        whole = word.lower()
        return (stem(whole) if STEM else whole,) if 1 < len(whole) <= _MAX_TERM else ()
    pieces = [p.lower() for seg in word.split("_") for p in (_CAMEL.findall(seg) if seg.isascii() else [seg]) if p]
    parts = [p for p in pieces if len(p) > 1 and not p.isdigit()]
    result = [stem(p) if STEM else p for p in parts if len(p) <= _MAX_TERM]
    whole = word.replace("_", "").lower()
    # Whole when it split at all, counting the one-letter pieces dropped: ``HCursor`` and
    # ``IDisposable`` keep ``hcursor``/``idisposable`` (else only ``cursor``/``dispos`` were left of them).
    # Not when nothing but one letter and digits is left: ``M1``, ``x2``, ``T3`` are a report's or a
    # signature's throwaway names, and as terms they matched every other ``m1`` (SWE sympy-13031).
    if KEEP_COMPOUND and len(pieces) > 1 and parts and len(whole) <= _MAX_TERM and whole not in result:
        result.append(whole)
    return tuple(result)


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A light English stemmer (a small subset of Porter's step 1): plurals, -ing, -ed, final y/e.

    Deliberately weaker than Porter: code identifiers are not prose, and over-stemming merges
    unrelated names. Both sides fold the same way, so ``cookie``/``cookies`` → ``cooki`` and
    ``parse``/``parses``/``parsing``/``parsed`` → ``pars``. Only ASCII words longer than 3 letters.
    """
    if len(word) <= 3 or not word.isascii():
        return word
    w = _strip_plural(word)
    w = _strip_verb(w)
    if len(w) > 3 and w[-1] in "ye":
        w = w[:-1] + ("i" if w[-1] == "y" else "")
    return w


def _strip_plural(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "i"
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def _strip_verb(w: str) -> str:
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)]
            if base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return w
