"""The embedded index: SQLite files under ``<per-developer folder>/vectors/``, one generation current at a time."""
