"""The command line: thin click commands over the library; each renders text or ``--json``."""
