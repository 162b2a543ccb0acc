"""``SearchRequest``: one question and every parameter of its search, built in one place.

Every door (``rag search``/``probe``, the prompt hook's refresh, the JSON-lines agent and MCP,
``rag eval``) turns the repository's settings into search parameters through
:meth:`SearchRequest.from_settings`, so the same settings give the same search whichever door
asks. Before it existed each door assembled the pipeline's arguments itself, and they drifted
(the agent door never reranked; ``rag eval`` searched with the default floor).

This module imports nothing heavy: the prompt path builds a request before the search stack loads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.search import uptake_prior
from paqad.search.params import SearchParams
from paqad.search.rerank import RerankConfig
from paqad.settings import SEARCH_BUDGET_CHARS, SETTINGS

if TYPE_CHECKING:
    from paqad.config import Config
    from paqad.jsontypes import JSONObject

DEFAULT_THRESHOLD = float(SETTINGS["rag_similarity_threshold"].default)
DEFAULT_RELIEF_FLOOR = float(SETTINGS["rag_relief_floor"].default)
#: Under a deadline (the prompt hook's), reranking stops this long before it, leaving time to deliver,
RERANK_RESERVE_S = 0.3
#: and the query embedding (a model load in a fresh process) gives up this long before it.
EMBED_RESERVE_S = 0.3


@dataclass(frozen=True)
class SearchRequest:
    """What ``paqad.search.pipeline.run`` needs to answer ``query``.

    ``gate`` applies the evidence tests and the confidence floor (``threshold``, ``relief_floor``);
    without it this is ``probe``. ``rerank`` reorders the top fused candidates (None or mode
    ``off``: no reranking). ``embed_deadline`` (``time.monotonic()``) bounds the query embedding.
    """

    query: str
    top_n: int = int(SETTINGS["rag_top_n"].default)
    source_chars: int = int(SETTINGS["rag_source_chars"].default)
    budget_chars: int = SEARCH_BUDGET_CHARS
    gate: bool = True
    threshold: float = DEFAULT_THRESHOLD
    relief_floor: float = DEFAULT_RELIEF_FLOOR
    rerank: RerankConfig | None = field(default=None, compare=False)
    embed_deadline: float | None = None
    params: SearchParams = SearchParams()  # overrides of the stages' tuned constants (paqad.search.params); none by default
    file_prior: tuple[tuple[str, float], ...] = ()  # (path, factor) learned from uptake (paqad.search.uptake_prior); none by default

    @classmethod
    def from_settings(
        cls,
        settings: Config,
        root: Path,
        query: str,
        *,
        top_n: int | None = None,
        source_chars: int | None = None,
        budget_chars: int | None = None,
        gate: bool = True,
        rerank: str | None = None,
        deadline: float | None = None,
        params: SearchParams | None = None,
        file_prior: tuple[tuple[str, float], ...] = (),
    ) -> SearchRequest:
        """The request the repository's settings make for ``query``; a ``None`` override keeps the setting.

        ``rerank`` is a mode (``off``/``local``/``cohere``) for this query only. ``deadline`` is the
        caller's own (the prompt hook's): reranking and the query embedding each keep a reserve before it.
        """
        return cls(
            query=query,
            top_n=settings.rag_top_n if top_n is None else top_n,
            source_chars=settings.rag_source_chars if source_chars is None else source_chars,
            budget_chars=SEARCH_BUDGET_CHARS if budget_chars is None else budget_chars,
            gate=gate,
            threshold=settings.rag_similarity_threshold,
            relief_floor=settings.rag_relief_floor,
            rerank=RerankConfig(
                root=root,
                mode=rerank or settings.rag_rerank,
                pool=settings.rag_rerank_pool,
                model=settings.rag_rerank_model,
                base_url=settings.rag_rerank_base_url,
                timeout_s=settings.rag_rerank_timeout,
                deadline=None if deadline is None else deadline - RERANK_RESERVE_S,
            ),
            embed_deadline=None if deadline is None else deadline - EMBED_RESERVE_S,
            params=params or SearchParams(),
            file_prior=file_prior or (uptake_prior.load(root) if settings.rag_uptake_prior else ()),
        )

    # ---- across the service's socket (paqad.serve) ----------------------------------------------

    def to_wire(self) -> JSONObject:
        """This request as JSON for the service; deadlines become seconds left, since a
        ``time.monotonic()`` instant means nothing in another process."""
        now = time.monotonic()
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("rerank", "embed_deadline", "params")}
        if self.params.overrides:
            data["params"] = [list(kv) for kv in self.params.overrides]
        data["embed_left_s"] = None if self.embed_deadline is None else self.embed_deadline - now
        if self.rerank is not None:
            rr = {f.name: getattr(self.rerank, f.name) for f in fields(self.rerank) if f.name not in ("root", "deadline")}
            data["rerank"] = {**rr, "root": str(self.rerank.root), "left_s": None if self.rerank.deadline is None else self.rerank.deadline - now}
        return data

    @classmethod
    def from_wire(cls, data: dict) -> SearchRequest:
        """The request :meth:`to_wire` described, its deadlines counted from now."""
        now = time.monotonic()
        data = dict(data)
        embed_left, rr = data.pop("embed_left_s", None), data.pop("rerank", None)
        params = SearchParams(tuple((str(k), v) for k, v in data.pop("params", [])))
        data["file_prior"] = tuple((str(p), float(f)) for p, f in data.get("file_prior", ()))
        rerank = None
        if rr is not None:
            rr = dict(rr)
            left = rr.pop("left_s", None)
            rerank = RerankConfig(**{**rr, "root": Path(rr["root"]), "deadline": None if left is None else now + left})
        return cls(**data, rerank=rerank, embed_deadline=None if embed_left is None else now + embed_left, params=params)
