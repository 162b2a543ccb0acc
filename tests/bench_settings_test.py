"""``--set SETTING=VALUE`` of the benchmark scripts (benchmarks/swebench.py, benchmarks/score.py).

A setting override must reach the index build (a file over the default ``rag_max_file_size`` is
indexed only with the raised cap), must be checked before an hour-long run starts, and must be
recorded so a default run and an override run are told apart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks import score, swebench
from paqad.errors import ConfigError

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

BIG = "sympy/big.py"  # just over the default cap of 1 MiB (1048576 bytes)
QUERY = "eigenvector cache lookup"


def _big_module() -> str:
    doc = "Return x shifted by {i} for the matrix helper table.\n    " * 8
    body = "".join(f"def helper_{i}(x):\n    \"\"\"{doc.format(i=i)}\"\"\"\n    return x + {i}\n\n\n" for i in range(2200))
    body += 'def eigenvector_cache_lookup(matrix):\n    """Look up cached eigenvectors of a matrix."""\n    return matrix\n'
    assert len(body.encode()) > 1048576
    return body


@pytest.fixture
def big_repo(repo):
    repo.write(BIG, _big_module())
    repo.write("sympy/small.py", 'def det_bareiss(matrix):\n    """Determinant of a matrix by Bareiss elimination."""\n    return matrix\n')
    repo.commit("two files")
    return repo


def test_parse_settings_accepts_known_settings_and_rejects_the_rest():
    assert swebench.parse_settings(["rag_max_file_size=2097152", " rag_top_n = 30 "]) == {"rag_max_file_size": "2097152", "rag_top_n": "30"}
    assert swebench.parse_settings([]) == {}
    with pytest.raises(ValueError, match="unknown setting 'rag_max_file_sze'"):
        swebench.parse_settings(["rag_max_file_sze=1"])
    with pytest.raises(ValueError, match="expected SETTING=VALUE"):
        swebench.parse_settings(["rag_max_file_size"])
    with pytest.raises(ConfigError, match="rag_max_file_size"):
        swebench.parse_settings(["rag_max_file_size=-1"])


def test_raised_cap_reaches_the_index_and_is_recorded(big_repo):
    root = big_repo.root
    default = swebench.run_paqad(root, QUERY, [BIG], "rev-a")
    assert default["gold_files_indexed"] == []  # over the default cap: never indexed
    assert default["config_overrides"] == {"rag_embedding_provider": "none"}  # the lexical retriever, whatever the default provider

    raised = swebench.run_paqad(root, QUERY, [BIG], "rev-a", {"rag_max_file_size": "2097152"})
    assert not raised["index_reused"]  # another setting: the default run's index is not reused
    assert raised["gold_files_indexed"] == [BIG]
    assert raised["config_overrides"] == {"rag_embedding_provider": "none", "rag_max_file_size": "2097152"}
    assert raised["files"][0] == BIG

    again = swebench.run_paqad(root, QUERY, [BIG], "rev-a", {"rag_max_file_size": "2097152"})
    assert again["index_reused"] and again["files"] == raised["files"]


def test_summary_names_the_settings_of_its_rows():
    def row(settings: dict | None) -> dict:
        r = {
            "paqad_acc1": True, "paqad_acc5": True, "paqad_fn_acc5": None, "bm25_acc1": False, "bm25_acc5": True,
            "seconds": 1.0, "instance_id": "x", "paqad": {"gated_answered": True, "index_reused": True, "gold_files_indexed": ["a.py"]},
        }
        if settings is not None:
            r["settings"] = settings
        return r

    assert "paqad settings: defaults" in swebench.summarize([row(None), row({})])
    raised = swebench.summarize([row({"rag_max_file_size": "2097152"})])
    assert "| paqad lexical (gate off, top 50 units; rag_max_file_size=2097152) |" in raised
    assert "mixed" in swebench.summarize([row({}), row({"rag_max_file_size": "2097152"})])


def test_checkout_folder_differs_per_settings(monkeypatch, tmp_path, big_repo):
    """A --set run and a default run of the same instance must not share (and delete) one checkout."""
    monkeypatch.setattr(swebench, "CACHE", tmp_path / "cache")
    head = big_repo.git("rev-parse", "HEAD").strip()
    inst = {"instance_id": "sympy__sympy-1", "base_commit": head}
    plain, _ = swebench.checkout(str(big_repo.root / ".git"), inst)
    raised, cached = swebench.checkout(str(big_repo.root / ".git"), inst, {"rag_max_file_size": "2097152"})
    assert plain.name == "sympy__sympy-1" and raised.name.startswith("sympy__sympy-1+") and len(raised.name) == len(plain.name) + 9
    assert not cached and (plain / BIG).is_file() and (raised / BIG).is_file()
    assert swebench.checkout(str(big_repo.root / ".git"), inst) == (plain, True)  # the default checkout survived


def test_score_set_is_checked_before_any_corpus(capsys):
    assert score.parse_settings(["rag_max_file_size=2097152"]) == {"rag_max_file_size": "2097152"}
    for bad in (["nope=1"], ["rag_max_file_size=big"]):
        with pytest.raises(SystemExit) as exc:
            score.parse_settings(bad)
        assert exc.value.code == 2
    assert "rag_max_file_size" in capsys.readouterr().err


def test_resume_appends_only_missing_instances_and_refuses_other_settings(monkeypatch, tmp_path, big_repo, capsys):
    head = big_repo.git("rev-parse", "HEAD").strip()
    inst = {"base_commit": head, "gold_files": [BIG], "gold_functions": [], "problem_statement": QUERY}
    ruler = tmp_path / "ruler.json"
    ruler.write_text(json.dumps({"instances": [{"instance_id": "sympy__sympy-1", **inst}, {"instance_id": "sympy__sympy-2", **inst}]}))
    for name, value in (("RULER", ruler), ("RESULTS", tmp_path / "results"), ("CACHE", tmp_path / "cache")):
        monkeypatch.setattr(swebench, name, value)
    git_dir = str(big_repo.root / ".git")
    raised = ["--set", "rag_max_file_size=2097152"]

    monkeypatch.setattr(sys, "argv", ["swebench.py", "--sympy-git", git_dir, "--limit", "1", *raised])
    swebench.main()
    (rows_file,) = (tmp_path / "results").iterdir()
    monkeypatch.setattr(sys, "argv", ["swebench.py", "--sympy-git", git_dir, "--resume", str(rows_file)])
    with pytest.raises(SystemExit) as exc:  # a default run may not finish a raised-cap run's file
        swebench.main()
    assert exc.value.code == 2 and "rag_max_file_size=2097152" in capsys.readouterr().err

    monkeypatch.setattr(sys, "argv", ["swebench.py", "--sympy-git", git_dir, "--resume", str(rows_file), *raised])
    swebench.main()
    rows = [json.loads(x) for x in rows_file.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == ["sympy__sympy-1", "sympy__sympy-2"]
    assert all(r["settings"] == {"rag_max_file_size": "2097152"} and r["paqad_file_rank"] == 1 for r in rows)
    assert "N = 2 instances" in capsys.readouterr().out
