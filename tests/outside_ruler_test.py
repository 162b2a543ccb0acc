"""benchmarks/outside_convert.py: the pure parts of the rulers by other authors (no git, no network).

The half rule, the conversion of records shaped like Agent Retrieval Bench's and sverklo's (tiny
samples written here, not theirs), the corpus-selection rule, and the pin check that makes
``outside.py fetch`` refuse a drift.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchmarks import outside
from benchmarks import outside_convert as oc

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def test_half_is_outside_md_rule() -> None:
    for ruler, case_id in [("arb-code2test", "3cfa"), ("sverklo-swe", "express-x"), ("r", "")]:
        even = int(hashlib.sha256(f"{ruler}:{case_id}".encode()).hexdigest()[:8], 16) % 2 == 0
        assert oc.half(ruler, case_id) == ("tune" if even else "report")
    assert {oc.half("r", str(i)) for i in range(20)} == {"tune", "report"}


def arb_record(task: str, **over: object) -> dict:
    rec: dict = {
        "id": "abc123", "repo": "octo/widget", "base_commit": "0123456789abcdef0123", "task_type": task,
        "gold": {"root_cause_files": ["src/widget/core.py"], "related_tests": ["tests/test_core.py"],
                 "supporting_files": ["src/widget/util.py"], "negative_distractors": []},
        "metadata": {"pr_url": "https://github.com/octo/widget/pull/7"},
        "query": {"pr_title": "Fix the spinner", "pr_body": "It spun twice.", "changed_file": "src/widget/core.py",
                  "review_comment": "Why twice?", "diff_hunk_context": "@@ -1,2 +1,3 @@", "path": "src/widget/core.py",
                  "line": 3, "raw_signal": "FAILED tests/test_core.py::test_spin"},
    }
    rec.update(over)
    return rec


def test_arb_records_become_cases_with_their_own_gold() -> None:
    tree = {"src/widget/core.py": 10, "tests/test_core.py": 10, "src/widget/util.py": 10, "README.md": 10}
    c2t, _ = oc.finish(oc.arb_raw(arb_record("code2test")), tree, "python")
    assert c2t is not None
    assert c2t["ruler"] == "arb-code2test" and c2t["style"] == "pr" and c2t["corpus"] == "octo__widget@0123456789ab"
    assert c2t["answers"] == [{"path": "tests/test_core.py", "lines": None, "name": None}]
    assert "Fix the spinner" in c2t["q"] and "Changed file: src/widget/core.py" in c2t["q"]
    assert c2t["answerable"] is True and c2t["language"] == "python" and c2t["half"] == oc.half("arb-code2test", "abc123")
    c2c, _ = oc.finish(oc.arb_raw(arb_record("comment2context")), tree, "python")
    assert c2c is not None and c2c["answers"][0]["path"] == "src/widget/core.py"
    assert "src/widget/core.py" not in c2c["q"] and "Why twice?" in c2c["q"]  # the answer is not given away
    t2c, _ = oc.finish(oc.arb_raw(arb_record("trace2code")), tree, "python")
    assert t2c is not None and t2c["style"] == "trace" and t2c["q"] == "FAILED tests/test_core.py::test_spin"
    spans = arb_record("trace2code", gold_spans=[{"path": "src/widget/core.py", "start_line": 4, "end_line": 9, "symbol": "spin"}])
    t2c_lines, _ = oc.finish(oc.arb_raw(spans), tree, "python")
    assert t2c_lines is not None and t2c_lines["answers"] == [{"path": "src/widget/core.py", "lines": [4, 9], "name": "spin"}]


def test_abstention_and_missing_answers() -> None:
    rec = arb_record("abstention", gold={"files": [], "no_gold": True, "reason": "upstream_dependency"},
                     query={"source": "issue", "text": "Issue title: leak on macOS"}, metadata={"source_url": "u"})
    case, _ = oc.finish(oc.arb_raw(rec), {"a.go": 1}, "go")
    assert case is not None and case["answerable"] is False and case["answers"] == [] and case["language"] == "go"
    assert case["style"] == "abstention" and case["abstention_kind"] == "natural"
    # an answer file the corpus lacks is taken out; none left: the case is dropped
    gone, lost = oc.finish(oc.arb_raw(arb_record("code2test")), {"src/widget/core.py": 1}, "python")
    assert gone is None and lost == 1


def test_sverklo_task_and_language() -> None:
    task = {"id": "x-router", "dataset": "x", "question": " How does routing work? ",
            "required_evidence": [{"file": "lib/router.ts"}, {"file": "lib/router.ts"}, {"file": "lib/app.js", "line_range": [3, 8]}]}
    case, _ = oc.finish(oc.sverklo_raw(task, "octo/x", "0123456789abcdef"), {"lib/router.ts": 1, "lib/app.js": 1}, "typescript")
    assert case is not None and case["q"] == "How does routing work?" and case["style"] == "question"
    assert case["answers"] == [{"path": "lib/router.ts", "lines": None, "name": None}, {"path": "lib/app.js", "lines": [3, 8], "name": None}]
    assert case["language"] == "typescript"  # a tie goes to the first answer's language
    assert oc.answers_language(["README.md", "a.go"]) == "go"
    assert oc.main_language({"a.js": 10, "b.js": 10, "c.ts": 50, "README.md": 999}) == "typescript"


def test_swe_bench_records_are_refused_except_sympy() -> None:
    assert oc.from_swe_bench({"id": "django__django-11099", "repo": "django/django"})
    assert oc.from_swe_bench({"id": "x1", "repo": "a/b", "metadata": {"dataset": "princeton-nlp/SWE-bench_Lite"}})
    assert not oc.from_swe_bench({"id": "sympy__sympy-20590", "repo": "sympy/sympy"})
    assert not oc.from_swe_bench(arb_record("code2test"))


def test_selection_keeps_answerable_commits_and_moves_unanswerable() -> None:
    def raw(case_id: str, commit: str, answerable: bool, repo: str = "o/r") -> oc.Raw:
        return oc.Raw("arb-x", case_id, repo, commit, "pr", "q", [{"path": "a.py", "lines": None, "name": None}] if answerable else [])

    raws = [raw("1", "c1", False), raw("2", "c2", True), raw("3", "c3", True), raw("4", "c3", False),
            raw("5", "big", True, "o/big"), raw("6", "gone", True, "o/gone")]
    sizes = {("o/r", "c1"): 10, ("o/r", "c2"): 10, ("o/r", "c3"): 10, ("o/big", "big"): oc.MAX_FILES + 1}
    kept = oc.select_commits(raws, sizes, per_repo=1)
    assert kept == {"o/r": ["c3"]}  # most answerable, then most cases
    placed, dropped = oc.place(raws, kept)
    assert [(r.id, r.commit, r.extra.get("moved_from")) for r in placed] == [("1", "c3", "c1"), ("3", "c3", None), ("4", "c3", None)]
    assert dropped == {"arb-x: base commit not kept": 1, "arb-x: repository has no corpus": 2}


def test_lock_drift_is_refused() -> None:
    entry = {"source_repo": "o/r", "source_commit": "c" * 40, "source_files": {"data/a.jsonl": "1" * 64}}
    assert oc.pin_drift(entry, "o/r", "c" * 40, {"data/a.jsonl": "1" * 64}) == []
    assert oc.pin_drift(None, "o/r", "c" * 40, {"data/a.jsonl": "2" * 64}) == []  # a new ruler pins what it reads
    drift = oc.pin_drift(entry, "o/r", "c" * 40, {"data/a.jsonl": "2" * 64})
    assert len(drift) == 1 and "data/a.jsonl" in drift[0]
    assert oc.pin_drift(entry, "o/r", "d" * 40, {"data/a.jsonl": "1" * 64})
    assert oc.corpus_drift({"fingerprint": "sha256:aa", "files": 3}, "sha256:bb", 3)
    assert outside.refuse("arb", drift) == 3
