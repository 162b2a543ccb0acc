"""From an index to the agent: depth, the query (prompt or working set), refresh, context, drift."""
