"""The history behind a passage (issue 35, item 3): the commits that changed each unit, offline.

``gitlog`` reads ``git log -p -U0`` (one git process, written to a file and read in pieces, never
run through a shell, no external diff or textconv) into commits with the line ranges they
touched; ``build`` filters them (secrets files never), masks their messages and appends them to
the store (``paqad.index.history``); ``search`` ranks commit messages by BM25 and maps the
commits' ranges onto the units of the current index. Nothing here is delivered by a hook yet:
the history is asked for by ``paqad rag history``.
"""
