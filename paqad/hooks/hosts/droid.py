"""Factory Droid: the ``hooks`` key of ``.factory/settings.json``, ``UserPromptSubmit`` and ``SessionStart``.

Protocol (https://docs.factory.ai/reference/hooks-reference, https://docs.factory.ai/harness/hooks.md):
hooks are shaped like Claude Code's, ``{"hooks": {"UserPromptSubmit": [{"hooks": [{"type":
"command", "command", "timeout"}]}]}}`` with the timeout in seconds. Input carries the session,
``cwd``, the event name and ``prompt`` (snake_case in Droid's SDK types, camelCase in some
third-party references: both are read). Output ``hookSpecificOutput.additionalContext`` on
``UserPromptSubmit`` and ``SessionStart`` is added to the session. Commands run from Droid's
working directory, which may be a subfolder: paqad's command looks for the repository's top itself.

Where: the documentation names ``.factory/hooks.json``, but Droid 0.225.2 (``droid exec``,
tests/hosts_e2e_test.py) ran no hook from ``.factory/hooks.json`` (nor ``~/.factory/hooks.json``)
and ran the same entries from the ``hooks`` key of ``.factory/settings.json``, which the docs call
the older place Droid still reads. So paqad writes there, and moves its entries out of a
``.factory/hooks.json`` an older paqad wrote. Droid runs a project's hooks only in a folder the
user trusts (``trustedFolders`` in ``~/.factory/settings.json``). ``droid exec`` fires
``SessionStart`` (the recorded input is what 0.225.2 sent) but no ``UserPromptSubmit`` for its
prompt, so a one-shot ``droid exec`` gets the orientation and no block for its prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from paqad.hooks.hosts import base

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

NAME = "droid"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = (base.McpConfig("droid", ".factory/mcp.json", "mcpServers", {"type": "stdio", **base.MCP_PLAIN}),)
CONFIG = ".factory/settings.json"
OLD_CONFIG = ".factory/hooks.json"  # where paqad wrote before Droid 0.225 was seen not to read it
EVENTS = {"UserPromptSubmit": "prompt-submit", "SessionStart": "session-start"}
KINDS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start"}


def _group(event: str) -> JSONObject:
    return {"hooks": [{"type": "command", "command": base.command(EVENTS[event], NAME), "timeout": base.HOOK_TIMEOUT_S}]}


def detect(root: Path) -> bool:
    return (root / ".factory").is_dir()


def install(root: Path) -> base.HostState:
    action = base.json_install(root, NAME, CONFIG, {e: _group(e) for e in EVENTS})
    if base.json_status(root, NAME, OLD_CONFIG, list(EVENTS)).state != "absent":
        base.json_uninstall(root, NAME, OLD_CONFIG, list(EVENTS))
        action = "updated"
    return base.after(action, status, root)


def uninstall(root: Path) -> base.HostState:
    base.json_uninstall(root, NAME, OLD_CONFIG, list(EVENTS))
    return base.after(base.json_uninstall(root, NAME, CONFIG, list(EVENTS)), status, root)


def status(root: Path) -> base.HostState:
    state = base.json_status(root, NAME, CONFIG, list(EVENTS))
    if base.json_status(root, NAME, OLD_CONFIG, list(EVENTS)).state != "absent":
        state.note = f"paqad's hooks in {OLD_CONFIG} (an older paqad's place), which Droid 0.225 does not read; `paqad hooks install --agents {NAME}` moves them to {CONFIG}"
    return state


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "UserPromptSubmit")


def render(context: str | None, event: base.Event) -> str:
    return base.hook_specific_output(context, event, "UserPromptSubmit", LIMIT)
