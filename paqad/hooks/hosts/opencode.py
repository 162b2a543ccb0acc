"""OpenCode: a plugin file, ``.opencode/plugin/paqad.js``, that asks paqad on each user message.

Protocol (https://opencode.ai/docs/plugins): OpenCode loads every JavaScript or TypeScript module in
``.opencode/plugin/`` of the project; a plugin is an async function returning hooks, and
``"chat.message"(input, output)`` runs for each user message before it goes to the model, with
``output.parts`` the message's parts (text parts carry ``text``; ``synthetic`` marks text that
OpenCode, not the user, added). paqad's plugin joins the user's text parts, runs the same hook
command as every other host (the per-user launcher, then PATH) with
``{"hook_event_name": "chat.message", "session_id", "cwd", "prompt"}`` on stdin, and appends the
answer as one more synthetic text part. paqad owns the file (its first line is the ID line).

Seen with OpenCode 1.18.33 (``opencode run``, tests/hosts_e2e_test.py): the block reaches the
model. OpenCode takes the project folder from ``$PWD``, not from the folder it was started in:
started with another ``PWD`` it imported the project's plugin and called none of its hooks. At
start it installs ``@opencode-ai/plugin`` into ``.opencode/node_modules`` (from npm), which is
most of a first run's time.
"""

from __future__ import annotations

import json
from pathlib import Path

from paqad.hooks.hosts import base

NAME = "opencode"
LIMIT = 10_000
DELIVERS_ON_PROMPT = True
MCP: tuple[base.McpConfig, ...] = ()
CONFIG = ".opencode/plugin/paqad.js"
EVENTS = {"chat.message": "prompt-submit"}
KINDS = {"chat.message": "prompt"}
ID_LINE = "// paqad-hook-id: opencode-plugin-v1"

PLUGIN = """{id}
// Written by `paqad hooks install`; `paqad hooks uninstall` removes it. Runs `paqad hook run`.
import {{ spawnSync }} from "node:child_process";

const COMMAND = {command};

export const PaqadPlugin = async ({{ directory }}) => ({{
  "chat.message": async (input, output) => {{
    const parts = (output && output.parts) || [];
    const typed = parts.filter((p) => p.type === "text" && !p.synthetic && typeof p.text === "string");
    const prompt = typed.map((p) => p.text).join("\\n");
    if (!prompt.trim()) return;
    const payload = JSON.stringify({{ hook_event_name: "chat.message", session_id: input.sessionID || "", cwd: directory, prompt }});
    const run = spawnSync("sh", ["-c", COMMAND], {{ cwd: directory, input: payload, encoding: "utf8", timeout: {timeout_ms} }});
    const context = ((run && run.stdout) || "").trim();
    if (!context) return;
    const first = typed[0];
    parts.push({{ id: `${{first.id}}-paqad`, sessionID: first.sessionID, messageID: first.messageID, type: "text", text: context, synthetic: true }});
  }},
}});
"""


def document() -> str:
    return PLUGIN.format(id=ID_LINE, command=json.dumps(base.command("prompt-submit", NAME)), timeout_ms=base.HOOK_TIMEOUT_S * 1000)


def detect(root: Path) -> bool:
    return (root / ".opencode").is_dir() or (root / "opencode.json").is_file()


def _ours(path: Path) -> bool:
    try:
        return ID_LINE in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def install(root: Path) -> base.HostState:
    return base.owned_write(root, NAME, CONFIG, document(), _ours)


def uninstall(root: Path) -> base.HostState:
    return base.owned_remove(root, NAME, CONFIG, _ours)


def status(root: Path) -> base.HostState:
    return base.owned_status(root, NAME, CONFIG, _ours)


def read_event(stdin: str, hint: str) -> base.Event:
    return base.hook_specific_event(NAME, KINDS, stdin, hint, "chat.message")


def render(context: str | None, event: base.Event) -> str:
    return context[:LIMIT] if context else ""
