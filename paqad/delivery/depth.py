"""Adaptive depth: how many passages to ask search for, from the request and the breadth of the change.

Depths: ``none`` (no retrieval), ``standard`` (``rag_top_n``), ``deep`` (3 × ``rag_top_n``).

From the prompt, a trivial prompt gets ``none``. The rule, kept small on purpose:
a prompt is trivial when, lower-cased and stripped of punctuation, it has at most
``TRIVIAL_MAX_WORDS`` words and every word is in ``ACKNOWLEDGEMENTS`` (``"thanks"``, ``"ok go on"``,
``"yes please"``), or it is empty. Anything else, however short (``"fix login"``), is a request.

From the working set, a module is the first two parts of a file's folder (``src/app/views/x.py``
→ ``src/app``, ``shop/x.py`` → ``shop``; top-level files share the module ``.``). 0 or 1 file → single file; several files in one module →
single module; 2 or 3 modules → multi-module: all ``standard``. 4 or more modules → system-wide →
``deep``.

Step-up: when fewer than ``MIN_CONFIDENT`` confident passages came back (the low-confidence ones
after them, ``fusion.TAIL_MIN``'s tail, do not count), go one depth deeper (standard → deep); deep
stays deep. The caller does not ask after a silent gate (``refresh.search_at_depth``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

DEPTHS = ("none", "standard", "deep")
DEEP_FACTOR = 3
MIN_CONFIDENT = 3
SYSTEM_WIDE_MODULES = 4
TRIVIAL_MAX_WORDS = 4
ACKNOWLEDGEMENTS = frozenset(
    """
    thanks thank thx ty you cheers great nice good cool perfect awesome ok okay k kk sure yes yep yeah y
    no nope go on continue proceed please pls done lgtm right fine alright got it sounds
    """.split()
)
_WORD = re.compile(r"[a-z']+|\S")


@dataclass(frozen=True)
class Depth:
    """The depth chosen, how many passages it asks for, and why."""

    level: str  # none | standard | deep
    top_n: int
    reason: str
    scope: str | None = None  # single-file | single-module | multi-module | system-wide
    modules: int | None = None

    def to_dict(self) -> JSONObject:
        return asdict(self)


def is_trivial(prompt: str) -> bool:
    """True for an acknowledgement that needs no retrieval (see the module docstring)."""
    words = [w.strip("'") for w in _WORD.findall(prompt.lower()) if w[0].isalpha()]
    return len(words) <= TRIVIAL_MAX_WORDS and all(w in ACKNOWLEDGEMENTS for w in words)


def module_of(path: str) -> str:
    """The first two parts of the file's folder (``src/app/views/x.py`` → ``src/app``); ``.`` at the top."""
    folders = [p for p in path.replace("\\", "/").split("/") if p][:-1]
    return "/".join(folders[:2]) or "."


def scope_of(paths: Iterable[str]) -> tuple[str, int]:
    """(scope, number of modules) for a working set."""
    files = sorted(set(paths))
    modules = {module_of(p) for p in files}
    if len(files) <= 1:
        return "single-file", len(modules)
    if len(modules) == 1:
        return "single-module", 1
    if len(modules) < SYSTEM_WIDE_MODULES:
        return "multi-module", len(modules)
    return "system-wide", len(modules)


def for_prompt(prompt: str, top_n: int) -> Depth:
    if is_trivial(prompt):
        return Depth("none", 0, "trivial prompt (an acknowledgement): no retrieval")
    return Depth("standard", top_n, "a request in the prompt")


def for_working_set(paths: Iterable[str], top_n: int) -> Depth:
    scope, modules = scope_of(paths)
    if scope == "system-wide":
        return Depth("deep", top_n * DEEP_FACTOR, f"working set spans {modules} modules (system-wide)", scope, modules)
    return Depth("standard", top_n, f"working set is {scope} ({modules} module{'s' if modules != 1 else ''})", scope, modules)


def choose(prompt: str | None, paths: Iterable[str], top_n: int) -> Depth:
    """Depth for a refresh: the prompt decides ``none``; otherwise the breadth of the change may deepen it."""
    paths = list(paths)
    if prompt is not None:
        asked = for_prompt(prompt, top_n)
        if asked.level == "none" or not paths:
            return asked
        breadth = for_working_set(paths, top_n)
        if breadth.level == "deep":
            return Depth("deep", breadth.top_n, f"a request in the prompt; {breadth.reason}", breadth.scope, breadth.modules)
        return Depth("standard", top_n, f"a request in the prompt; {breadth.reason}", breadth.scope, breadth.modules)
    return for_working_set(paths, top_n)


def step_up(depth: Depth, confident: int, top_n: int) -> Depth | None:
    """One depth deeper when fewer than ``MIN_CONFIDENT`` confident passages came back; None when no step applies."""
    if depth.level != "standard" or confident >= MIN_CONFIDENT:
        return None
    return Depth("deep", top_n * DEEP_FACTOR, f"{depth.reason}; stepped up: only {confident} confident passage(s) at standard", depth.scope, depth.modules)
