"""``paqad rag ...``: init, search, probe, status, update, rebuild, explain, clear."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import click

from paqad import config as config_mod, workspace
from paqad.cli import render
from paqad.cli.common import AppContext, emit_json, run_guarded
from paqad.errors import UsageError
from paqad.settings import SEARCH_BUDGET_CHARS

# The index builder (tree-sitter, the parsers) and the search stack (numpy) are imported inside the
# commands that use them: a fresh `rag search` or `rag update` process pays only for its own path.
if TYPE_CHECKING:
    from paqad import collect
    from paqad.index import build
    from paqad.search import pipeline

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("rag")
def rag_group() -> None:
    """Build and query the retrieval index of this repository.

    Example: paqad rag init && paqad rag search "where are retries scheduled"
    """


def _build_output(report: build.BuildReport, as_json: bool) -> None:
    if as_json:
        emit_json(dataclasses.asdict(report))
    else:
        click.echo(render.build_text(report))


def _with_progress(full: bool, root: Path, cfg: config_mod.Config) -> build.BuildReport:
    """Run a full build (``full``) or an update with the embedding progress bar on stderr (TTY only)."""
    from paqad.index import build, vectors

    bar = vectors.ProgressBar()
    try:
        return (build.build_full if full else build.update)(root, cfg, progress=bar)
    finally:
        bar.close()


@rag_group.command("init")
@click.option("--provider", type=click.Choice(["local", "none"]), default=None, help="Embedding provider: local (offline model) or none (lexical only); saved as rag_embedding_provider.")
@JSON_OPT
@click.pass_obj
def rag_init(app: AppContext, provider: str | None, as_json: bool) -> None:
    """Switch retrieval on for this repository and build the index (then embed it).

    Example: paqad rag init --provider local
    """
    root = app.root()
    run_guarded(workspace.ensure, root)
    run_guarded(config_mod.set_value, root, "rag_enabled", "true")
    if provider is not None:
        run_guarded(config_mod.set_value, root, "rag_embedding_provider", provider)
    report = run_guarded(_with_progress, True, root, app.config())
    _build_output(report, as_json)


@rag_group.command("update")
@JSON_OPT
@click.pass_obj
def rag_update(app: AppContext, as_json: bool) -> None:
    """Re-index only the files whose content changed (builds the index if there is none).

    Example: paqad rag update
    """
    report = run_guarded(_with_progress, False, app.root(), app.config())
    _build_output(report, as_json)


@rag_group.command("rebuild")
@JSON_OPT
@click.pass_obj
def rag_rebuild(app: AppContext, as_json: bool) -> None:
    """Rebuild the whole index from scratch and swap it in atomically.

    Example: paqad rag rebuild
    """
    report = run_guarded(_with_progress, True, app.root(), app.config())
    _build_output(report, as_json)


def _query_options(fn):
    fn = click.option("--top-n", type=click.IntRange(1, 500), default=None, help="How many passages (default: rag_top_n).")(fn)
    fn = click.option("--budget", type=click.IntRange(0, 10_000_000), default=SEARCH_BUDGET_CHARS, show_default=True, help="Total characters of source across results.")(fn)
    return JSON_OPT(fn)


def _run_query(app: AppContext, query: str, top_n: int | None, budget: int, gate: bool) -> pipeline.SearchResponse:
    if not query.strip():
        raise UsageError("the query is empty; ask a question, e.g. paqad rag search \"where are sessions saved\"")
    cfg = app.config()
    from paqad.search import pipeline  # lazily: numpy and the search stack only when searching

    return pipeline.search(
        app.root(), query, top_n or cfg["rag_top_n"], cfg["rag_source_chars"], budget, gate=gate,
        threshold=cfg["rag_similarity_threshold"], relief_floor=cfg["rag_relief_floor"],
    )


@rag_group.command("search")
@click.argument("query")
@_query_options
@click.pass_obj
def rag_search(app: AppContext, query: str, top_n: int | None, budget: int, as_json: bool) -> None:
    """Find the passages that answer QUERY, or say why nothing here does.

    Example: paqad rag search "where is the session cookie signed" --json
    """
    resp = run_guarded(_run_query, app, query, top_n, budget, True)
    emit_json(resp.to_dict()) if as_json else click.echo(render.search_text(resp))


@rag_group.command("probe")
@click.argument("query")
@_query_options
@click.pass_obj
def rag_probe(app: AppContext, query: str, top_n: int | None, budget: int, as_json: bool) -> None:
    """Show the top candidates and their per-signal scores (bm25f, relevance, cosine, fused,
    calibrated) before the evidence gate and the floor (read-only).

    Example: paqad rag probe "where is the session cookie signed"
    """
    resp = run_guarded(_run_query, app, query, top_n or 10, budget, False)
    emit_json(resp.to_dict()) if as_json else click.echo(render.search_text(resp, probe=True))


@rag_group.command("status")
@JSON_OPT
@click.pass_obj
def rag_status(app: AppContext, as_json: bool) -> None:
    """Say whether retrieval is on and describe the index.

    Example: paqad rag status --json
    """
    root = app.root()
    cfg = run_guarded(app.config)
    from paqad.search import pipeline

    data = {"root": str(root), "rag_enabled": cfg["rag_enabled"], "index": run_guarded(pipeline.status, root)}
    if as_json:
        emit_json(data)
        return
    idx = data["index"]
    click.echo(f"retrieval: {'on' if data['rag_enabled'] else 'off'}  ({root})")
    if not idx["built"]:
        click.echo("index: none yet (run `paqad rag init`)")
        return
    click.echo(f"index: {idx['files']} files, {idx['units']} units, {idx['index_bytes'] // 1024} KiB ({idx['index_file']})")
    click.echo(f"built {idx['built_at']}, updated {idx['updated_at']}; vectors: {idx['vectors']}")
    click.echo("languages: " + ", ".join(f"{k} {v}" for k, v in idx["units_by_language"].items()))


@rag_group.command("explain")
@click.argument("path")
@JSON_OPT
@click.pass_obj
def rag_explain(app: AppContext, path: str, as_json: bool) -> None:
    """Say which eligibility filter kept or dropped PATH, and why.

    Example: paqad rag explain src/app/views.py
    """
    root = app.root()
    rel = run_guarded(_relative, root, path)
    decision = run_guarded(_explain, root, rel, app)
    if as_json:
        emit_json(dataclasses.asdict(decision))
    else:
        click.echo(render.decision_text(decision))


def _relative(root: Path, path: str) -> str:
    full = Path(path) if os.path.isabs(path) else Path.cwd() / path
    try:
        rel = os.path.relpath(os.path.abspath(full), root)
    except ValueError as exc:
        raise UsageError(f"{path} is not inside {root}") from exc
    if rel.startswith(".."):
        raise UsageError(f"{path} is not inside the repository {root}")
    return rel.replace(os.sep, "/")


def _explain(root: Path, rel: str, app: AppContext) -> collect.Decision:
    if not (root / rel).exists() and not (root / rel).is_symlink():
        raise UsageError(f"{rel}: no such file in {root}")
    from paqad import collect

    elig = collect.Eligibility(root, app.config()["rag_max_file_size"])
    decision, _ = elig.decide(rel)
    return decision


@rag_group.command("clear")
@click.option("--yes", is_flag=True, help="Confirm deleting the index.")
@JSON_OPT
@click.pass_obj
def rag_clear(app: AppContext, yes: bool, as_json: bool) -> None:
    """Delete the index and switch retrieval off (settings and ignore rules are kept).

    Example: paqad rag clear --yes
    """
    if not yes:
        run_guarded(_raise, UsageError("this deletes the index; confirm with --yes"))
    root = app.root()
    folder = workspace.vectors_dir(root)
    from paqad.index import build

    with build.writer_lock(root):
        existed = folder.exists()
        shutil.rmtree(folder, ignore_errors=True)
    if workspace.paqad_dir(root).exists():
        run_guarded(config_mod.set_value, root, "rag_enabled", "false")
    if as_json:
        emit_json({"cleared": existed, "rag_enabled": False})
    else:
        click.echo("Index deleted; retrieval is off." if existed else "No index to delete; retrieval is off.")


def _raise(exc: Exception) -> None:
    raise exc
