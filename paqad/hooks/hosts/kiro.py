"""Kiro CLI: paqad's own agent, ``.kiro/agents/paqad.json``, with ``userPromptSubmit`` and ``agentSpawn`` hooks.

Protocol (https://kiro.dev/docs/cli/hooks, Kiro CLI 2.x/3.x): hooks belong to an agent
configuration (``.kiro/agents/<name>.json``, key ``hooks``, each ``{"command", "timeout_ms"}``);
the hook gets ``{"hook_event_name", "cwd", …}`` on stdin (``prompt`` for ``userPromptSubmit``) and,
on exit 0, its stdout is added to the agent's context as plain text. Kiro has no project-wide hook
file, so paqad writes an agent of its own (all tools, paqad's hooks) and owns that file: start it
with ``kiro-cli chat --agent paqad``, or make it the default
(``kiro-cli settings chat.defaultAgent paqad``). Kiro's IDE hooks ("Prompt Submit" → "Shell
Command", stdout added to context) are configured in the IDE; there is no npm CLI to test either
against, so the tests drive this module with the documented JSON only.
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


def install(root: Path) -> base.HostState:
    state = base.owned_write(root, NAME, CONFIG, document())
    state.note = state.note or NOTE
    return state


def uninstall(root: Path) -> base.HostState:
    return base.owned_remove(root, NAME, CONFIG)


def status(root: Path) -> base.HostState:
    return base.owned_status(root, NAME, CONFIG)


def read_event(stdin: str, hint: str) -> base.Event:
    event = base.hook_specific_event(NAME, KINDS, stdin, hint, "userPromptSubmit")
    if event.kind == "other":
        event.kind = "session-start" if hint == "session-start" else "prompt"
    return event


def render(context: str | None, event: base.Event) -> str:
    return context[:LIMIT] if context else ""
