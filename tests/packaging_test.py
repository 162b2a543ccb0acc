"""The suite must exercise the installed wheel, not the source tree (whose stack packs and hook
templates exist only as package data in the wheel)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import paqad
from paqad import resources
from paqad.eligibility import stackpacks

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not os.environ.get("CI"), reason="a developer may run the suite against a source checkout")
def test_ci_imports_the_installed_wheel():
    assert REPO not in Path(paqad.__file__).resolve().parents, paqad.__file__
    # ...whose data folders are inside the package (paqad/_data), not read from a checkout.
    assert (Path(paqad.__file__).resolve().parent / "_data" / "stackpacks" / "python.yaml").is_file()
    assert str(resources.data_dir("stackpacks")).startswith(str(Path(paqad.__file__).resolve().parent))


def test_builtin_stack_packs_and_hook_template_are_package_data():
    packs = stackpacks.load_builtin_packs()
    assert {"python", "typescript", "go", "rust", "java", "kotlin", "c", "cpp", "csharp", "ruby", "php", "swift", "scala", "shell", "javascript"} <= set(packs)
    assert (resources.data_dir("hooks") / "git-hook.tmpl").is_file()


def test_a_checkout_reads_the_top_level_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install (``pip install -e .``) has no ``paqad/_data``: the top-level folders serve."""
    if (Path(paqad.__file__).resolve().parent / "_data").is_dir():
        assert resources.data_dir("hooks") == resources.importlib.resources.files("paqad") / "_data" / "hooks"
    else:
        assert resources.data_dir("hooks") == REPO / "hooks" and (REPO / "hooks" / "git-hook.tmpl").is_file()
