"""The tuned constants of the search stages, overridable per request (issue 32, item 3).

Each tuned constant is still a module constant (its value and the reason for it sit beside the
code it steers), but the stages read it through their module's :class:`Stage` accessor ``P``
(``P.COVERAGE_BAR``), which returns the value a :class:`SearchParams` carried by the
``SearchRequest`` in force gives it, else the module's. So a benchmark changes a constant for one
request (``SearchRequest(..., params=SearchParams.of({"evidence.COVERAGE_BAR": 0.0}))``) and no
module global is set. ``KNOBS`` names every overridable constant with its *neutral* value, the
one that turns its effect off (0 for a boost, 1.0 for a multiplier, False for a switch, the bar
that lets everything through); ``benchmarks/ablate.py`` sets them one group at a time.

This module imports nothing: every search module imports it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

Value = float | int | bool


@dataclass(frozen=True)
class Knob:
    neutral: Value  # the value that turns the constant's effect off
    means: str  # what neutral means, in words


_OFF = "switch off"
_NO_BOOST = "no lift"
_NO_PRIOR = "no demotion"

#: Every constant a request may override: "module.NAME" -> its neutral value. Only query-time
#: constants are here; index-time ones (``paqad.index``) are not. The vector side's (``fusion.*``)
#: act only when the index has vectors: ``benchmarks ablate --model`` measures them.
KNOBS: dict[str, Knob] = {
    # query analysis
    "query.UBIQUITY": Knob(1.0, "no term is ubiquitous by share"),
    "query.MIN_UBIQUITOUS_DF": Knob(0, "no document-frequency floor under ubiquity"),
    "query.SCORE_CUTOFF": Knob(1.0, "every present term scored"),
    "query.MAX_SCORED_TERMS": Knob(100_000, "no cap on scored terms"),
    "query.DERIVE": Knob(False, "no derivational forms of absent words"),
    "query.VARIANTS": Knob(False, "no variants of present words"),
    "query.LONG_QUERY_WORDS": Knob(100_000, "variants for every query length"),
    "query.DROP_ABSENT_FUNCTION_WORDS": Knob(False, "absent function words count as absent"),
    # evidence gate
    "evidence.COVERAGE_BAR": Knob(0.0, "coverage test passes always"),
    "evidence.CONCENTRATION_BAR": Knob(0.0, "concentration test passes always"),
    "evidence.ABSENCE_FULL_WEIGHT_UNITS": Knob(1, "absent words weigh fully in every repository"),
    "evidence.ONE_UNKNOWN_WORD": Knob(False, _OFF),
    "evidence.LONG_QUERY_TERMS": Knob(100_000, "no query is long: the short-query bars for all"),
    "evidence.NAMED_ENABLED": Knob(False, _OFF),
    "evidence.NAMED_WEIGHT_CAP": Knob(False, "names weigh their own idf"),
    "evidence.NAMED_MAX_TERMS": Knob(100_000, "names count in queries of any length"),
    "evidence.EXACT_NAMES": Knob(False, _OFF),
    # ranking signals
    "ranking.ENABLED": Knob(False, "no ranking signal at all"),
    "ranking.DEFINITION_BOOST": Knob(0.0, _NO_BOOST),
    "ranking.DEFINITION_STEM_BONUS": Knob(0.0, _NO_BOOST),
    "ranking.EMBEDDED_SCALE": Knob(0.0, "no lift for identifiers inside a sentence"),
    "ranking.PART_ONE_BONUS": Knob(0.0, _NO_BOOST),
    "ranking.CONTINUATION_SCALE": Knob(1.0, "later parts lifted as the head"),
    "ranking.STEM_FILE_SCALE": Knob(0.0, "no file named after the symbol looked up"),
    "ranking.PATH_BOOST": Knob(0.0, _NO_BOOST),
    "ranking.PATH_MIN_SHARE": Knob(0.0, "any share of path words lifts"),
    "ranking.COHERENCE_BOOST": Knob(0.0, _NO_BOOST),
    "ranking.DIVERSITY": Knob(1.0, "no diversity"),
    "ranking.TOP_FILE_FREE": Knob(0, "diversity from the best file's second unit"),
    "ranking.CENTRAL_BOOST": Knob(0.0, _NO_BOOST),
    "ranking.TYPE_BONUS": Knob(0.0, _NO_BOOST),
    "ranking.OLDER_COPY_PRIOR": Knob(1.0, _NO_PRIOR),
    "ranking.TITLE_SCALE": Knob(0.0, _NO_BOOST),
    "ranking.TITLE_PATHS": Knob(False, "paths matched against the whole report"),
    "ranking.TITLE_SPREAD": Knob(0, "the title lift never shared"),
    "paths.COMPOUND_PATHS": Knob(False, _OFF),
    "paths.PREFIX_MIN": Knob(0, "no abbreviations"),
    "reports.POINTER_BOOST": Knob(0.0, _NO_BOOST),
    "reports.CALLEE_BOOST": Knob(0.0, _NO_BOOST),
    "shape.REPORT_CALLS": Knob(False, "no calls read from a report"),
    "shape.TOP_FILE_MIN_WORDS": Knob(100_000, "no query is a report"),
    "pipeline.DROP_CONTAINERS": Knob(False, _OFF),
    "crosslingual.ENABLED": Knob(False, "a Chinese question searched as written"),
    "crosslingual.USED_SENSE": Knob(False, "a Chinese word read in its first sense only"),
    # an issue text delivered files first (issue 32, item 5)
    "issues.ENABLED": Knob(False, "an issue text is delivered as any report"),
    "issues.MIN_LINES": Knob(100_000, "only traces, code blocks and report phrases make an issue"),
    "issues.PER_FILE": Knob(1, "one unit of each file before any second one"),
    "issues.AUX_PRIOR": Knob(1.0, _NO_PRIOR),
    "issues.POOL": Knob(0, "the pipeline's own pool"),
    # a file prior learned from uptake (issue 35, item 2): acts only when a request carries one
    "uptake_prior.STRENGTH": Knob(0.0, "every file's factor 1"),
    "uptake_prior.FLOOR": Knob(1.0, "no file demoted: lifts only"),
    # the vector side: blend, vector evidence, calibrated score, delivery floor
    "fusion.BLEND_LEXICAL": Knob(1.0, "the lexical order alone (vectors only add candidates)"),
    "fusion.WEAK_COVERAGE": Knob(0.0, "one blend whatever the lexical coverage"),
    "fusion.BLEND_LEXICAL_REPORT": Knob(0.7, "a report blended as a question is"),
    "fusion.VECTOR_TOP_BAR": Knob(2.0, "no answer on vector evidence (MiniLM's bars)"),
    "fusion.VECTOR_MARGIN_BAR": Knob(0.0, "no margin over the corpus median"),
    "fusion.VECTOR_PARTIAL_BAR": Knob(1.0, "a partly matched query needs the full top bar"),
    "fusion.VECTOR_VETO_BAR": Knob(-1.0, "the vectors never overrule a lexical pass"),
    "fusion.LEXICAL_CONF_GAIN": Knob(0.0, "no gain for clearing the bars"),
    "fusion.BEHIND_SLOPE": Knob(0.0, "every candidate scores the query's confidence"),
    "fusion.TAIL_MIN": Knob(0, "no low-confidence tail after a confident answer"),
    "fusion.RELIEF_MAX": Knob(1, "one passage for an answer on vector evidence"),
}


@dataclass(frozen=True)
class SearchParams:
    """Overrides of ``KNOBS`` for one request: ``(("module.NAME", value), ...)``; empty = the shipped constants."""

    overrides: tuple[tuple[str, Value], ...] = ()

    def __post_init__(self) -> None:
        unknown = [k for k, _ in self.overrides if k not in KNOBS]
        if unknown:
            raise ValueError(f"not a tuned search constant: {', '.join(unknown)} (paqad.search.params.KNOBS)")

    @classmethod
    def of(cls, values: Mapping[str, Value]) -> SearchParams:
        return cls(tuple(sorted(values.items())))

    @classmethod
    def neutral(cls, keys: list[str]) -> SearchParams:
        """Every constant of ``keys`` at its neutral value: their effect removed."""
        return cls.of({k: KNOBS[k].neutral for k in keys})

    def as_dict(self) -> dict[str, Value]:
        return dict(self.overrides)


_ACTIVE: ContextVar[dict[str, Value]] = ContextVar("paqad_search_params", default={})  # noqa: B039 - never mutated


@contextmanager
def using(params: SearchParams) -> Iterator[None]:
    """``params`` in force for the stages run inside (``pipeline.run`` enters it per request)."""
    token = _ACTIVE.set(params.as_dict())
    try:
        yield
    finally:
        _ACTIVE.reset(token)


class Stage:
    """A module's constants as the request in force sees them: ``P = Stage(__name__, globals())``."""

    __slots__ = ("_prefix", "_globals")

    def __init__(self, module: str, namespace: dict[str, Any]) -> None:
        self._prefix = module.rsplit(".", 1)[-1] + "."
        self._globals = namespace

    def __getattribute__(self, name: str) -> Any:
        # Not ``__getattr__``: that runs only after the ordinary lookup failed, and the failure built
        # an AttributeError with its message each time, 5x the CPU of this (a query reads ~160 constants).
        if name[0] == "_":
            return _get(self, name)
        over = _ACTIVE.get()
        if over:
            key = _get(self, "_prefix") + name
            if key in over:
                return over[key]
        return _get(self, "_globals")[name]


_get = object.__getattribute__
