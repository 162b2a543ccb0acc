"""The semble-benchmark scorer (benchmarks/semble.py, semble_bm25.py) on hand-made outcomes.

No corpus, no network: the arithmetic of NDCG@10, the path/span matching, the macro averages,
the tokeniser of the BM25-raw arm and the committed split are checked here, so a wrong figure
fails a test instead of moving every published number.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks import semble, semble_bm25

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def test_path_matching_is_suffix_on_either_side():
    assert semble.path_matches("src/flask/app.py", "src/flask/app.py")
    assert semble.path_matches("flask/app.py", "src/flask/app.py")  # indexed below benchmark_root
    assert semble.path_matches("/abs/src/flask/app.py", "flask/app.py")
    assert not semble.path_matches("src/flask/myapp.py", "app.py")  # a whole path component, not a tail
    assert not semble.path_matches("src/flask/app.py", "src/flask/ctx.py")


def test_span_targets_need_overlap_file_targets_any_chunk():
    results = [("a.py", 1, 9), ("b.py", 10, 20), ("b.py", 30, 40)]
    assert semble.target_ranks(results, [("b.py", None, None)]) == [2]
    assert semble.target_ranks(results, [("b.py", 25, 35)]) == [3]
    assert semble.target_ranks(results, [("b.py", 21, 29)]) == [None]  # between the two chunks
    assert semble.target_ranks(results, [("b.py", 20, 20)]) == [2]  # touching counts


def test_ndcg_at_10():
    assert semble.ndcg_at_k([1], 1) == 1.0
    assert semble.ndcg_at_k([], 1) == 0.0
    assert semble.ndcg_at_k([2], 1) == pytest.approx(1 / math.log2(3))
    # two targets, one found at rank 1: DCG 1 over ideal 1 + 1/log2(3)
    assert semble.ndcg_at_k([1], 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # a rank found by two targets counts once; ranks past 10 count nothing
    assert semble.ndcg_at_k([1, 1], 2) == semble.ndcg_at_k([1], 2)
    assert semble.ndcg_at_k([11], 1) == 0.0
    # more targets than k: the ideal is k ones
    assert semble.ndcg_at_k(list(range(1, 11)), 12) == pytest.approx(1.0)


def test_refusal_scores_zero():
    task = {"repo": "r", "language": "x", "category": "semantic", "query": "q", "targets": [("a.py", None, None)]}
    assert semble.score_row(task, [])["ndcg10"] == 0.0
    assert semble.score_row(task, [("a.py", 1, 2)])["ndcg10"] == 1.0


def test_macro_is_over_repositories_then_languages_and_categories():
    rows = [
        {"repo": "a", "language": "go", "category": "symbol", "ndcg10": 1.0},
        {"repo": "a", "language": "go", "category": "semantic", "ndcg10": 0.0},
        {"repo": "a", "language": "go", "category": "semantic", "ndcg10": 0.0},
        {"repo": "a", "language": "go", "category": "semantic", "ndcg10": 0.0},
        {"repo": "b", "language": "go", "category": "semantic", "ndcg10": 1.0},
        {"repo": "c", "language": "lua", "category": "semantic", "ndcg10": 0.5},
    ]
    m = semble.macro(rows, ["a", "b", "c"])
    assert m["repos"] == {"a": 0.25, "b": 1.0, "c": 0.5}
    assert m["overall"] == pytest.approx((0.25 + 1.0 + 0.5) / 3)
    assert m["micro"] == pytest.approx(2.5 / 6)
    assert m["language"] == {"go": 0.625, "lua": 0.5}
    assert m["category"]["symbol"] == 1.0  # only repo a has symbol queries
    assert m["category"]["semantic"] == pytest.approx((0.0 + 1.0 + 0.5) / 3)


def test_category_inference_matches_upstream_rule():
    assert semble.infer_category("HandlerStack") == "symbol"
    assert semble.infer_category("How does routing work") == "architecture"
    assert semble.infer_category("retry with backoff") == "semantic"


def test_bm25_arm_tokens_split_compounds_and_keep_them():
    assert semble_bm25.tokens("getHTTPResponse my_func x2") == [
        "gethttpresponse", "get", "http", "response", "my_func", "my", "func", "x2", "x", "2"]
    assert semble_bm25.tokens("XMLParser; 42 simple") == ["xmlparser", "xml", "parser", "simple"]


def test_bm25_arm_line_windows_overlap_by_five():
    text = "".join(f"line {i}\n" for i in range(1, 101))
    assert [(s, e) for _, s, e in semble_bm25.line_windows(text)] == [(1, 50), (46, 95), (91, 100)]


def test_split_is_fixed_disjoint_and_complete():
    split = json.loads((BENCH / "semble_split.json").read_text())
    a, b = set(split["A"]), set(split["B"])
    assert not a & b
    assert len(a) + len(b) == 63
    assert abs(len(a) - len(b)) <= 1
    assert split["upstream_commit"] == semble.UPSTREAM_COMMIT
