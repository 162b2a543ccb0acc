"""Every file paqad writes inside a repository, in one list: the eligibility filter reads it, so
paqad never indexes its own output (issue 34: ``.github/hooks/paqad.json`` ranked third for "post
tool use hook" in requests), and ``tests/written_test.py`` installs every host and MCP entry and
fails on a written file missing here.

Most host configs sit in folders the filter drops whole (``.claude/``, ``.codex/``, ...); the rest
are named here. Per-developer files are not in the repository at all (:mod:`paqad.localstate`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

#: Repository-relative paths paqad creates or merges its entries into.
FILES = frozenset(
    {
        ".mcp.json",  # Claude Code's project MCP servers
        ".vscode/mcp.json",  # VS Code (Copilot) MCP servers
        ".github/hooks/paqad.json",  # Copilot's hooks, paqad's own file
        ".factory/settings.json",  # Factory Droid's hooks
        ".factory/mcp.json",  # Factory Droid's MCP servers
        ".qwen/settings.json",  # Qwen Code's hooks and MCP servers
        ".opencode/plugin/paqad.js",  # OpenCode's plugin, paqad's own file
        "lefthook-local.yml",  # paqad's block for lefthook
        "paqad.descriptions.json",  # agent-written descriptions (the sidecar)
    }
)
#: Folders of paqad's or of an agent host's, dropped whole (paqad writes into several of them).
FOLDERS = frozenset(
    {".paqad", ".git", ".claude", ".cursor", ".codex", ".gemini", ".clinerules", ".cline", ".windsurf", ".continue", ".aider.tags.cache.v3", ".roo", ".kiro", ".amazonq", ".junie"}
)
#: Names paqad writes wherever they are.
NAMES = frozenset({"session-context.md"})


def written_by_paqad(path: str) -> bool:
    """True when ``path`` (repository-relative, POSIX) is a file paqad writes (not inside ``FOLDERS``)."""
    return path in FILES or PurePosixPath(path).name in NAMES
