"""Everything that reacts to events from outside paqad.

- :mod:`paqad.hooks.runner`: the event runner (``.paqad/hooks.yaml``: events to actions, timeouts,
  single-flight locks, background children, the hook log). Its units of work are *actions*.
- :mod:`paqad.hooks.gitshims`: the *git shims* installed in ``.git/hooks`` (and husky, lefthook).
- :mod:`paqad.hooks.hosts`: the *agent hosts* (Claude Code, Codex, Gemini CLI, Copilot, Cline,
  Cursor): their prompt-hook events and installs.
- :mod:`paqad.hooks.mcp_install`: MCP server registration in each host's config.

The CLI groups are ``paqad hooks`` (install, uninstall, status) and ``paqad hook`` (what shims and
hosts call).
"""
