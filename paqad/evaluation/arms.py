"""The two arms: the agent's grep loop (retrieval off) and what paqad's prompt hook delivers (on).

Both answer with files in rank order (scored per file), whether they stayed silent, and the
characters the agent would read.

**off** (``GrepLoop``, the loop ``benchmarks/score.py`` measures: the benchmark calls this one, so
the package stands alone and there is one definition): a Python scan, not ``git grep``, over exactly the files paqad indexes, with the masked
docstrings cut out of them too, so neither arm can copy the answer. One case-insensitive search per
content word of the question; files ranked by distinct words hit, then by matching lines, then
path; silent only when no word occurs anywhere. Characters: what ``grep -n WORD`` prints
(``path:line:text``) for the matching lines of the top ``GREP_PRINT_FILES`` files; an agent
that read more would pay more, so this flatters the off arm.

**on** (``PaqadArm``): what ``refresh.refresh`` does for a prompt, without syncing or writing
files: the depth for a prompt (standard ``rag_top_n``), ``pipeline.run`` on the masked copy as
``refresh._search`` calls it, one step up to deep when fewer than ``depth.MIN_CONFIDENT`` passages
are confident (``refresh.search_at_depth``), ``context.select`` with the configured threshold and
floor (spans read from the live files, so a delivered docstring is counted, against paqad), and
the hook's rendering within the hosts' 10,000-character limit. Silent when the delivery is dark (its short "nothing
here answers this" note still counts as characters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.config import Config
from paqad.delivery import context, refresh
from paqad.delivery import depth as depth_mod
from paqad.evaluation.questions import content_words
from paqad.hooks.hosts.claude import LIMIT as HOOK_LIMIT
from paqad.index.reader import Index
from paqad.search import pipeline
from paqad.search.request import SearchRequest

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

GREP_PRINT_FILES = 10


@dataclass
class ArmAnswer:
    """One arm's answer to one question."""

    files: list[str]
    silent: bool
    chars: int
    detail: JSONObject = field(default_factory=dict)  # each arm's own facts, merged into its row

    def rank_of(self, accepted: list[str]) -> int | None:
        """1-based rank of the first accepted file, or None."""
        return next((i for i, f in enumerate(self.files, 1) if f in accepted), None)


class GrepLoop:
    """The off arm over ``files`` (path → text, masked where the docstrings were masked)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.lowered = {p: t.lower() for p, t in files.items()}

    def ask(self, question: str) -> ArmAnswer:
        words = content_words(question)
        ranked, hits = self.rank(words)
        chars = sum(hits[p][2] for p in ranked[:GREP_PRINT_FILES])
        return ArmAnswer(ranked, silent=not hits, chars=chars, detail={"words": words, "files_matched": len(ranked)})

    def rank(self, words: list[str]) -> tuple[list[str], dict[str, list[int]]]:
        """Files by distinct words hit, then matching lines, then path; and per file
        ``[distinct words, matching lines, characters grep -n prints]`` (benchmarks/score.py's
        grep retriever is this loop too)."""
        hits: dict[str, list[int]] = {}
        for word in words:
            for path, low in self.lowered.items():
                if word in low:  # whole-file test first; lines only for files that can match
                    lines, chars = self._grep_lines(path, word)
                    entry = hits.setdefault(path, [0, 0, 0])
                    entry[0], entry[1], entry[2] = entry[0] + 1, entry[1] + lines, entry[2] + chars
        return sorted(hits, key=lambda p: (-hits[p][0], -hits[p][1], p)), hits

    def _grep_lines(self, path: str, word: str) -> tuple[int, int]:
        """Matching lines and the characters ``grep -n`` prints for them (``path:n:line\\n``)."""
        n = chars = 0
        for i, line in enumerate(self.files[path].split("\n"), 1):
            if word in line.lower():
                n += 1
                chars += len(f"{path}:{i}:{line}\n")
        return n, chars


class PaqadArm:
    """The on arm: searches the index at ``index_root`` (the masked copy), reads spans from ``root``."""

    def __init__(self, root: Path, index_root: Path, cfg: Config) -> None:
        self.root, self.index_root, self.cfg = root, index_root, cfg
        self.top_n = cfg.rag_top_n
        self.threshold, self.floor = cfg.rag_similarity_threshold, cfg.rag_relief_floor

    def ask(self, question: str) -> ArmAnswer:
        chosen = depth_mod.for_prompt(question, self.top_n)
        if chosen.level == "none":
            delivery = context.Delivery("skipped", question, threshold=self.threshold, floor=self.floor, reason=chosen.reason)
            return self._answer(delivery, chosen.level, None)
        resp, steps = refresh.search_at_depth(self._search, question, chosen, self.top_n)
        reason = (resp.diagnosis or {}).get("reason") if not resp.answered else None
        delivery = context.select(self.root, question, resp.results, self.threshold, self.floor, reason=reason)
        return self._answer(delivery, steps[-1].level, resp)

    def _search(self, question: str, top_n: int) -> pipeline.SearchResponse:
        """The prompt hook's search (its settings, its request), on the masked copy of the index."""
        return pipeline.run(Index.shared(self.index_root), SearchRequest.from_settings(self.cfg, self.root, question, top_n=top_n))

    def _answer(self, delivery: context.Delivery, level: str, resp: pipeline.SearchResponse | None) -> ArmAnswer:
        files = list(dict.fromkeys(p.path for p in delivery.passages))
        text = context.render_for_hook(delivery, HOOK_LIMIT)
        detail: JSONObject = {"case": delivery.case, "depth": level, "passages": len(delivery.passages), "best_score": delivery.best_score}
        if resp is not None:
            detail["mode"] = resp.mode
        return ArmAnswer(files, silent=delivery.case in ("dark", "skipped"), chars=len(text), detail=detail)
