"""The prompt hook as an MCP tool: Claude Code's ``mcp_tool`` hook type, through ``paqad mcp --hook-tool``.

Claude Code (2.1.118 and later; checked in the 2.1.332 binary the end-to-end tests install) can
answer a hook by calling a tool of an MCP server it already runs, instead of starting a command:
``{"type": "mcp_tool", "server": "paqad", "tool": "prompt_context", "input": {"prompt":
"${prompt}", ...}}``. The tool's text goes through the same parser as a command hook's stdout, so
:func:`paqad.serve.route.prompt_context` (the MCP door is handed it) returns exactly what ``paqad
hook run prompt-submit --host claude`` prints: the work tree's service answers it when one runs (as
for the command hook), else this process does, through the same ``Repository.hook`` (its budget and
its log line), and starts a service for the next prompt. No process is started per prompt at all; what it saves against the
command hook is measured in benchmarks/README.md ("the prompt hook as an MCP tool").

Opt-in: ``paqad mcp --hook-tool`` lists the tool (without the flag the server's tools are the agent
operations only, so a model never sees it unasked), and the hook entry (:func:`claude_hook`) is
not written by ``paqad hooks install`` (the hosts' installer owns the host configs; benchmarks/README.md, "The prompt hook as an MCP
tool", shows the two entries to write by hand). Why not by default: the hook then
depends on the MCP server being connected and approved; when it is not, Claude Code skips the
hook (``onFailure`` "continue") where the command hook would have answered in-process. ``claude
-p`` connects its servers before the first prompt (tests/claude_mcp_hook_e2e_test.py drives
2.1.332 against a fake model and finds the context in the model's request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

TOOL = "prompt_context"
DESCRIPTION = (
    "For Claude Code's UserPromptSubmit hook (type mcp_tool), not for the model: paqad's retrieved context for "
    "this prompt, as the hook command `paqad hook run prompt-submit --host claude` prints it."
)
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The prompt the user submitted (${prompt})."},
        "cwd": {"type": "string", "description": "The folder Claude Code runs in (${cwd})."},
        "session_id": {"type": "string", "description": "Claude Code's session id (${session_id})."},
        "transcript_path": {"type": "string", "description": "The session transcript (${transcript_path})."},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}
FIELDS = ("prompt", "cwd", "session_id", "transcript_path")


def claude_hook(server: str = "paqad", timeout_s: int | None = None) -> JSONObject:
    """The ``UserPromptSubmit`` hook entry that calls :data:`TOOL` on the MCP server ``server``."""
    from paqad.hooks.hosts import base  # lazy: 19 modules (every host) that `paqad mcp` itself never needs

    return {
        "type": "mcp_tool", "server": server, "tool": TOOL, "input": {name: "${" + name + "}" for name in FIELDS},
        "timeout": timeout_s if timeout_s is not None else base.HOOK_TIMEOUT_S,
    }

