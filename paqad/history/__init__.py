"""The history behind a passage (issue 35, item 3): the commits that changed each unit, offline.

``gitlog`` reads ``git log -p -U0`` (one git process, written to a file and read in pieces, never
run through a shell, no external diff or textconv) into commits with the hunks they made; ``build`` filters them (secrets files never), masks their messages and appends them to
the store (``paqad.index.history``); ``lines`` carries line numbers through the stored hunks;
``search`` ranks commit messages by BM25 and lays the lines the commits wrote, carried to now, over
the units of the current index (``paqad rag history``); ``lastchanged`` names the last commit that
touched a delivered passage's lines, for the doors when ``rag_last_changed`` is on (off by default).
"""
