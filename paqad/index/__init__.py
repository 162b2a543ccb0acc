"""The embedded index: SQLite files under ``.paqad/vectors/``, one generation current at a time."""
