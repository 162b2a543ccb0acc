"""The agent doors: the JSON-lines protocol (``paqad agent``) and the MCP server (``paqad mcp``).

Both serve the same operations (``ops``): search, research, neighbors, open, describe_pending,
describe_put, stats. ``mcp`` (the official SDK) is an optional dependency, imported only by
``paqad mcp``.
"""
