"""Kiro, both surfaces: the CLI's agent ``.kiro/agents/paqad.json`` (``userPromptSubmit`` and
``agentSpawn`` hooks) and the IDE's hook file ``.kiro/hooks/paqad-context.kiro.hook`` (Prompt Submit).

CLI protocol (https://kiro.dev/docs/cli/hooks, Kiro CLI 2.x/3.x): hooks belong to an agent
configuration (``.kiro/agents/<name>.json``, key ``hooks``, each ``{"command", "timeout_ms"}``);
the hook gets ``{"hook_event_name", "cwd", …}`` on stdin (``prompt`` for ``userPromptSubmit``) and,
on exit 0, its stdout is added to the agent's context as plain text. Kiro has no project-wide hook
file, so paqad writes an agent of its own (all tools, paqad's hooks) and owns that file: start it
with ``kiro-cli chat --agent paqad``, or make it the default
(``kiro-cli settings chat.defaultAgent paqad``).

IDE protocol (https://kiro.dev/docs/hooks/types and /docs/hooks/actions, Kiro IDE 1.x): a hook
file in ``.kiro/hooks/`` with ``when.type`` ``promptSubmit`` and a ``runCommand`` action; the
command gets the prompt in the ``USER_PROMPT`` environment variable (no JSON on stdin) and, on
exit 0, its stdout is added to the agent's context. paqad's command pipes ``$USER_PROMPT`` into
the hook, so its stdin is the prompt as plain text, which ``read_event`` tells from the CLI's JSON.
Neither surface has an npm CLI to test against; the tests drive this module with the documented
input only.
"""

from __future__ import annotations

from pathlib import Path

from paqad.hooks.hosts import base

NAME = "kiro"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = ()
CONFIG = ".kiro/agents/paqad.json"
EVENTS = {"userPromptSubmit": "prompt-submit", "agentSpawn": "session-start"}
KINDS = {"userPromptSubmit": "prompt", "agentSpawn": "session-start"}
NOTE = "start it with `kiro-cli chat --agent paqad`, or `kiro-cli settings chat.defaultAgent paqad`"


def document() -> str:
    hooks = {e: [{"command": base.command(hint, NAME), "timeout_ms": base.HOOK_TIMEOUT_S * 1000}] for e, hint in EVENTS.items()}
    agent = {"name": "paqad", "description": "The default tools plus paqad's context for each prompt (written by `paqad hooks install`)", "tools": ["*"], "hooks": hooks}
    return base.dump_json(agent)


def detect(root: Path) -> bool:
    return (root / ".kiro").is_dir()


IDE_CONFIG = ".kiro/hooks/paqad-context.kiro.hook"
#: The IDE's name for the event, kept in the Event so the hook log says which surface asked.
IDE_EVENT = "promptSubmit"


def ide_document() -> str:
    """The IDE hook file: on Prompt Submit, run paqad's hook with the prompt on its stdin."""
    hook = {
        "version": "1.0.0",
        "enabled": True,
        "name": "paqad-context",
        "description": "Adds paqad's code passages for this prompt to the agent's context (written by `paqad hooks install`)",
        "when": {"type": IDE_EVENT},
        "then": {"type": "runCommand", "command": 'printf \'%s\' "$USER_PROMPT" | { ' + base.command("prompt-submit", NAME) + "; }", "timeout": base.HOOK_TIMEOUT_S},
    }
    return base.dump_json(hook)


def install(root: Path) -> base.HostState:
    return _both(base.owned_write(root, NAME, CONFIG, document()), base.owned_write(root, NAME, IDE_CONFIG, ide_document()), NOTE)


def uninstall(root: Path) -> base.HostState:
    return _both(base.owned_remove(root, NAME, CONFIG), base.owned_remove(root, NAME, IDE_CONFIG))


def status(root: Path) -> base.HostState:
    return _both(base.owned_status(root, NAME, CONFIG), base.owned_status(root, NAME, IDE_CONFIG))


def _both(cli: base.HostState, ide: base.HostState, note: str | None = None) -> base.HostState:
    """One state for the two files: installed when both are, partial when one is; the first
    action of refused / installed / updated / removed that either file had, else unchanged."""
    states = {cli.state, ide.state}
    state = "installed" if states == {"installed"} else "absent" if states == {"absent"} else "partial"
    actions = {cli.action, ide.action}
    action = next((a for a in ("refused", "installed", "updated", "removed") if a in actions), cli.action or ide.action)
    return base.HostState(NAME, cli.paths + ide.paths, state, action, cli.note or ide.note or (note if action != "refused" else None))


def read_event(stdin: str, hint: str) -> base.Event:
    try:
        event = base.hook_specific_event(NAME, KINDS, stdin, hint, "userPromptSubmit")
    except ValueError:  # the IDE's hook: the prompt itself, as plain text (see the module docstring)
        prompt = stdin.strip() or None
        return base.Event(NAME, "prompt", prompt, "", None, IDE_EVENT, base.machine_reason({}, prompt))
    if event.kind == "other":
        event.kind = "session-start" if hint == "session-start" else "prompt"
    return event


def render(context: str | None, event: base.Event) -> str:
    return context[:LIMIT] if context else ""
