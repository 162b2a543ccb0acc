"""``paqad hooks ...`` (install, uninstall, status) and ``paqad hook ...`` (what the shims call)."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from paqad import git, workspace
from paqad.channel import calls
from paqad.cli.common import AppContext, HelpfulGroup, emit_json, migrate_setup
from paqad.cli.errors import one_line
from paqad.errors import ConfigError, PaqadError, UsageError
from paqad.git import no_git_env
from paqad.hooks import gitshims as githooks
from paqad.hooks import precommit, runner, tally
from paqad.hooks.hosts import HOSTS, NAMES, detected, found, launcher
from paqad.hooks.hosts.base import HostState
from paqad.serve import hookclient, route

JSON_OPT = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")

# pre-commit does not say which stage it runs; each post-* stage exports its own variable.
PRE_COMMIT_STAGE_VARS = (
    ("PRE_COMMIT_CHECKOUT_TYPE", "post-checkout"),
    ("PRE_COMMIT_IS_SQUASH_MERGE", "post-merge"),
    ("PRE_COMMIT_REWRITE_COMMAND", "post-rewrite"),
)


@click.group("hooks", cls=HelpfulGroup)
def hooks_group() -> None:
    """Install, remove and inspect the git hooks that keep the index fresh.

    Example: paqad hooks install
    """


def _render_states(states: list[githooks.HookState]) -> None:
    for s in states:
        legacy = f" (chains {Path(s.legacy).name})" if s.legacy else ""
        click.echo(f"{s.hook:<14} {s.action or s.state:<11} {s.path}{legacy}")


AGENTS_HELP = "Agent hosts, comma-separated: claude, codex, gemini, cline, cursor, copilot, qwen, droid, kiro, opencode, all or none (default: install: those the repository shows, listing the others found on this machine; uninstall: all)."
AGENTS_OPT = click.option("--agents", default=None, metavar="LIST", help=AGENTS_HELP)


def agent_names(value: str | None, default: list[str]) -> list[str]:
    """Parse ``--agents``; an unknown name is a usage error naming the choices."""
    if value is None:
        return default
    names = [v.strip().lower() for v in value.split(",") if v.strip()]
    if names in (["none"], []):
        return []
    if names == ["all"]:
        return list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        close = difflib.get_close_matches(unknown[0], NAMES, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(f"--agents: unknown agent {unknown[0]!r}{hint}; choose from {', '.join(NAMES)}, all, none")
    return list(dict.fromkeys(names))


def _agents(root: Path, names: list[str], verb: str) -> list[dict]:
    """Install or uninstall each host; one host's broken config never stops the others."""
    out = []
    for name in names:
        try:
            out.append(getattr(HOSTS[name], verb)(root).to_dict())
        except (PaqadError, OSError, ValueError) as exc:
            out.append(HostState(name, state="error", action="error", note=str(exc)).to_dict())
    return out


def _install(root: Path, agents: str | None) -> dict:
    githooks.hooks_dir(root)  # outside git: fail before writing anything
    runner.load_config(root)  # a broken hooks.yaml is reported now, not silently at every commit
    names = agent_names(agents, detected(root))
    workspace.ensure(root)
    wrote = runner.write_default_config(root)
    states = githooks.install(root)
    shim = launcher.write_shim()  # what the agent hook commands run first (per user, outside the repository)
    return {
        "hooks_yaml": str(runner.hooks_path(root)),
        "hooks_yaml_written": wrote,
        "hooks": [s.to_dict() for s in states],
        "shim": {"path": str(launcher.shim_path()), "action": shim, "python": sys.executable},
        "agents": _agents(root, names, "install"),
        "elsewhere": found.elsewhere(names) if agents is None else [],
    }


def _render_agents(agents: list[dict]) -> None:
    for a in agents:
        note = f"  ({a['note']})" if a.get("note") else ""
        click.echo(f"{a['host']:<14} {a.get('action') or a['state']:<11} {', '.join(a['paths'])}{note}")


def _install_mcp(root: Path, agents: list[dict]) -> list[dict]:
    """``--mcp``: register ``paqad mcp`` with the same hosts (those that read a project MCP config),
    only when the server can start here (the MCP SDK importable by this paqad)."""
    from paqad.hooks import mcp_install  # lazy: 71 modules, only with --mcp

    names = [mcp_install.FROM_HOOK_HOSTS[a["host"]] for a in agents if a["host"] in mcp_install.FROM_HOOK_HOSTS]
    missing = mcp_install.cannot_start()
    if missing:
        return [mcp_install.InstallState(name, mcp_install.HOSTS[name].rel, "skipped", missing).to_dict() for name in names]
    return [mcp_install.install(root, name).to_dict() for name in names]


@hooks_group.command("install")
@AGENTS_OPT
@click.option("--mcp", "with_mcp", is_flag=True, help="Also register `paqad mcp` with those hosts (see `paqad mcp install`).")
@JSON_OPT
@click.pass_obj
def hooks_install(app: AppContext, agents: str | None, with_mcp: bool, as_json: bool) -> None:
    """Install git hooks that keep the index fresh, and prompt hooks for the agent hosts.

    Writes .paqad/hooks.yaml with the defaults if it is absent; an existing git hook is kept and
    runs first; each agent host's config is merged into, keeping the user's entries. Running it
    again is harmless. With --mcp, the hosts that read a project MCP config also get `paqad mcp`.

    Example: paqad hooks install --agents claude,codex --mcp
    """
    migrate_setup(app.locate())
    data = _install(app.root(), agents)
    if with_mcp:
        data["mcp"] = _install_mcp(app.root(), data["agents"])
    if as_json:
        return emit_json(data)
    _render_states([githooks.HookState(**h) for h in data["hooks"]])
    _render_agents(data["agents"])
    for m in data.get("mcp", []):
        click.echo(f"{'mcp ' + m['host']:<14} {m['action']:<11} {m['path']}" + (f"  ({m['note']})" if m.get("note") else ""))
    _render_found(data)
    if data["hooks_yaml_written"]:
        click.echo(f"wrote {data['hooks_yaml']} (the defaults; edit it to change what runs)")


def _render_found(data: dict) -> None:
    """The hosts seen on this machine but not in the repository, each with the command that adds it."""
    for f in data["elsewhere"]:
        click.echo(f"{f['host']:<14} not wired  found {f['found']}; add it: {f['command']}")
    if not data["agents"] and not data["elsewhere"]:
        click.echo(f"no agent host found here or on this machine; name one: paqad hooks install --agents {','.join(NAMES[:3])}")


def _uninstall(root: Path, agents: str | None) -> dict:
    names = agent_names(agents, list(NAMES))
    return {"hooks": [s.to_dict() for s in githooks.uninstall(root)], "agents": _agents(root, names, "uninstall")}


@hooks_group.command("uninstall")
@AGENTS_OPT
@JSON_OPT
@click.pass_obj
def hooks_uninstall(app: AppContext, agents: str | None, as_json: bool) -> None:
    """Remove paqad's git and agent hooks and put back what was there before.

    Example: paqad hooks uninstall
    """
    data = _uninstall(app.root(), agents)
    if as_json:
        return emit_json(data)
    _render_states([githooks.HookState(**h) for h in data["hooks"]])
    _render_agents(data["agents"])


def _status(root: Path) -> dict:
    data = githooks.status(root)
    data["hooks_yaml"] = str(runner.hooks_path(root)) if runner.hooks_path(root).exists() else None
    try:
        runner.load_config(root)
        data["hooks_yaml_error"] = None
    except ConfigError as exc:
        data["hooks_yaml_error"] = str(exc)
    data["last_runs"] = runner.last_runs(root)
    data["agents"] = _agents(root, list(_host_names()), "status")
    data["last_prompt_hooks"] = {e["action"]: e for e in runner.read_log(root) if str(e.get("action", "")).startswith("context:")}
    data["prompt_answers"] = tally.count(root).to_dict()  # how the last prompts were answered, per host (issue 34)
    return data


def _host_names() -> tuple[str, ...]:
    return NAMES


@hooks_group.command("status")
@JSON_OPT
@click.pass_obj
def hooks_status(app: AppContext, as_json: bool) -> None:
    """Show which hooks are installed where, the last run of each action, and how the last
    prompts were answered per agent host (live, weak, stale, nothing, failed; see `paqad doctor`).

    Example: paqad hooks status --json
    """
    data = _status(app.root())
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
    _render_agents(data["agents"])
    for action, run in sorted(data["last_prompt_hooks"].items()):
        click.echo(f"last {action}: {run['ts']} {run['status']} {run['seconds']}s {run.get('detail') or ''}".rstrip())
    _render_answers(data["prompt_answers"])


def _render_answers(answers: dict) -> None:
    """One line per host: ``claude 12 live, 1 weak, 3 stale, 0 nothing, 0 failed (FIRST to LAST)``."""
    if answers["hosts"]:
        click.echo(f"prompts answered (the last {answers['lines']} of at most {answers['window']} prompt-hook lines in hooks.log):")
    for name, counts in answers["hosts"].items():
        click.echo(f"  {name:<9} {tally.summary(counts)}")


@click.group("hook", cls=HelpfulGroup)
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


def _log_reason(app: AppContext, root: Path | None, event: str, exc: BaseException) -> None:
    """Why a hook did nothing, as an ``error`` line in ``hooks.log``: a hook exits 0
    and prints nothing, so the log (and ``paqad hooks status``) is where the reason shows.

    The repository is the hook's own, else (a ``--root`` that does not exist) the one around the
    current folder, where git or the agent host ran the hook; one paqad is not set up in gets nothing.
    """
    if isinstance(exc, SystemExit):
        return
    try:
        if root is None:
            try:
                root = app.locate()
            except PaqadError:
                root = git.toplevel(Path.cwd())
        if root is None or not workspace.is_set_up(root):
            return
        code = exc.exit_code if isinstance(exc, PaqadError) else 1
        text = one_line(exc) if isinstance(exc, PaqadError) else f"{type(exc).__name__}: {one_line(exc)}"
        runner.log_result(root, runner.RunResult(event, "-", "-", "error", code, error=text[: runner.ERROR_MAX_CHARS]))
    except BaseException:  # noqa: BLE001 - logging the reason must not fail the hook either
        pass


def hook_main(argv: list[str] | None = None) -> int:
    """What the git shim calls: ``paqad hook ARGV`` without importing the rest of the CLI (fast). Returns 0."""
    try:
        hook_group.main(args=argv, prog_name="paqad hook", standalone_mode=False, obj=AppContext(None))
    except BaseException:  # noqa: BLE001 - usage errors included: a hook never fails git
        pass
    return 0


def _agent_hook(app: AppContext, event: str, host_name: str) -> None:
    """An agent host's hook from the full CLI (``-c`` overrides or ``--root``, which the thin
    client leaves to it): the same request, through the same seam (:func:`paqad.serve.route.hook`;
    with overrides it is answered in this process, the settings loaded once with them); prints the
    answer and exits 0 at once."""
    raw = hookclient._read_stdin()
    try:
        root = str(app.locate()) if app.root_option else hookclient.find_root(hookclient._start_dir(raw))
        root = root if root is None or workspace.is_set_up(Path(root)) else None
    except BaseException as exc:  # noqa: BLE001 - a prompt hook never fails the prompt
        _log_reason(app, None, event, exc)
        root = None
    call = calls.Hook(event, host_name, raw, os.getcwd(), os.environ.get("PAQAD_HOOK_BUDGET"), overrides=app.overrides)
    route.hook(root, call, emit=hookclient.write)
    os._exit(0)  # never wait for an abandoned worker thread


@hook_group.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("event", required=False)
@click.argument("hook_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--from-pre-commit", is_flag=True, help="Take the event from pre-commit's environment.")
@click.option("--host", "host_name", default=None, metavar="NAME", help="The agent host calling (claude, codex, gemini, cline, cursor, copilot, qwen, droid, kiro, opencode); reads its JSON on stdin.")
@click.pass_obj
def hook_run(app: AppContext, event: str | None, hook_args: tuple[str, ...], from_pre_commit: bool, host_name: str | None) -> None:
    """Run the actions configured for EVENT (what the git hook shims call); always exits 0.

    Extra arguments from git are accepted and ignored. With --host, EVENT comes from an agent
    host (prompt-submit, session-start, tool-use): the hook answers with context on stdout.

    Example: paqad hook run post-commit
    """
    if host_name:
        _agent_hook(app, event or "prompt-submit", host_name)
    try:
        _scrub_git_env()
        if from_pre_commit or not event:
            event = pre_commit_stage(dict(os.environ))
        if from_pre_commit:
            precommit.switch_on_first_use(app.root())  # adding the hook is the opt-in: no separate install to run `rag init`
        for result in runner.run_event(app.root(), event):
            if result.status == runner.RunStatus.ERROR and result.exit == 2:  # a broken hooks.yaml: say so, once
                click.echo(f"paqad: hooks skipped: {result.error}", err=True)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails git and never prints a traceback
        _log_reason(app, None, event or "-", exc)
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
        timed_out = any(r.status == runner.RunStatus.TIMEOUT for r in results)
    except BaseException as exc:  # noqa: BLE001 - the detached child has nobody to tell but the log
        _log_reason(app, None, event, exc)
    if timed_out:
        os._exit(0)  # the abandoned worker thread must not keep this process alive
    _safe_exit()
