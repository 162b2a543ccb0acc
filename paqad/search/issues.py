"""An issue text's delivery order: files first, then the functions inside them (issue 32, item 5).

A pasted issue (a bug report: long, in several lines or with a traceback, code block or the
phrases bug reports are written in) asks where to change the code, which is one or two files; a
question asks what something is, and keeps the diversified order (``ranking.diversify``). For an
issue, the ranked pool (``ranking.apply``'s order, scores unchanged) is regrouped:

- each candidate file scores its best unit (adding its further units, decayed, cost sympy file
  Acc@5 at 0.5 and 0.7 and changed nothing at 0.3 on the tune half, so that constant went);
- test files, issue and pull-request templates, CI files and environment files (lock files,
  requirements, Dockerfiles) count at ``AUX_PRIOR`` unless the text names the file: an issue
  describes the failure, and its words are in the test that reproduces it and in the template it
  was written from, while the fix is elsewhere;
- the best file's best ``PER_FILE`` units come first (the function to change is often its second
  or fourth unit), its functions and methods before its class heads and module lines (a fix is in
  a function; a Java class's head part, long and full of the report's words, took one of the five
  places), then every other file's best unit in file order, then the rest of the pool in its own
  order: ten results still show the next files.

What is an issue is :func:`speaks`; the constants are in ``paqad.search.params.KNOBS`` (``issues.*``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from paqad.search.params import Stage
from paqad.search.shape import shape

if TYPE_CHECKING:
    from paqad.index.reader import Index
    from paqad.search.fusion import Fused

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

ENABLED = True  # an issue text is delivered files first
MIN_LINES = 2  # an issue: a report (shape.TOP_FILE_MIN_WORDS distinct terms) in a title and a body, ...
PER_FILE = 5  # units of the best file delivered before the next file's (tune halves, function Acc@5: 2, 3, 4, 5, 8 -> d4j 37.5, 62.5, 75.0, 83.3, 83.3; sympy 50.0 for all)
AUX_PRIOR = 0.2  # a test, template, CI or environment file the text does not name
POOL = 60  # candidates regrouped (at least; the pipeline's own pool when larger)
FUNCTION_KINDS = frozenset({"function", "method"})  # what a fix changes: the best file's come before its other units

# ... or one with a traceback, a code block, a stack frame or a bug report's phrases
_MARKS = re.compile(
    r"```|^\s*Traceback \(most recent call last\)|^\s+at [\w$.<>]+\([\w$.]+:\d+\)|^\s*File \"[^\"]+\", line \d+"
    r"|steps to reproduce|expected (?:behaviou?r|result|output)|actual (?:behaviou?r|result|output)|stack ?trace"
    r"|\bthrows?\b.*\bexception\b|\bexception\b.*\bthrown\b",
    re.I | re.M)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)
_TEST = re.compile(r"(^|/)(tests?|testing|__tests__|spec|specs)/|(^|/)test_[^/]*$|_tests?\.[^/.]+$|(Tests?|Spec)\.[^/.]+$"
                   r"|\.(test|spec)\.[^/.]+$|(^|/)conftest\.py$|(^|/)src/test/")
_CI = re.compile(r"(^|/)\.github/|(^|/)\.circleci/|(^|/)\.gitlab-ci\.ya?ml$|(^|/)\.travis\.ya?ml$|(^|/)appveyor\.ya?ml$"
                 r"|(^|/)azure-pipelines\.ya?ml$|(^|/)Jenkinsfile$|(^|/)\.ci/|(^|/)codecov\.ya?ml$|(^|/)\.pre-commit-config\.ya?ml$")
_ENV = re.compile(r"(^|/)requirements[^/]*\.(txt|in)$|(^|/)environment[^/]*\.ya?ml$|(^|/)Dockerfile[^/]*$|(^|/)docker-compose[^/]*$"
                  r"|(^|/)\.env[^/]*$|(^|/)Pipfile(\.lock)?$|\.lock$|(^|/)package-lock\.json$|(^|/)\.coveragerc$|(^|/)tox\.ini$")


def speaks(text: str) -> bool:
    """Whether ``text`` is an issue: a report by length, written as one (lines, trace, code, phrases),
    not a patch or a review of one (a diff hunk: the code it is about is the hunk's, tests included)."""
    if not P.ENABLED or not shape(text).report or _HUNK.search(text):
        return False
    return sum(1 for line in text.splitlines() if line.strip()) >= P.MIN_LINES or bool(_MARKS.search(text))


def pool(text: str) -> int:
    """Candidates an issue's regrouping reads (0 for any other query)."""
    return int(P.POOL) if speaks(text) else 0


@lru_cache(maxsize=4096)
def auxiliary(path: str) -> bool:
    """A test, template, CI or environment file (by its path alone)."""
    return bool(_TEST.search(path) or _CI.search(path) or _ENV.search(path))


def named(path: str, lowered: str) -> bool:
    """The text names the file: its name, or its name without the suffix when that is a word of it."""
    name = PurePosixPath(path).name.lower()
    stem = name.split(".", 1)[0]
    return name in lowered or (len(stem) >= 4 and re.search(rf"(?<![\w]){re.escape(stem)}(?![\w])", lowered) is not None)


def order(index: Index, top: list[Fused], text: str) -> list[Fused]:
    """``top`` (best first) regrouped files first (see the module's doc); scores unchanged."""
    if len(top) < 2:
        return list(top)
    info: dict[int, Any] = index.units([c.uid for c in top], ("uid", "path", "is_test", "kind"))
    lowered = text.lower()
    prior: dict[str, float] = {}
    files: dict[str, list[Fused]] = {}
    for c in top:
        u = info.get(c.uid)
        path = u.path if u is not None else ""
        if path not in prior:
            aux = u is not None and (bool(u.is_test) or auxiliary(path)) and not named(path, lowered)
            prior[path] = P.AUX_PRIOR if aux else 1.0
        files.setdefault(path, []).append(c)
    def file_score(path: str) -> float:
        return prior[path] * max(c.fused for c in files[path])

    ranked = sorted(files, key=lambda p: -file_score(p))  # stable: ties keep the pool's file order
    per = max(1, int(P.PER_FILE))
    best = files[ranked[0]]
    routine = [(u := info.get(c.uid)) is not None and u.kind in FUNCTION_KINDS for c in best]
    best = [c for c, r in zip(best, routine) if r] + [c for c, r in zip(best, routine) if not r]  # functions first, each in score order
    first = best[:per] + [files[p][0] for p in ranked[1:]]
    taken = {id(c) for c in first}
    return first + [c for c in top if id(c) not in taken]
