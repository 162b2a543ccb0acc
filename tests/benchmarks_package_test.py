"""benchmarks/ is one package with one entry (issue 33, item 5): every module imports as
``benchmarks.NAME``, which is what ``python -m benchmarks NAME`` runs, and none edits ``sys.path``
to find its siblings (they import each other as ``from benchmarks import scoring``)."""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

from benchmarks import __main__ as entry

BENCH = Path(entry.__file__).resolve().parent
MODULES = sorted(p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_"))


def sys_path_edits(source: str) -> list[int]:
    """Lines that change ``sys.path``: a call of one of its methods, or an assignment to it or a slice of it."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            targets = [node.func.value]
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = [t.value if isinstance(t, ast.Subscript) else t for t in (node.targets if isinstance(node, ast.Assign) else [node.target])]
        if any(ast.unparse(t) == "sys.path" for t in targets):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_sys_path_rule_sees_every_way_of_editing_it():
    edits = "import sys\nsys.path.insert(0, 'x')\nsys.path[:0] = ['y']\nsys.path.append('z')\nsys.path += ['w']\nsys.path = []\n"
    assert sys_path_edits(edits) == [2, 3, 4, 5, 6]
    assert sys_path_edits("import sys\nprint(sys.path[0])\nfrom benchmarks import scoring\n") == []


def test_no_benchmark_module_edits_sys_path():
    found = {p.name: lines for p in sorted(BENCH.glob("*.py")) if (lines := sys_path_edits(p.read_text(encoding="utf-8")))}
    assert not found, f"benchmark modules that edit sys.path (import siblings as `from benchmarks import X`): {found}"


def test_every_script_answers_help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``python -m benchmarks NAME --help`` prints the script's usage and runs nothing: every module
    with a ``__main__`` block builds an ``argparse`` parser (one that read ``sys.argv`` by hand ran, or
    crashed, on ``--help``); the few whose parser a shared module builds are run with ``--help``."""
    scripts = [name for name, (script, _) in entry.modules().items() if script]
    assert len(scripts) > 40
    shared_parser = [name for name in scripts if "ArgumentParser(" not in (BENCH / f"{name}.py").read_text(encoding="utf-8")]
    assert set(shared_parser) <= {"index_artifact", "shared_store"}, f"scripts without an argparse parser: {shared_parser}"
    monkeypatch.setattr(sys, "argv", ["pytest"])
    for name in shared_parser:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module may be imported already
            assert entry.main([name, "--help"]) == 0, name
        assert capsys.readouterr().out.startswith("usage:"), name


@pytest.mark.parametrize("name", MODULES)
def test_every_benchmark_module_imports_as_part_of_the_package(name: str):
    module = importlib.import_module(f"benchmarks.{name}")
    assert Path(module.__file__ or "").resolve() == BENCH / f"{name}.py"


def test_the_entry_lists_every_script_and_runs_one_as_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    scripts = [name for name, (script, _) in entry.modules().items() if script]
    assert {"score", "all_rulers", "hook_latency", "code_shape"} <= set(scripts) and "scoring" not in scripts
    assert entry.main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name} " in listed for name in scripts)
    monkeypatch.setattr(sys, "argv", ["pytest"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module may be imported already (above)
        assert entry.main(["check-rulers", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: check_rulers.py")
    assert entry.main(["scoring"]) == 2
    assert "shared code" in capsys.readouterr().err


def test_a_private_copy_of_a_corpus_leaves_its_index_behind_and_an_unfetched_one_stops_the_run(tmp_path: Path):
    from benchmarks import corpora

    source = tmp_path / "flask-3.1.3"
    (source / ".git").mkdir(parents=True)
    (source / ".paqad" / "vectors").mkdir(parents=True)
    (source / "app.py").write_text("def route(): ...\n")
    copy = corpora.private_copy(source, tmp_path / "work" / "flask")
    assert (copy / "app.py").read_text() == "def route(): ...\n" and (copy / ".git").is_dir()
    assert not (copy / ".paqad").exists()
    with pytest.raises(SystemExit):
        corpora.private_copy(tmp_path / "requests-2.32.3", tmp_path / "work" / "requests")
    assert not (tmp_path / "work" / "requests").exists()
