"""``paqad rag ...``: init, search, probe, neighbors, status, update, rebuild, explain, clear, eval."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from paqad import config as config_mod
from paqad import localstate, workspace
from paqad.cli import render
from paqad.cli.common import AppContext, LazyGroup, emit_json, migrate_setup
from paqad.cli.errors import write_crash_log
from paqad.errors import PaqadError, UsageError
from paqad.serve import route
from paqad.settings import SEARCH_BUDGET_CHARS, SETTINGS

# The index builder (tree-sitter, the parsers) and the search stack (numpy) are imported inside the
# commands that use them: a fresh `rag search` or `rag update` process pays only for its own path.
if TYPE_CHECKING:
    from paqad.eligibility import collect  # lazy: each rag command loads only its own stack: the eligibility rules, 51 modules
    from paqad.evaluation.compare import EvalReport
    from paqad.index import timeline
    from paqad.index.writing import build  # lazy: each rag command loads only its own stack: the index writer, 89 modules
    from paqad.search import pipeline

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
F = TypeVar("F", bound=Callable[..., Any])


@click.group("rag", cls=LazyGroup, lazy={"refresh-context": "paqad.cli.refresh_cmd:refresh_context", "history": "paqad.cli.history_cmd:rag_history"})
def rag_group() -> None:
    """Build and query the retrieval index of this repository.

    Example: paqad rag init && paqad rag search "where are retries scheduled"
    """


def _build_output(report: build.BuildReport, as_json: bool, extra: dict[str, Any] | None = None) -> None:
    _warn_unnamed(report)
    if as_json:
        emit_json({**dataclasses.asdict(report), **(extra or {})})
    else:
        click.echo(render.build_text(report))


def _warn_unnamed(report: build.BuildReport) -> None:
    """One line on stderr for the files skipped because their names are not UTF-8 (``index.guard``)."""
    from paqad.index import guard  # lazy: each rag command loads only its own stack: 14 modules

    if report.unnamed:
        click.echo(guard.skipped_line(report.unnamed), err=True)


def _with_progress(full: bool, root: Path, cfg: config_mod.Config, kind: str = "rebuild") -> build.BuildReport:
    """Run a full build (``full``: the stage line says what works as it happens) or an update
    (the embedding progress bar, on a terminal only); both on stderr."""
    from paqad.cli import progress  # lazy: each rag command loads only its own stack: the stage line, 1 module
    from paqad.index import timeline  # lazy: each rag command loads only its own stack: the build timeline, 1 module
    from paqad.index.writing import build  # lazy: each rag command loads only its own stack: the index writer, 89 modules

    if not full:
        bar = render.ProgressBar()
        try:
            return build.update(root, cfg, progress=bar)
        finally:
            bar.close()
    line = progress.StageLine(root)
    try:
        return build.build_full(
            root, cfg, progress=line, on_lexical=line.lexical, on_interim=line.interim, started_at=timeline.process_started(), kind=kind,
        )
    finally:
        line.close()


@rag_group.command("init")
@click.option(
    "--provider",
    type=click.Choice(list(SETTINGS["rag_embedding_provider"].choices)),
    default=None,
    help="Embedding provider, saved as rag_embedding_provider: none (lexical only), local (offline model), or openai, voyageai, "
    "openai-compatible (send unit text to that service; key from the environment or secrets.env in paqad's per-developer folder).",
)
@click.option(
    "--background",
    is_flag=True,
    help="Return once the lexical index is built (search works from then on) and embed in a detached `paqad rag update`; "
    "`paqad rag status` shows how many units still lack vectors.",
)
@JSON_OPT
@click.pass_obj
def rag_init(app: AppContext, provider: str | None, background: bool, as_json: bool) -> None:
    """Switch retrieval on for this repository and build the index (then embed it).

    Example: paqad rag init --provider local   (or: OPENAI_API_KEY=... paqad rag init --provider openai)
    """
    root = app.locate()
    migrate_setup(root)
    root = app.root()
    workspace.ensure(root)
    config_mod.set_value(root, "rag_enabled", "true")
    if provider is not None:
        config_mod.set_value(root, "rag_embedding_provider", provider)
    cfg = app.config()
    shared = _adopt_shared(root, cfg)
    adopted = shared is not None and shared.status == "adopted"
    extra = {"shared_index": dataclasses.asdict(shared)} if shared is not None else {}
    if not background:
        report = _with_progress(not adopted, root, cfg, kind="init")
        _build_output(report, as_json, {**extra, "timeline": _timeline(root)})
        return
    report, pid = _init_in_background(root, cfg, adopted)
    _warn_unnamed(report)
    if as_json:
        emit_json({**dataclasses.asdict(report), **extra, "embedding_in_background": {"pid": pid} if pid else None, "timeline": _timeline(root)})
        return
    click.echo(render.build_text(report))
    if pid:
        click.echo(f"Embedding in the background (pid {pid}); search works now, and better as vectors land: paqad rag status")


def _timeline(root: Path) -> timeline.Described | None:
    from paqad.index import timeline  # lazy: each rag command loads only its own stack: the build timeline, 1 module

    return timeline.describe(root)


def _adopt_shared(root: Path, cfg: config_mod.Config) -> Any:
    """With ``rag_shared_index``: the index artifact of HEAD or its nearest ancestor made live
    (``paqad.index.team.artifacts.adopt``; the update after it indexes what differs). A refused artifact
    or an unavailable store is one line on stderr, and the caller builds locally. None when off."""
    from paqad.index.team import artifacts  # lazy: each rag command loads only its own stack: team sharing, 93 modules

    if not artifacts.enabled(cfg):
        return None
    report = artifacts.adopt(root, cfg)
    line = report.line()
    if line:
        click.echo(line, err=True)
    return report


def _init_in_background(root: Path, cfg: config_mod.Config, adopted: bool = False) -> tuple[build.BuildReport, int | None]:
    """The lexical index now; the vectors from a detached `paqad rag update` (no time limit, no
    terminal: an agent's shell command returns in seconds on any repository), which carries the
    build's timeline on. The update takes the writer lock, so a git hook's update meanwhile waits
    or coalesces; a killed fill resumes. ``adopted``: a shared index is live already, so the
    lexical step is an update of what differs."""
    from paqad.cli import progress  # lazy: each rag command loads only its own stack: the stage line, 1 module
    from paqad.hooks import runner  # lazy: each rag command loads only its own stack: the detached update, 6 modules
    from paqad.index import timeline  # lazy: each rag command loads only its own stack: the build timeline, 1 module
    from paqad.index.writing import build  # lazy: each rag command loads only its own stack: the index writer, 89 modules

    line = progress.StageLine(root)
    if adopted:
        report = build.update(root, cfg, embed=False)
    else:
        report = build.build_full(root, cfg, embed=False, on_lexical=line.lexical, started_at=timeline.process_started(), kind="init")
    if cfg.rag_embedding_provider == "none":
        line.close()
        return report, None
    rec = timeline.active(root)
    if rec is not None:
        rec.hand_over()  # before the start: the update's fill takes the record over
    line.close()
    return report, runner.spawn(localstate.python_argv("--root", str(root), "rag", "update"), root)


@rag_group.command("publish")
@JSON_OPT
@click.pass_obj
def rag_publish(app: AppContext, as_json: bool) -> None:
    """Update the index and upload it to the shared store as the index of HEAD (CI, or any clean
    checkout), so `paqad rag init` on a clone at this commit or a later one downloads it instead of
    building. Needs rag_shared_store and rag_shared_index (an index holds source text). Deletes
    artifacts older than rag_shared_index_days.

    Example: PAQAD_RAG_SHARED_STORE=postgresql://ci@db/paqad PAQAD_RAG_SHARED_INDEX=true paqad rag publish
    """
    from paqad.index.team import artifacts  # lazy: each rag command loads only its own stack: team sharing, 93 modules

    root, cfg = app.root(), app.config()
    try:
        report = artifacts.publish(root, cfg, lambda: _with_progress(False, root, cfg))
    except artifacts.StoreUnavailable as exc:
        raise PaqadError(f"the shared store could not take the index ({exc})") from None
    if as_json:
        emit_json(dataclasses.asdict(report))
    else:
        click.echo(
            f"Published the index of {report.commit[:12]}: {report.units} units, {report.bytes / 1e6:.1f} MB "
            f"({report.index_bytes / 1e6:.1f} MB uncompressed) in {report.seconds:.1f}s; {report.expired} expired artifacts deleted"
        )


@rag_group.command("update")
@JSON_OPT
@click.pass_obj
def rag_update(app: AppContext, as_json: bool) -> None:
    """Re-index only the files whose content changed (builds the index if there is none).

    Example: paqad rag update
    """
    migrate_setup(app.locate())
    report = _with_progress(False, app.root(), app.config())
    _build_output(report, as_json)


@rag_group.command("rebuild")
@JSON_OPT
@click.pass_obj
def rag_rebuild(app: AppContext, as_json: bool) -> None:
    """Rebuild the whole index from scratch and swap it in atomically.

    Example: paqad rag rebuild
    """
    report = _with_progress(True, app.root(), app.config())
    _build_output(report, as_json)


def _query_options(fn: F) -> F:
    fn = click.option("--top-n", type=click.IntRange(1, 500), default=None, help="How many passages (default: rag_top_n).")(fn)
    fn = click.option("--budget", type=click.IntRange(0, 10_000_000), default=SEARCH_BUDGET_CHARS, show_default=True, help="Total characters of source across results.")(fn)
    fn = click.option("--rerank", type=click.Choice(["off", "local", "cohere"]), default=None, help="Rerank the top candidates for this query (default: rag_rerank).")(fn)
    return JSON_OPT(fn)


def _run_query(
    app: AppContext, query: str, top_n: int | None, budget: int, gate: bool, rerank: str | None = None
) -> tuple[pipeline.SearchResponse, config_mod.Config]:
    """The answer, and the settings it was made with (loaded once: the caller reads them too)."""
    if not query.strip():
        raise UsageError("the query is empty; ask a question, e.g. paqad rag search \"where are sessions saved\"")
    cfg = app.config()
    from paqad.search.request import SearchRequest  # lazily: numpy and the search stack only when searching

    root = app.root()
    from paqad.delivery import freshness  # lazy: each rag command loads only its own stack: 92 modules

    request = SearchRequest.from_settings(cfg, root, query, top_n=top_n, budget_chars=budget, gate=gate, rerank=rerank)
    fresh = freshness.before_answer(root, cfg)  # first: rag_stale_policy refresh updates a stale index before the search
    resp = route.search(root, cfg, request)  # the service when one runs, else this process
    resp.freshness = dict(fresh)  # the response carries it as the JSON object it is
    if resp.rerank and resp.rerank.get("fallback"):
        click.echo(f"warning: reranking skipped, fused order kept ({resp.rerank['fallback']}); see audit.log (paqad doctor shows where)", err=True)
    return resp, cfg


HOPS_OPT = click.option("--hops", type=click.IntRange(1, 3), default=1, show_default=True, help="Graph hops from each result (1 to 3).")


@rag_group.command("search")
@click.argument("query")
@_query_options
@click.option("--graph", "with_graph", is_flag=True, help="Add graph neighbours of the results (`expansions`), each with its edge path.")
@HOPS_OPT
@click.option("--graph-budget", type=click.IntRange(1, 500), default=20, show_default=True, help="Most graph neighbours to add.")
@click.option("--show", type=click.IntRange(0, 500), default=5, show_default=True, help="Results printed (0: all); --json always has them all.")
@click.option("--workspace", "across_workspace", is_flag=True, help="Also ask the repositories of `paqad workspace list`; results name their repository.")
@click.pass_obj
def rag_search(
    app: AppContext,
    query: str,
    top_n: int | None,
    budget: int,
    rerank: str | None,
    as_json: bool,
    with_graph: bool,
    hops: int,
    graph_budget: int,
    show: int,
    across_workspace: bool,
) -> None:
    """Find the passages that answer QUERY, or say why nothing here does.

    Example: paqad rag search "where is the session cookie signed" --json --graph --hops 2
    """
    if across_workspace:
        if not query.strip():
            raise UsageError("the query is empty; ask a question, e.g. paqad rag search --workspace \"where are invoices parsed\"")
        from paqad.search import across  # lazy: each rag command loads only its own stack: the workspace search, 118 modules

        app.config()  # this repository's settings are checked first, as by every command
        resp = across.search(app.root(), query, top_n=top_n, budget_chars=budget)
        if as_json:
            emit_json(resp.to_dict())
        else:
            click.echo(render.search_text(resp, shown=show), color=render.color())
        return
    resp, cfg = _run_query(app, query, top_n, budget, True, rerank)
    expansions = _expand(app.root(), resp, hops, graph_budget) if with_graph else None
    data = resp.to_dict()
    if cfg.rag_last_changed:  # off by default: the last commit that touched each result's lines
        from paqad.history import lastchanged  # lazy: only with the setting on

        lastchanged.annotate(app.root(), data["results"])
    if as_json:
        if expansions is not None:
            data["expansions"] = expansions
        emit_json(data)
    else:
        notes = {r["id"]: r["last_changed"] for r in data["results"] if r.get("last_changed")}
        text = render.search_text(resp, words=_evidence_words(app.root(), query), shown=show, notes=notes)
        click.echo(text + ("\n" + render.expansions_text(expansions) if expansions is not None else ""), color=render.color())


def _evidence_words(root: Path, query: str) -> dict[str, str]:
    from paqad.index.reader import Index  # lazy: each rag command loads only its own stack: the index reader, 27 modules
    from paqad.search import lexical  # lazy: each rag command loads only its own stack: 10 modules

    return lexical.evidence_words(Index.shared(root), query)


def _expand(root: Path, resp: pipeline.SearchResponse, hops: int, budget: int) -> list[dict]:
    """Graph neighbours of the delivered results (none when search stayed silent)."""
    from paqad import graph  # lazy: each rag command loads only its own stack: the code graph, only with --expand
    from paqad.index.reader import Index  # lazy: each rag command loads only its own stack: the index reader, 27 modules

    return graph.expand(Index.shared(root), [(r.id, r.score) for r in resp.results], hops, budget)


@rag_group.command("neighbors")
@click.argument("unit_id")
@HOPS_OPT
@click.option("--direction", type=click.Choice(["in", "out", "both"]), default="both", show_default=True, help="out: what it calls, contains, imports, inherits; in: what points at it.")
@click.option("--budget", type=click.IntRange(1, 500), default=50, show_default=True, help="Most neighbours to list.")
@JSON_OPT
@click.pass_obj
def rag_neighbors(app: AppContext, unit_id: str, hops: int, direction: str, budget: int, as_json: bool) -> None:
    """List the units and files near UNIT_ID in the code graph (calls, contains, imports,
    inherits), best first, each with the edge path that links it.

    Example: paqad rag neighbors "src/app.py::App.run" --hops 2 --direction in
    """
    from paqad import graph  # lazy: each rag command loads only its own stack: the code graph
    from paqad.index.reader import Index  # lazy: each rag command loads only its own stack: the index reader, 27 modules

    found = graph.neighbors(Index.shared(app.root()), unit_id, hops, direction, budget)
    if as_json:
        emit_json({"schema_version": 1, "id": unit_id, "hops": hops, "direction": direction, "neighbors": found})
    else:
        click.echo(render.neighbors_text(unit_id, found), color=render.color())


@rag_group.command("probe")
@click.argument("query")
@_query_options
@click.pass_obj
def rag_probe(app: AppContext, query: str, top_n: int | None, budget: int, rerank: str | None, as_json: bool) -> None:
    """Show the top candidates and their per-signal scores (bm25f, relevance, cosine, fused,
    calibrated) before the evidence gate and the floor (read-only).

    Example: paqad rag probe "where is the session cookie signed"
    """
    resp, _ = _run_query(app, query, top_n or 10, budget, False, rerank)
    emit_json(resp.to_dict()) if as_json else click.echo(render.search_text(resp, probe=True), color=render.color())


@rag_group.command("status")
@JSON_OPT
@click.pass_obj
def rag_status(app: AppContext, as_json: bool) -> None:
    """Say whether retrieval is on and describe the index.

    Example: paqad rag status --json
    """
    root = app.root()
    cfg = app.config()
    from paqad.cli import progress  # lazy: each rag command loads only its own stack: the stage line, 1 module
    from paqad.delivery import freshness  # lazy: each rag command loads only its own stack: 92 modules
    from paqad.index import status as status_mod  # lazy: each rag command loads only its own stack: 28 modules
    from paqad.index import timeline  # lazy: each rag command loads only its own stack: the build timeline, 1 module

    idx = status_mod.status(root)
    fresh = freshness.describe(root, cfg) if idx["built"] else None  # what every answer says of the index
    built = timeline.describe(root, idx["vectors_pending"]) if idx["built"] else None  # the last full build's way to full quality
    data = {"root": str(root), "rag_enabled": cfg.rag_enabled, "index": idx, "freshness": fresh, "timeline": built}
    if as_json:
        emit_json(data)
        return
    click.echo(f"retrieval: {'on' if data['rag_enabled'] else 'off'}  ({root})")
    if not idx["built"]:
        click.echo("index: none yet (run `paqad rag init`)")
        return
    click.echo(f"index: {idx['files']} files, {idx['units']} units, {idx['index_bytes'] // 1024} KiB ({idx['index_file']})")
    click.echo(f"built {idx['built_at']}, updated {idx['updated_at']}; vectors: {idx['vectors']}")
    if built is not None:
        click.echo(f"last {built['kind']} ({built['started_at']}): {progress.stages_text(built)}")
    click.echo(freshness.line(fresh or {}))
    click.echo("languages: " + ", ".join(f"{k} {v}" for k, v in idx["units_by_language"].items()))
    cache = idx["embedding_cache"]
    click.echo(f"embedding cache (every work tree of this user): {cache['bytes'] / 1e6:.1f} MB of {cfg.rag_embedding_cache_mb} MB ({cache['path']})")


@rag_group.command("explain")
@click.argument("path")
@JSON_OPT
@click.pass_obj
def rag_explain(app: AppContext, path: str, as_json: bool) -> None:
    """Say which eligibility filter kept or dropped PATH, and why.

    Example: paqad rag explain src/app/views.py
    """
    root = app.root()
    rel = _relative(root, path)
    decision = _explain(root, rel, app)
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
    from paqad.eligibility import collect  # lazy: each rag command loads only its own stack: the eligibility rules, 51 modules

    elig = collect.Eligibility(root, app.config().rag_max_file_size)
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
        raise UsageError("this deletes the index; confirm with --yes")
    root = app.root()
    existed = workspace.clear_index(root)
    if workspace.is_set_up(root):
        config_mod.set_value(root, "rag_enabled", "false")
    if as_json:
        emit_json({"cleared": existed, "rag_enabled": False})
    else:
        click.echo("Index deleted; retrieval is off." if existed else "No index to delete; retrieval is off.")


@rag_group.command("eval")
@click.option("--mode", type=click.Choice(["feature-off-vs-on"]), default="feature-off-vs-on", show_default=True, help="What to compare: the agent's grep loop (off) against paqad's delivered context (on).")
@click.option("--limit", type=click.IntRange(1, 1000), default=40, show_default=True, help="Docstring questions to sample from this repository.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the (repeatable) question sample.")
@JSON_OPT
@click.pass_context
def rag_eval(ctx: click.Context, mode: str, limit: int, seed: int, as_json: bool) -> None:
    """Does retrieval pay here? Compare a grep loop with paqad's delivered context on questions made
    from this repository (masked docstrings, unanswerable subjects, .paqad/eval.yaml).

    Exit codes: 0 retrieval pays, 1 it does not, 3 the evaluation could not run, 2 usage.

    Example: paqad rag eval --json
    """
    from paqad.evaluation import report  # lazy: each rag command loads only its own stack: the evaluation's report

    rep = _run_eval(ctx.obj, mode, limit, seed)
    emit_json({**rep.to_dict(), "exit_code": rep.exit_code}) if as_json else click.echo(report.render_text(rep))
    ctx.exit(rep.exit_code)  # the verdict, not an error: 0 pays, 1 does not


def _run_eval(app: AppContext, mode: str, limit: int, seed: int) -> EvalReport:
    """``compare.run``; an unexpected failure is logged and becomes EvalCannotRun (exit 3), never 1."""
    from paqad.evaluation import EvalCannotRun, compare  # lazy: each rag command loads only its own stack: the evaluation, 141 modules

    root = app.root()
    try:
        return compare.run(root, app.config(), mode, limit, seed)
    except PaqadError:
        raise
    except Exception as exc:  # noqa: BLE001 - "does not pay" must not be confused with a crash
        raise EvalCannotRun(f"the evaluation could not run: {type(exc).__name__}: {exc} (details in {write_crash_log(root, exc)})") from exc
