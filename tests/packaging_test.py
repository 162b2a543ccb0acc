"""The suite must exercise the installed wheel, not the source tree (whose stack packs and hook
templates exist only as package data in the wheel)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import paqad
from paqad.eligibility import stackpacks

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not os.environ.get("CI"), reason="a developer may run the suite against a source checkout")
def test_ci_imports_the_installed_wheel():
    assert REPO not in Path(paqad.__file__).resolve().parents, paqad.__file__


def test_builtin_stack_packs_and_hook_template_are_package_data():
    packs = stackpacks.load_builtin_packs()
    assert {"python", "typescript", "go", "rust", "java", "kotlin", "c", "cpp", "csharp", "ruby", "php", "swift", "scala", "shell", "javascript"} <= set(packs)
    from importlib.resources import files

    assert (files("paqad") / "_data" / "hooks" / "git-hook.tmpl").is_file()
