"""paqad's benchmarks: one entry, ``python -m benchmarks NAME [ARGS]`` (``python -m benchmarks list``).

Every script is a module of this package and imports the shared ones as ``from benchmarks import
corpora, scoring`` (run from the repository root; none edits ``sys.path``). Raw run
output goes under the gitignored ``benchmarks/.cache/results/``; published figures keep a small
summary in ``benchmarks/summaries/`` (``python -m benchmarks summarize RUN_ID``).
"""
