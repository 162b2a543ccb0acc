"""What a session start without a prompt gets: a short orientation, never an earlier answer.

A session start has no question (unless the host passes the first prompt, as Copilot CLI's
``initialPrompt`` and Cline's task text do; those are answered like any prompt). Handing over the
last delivery there gave a fresh session another session's context, labelled as if it answered
this one (issue 13). The orientation says what paqad is, that each prompt brings its own
passages, and how to ask paqad directly. It reads no index (a session start must be quick): only
whether one exists.
"""

from __future__ import annotations

from pathlib import Path

from paqad.index import store

HEADING = "## paqad (orientation)"


def text(root: Path, mcp: bool = False) -> str:
    """The orientation for a session in ``root`` (``mcp``: the host has paqad's MCP tools)."""
    ready = store.current_pointer(root).exists()
    state = "The index is ready." if ready else "The index is being built; the first answers may be thin."
    ask = "the paqad MCP tools (`search`, `research`, `open`) or " if mcp else ""
    return (
        f"{HEADING}\n\n"
        "paqad keeps a local search index of this repository. Each prompt you receive may carry a "
        '"Retrieved context (paqad)" block with the code passages that answer it: hints to verify '
        f"in the live files, not the truth. {state} To ask it yourself, use {ask}"
        '`paqad rag search "<question>"` in the shell.'
    )
