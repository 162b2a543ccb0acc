"""Delivery: the table (passages, pointers, low-confidence, dark), live-file checks, the section file."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from paqad import workspace
from paqad.delivery import context

T, F = 0.75, 0.35


def res(path: str, start: int, end: int, score: float) -> SimpleNamespace:
    return SimpleNamespace(path=path, start_line=start, end_line=end, score=score, source="indexed text")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace.ensure(tmp_path)
    for i in range(15):
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / f"m{i}.py").write_text("".join(f"line {n} of m{i}\n" for n in range(1, 41)))
    (tmp_path / "big.py").write_text("x = 1\n" * 1000)
    return tmp_path


def test_one_to_five_high_passages_are_delivered_with_bodies_and_spans(root):
    d = context.select(root, "q", [res("pkg/m1.py", 3, 5, 0.9), res("pkg/m2.py", 1, 2, 0.8), res("pkg/m3.py", 1, 2, 0.5)], T, F)
    assert d.case == "passages" and [p.span for p in d.passages] == ["pkg/m1.py:L3-5", "pkg/m2.py:L1-2"]
    assert d.passages[0].text == "line 3 of m1\nline 4 of m1\nline 5 of m1\n"  # from the live file
    body = context.render_body(d)
    assert "### pkg/m1.py:L3-5 (score 0.90)" in body and context.HINT in body


def test_a_passage_body_is_capped_at_1200_characters(root):
    d = context.select(root, "q", [res("big.py", 1, 1000, 0.99)], T, F)
    assert len(d.passages[0].text) == 1200 and d.passages[0].truncated
    assert "(truncated)" in context.render_body(d)


def test_more_than_five_high_bring_the_best_five_with_code_and_pointers_to_the_rest(root):
    results = [res(f"pkg/m{i}.py", 2, 4, 0.9 - i / 100) for i in range(15)]  # the 15 files the fixture has
    d = context.select(root, "q", results, T, F)
    assert d.case == "pointers"
    bodies = [p for p in d.passages if p.text is not None]
    pointers = [p for p in d.passages if p.text is None]
    assert [p.path for p in bodies] == [f"pkg/m{i}.py" for i in range(5)]
    assert [p.path for p in pointers] == [f"pkg/m{i}.py" for i in range(5, 15)]  # the rest, best first
    body = context.render_body(d)
    assert "### pkg/m0.py:L2-4 (score 0.90)" in body and "- pkg/m5.py:L2-4 (score 0.85)" in body
    assert body.index("### pkg/m4.py") < body.index("- pkg/m5.py")  # code first, then pointers


def test_without_code_beside_pointers_more_than_five_high_are_pointers_only(root, monkeypatch):
    monkeypatch.setattr(context, "BODIES_WITH_POINTERS", 0)
    results = [res(f"pkg/m{i}.py", 2, 4, 0.9 - i / 100) for i in range(15)]
    d = context.select(root, "q", results, T, F)
    assert d.case == "pointers" and len(d.passages) == 12 and all(p.text is None for p in d.passages)
    body = context.render_body(d)
    assert "- pkg/m0.py:L2-4 (score 0.90)" in body and "```" not in body


def test_pointers_are_checked_against_the_live_file(root):
    (root / "pkg" / "m0.py").unlink()  # deleted since indexing
    (root / "pkg" / "m1.py").write_text("short\n")  # shrank since indexing
    results = [res("pkg/m0.py", 1, 2, 0.9), res("pkg/m1.py", 1, 30, 0.9), res("pkg/m2.py", 35, 90, 0.9),
               res("../outside.py", 1, 1, 0.9), res("/etc/passwd", 1, 1, 0.9)] + [res(f"pkg/m{i}.py", 1, 1, 0.8) for i in range(3, 6)]
    d = context.select(root, "q", results, T, F)
    assert d.case == "pointers"
    assert [p.span for p in d.passages][:2] == ["pkg/m1.py:L1-1", "pkg/m2.py:L35-40"]  # clipped to the live length
    assert not any(p.path in ("pkg/m0.py", "../outside.py", "/etc/passwd") for p in d.passages)


def test_a_symlink_out_of_the_repository_is_not_read(root, tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    secret.write_text("do not deliver\n")
    (root / "link.py").symlink_to(secret)
    d = context.select(root, "q", [res("link.py", 1, 1, 0.9)], T, F)
    assert d.case == "dark" and "do not deliver" not in context.render_body(d)


def _settled(path: Path) -> int:
    """An mtime an hour ago on ``path`` (a file a warm process keeps); returns it."""
    then = time.time_ns() - 3600 * 1_000_000_000
    os.utime(path, ns=(then, then))
    return then


def test_a_kept_passage_follows_an_edit_that_keeps_size_and_mtime(root):
    """A warm service keeps a delivered file's redacted lines (issue 34); an edit of the same size
    with the mtime put back is still delivered as the live file reads (its ctime moved)."""
    path = root / "pkg" / "m1.py"
    then = _settled(path)
    assert "line 3 of m1" in context.render_body(context.select(root, "q", [res("pkg/m1.py", 3, 5, 0.9)], T, F))
    path.write_text(path.read_text().replace("line 3 of m1", "LINE 3 OF M1"))
    os.utime(path, ns=(then, then))
    body = context.render_body(context.select(root, "q", [res("pkg/m1.py", 3, 5, 0.9)], T, F))
    assert "LINE 3 OF M1" in body and "line 3 of m1" not in body


def test_a_kept_file_swapped_for_a_symlink_out_is_not_delivered(root, tmp_path_factory):
    path = root / "pkg" / "m2.py"
    _settled(path)
    assert "line 1 of m2" in context.render_body(context.select(root, "q", [res("pkg/m2.py", 1, 2, 0.9)], T, F))
    outside = tmp_path_factory.mktemp("elsewhere") / "m2.py"
    outside.write_text(path.read_text())
    _settled(outside)
    path.unlink()
    path.symlink_to(outside)
    assert context.select(root, "q", [res("pkg/m2.py", 1, 2, 0.9)], T, F).case == "dark"


def test_none_high_some_low_gives_two_labelled_low_confidence_passages(root):
    d = context.select(root, "q", [res(f"pkg/m{i}.py", 1, 2, 0.5) for i in range(4)] + [res("pkg/m9.py", 1, 1, 0.1)], T, F)
    assert d.case == "low-confidence" and len(d.passages) == 2
    assert "LOW CONFIDENCE, score 0.50" in context.render_body(d)


def test_dark_says_nothing_but_the_best_score(root):
    d = context.select(root, "where is the moon", [res("pkg/m1.py", 1, 2, 0.2)], T, F)
    assert d.case == "dark" and d.passages == [] and d.best_score == 0.2
    body = context.render_body(d)
    assert "best score 0.20" in body and "line 1" not in body
    assert "best score none" in context.render_body(context.select(root, "q", [], T, F, reason="no_query_term_in_index"))


def test_section_is_replaced_in_place_and_other_sections_survive(root):
    path = context.context_path(root)
    path.parent.mkdir(parents=True)
    path.write_text("# Session context\n\n## Base drift\n\nmain moved 3 commits\n\n## Retrieved context\n\nold\n\n## Notes\n\nmine\n")
    d = context.select(root, "q", [res("pkg/m1.py", 1, 1, 0.9)], T, F)
    context.deliver(root, d)
    text = path.read_text()
    assert "main moved 3 commits" in text and "## Notes\n\nmine" in text and "old" not in text
    assert text.count("## Retrieved context") == 1
    context.deliver(root, d)
    assert path.read_text() == text  # idempotent


def test_headings_inside_delivered_passages_do_not_split_the_section(root):
    (root / "doc.md").write_text("## Sessions\n\n```py\nx = 1\n```\n")
    context.deliver(root, context.select(root, "q", [res("doc.md", 1, 5, 0.9)], T, F))
    context.write_section(root, "## Base drift", "moved")
    context.deliver(root, context.select(root, "q2", [res("pkg/m1.py", 1, 1, 0.9)], T, F))
    text = context.context_path(root).read_text()
    assert "## Sessions" not in text and "## Base drift\n\nmoved" in text and '"q2"' in text
    first = context.select(root, "q", [res("doc.md", 1, 5, 0.9)], T, F)
    assert "````\n## Sessions" in context.render_body(first)  # a longer fence than the passage's own


def test_the_last_delivery_is_kept_for_the_stale_path(root):
    d = context.select(root, "where is m1", [res("pkg/m1.py", 1, 1, 0.9)], T, F)
    context.deliver(root, d)
    last = context.last_delivery(root)
    assert last is not None and last.query == "where is m1" and last.passages == d.passages
    note = context.stale_note(last, now=last.generated_at + 180)
    assert "3 min ago" in note and '"where is m1"' in note


def test_hook_text_fits_the_host_limit_by_dropping_whole_passages(root):
    d = context.select(root, "q", [res(f"pkg/m{i}.py", 1, 40, 0.9) for i in range(5)], T, F)
    full = context.render_for_hook(d, 100_000)
    assert full.startswith("## Retrieved context (paqad)") and full.count("### ") == 5
    short = context.render_for_hook(d, 1500)
    assert len(short) <= 1500 and 0 < short.count("### ") < 5 and "more: `paqad rag search` with the same words lists them" in short
    assert len(context.render_for_hook(d, 50)) <= 50
