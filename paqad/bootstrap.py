"""What would improve retrieval on this repository, computed from what the build saw.

The advice ``paqad bootstrap`` prints after indexing, not guessed: the share of declarations
without a description, files whose language has no grammar (indexed as whole-file text), code
files in which no declaration was found, every file left out grouped by the filter and reason
that dropped it (the same decisions as ``paqad rag explain``), and the commands that act on each.
The CLI only renders an :class:`Advice`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypedDict, final

from paqad import describe
from paqad.config import Config
from paqad.describe.ops import Coverage
from paqad.eligibility import collect
from paqad.hooks import gitshims as githooks
from paqad.index.reader import Index
from paqad.index.sidecar import SIDECAR_NAME
from paqad.index.writing.build import BuildReport
from paqad.jsontypes import JSONObject

#: Examples of paths shown per skip reason.
EXAMPLES = 3
#: Skip reasons listed per filter (the rest are summed as "other reasons").
MAX_REASONS = 12
#: Below this described share, describing units is suggested.
DESCRIBE_SUGGESTED_BELOW = 0.5
#: Data and prose languages: whole-file or section units are their normal shape.
_NOT_CODE = frozenset({"markdown", "rst", "yaml", "json", "dockerfile", "make", "just", "text"})
_DETAIL = re.compile(r"\s*\([^)]*\)|;.*$")


@dataclass
class IndexSummary:
    """The index just built: how it was built, its files, units and files per language."""

    mode: str
    files: int
    units: int
    languages: dict[str, int]


class Examples(TypedDict):
    """How many files share a key (a language, a reason), and the first few of them."""

    files: int
    examples: list[str]


class SkipGroup(TypedDict):
    """The files one filter left out, by reason."""

    files: int
    reasons: dict[str, Examples]


class Step(TypedDict):
    """A command that acts on the advice, and why."""

    command: str
    why: str


@final
class Broken(TypedDict):
    """The description coverage when the sidecar cannot be read."""

    error: str


@dataclass
class Advice:
    """The bootstrap report (``paqad bootstrap --json`` prints ``to_dict()`` plus the build report)."""

    index: IndexSummary
    descriptions: Coverage | Broken
    languages_without_grammar: dict[str, Examples]
    files_without_declarations: dict[str, Examples]
    skipped: dict[str, SkipGroup]
    embedding_provider: str
    git_hooks_installed: bool
    next: list[Step] = field(default_factory=list)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def advise(root: Path, cfg: Config, report: BuildReport, index: Index | None = None) -> Advice:
    """The advice for the index at ``root`` that was just built or updated (``report``)."""
    index = index if index is not None else Index.shared(root)
    index.refresh()
    decisions = collect.Eligibility(root, cfg.rag_max_file_size).collect()
    advice = Advice(
        index=IndexSummary(report.mode, report.files_indexed, index.meta().n_units, index.file_languages()),
        descriptions=_descriptions(index),
        languages_without_grammar=_without_grammar(decisions.kept),
        files_without_declarations=_without_declarations(index),
        skipped=_skipped(decisions.dropped),
        embedding_provider=cfg.rag_embedding_provider,
        git_hooks_installed=_hooks_installed(root),
    )
    advice.next = _next_commands(advice, decisions.dropped)
    return advice


def _descriptions(index: Index) -> Coverage | Broken:
    try:
        return describe.status(index)
    except Exception as exc:  # noqa: BLE001 - a broken sidecar is advice, not a failed bootstrap
        return {"error": str(exc)}


def _examples(out: dict[str, Examples], key: str, path: str) -> None:
    entry = out.setdefault(key, {"files": 0, "examples": []})
    entry["files"] += 1
    if len(entry["examples"]) < EXAMPLES:
        entry["examples"].append(path)


def _without_grammar(kept: list[collect.Decision]) -> dict[str, Examples]:
    """Indexed files whose stack pack has no parser beyond plain text, by language."""
    out: dict[str, Examples] = {}
    for d in kept:
        if d.rule is not None and d.rule.parser == "text":
            _examples(out, d.rule.language, d.path)
    return out


def _without_declarations(index: Index) -> dict[str, Examples]:
    """Code files indexed only as module/document units (no declaration found), by language."""
    out: dict[str, Examples] = {}
    for path, language in index.files_without_declarations().items():
        if language not in _NOT_CODE:
            _examples(out, language, path)
    return out


def reason_label(reason: str) -> str:
    """A reason without its per-file detail: ``secrets file (matches .env); …`` → ``secrets file``."""
    return _DETAIL.sub("", reason).strip() or reason


def _skipped(dropped: list[collect.Decision]) -> dict[str, SkipGroup]:
    """Files left out, by filter (type, hard, ignore, check) and reason, with a few examples."""
    out: dict[str, SkipGroup] = {}
    for d in dropped:
        group = out.setdefault(d.filter or "unknown", {"files": 0, "reasons": {}})
        group["files"] += 1
        _examples(group["reasons"], reason_label(d.reason), d.path)
    for group in out.values():
        ranked = sorted(group["reasons"].items(), key=lambda kv: (-kv[1]["files"], kv[0]))
        group["reasons"] = dict(ranked[:MAX_REASONS])
        rest = sum(v["files"] for _, v in ranked[MAX_REASONS:])
        if rest:
            group["reasons"]["other reasons"] = {"files": rest, "examples": []}
    return out


def _hooks_installed(root: Path) -> bool:
    try:
        return any(h["state"] == "installed" for h in githooks.status(root)["hooks"])
    except Exception:  # noqa: BLE001 - outside git, or an unreadable hooks folder
        return False


def _next_commands(advice: Advice, dropped: list[collect.Decision]) -> list[Step]:
    """Concrete commands, each with the finding that calls for it."""
    out: list[Step] = []
    desc = advice.descriptions
    if "error" in desc:
        out.append({"why": f"the descriptions sidecar is unusable: {desc['error']}", "command": f"fix or delete {SIDECAR_NAME}"})
    elif desc["total"] and desc["share"] < DESCRIBE_SUGGESTED_BELOW:
        out.append({
            "why": f"{desc['pending']} of {desc['total']} declarations have no description ({1 - desc['share']:.0%})",
            "command": "paqad describe pending --limit 20 --json   # then: paqad describe put ID TEXT --hash H; paqad rag update",
        })
    if "error" not in desc and desc["stale"]:
        out.append({"why": f"{desc['stale']} descriptions no longer match their code", "command": "paqad describe pending --json   # stale ones are marked"})
    for language, info in advice.languages_without_grammar.items():
        out.append({"why": f"{info['files']} {language} files are indexed as plain text (no grammar)", "command": "paqad stackpack list   # a pack with a tree-sitter grammar splits them into declarations"})
    big = [d for d in dropped if d.filter == "check" and d.reason.startswith("larger than")]
    if big:
        out.append({"why": f"{len(big)} files are larger than rag_max_file_size", "command": f"paqad rag explain {big[0].path}   # raise the cap: paqad config set rag_max_file_size BYTES"})
    types = Counter(reason_label(d.reason) for d in dropped if d.filter == "type")
    for label, n in types.most_common(3):
        if n >= 5:
            out.append({"why": f"{n} files: {label}", "command": "paqad stackpack new NAME   # teach paqad this file type"})
    if advice.embedding_provider == "none":
        out.append({"why": "retrieval is lexical only (questions must share words with the code)", "command": "paqad rag init --provider local   # optional: offline vectors for meaning"})
    if not advice.git_hooks_installed:
        out.append({"why": "the index is refreshed only when you run paqad", "command": "paqad hooks install"})
    return out
