"""What a file's path says about a query: the words its name and folder carry (glued compounds
split on the query's words), and the path priors of kinds of files that rarely hold the answer.

Pure functions of a path (and the query's words), cached; ``paqad.search.ranking`` turns them
into its path-word lift and priors. The constants are module constants so
``benchmarks/tune_rank.py`` can switch them (``--set paths.COMPOUND_PATHS=False``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath

from paqad.search.params import Stage
from paqad.tokenize import stem, terms

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

COMPOUND_PATHS = True  # a file stem glued from query words (``secretfiles.py``) carries them too
COMPOUND_MIN_PIECE = 3  # letters in each glued word
PREFIX_MIN = 4  # a path word this long that begins a longer query word stands for it (``impls`` for ``implementations``; 0: off)
PRIORS = ""  # comma-separated names of PATH_PRIORS in use


def _words(text: str) -> frozenset[str]:
    return frozenset(terms(text))


#: (name, pattern over the repository-relative path, factor, query words that lift the prior)
PATH_PRIORS: tuple[tuple[str, re.Pattern[str], float, frozenset[str]], ...] = (
    ("examples", re.compile(r"(?:^|/)(?:_?examples?|samples?|demos?|docs?_src|tutorials?)/", re.I), 0.5, _words("example examples sample samples demo demos tutorial")),
    ("docs", re.compile(r"(?:^|/)(?:docs?|documentation|site)/", re.I), 0.5, _words("doc docs documentation")),
    ("benchmarks", re.compile(r"(?:^|/)(?:bench(?:marks?)?|perf)/", re.I), 0.5, _words("bench benchmark benchmarks perf performance")),
    ("compat", re.compile(r"(?:^|/)(?:_?compat|legacy|deprecated|vendor(?:ed)?|third_party|thirdparty|external)/", re.I), 0.5,
     _words("compat compatibility legacy deprecated vendor vendored")),
    ("reexport", re.compile(r"(?:^|/)(?:__init__\.py|index\.[cm]?[jt]sx?|mod\.rs|package-info\.java|package\.scala)$"), 0.7, frozenset()),
    ("stub", re.compile(r"\.d\.[cm]?ts$|\.pyi$"), 0.7, _words("type types typing declaration declarations stub stubs")),
)


@lru_cache(maxsize=50_000)
def _path_words(path: str) -> frozenset[str]:
    p = PurePosixPath(path)
    stem = p.name.split(".", 1)[0]
    return frozenset(terms(stem)) | frozenset(terms(p.parent.name))


@lru_cache(maxsize=50_000)
def _stem_terms(path: str) -> frozenset[str]:
    return frozenset(terms(PurePosixPath(path).name.split(".", 1)[0]))


_LOWER_RUN = re.compile(r"(?<![A-Za-z])[a-z]+(?![A-Za-z])")  # a whole lowercase word, not the tail of a camelCase one


@lru_cache(maxsize=50_000)
def _glued_runs(path: str) -> tuple[str, ...]:
    """Lowercase letter runs of a file's stem and folder that the tokenizer keeps whole (no case
    change or separator inside), long enough to hold two words: ``secretfiles``, ``routergroup``."""
    p = PurePosixPath(path)
    text = f"{p.name.split('.', 1)[0]} {p.parent.name}"
    return tuple(r for r in _LOWER_RUN.findall(text) if len(r) >= 2 * COMPOUND_MIN_PIECE)


@lru_cache(maxsize=4096)
def _glued_words(run: str, words: frozenset[str]) -> frozenset[str]:
    """The query words a glued run is made of, when it splits wholly into two or more of them
    (their stems, as the index folds them); otherwise nothing. A whole split, not a substring
    search: ``profile`` holds ``file`` but is not made of query words."""
    n, low = len(run), COMPOUND_MIN_PIECE
    if not any(len(w) >= low and run.startswith(w) for w in words):
        return frozenset()  # the first piece's stem is a prefix of it: most runs stop here
    best: list[tuple[str, ...] | None] = [None] * (n + 1)
    best[0] = ()
    for end in range(low, n + 1):
        for start in range(0, end - low + 1):
            head = best[start]
            if head is None:
                continue
            piece = stem(run[start:end])
            if piece in words:
                best[end] = (*head, piece)
                break
    found = best[n]
    return frozenset(found) if found and len(found) >= 2 else frozenset()


def path_words(path: str, words: frozenset[str]) -> frozenset[str]:
    """The words a file's name and folder carry, glued compounds split on the query's words."""
    plain = _path_words(path)
    least = P.PREFIX_MIN
    if least:
        plain = plain | _abbreviated(plain, words, least)
    if not P.COMPOUND_PATHS:
        return plain
    glued = [_glued_words(r, words) for r in _glued_runs(path)]
    return plain.union(*glued) if any(glued) else plain


@lru_cache(maxsize=8192)
def _abbreviated(plain: frozenset[str], words: frozenset[str], least: int) -> frozenset[str]:
    """The query words a path word abbreviates: file and folder names shorten what prose spells
    out (``impls.rs``, ``auth/``, ``util.py``, ``config.py`` for implementations, authentication,
    utilities, configuration), and the stemmer does not join them. A path word of ``PREFIX_MIN``
    letters or more counts as each longer query word it begins."""
    return frozenset(w for w in words for p in plain if len(p) >= least and len(w) > len(p) and p.isalpha() and w.startswith(p))


def path_prior(path: str, words: frozenset[str]) -> float:
    """The product of the priors in ``PRIORS`` whose pattern the path matches (1.0 when none is on),
    each unless the query names that kind of file."""
    if not PRIORS:
        return 1.0
    factor = 1.0
    use = PRIORS.split(",")
    for name, pattern, value, lifts in PATH_PRIORS:
        if name in use and pattern.search(path) and not (lifts and words & lifts):
            factor *= value
    return factor


#: A folder named for a major version (``v3/``), and a query naming one (``v3 compatibility``).
_VERSION_DIR = re.compile(r"(?:^|/)v(\d{1,2})/")
_VERSION_WORD = re.compile(r"(?<![\w.])v(\d{1,2})\b", re.I)
#: Files of a version folder that must also exist one level up for it to count as an old copy.
OLDER_COPY_MIN_SHARED = 2


def older_copies(paths: Iterable[str]) -> dict[str, str]:
    """Folders (``prefix/vN/``) that hold an older copy of an API kept beside the current one:
    a sibling ``prefix/vM/`` with M > N exists (zod's ``v3/`` beside ``v4/``), or it is the only
    version folder there and at least ``OLDER_COPY_MIN_SHARED`` of its files are also found at
    ``prefix/`` (pydantic's ``v1/fields.py`` beside ``fields.py``). A lone version folder (``exposed/v1/``: the only API there is) is none.
    Folder -> its version number, as written."""
    paths = list(paths)
    present = set(paths)
    versions: dict[str, set[int]] = defaultdict(set)
    shared: dict[str, int] = defaultdict(int)
    for path in paths:
        for m in _VERSION_DIR.finditer(path):
            prefix = path[: m.start() + (1 if path[m.start()] == "/" else 0)]
            folder = path[: m.end()]
            versions[prefix].add(int(m.group(1)))
            if prefix + path[m.end():] in present:
                shared[folder] += 1
    out: dict[str, str] = {}
    for prefix, found in versions.items():
        for n in found:
            folder = f"{prefix}v{n}/"
            if n < max(found) or (len(found) == 1 and shared.get(folder, 0) >= OLDER_COPY_MIN_SHARED):
                out[folder] = str(n)
    return out


def names_version(text: str, version: str) -> bool:
    """Whether the query asks for that version by name (``v3 compatibility error types``)."""
    return any(m.group(1) == version for m in _VERSION_WORD.finditer(text))
