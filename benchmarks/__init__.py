"""paqad's benchmarks: one entry, ``python -m benchmarks NAME [ARGS]`` (``python -m benchmarks list``).

The scripts are still standalone files (``python benchmarks/NAME.py`` works the same); the ones that
share code (corpora, scoring, score, semble, ...) import each other through ``sys.path``. Raw run
output goes under the gitignored ``benchmarks/.cache/results/``; published figures keep a small
summary in ``benchmarks/summaries/`` (``python -m benchmarks summarize RUN_ID``).
"""
