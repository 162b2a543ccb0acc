"""`paqad bootstrap`: it indexes, then reports what would improve retrieval, from real decisions."""

from __future__ import annotations

import json

from paqad.cli.bootstrap_cmd import reason_label
from testing.repos import Repo, make_shop


def _untidy(repo: Repo) -> Repo:
    """A shop with one file for each way of being left out, plus files without a grammar."""
    make_shop(repo, commit=False)
    repo.write("deploy/secrets.yaml", "api_token: abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\n")
    repo.write("node_modules/left/index.js", "module.exports = function leftPad(s, n) { return s.padStart(n); };\n")
    repo.write("data/fixture.json", b'{"a": "' + b"\x00" * 80 + b'"}\n')
    repo.write("shop/catalogue.py", "def list_products():\n    return " + repr(["product"] * 400) + "\n")
    for i in range(5):
        repo.write(f"assets/shape{i}.svg", "solid shape\n" * 10)
    repo.write("Dockerfile", "FROM python:3.12-slim\nCOPY . /app\nRUN pip install /app\nCMD [\"python\", \"-m\", \"shop\"]\n")
    repo.commit("untidy")
    return repo


def test_bootstrap_indexes_and_reports_skipped_files_by_filter_and_reason(repo: Repo, paqad_cli) -> None:
    _untidy(repo)
    proc = paqad_cli("-c", "rag_max_file_size=2000", "bootstrap", "--json", cwd=repo.root)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["build"]["mode"] == "full" and data["index"]["units"] > 5
    skipped = data["skipped"]
    assert skipped["ignore"]["reasons"]["secrets file"]["examples"] == ["deploy/secrets.yaml"]
    assert skipped["ignore"]["reasons"]["inside a build or dependency folder"]["examples"] == ["node_modules/left/index.js"]
    assert skipped["check"]["reasons"]["binary"]["examples"] == ["data/fixture.json"]
    assert skipped["check"]["reasons"]["larger than rag_max_file_size"]["examples"] == ["shop/catalogue.py"]
    assert skipped["type"]["reasons"]["no stack pack handles '.svg' files"]["files"] == 5
    assert data["languages_without_grammar"]["dockerfile"]["examples"] == ["Dockerfile"]
    desc = data["descriptions"]
    assert desc["total"] > 0 and desc["described"] == 0 and desc["share"] == 0.0
    commands = " ".join(n["command"] for n in data["next"])
    for expected in ("paqad describe pending", "paqad rag explain shop/catalogue.py", "paqad stackpack new", "paqad hooks install"):
        assert expected in commands
    status = json.loads(paqad_cli("rag", "status", "--json", cwd=repo.root).stdout)
    assert status["rag_enabled"] is True and status["index"]["built"]


def test_bootstrap_again_is_incremental_and_text_output_names_the_next_steps(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    assert paqad_cli("bootstrap", cwd=repo.root).returncode == 0
    again = paqad_cli("bootstrap", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert "(incremental)" in again.stdout
    assert "Descriptions: 0/" in again.stdout and "paqad describe pending" in again.stdout


def test_reason_labels_drop_per_file_detail() -> None:
    assert reason_label("secrets file (matches .env); never indexed, include cannot override") == "secrets file"
    assert reason_label("larger than rag_max_file_size (9000 > 2000 bytes)") == "larger than rag_max_file_size"
    assert reason_label("no stack pack handles '.xyz' files") == "no stack pack handles '.xyz' files"
