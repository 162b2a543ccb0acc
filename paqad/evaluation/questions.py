"""The built-in test set, generated from the repository under evaluation.

Docstring questions: a documented code unit (function, method, class, ...; not a test, not a
split part) gives its docstring's first paragraph with every identifier taken out: words in
backticks and Sphinx roles, snake_case, CamelCase and dotted names, call-like words, and any word
that stems to a part of the unit's own name (``sign_cookie`` drops "signs", "cookies"). What is
left must keep ``MIN_CONTENT_WORDS`` content words, and a paragraph or question shared by several
units is skipped (its answer would be ambiguous). Candidates are shuffled with a seeded RNG, so a run is
repeatable; the accepted answer is the unit's file (both arms are scored per file).

Unanswerable questions: ``SUBJECTS``, each with the words that make it distinctive; one is kept
only when none of those words occurs (whole word, any case) in the files the grep arm reads.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from paqad import tokenize
from paqad.index.records import StoredUnit

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

CODE_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait"})
MIN_CONTENT_WORDS = 4
MAX_WORDS = 40

# Function words only (the benchmark grep loop's list): content words must stay in.
FUNCTION_WORDS = frozenset(
    """
the and for with that this from into onto are was were been being has have had not but its
can could does did how what where which when who whom whose why you your yours our ours they
them their there then than these those will would should shall may might must each some such
only also just very too out about over under upon via per own same other both either neither
nor yet all any one ones don doesn isn aren wasn weren didn
""".split()
)
_CONTENT = re.compile(r"[^\W\d_]{3,}")  # a run of >= 3 letters (any script), no digits/underscores

# (question, distinctive words): subjects a typical code base does not contain, phrased as an agent would.
SUBJECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("how is the Kubernetes pod autoscaler configured", ("kubernetes", "autoscaler")),
    ("where do we train the convolutional neural network", ("convolutional", "neural")),
    ("which function computes the VAT on an invoice line", ("vat", "invoice")),
    ("where are push notifications sent to iOS devices through APNs", ("ios", "apns")),
    ("how does the physics engine resolve collisions between rigid bodies", ("physics", "rigid")),
    ("where is the GPU texture cache evicted when video memory runs low", ("gpu", "texture")),
    ("which module resamples the audio buffer to 48 kHz", ("audio", "khz", "resamples")),
    ("how are shipping rates calculated per carrier and parcel weight", ("shipping", "parcel", "carrier")),
    ("where is the Kafka consumer group offset committed", ("kafka",)),
    ("how is a tenant mapped to its database shard", ("tenant", "shard")),
    ("which code geocodes a postal address into latitude and longitude", ("geocodes", "latitude", "longitude")),
    ("where are uploaded videos split into HLS segments", ("hls", "videos")),
    ("how does the chess engine evaluate a board position", ("chess",)),
    ("where do we render the 3D mesh with soft shadows", ("mesh", "shadows")),
    ("which job reconciles the bank ledger at the end of the month", ("bank", "ledger")),
    ("how are genome sequences aligned against the reference assembly", ("genome", "assembly")),
    ("where is the wallet's private key derived from the seed phrase", ("wallet", "phrase")),
    ("how does the thermostat schedule heating for the weekend", ("thermostat", "heating")),
    ("where are flight bookings priced by seat class", ("flight", "bookings", "seat")),
    ("how is the Terraform state locked in the S3 backend", ("terraform",)),
    ("which class plays MIDI notes on the synthesizer", ("midi", "synthesizer")),
    ("where is payroll tax withheld from an employee's salary", ("payroll", "salary")),
    ("how does the elevator controller pick the next floor", ("elevator",)),
    ("where do we detect faces in the webcam stream", ("webcam", "faces")),
    ("how is a spreadsheet formula recalculated when a cell changes", ("spreadsheet", "formula")),
)


@dataclass
class Question:
    """One question of the test set; no ``answers`` means it is unanswerable here."""

    id: str
    text: str
    source: str  # docstring | unanswerable | team
    answers: list[str] = field(default_factory=list)  # accepted files (repository-relative)
    unit: str | None = None  # the unit whose docstring was masked (docstring questions)
    accepted: list[str] = field(default_factory=list)  # the team's accepted forms, as written

    @property
    def answerable(self) -> bool:
        return bool(self.answers)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def content_words(text: str) -> list[str]:
    """The words an agent without retrieval would grep for: lowercased runs of >= 3 letters minus
    function words, no stemming, in first-seen order (the benchmark grep loop's definition)."""
    seen: dict[str, None] = {}
    for word in _CONTENT.findall(text.lower()):
        if word not in FUNCTION_WORDS:
            seen.setdefault(word)
    return list(seen)


# ---- docstring questions -------------------------------------------------------------------

_ROLES_AND_TICKS = re.compile(r"(?::[\w.-]+)+:`[^`]*`|``.*?``|`[^`]*`")
_URL = re.compile(r"\w+://\S+")
_EDGE_PUNCT = "\"'()[]{}<>,;:.!?*"


def first_paragraph(docstring: str) -> str:
    """The docstring's first prose paragraph as one line, at most ``MAX_WORDS`` words (a paragraph
    that is a reST directive, a field list or a doctest is skipped)."""
    for para in re.split(r"\n\s*\n", docstring.strip()):
        if para.strip() and not para.lstrip().startswith(("..", ":", ">>>")):
            return " ".join(para.split()[:MAX_WORDS])
    return ""


def is_identifier(word: str) -> bool:
    """snake_case, CamelCase/camelCase, dotted or call-like names, and words mixing letters and digits."""
    core = word.strip(_EDGE_PUNCT)
    if not core:
        return False
    return bool(
        "_" in core
        or re.search(r"\w\.\w", core)
        or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]", core)
        or re.search(r"[()=<>\[\]{}/\\#@$]", core)
        or (re.search(r"\d", core) and re.search(r"[A-Za-z]", core))
    )


def name_parts(name: str) -> set[str]:
    """The stemmed parts of a unit's own name (``sign_cookie`` → {"sign", "cooki", "signcooki"})."""
    return set(tokenize.terms(name))


def strip_identifiers(paragraph: str, name: str) -> str:
    """The paragraph with identifiers and the unit's own name parts removed, whitespace tidied."""
    text = _URL.sub(" ", _ROLES_AND_TICKS.sub(" ", paragraph))
    own = name_parts(name)
    kept = []
    for word in text.split():
        if is_identifier(word):
            continue
        if any(t in own for t in tokenize.terms(word.strip(_EDGE_PUNCT))):
            continue
        kept.append(word)
    out = " ".join(kept).strip(" ,;:-")
    return re.sub(r"\s+([,.;:!?])", r"\1", out)


def docstring_candidates(units: Iterable[StoredUnit]) -> list[tuple[StoredUnit, str, str]]:
    """(unit, original first paragraph, question) for every usable unit, sorted by unit id.

    A paragraph, or a question, that several units share is skipped: its answer is ambiguous."""
    units = sorted(units, key=lambda u: u.id)
    rows = [(u, p, strip_identifiers(p, u.name)) for u in units for p in [first_paragraph(u.docstring)]]
    seen = Counter(key for _, p, q in rows for key in {("p", p.lower()), ("q", q.lower())})
    return [
        (u, p, q) for u, p, q in rows
        if seen[("p", p.lower())] == 1 and seen[("q", q.lower())] == 1 and len(content_words(q)) >= MIN_CONTENT_WORDS
    ]


def sample(candidates: list, seed: int) -> list:
    """The candidates in a seeded random order (taken from the front until enough pass masking)."""
    order = list(candidates)
    random.Random(seed).shuffle(order)
    return order


def docstring_question(number: int, unit: StoredUnit, question: str) -> Question:
    return Question(f"doc-{number:03d}", question, "docstring", [unit.path], unit=unit.id)


# ---- unanswerable questions ----------------------------------------------------------------


def unanswerable(texts: Iterable[str]) -> tuple[list[Question], list[str]]:
    """The built-in subjects none of whose distinctive words occurs in ``texts``; and the dropped ones."""
    words = {w for _, distinctive in SUBJECTS for w in distinctive}
    present: set[str] = set()
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, words))) + r")\b", re.IGNORECASE)
    for text in texts:
        present.update(m.lower() for m in pattern.findall(text))
        if present >= words:
            break
    kept: list[Question] = []
    dropped: list[str] = []
    for question, distinctive in SUBJECTS:
        if present.intersection(distinctive):
            dropped.append(question)
        else:
            kept.append(Question(f"none-{len(kept) + 1:03d}", question, "unanswerable"))
    return kept, dropped
