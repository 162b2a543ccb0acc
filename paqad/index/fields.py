"""The BM25F fields of a unit and the per-posting weight stored at index time.

BM25F (Robertson, Zaragoza & Taylor 2004, "Simple BM25 extension to multiple weighted fields"):
term frequencies are length-normalised per field, weighted, summed, and only then saturated:

    tf~(t, u) = Σ_f  W_f · tf_f(t, u) / (1 − B_f + B_f · len_f(u) / avglen_f)
    w(t, u)   = tf~ / (K1 + tf~)                      (stored in the posting, in [0, 1))
    score(u)  = Σ_t  idf(t) · w(t, u)                 (summed at query time)

Storing ``w`` means a query only sums a few postings, as bm25s does with its precomputed matrix.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import PurePosixPath

from paqad.tokenize import terms
from paqad.units import CodeUnit

# Bumped when weights or priors change: stored posting weights then need a full rebuild.
# 3: the description field (agent-written descriptions, paqad.describe). 4: one length
# normalisation for every field (the per-field values moved nothing: issue 32's ablation).
RANKING_VERSION = 4

FIELDS = ("name", "signature", "doc", "relations", "body", "description")
# Field weights W_f, chosen on the rulers (benchmarks/README.md); setting them all to 1 costs
# NDCG@10 -0.007 and hit@1 -0.005 on every ruler's tune half (``python -m benchmarks ablate_index``).
# Descriptions weigh as much as the name: on the requests ruler with 197 described units, W 3.0
# beat joining the doc field (1.5) and W 1.0/1.5/2.25; 4.5 and 6.0 changed nothing more
# (benchmarks/README.md, "Descriptions"). They are not identifier evidence (``lexical.IDENT_MASK``):
# counting them so lowered hit@1 and silence there.
WEIGHTS = (3.0, 2.0, 1.5, 1.0, 1.0, 3.0)
# Length normalisation B and saturation K1 are BM25's usual values, the same in every field. Tuned
# per field (name 0.3, signature 0.6) they moved nothing on 2,123 cases of nine rulers, both halves
# and all of semble (NDCG@10 -0.0005 [-0.002, +0.001], hit@1 -0.002 [-0.007, +0.001]), so they went.
B = 0.75
K1 = 1.2
# Credit a match earns toward the relevance score, by the best field it matched in: a term in
# the name says more about what a unit is than the same term somewhere in its body.
FIELD_CREDIT = (1.0, 0.9, 0.85, 0.6, 0.5, 0.85)


# Ranking priors by unit kind and for test files, folded into every posting weight of the unit:
# agents asked about behaviour need the code that implements it; prose, config sections and
# leftover module code that merely mention it rank lower, and tests rarely are the answer to
# "where is X done" (they still rank when nothing else matches). Chosen on the rulers.
KIND_PRIOR = {"section": 0.5, "document": 0.5, "key": 0.5, "module": 0.6}
TEST_PRIOR = 0.6


def unit_prior(kind: str, is_test: bool) -> float:
    return KIND_PRIOR.get(kind, 1.0) * (TEST_PRIOR if is_test else 1.0)


def field_terms(unit: CodeUnit, description: str = "") -> list[Counter[str]]:
    """Term counts per field for one unit; ``description`` is the agent-written one, if any."""
    path = PurePosixPath(unit.path)
    relations = " ".join([*unit.calls, *unit.imports, *unit.bases, *path.parts[:-1], path.stem])
    name_text = f"{unit.name} {unit.qualified_name.replace('.', ' ')}"
    texts = (name_text, unit.signature, unit.docstring, relations, unit.text, description)
    return [Counter(terms(t)) for t in texts]


def posting_weights(counts: list[Counter[str]], avg_lengths: list[float], prior: float = 1.0) -> dict[str, tuple[float, int]]:
    """term → (w · prior, field mask) for one unit, given the corpus' average field lengths."""
    lengths = [sum(c.values()) for c in counts]
    norms = [
        1.0 - B + B * (lengths[f] / avg_lengths[f] if avg_lengths[f] > 0 else 1.0)
        for f in range(len(FIELDS))
    ]
    acc: dict[str, list[float]] = {}
    for f, counter in enumerate(counts):
        for term, tf in counter.items():
            entry = acc.setdefault(term, [0.0, 0])
            entry[0] += WEIGHTS[f] * tf / norms[f]
            entry[1] = int(entry[1]) | (1 << f)
    return {t: (prior * tfw / (K1 + tfw), int(mask)) for t, (tfw, mask) in acc.items()}


def idf(df: int, n: int) -> float:
    """BM25 idf with the +1 inside the log (Lucene's form), so it is never negative."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def best_field(mask: int) -> int:
    """The highest-credit field present in a posting's field mask (the first of equals)."""
    present = [f for f in range(len(FIELDS)) if mask & (1 << f)]
    return max(present, key=lambda f: (FIELD_CREDIT[f], -f)) if present else len(FIELDS) - 1
