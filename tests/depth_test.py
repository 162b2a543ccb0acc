"""Adaptive depth: trivial prompts, breadth of the working set, the step-up."""

from __future__ import annotations

import pytest

from paqad.delivery import depth


@pytest.mark.parametrize("prompt", ["thanks", "Thanks!", "yes", "ok", "go on", "ok, go on", "yes please", "thank you", "  ", "lgtm 👍"])
def test_acknowledgements_need_no_retrieval(prompt):
    assert depth.is_trivial(prompt)
    assert depth.for_prompt(prompt, 20) == depth.Depth("none", 0, "trivial prompt (an acknowledgement): no retrieval")


@pytest.mark.parametrize("prompt", ["fix login", "why?", "yes but where is the cookie signed", "thanks, now add retries to charge", "ok ok ok ok ok"])
def test_requests_are_not_trivial_however_short(prompt):
    assert not depth.is_trivial(prompt)
    assert depth.for_prompt(prompt, 20).level == "standard"


@pytest.mark.parametrize(
    ("path", "module"),
    [("src/app/views/x.py", "src/app"), ("src/app/x.py", "src/app"), ("shop/x.py", "shop"), ("README.md", ".")],
)
def test_module_is_the_first_two_parts_of_the_folder(path, module):
    assert depth.module_of(path) == module


@pytest.mark.parametrize(
    ("files", "scope", "level", "top_n"),
    [
        ([], "single-file", "standard", 20),
        (["src/a/x.py"], "single-file", "standard", 20),
        (["src/a/x.py", "src/a/y.py", "src/a/sub/z.py"], "single-module", "standard", 20),
        (["src/a/x.py", "src/b/y.py", "docs/z.md"], "multi-module", "standard", 20),
        (["src/a/x.py", "src/b/y.py", "docs/z.md", "README.md"], "system-wide", "deep", 60),
    ],
)
def test_breadth_of_the_working_set(files, scope, level, top_n):
    got = depth.for_working_set(files, 20)
    assert (got.scope, got.level, got.top_n) == (scope, level, top_n)


def test_a_prompt_with_a_system_wide_change_goes_deep_and_a_trivial_one_stays_none():
    wide = ["a/b/x.py", "c/d/x.py", "e/f/x.py", "g/h/x.py"]
    assert depth.choose("where are retries scheduled", wide, 10).level == "deep"
    assert depth.choose("thanks", wide, 10).level == "none"
    assert depth.choose(None, ["a/b/x.py"], 10).level == "standard"


def test_step_up_once_when_too_few_usable_passages_come_back():
    std = depth.for_prompt("where is x", 20)
    up = depth.step_up(std, 2, 20)
    assert up is not None and (up.level, up.top_n) == ("deep", 60) and "stepped up" in up.reason
    assert depth.step_up(std, 3, 20) is None
    assert depth.step_up(up, 0, 20) is None  # deep is the deepest
