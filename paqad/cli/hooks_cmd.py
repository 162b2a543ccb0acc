"""``paqad hooks ...`` (install, uninstall, status) and ``paqad hook ...`` (what the shims call)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from paqad import githooks, runner, workspace
from paqad.cli.common import AppContext, emit_json, run_guarded
from paqad.errors import ConfigError
from paqad.git import no_git_env

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")

# pre-commit does not say which stage it runs; each post-* stage exports its own variable.
PRE_COMMIT_STAGE_VARS = (
    ("PRE_COMMIT_CHECKOUT_TYPE", "post-checkout"),
    ("PRE_COMMIT_IS_SQUASH_MERGE", "post-merge"),
    ("PRE_COMMIT_REWRITE_COMMAND", "post-rewrite"),
)


@click.group("hooks")
def hooks_group() -> None:
    """Install, remove and inspect the git hooks that keep the index fresh.

    Example: paqad hooks install
    """


def _render_states(states: list[githooks.HookState]) -> None:
    for s in states:
        legacy = f" (chains {Path(s.legacy).name})" if s.legacy else ""
        click.echo(f"{s.hook:<14} {s.action or s.state:<11} {s.path}{legacy}")


def _install(root: Path) -> dict:
    githooks.hooks_dir(root)  # outside git: fail before writing anything
    runner.load_config(root)  # a broken hooks.yaml is reported now, not silently at every commit
    workspace.ensure(root)
    wrote = runner.write_default_config(root)
    states = githooks.install(root)
    return {"hooks_yaml": str(runner.hooks_path(root)), "hooks_yaml_written": wrote, "hooks": [s.to_dict() for s in states]}


@hooks_group.command("install")
@JSON_OPT
@click.pass_obj
def hooks_install(app: AppContext, as_json: bool) -> None:
    """Install git hooks that update the index after commit, merge, checkout and rewrite.

    Writes .paqad/hooks.yaml with the defaults if it is absent; an existing hook is kept and
    runs first. Running it again is harmless.

    Example: paqad hooks install
    """
    data = run_guarded(_install, app.root())
    if as_json:
        return emit_json(data)
    _render_states([githooks.HookState(**h) for h in data["hooks"]])
    if data["hooks_yaml_written"]:
        click.echo(f"wrote {data['hooks_yaml']} (the defaults; edit it to change what runs)")


@hooks_group.command("uninstall")
@JSON_OPT
@click.pass_obj
def hooks_uninstall(app: AppContext, as_json: bool) -> None:
    """Remove paqad's git hooks and put back the hooks that were there before.

    Example: paqad hooks uninstall
    """
    states = run_guarded(githooks.uninstall, app.root())
    if as_json:
        return emit_json({"hooks": [s.to_dict() for s in states]})
    _render_states(states)


def _status(root: Path) -> dict:
    data = githooks.status(root)
    data["hooks_yaml"] = str(runner.hooks_path(root)) if runner.hooks_path(root).exists() else None
    try:
        runner.load_config(root)
        data["hooks_yaml_error"] = None
    except ConfigError as exc:
        data["hooks_yaml_error"] = str(exc)
    data["last_runs"] = runner.last_runs(root)
    return data


@hooks_group.command("status")
@JSON_OPT
@click.pass_obj
def hooks_status(app: AppContext, as_json: bool) -> None:
    """Show which hooks are installed where, and the last run of each action.

    Example: paqad hooks status --json
    """
    data = run_guarded(_status, app.root())
    if as_json:
        return emit_json(data)
    via = f" (core.hooksPath={data['core_hooks_path']})" if data["core_hooks_path"] else ""
    click.echo(f"hooks folder: {data['hooks_dir']}{via}  manager: {data['manager']}")
    _render_states([githooks.HookState(**h) for h in data["hooks"]])
    click.echo(f"config: {data['hooks_yaml'] or 'built-in defaults (no .paqad/hooks.yaml)'}")
    if data["hooks_yaml_error"]:
        click.echo(f"config error: {data['hooks_yaml_error']}")
    for action, run in sorted(data["last_runs"].items()):
        error = f"  error: {run['error']}" if run.get("error") else ""
        click.echo(f"last {action}: {run['ts']} {run['event']} {run['status']} exit={run['exit']} {run['seconds']}s{error}")
    if not data["last_runs"]:
        click.echo("no runs logged yet")


@click.group("hook")
def hook_group() -> None:
    """Entry points the installed hooks call; they always exit 0.

    Example: paqad hook run post-commit
    """


def _scrub_git_env() -> None:
    """Drop GIT_DIR, GIT_INDEX_FILE and friends that git exported into the hook."""
    clean = no_git_env()
    os.environ.clear()
    os.environ.update(clean)


def pre_commit_stage(environ: dict[str, str]) -> str:
    """The post-* stage pre-commit is running, from the variables it exports for that stage."""
    return next((event for var, event in PRE_COMMIT_STAGE_VARS if environ.get(var)), "post-commit")


def _safe_exit() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(0)


def hook_main(argv: list[str] | None = None) -> int:
    """What the git shim calls: ``paqad hook ARGV`` without importing the rest of the CLI (fast). Returns 0."""
    try:
        hook_group.main(args=argv, prog_name="paqad hook", standalone_mode=False, obj=AppContext(None))
    except BaseException:  # noqa: BLE001 - usage errors included: a hook never fails git
        pass
    return 0


@hook_group.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("event", required=False)
@click.argument("hook_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--from-pre-commit", is_flag=True, help="Take the event from pre-commit's environment.")
@click.pass_obj
def hook_run(app: AppContext, event: str | None, hook_args: tuple[str, ...], from_pre_commit: bool) -> None:
    """Run the actions configured for EVENT (what the git hook shims call); always exits 0.

    Extra arguments from git are accepted and ignored.

    Example: paqad hook run post-commit
    """
    try:
        _scrub_git_env()
        if from_pre_commit or not event:
            event = pre_commit_stage(dict(os.environ))
        for result in runner.run_event(app.root(), event):
            if result.status == "error" and result.exit == 2:  # a broken hooks.yaml: say so, once
                click.echo(f"paqad: hooks skipped: {result.error}", err=True)
    except BaseException:  # noqa: BLE001 - a hook never fails git and never prints a traceback
        pass
    _safe_exit()


@hook_group.command("run-action", hidden=True)
@click.argument("action")
@click.option("--event", default="post-commit", help="The event that asked for this run (for the log).")
@click.pass_obj
def hook_run_action(app: AppContext, action: str, event: str) -> None:
    """Run ACTION now in this process (the detached child started by `hook run`); always exits 0.

    Example: paqad hook run-action rag-update --event post-commit
    """
    timed_out = False
    try:
        results = runner.run_action(app.root(), event, action)
        timed_out = any(r.status == "timeout" for r in results)
    except BaseException:  # noqa: BLE001
        pass
    if timed_out:
        os._exit(0)  # the abandoned worker thread must not keep this process alive
    _safe_exit()
