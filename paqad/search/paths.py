"""What a file's path says about a query: the words its name and folder carry, and the path
priors of kinds of files that rarely hold the answer.

Pure functions of a path (and the query's words), cached; ``paqad.search.ranking`` turns them
into its path-word lift and priors. Two refinements of the path words lived here until Dec 7
(commit 9a96ead): glued compounds split on the query's words (``secretfiles.py``) and abbreviated
path words (``impls`` for ``implementations``); neither moved any ruler beyond its noise
(``python -m benchmarks ablate``, groups ``compound_paths`` and ``prefix_min``), so they went.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath

from paqad.search.params import Stage
from paqad.tokenize import terms

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

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
def path_words(path: str) -> frozenset[str]:
    """The words a file's name and its folder's name carry."""
    p = PurePosixPath(path)
    stem = p.name.split(".", 1)[0]
    return frozenset(terms(stem)) | frozenset(terms(p.parent.name))


@lru_cache(maxsize=50_000)
def _stem_terms(path: str) -> frozenset[str]:
    return frozenset(terms(PurePosixPath(path).name.split(".", 1)[0]))


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
