"""``paqad bootstrap``: index the repository, then say what would improve retrieval on it.

The advice is computed from what the build saw, not guessed: the share of declarations without
a description, files whose language has no grammar (indexed as whole-file text), code files in
which no declaration was found, every file left out grouped by the filter and reason that
dropped it (the same decisions as ``paqad rag explain``), and the commands that act on each.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import click

from paqad import config as config_mod, describe, workspace
from paqad.eligibility import collect
from paqad.hooks import gitshims as githooks
from paqad.cli.common import AppContext, emit_json
from paqad.config import Config
from paqad.index import build, store

#: Examples of paths shown per skip reason.
EXAMPLES = 3
#: Skip reasons listed per filter (the rest are summed as "other reasons").
MAX_REASONS = 12
#: Below this described share, describing units is suggested.
DESCRIBE_SUGGESTED_BELOW = 0.5
#: Data and prose languages: whole-file or section units are their normal shape.
_NOT_CODE = frozenset({"markdown", "rst", "yaml", "json", "dockerfile", "make", "just", "text"})
_DETAIL = re.compile(r"\s*\([^)]*\)|;.*$")


def advise(root: Path, cfg: Config, report: build.BuildReport) -> dict:
    """The bootstrap report for an index that was just built or updated."""
    elig = collect.Eligibility(root, cfg["rag_max_file_size"])
    decisions = elig.collect()
    data = {
        "index": {"mode": report.mode, "files": report.files_indexed, "units": _unit_count(root), "languages": _languages(root)},
        "descriptions": _descriptions(root),
        "languages_without_grammar": _without_grammar(decisions.kept),
        "files_without_declarations": _without_declarations(root),
        "skipped": _skipped(decisions.dropped),
        "embedding_provider": cfg["rag_embedding_provider"],
        "git_hooks_installed": _hooks_installed(root),
    }
    data["next"] = _next_commands(data, decisions.dropped)
    return data


def _unit_count(root: Path) -> int:
    con = store.open_current(root, readonly=True)
    try:
        return int(store.get_meta(con).get("n_units", "0"))
    finally:
        con.close()


def _languages(root: Path) -> dict[str, int]:
    con = store.open_current(root, readonly=True)
    try:
        return dict(con.execute("SELECT language, COUNT(*) FROM files GROUP BY language ORDER BY 2 DESC, 1").fetchall())
    finally:
        con.close()


def _descriptions(root: Path) -> dict:
    try:
        return describe.status(root)
    except Exception as exc:  # noqa: BLE001 - a broken sidecar is advice, not a failed bootstrap
        return {"error": str(exc)}


def _without_grammar(kept: list[collect.Decision]) -> dict[str, dict]:
    """Indexed files whose stack pack has no parser beyond plain text, by language."""
    out: dict[str, dict] = {}
    for d in kept:
        if d.rule is not None and d.rule.parser == "text":
            entry = out.setdefault(d.rule.language, {"files": 0, "examples": []})
            entry["files"] += 1
            if len(entry["examples"]) < EXAMPLES:
                entry["examples"].append(d.path)
    return out


def _without_declarations(root: Path) -> dict[str, dict]:
    """Code files indexed only as module/document units (no declaration found), by language."""
    con = store.open_current(root, readonly=True)
    try:
        rows = con.execute(
            "SELECT path, language FROM units GROUP BY path HAVING SUM(kind NOT IN ('module', 'document')) = 0 ORDER BY path"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, dict] = {}
    for path, language in rows:
        if language in _NOT_CODE:
            continue
        entry = out.setdefault(language, {"files": 0, "examples": []})
        entry["files"] += 1
        if len(entry["examples"]) < EXAMPLES:
            entry["examples"].append(path)
    return out


def reason_label(reason: str) -> str:
    """A reason without its per-file detail: ``secrets file (matches .env); …`` → ``secrets file``."""
    return _DETAIL.sub("", reason).strip() or reason


def _skipped(dropped: list[collect.Decision]) -> dict[str, dict]:
    """Files left out, by filter (type, hard, ignore, check) and reason, with a few examples."""
    out: dict[str, dict] = {}
    for d in dropped:
        group = out.setdefault(d.filter or "unknown", {"files": 0, "reasons": {}})
        group["files"] += 1
        entry = group["reasons"].setdefault(reason_label(d.reason), {"files": 0, "examples": []})
        entry["files"] += 1
        if len(entry["examples"]) < EXAMPLES:
            entry["examples"].append(d.path)
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


def _next_commands(data: dict, dropped: list[collect.Decision]) -> list[dict[str, str]]:
    """Concrete commands, each with the finding that calls for it."""
    out: list[dict[str, str]] = []
    desc = data["descriptions"]
    if "error" in desc:
        out.append({"why": f"the descriptions sidecar is unusable: {desc['error']}", "command": f"fix or delete {describe.SIDECAR_NAME}"})
    elif desc["total"] and desc["share"] < DESCRIBE_SUGGESTED_BELOW:
        out.append({
            "why": f"{desc['pending']} of {desc['total']} declarations have no description ({1 - desc['share']:.0%})",
            "command": "paqad describe pending --limit 20 --json   # then: paqad describe put ID TEXT --hash H; paqad rag update",
        })
    if desc.get("stale"):
        out.append({"why": f"{desc['stale']} descriptions no longer match their code", "command": "paqad describe pending --json   # stale ones are marked"})
    for language, info in data["languages_without_grammar"].items():
        out.append({"why": f"{info['files']} {language} files are indexed as plain text (no grammar)", "command": "paqad stackpack list   # a pack with a tree-sitter grammar splits them into declarations"})
    big = [d for d in dropped if d.filter == "check" and d.reason.startswith("larger than")]
    if big:
        out.append({"why": f"{len(big)} files are larger than rag_max_file_size", "command": f"paqad rag explain {big[0].path}   # raise the cap: paqad config set rag_max_file_size BYTES"})
    types = Counter(reason_label(d.reason) for d in dropped if d.filter == "type")
    for label, n in types.most_common(3):
        if n >= 5:
            out.append({"why": f"{n} files: {label}", "command": "paqad stackpack new NAME   # teach paqad this file type"})
    if data["embedding_provider"] == "none":
        out.append({"why": "retrieval is lexical only (questions must share words with the code)", "command": "paqad rag init --provider local   # optional: offline vectors for meaning"})
    if not data["git_hooks_installed"]:
        out.append({"why": "the index is refreshed only when you run paqad", "command": "paqad hooks install"})
    return out


def _build(root: Path, cfg: Config) -> build.BuildReport:
    workspace.ensure(root)
    config_mod.set_value(root, "rag_enabled", "true")
    return build.update(root, cfg)


@click.command("bootstrap")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def bootstrap(app: AppContext, as_json: bool) -> None:
    """Index this repository (switching retrieval on), then say what would improve retrieval here.

    Example: paqad bootstrap --json
    """
    root = app.root()
    cfg = app.config()
    report = _build(root, cfg)
    data = advise(root, cfg, report)
    data["build"] = dataclasses.asdict(report)
    if as_json:
        emit_json(data)
    else:
        click.echo(render(data))


def render(data: dict) -> str:
    idx, desc = data["index"], data["descriptions"]
    lines = [f"Indexed {idx['files']} files, {idx['units']} units ({idx['mode']}): " + ", ".join(f"{k} {v}" for k, v in idx["languages"].items())]
    if "error" not in desc:
        lines.append(f"Descriptions: {desc['described']}/{desc['total']} declarations described ({desc['share']:.0%}), {desc['stale']} stale")
    for language, info in data["languages_without_grammar"].items():
        lines.append(f"No grammar: {language}, {info['files']} files indexed as text (e.g. {', '.join(info['examples'])})")
    for language, info in data["files_without_declarations"].items():
        lines.append(f"No declarations found: {info['files']} {language} files (e.g. {', '.join(info['examples'])})")
    for name, group in data["skipped"].items():
        lines.append(f"Skipped by the {name} filter: {group['files']} files")
        for label, entry in group["reasons"].items():
            example = f" (e.g. {', '.join(entry['examples'])})" if entry["examples"] else ""
            lines.append(f"  {entry['files']:5d}  {label}{example}")
    if data["next"]:
        lines.append("Next:")
        lines.extend(f"  {n['command']}\n      {n['why']}" for n in data["next"])
    return "\n".join(lines)
