"""Eligibility: the four filters in order, on real files in a real git repository."""

from __future__ import annotations

import os

import pytest

from paqad.eligibility import collect
from paqad.errors import ConfigError

TEXT = "def useful_function():\n    return 'this file has more than fifty visible characters in it'\n"


def _decide(repo, rel, max_size=153600):
    decision, _ = collect.Eligibility(repo.root, max_size).decide(rel)
    return decision


def test_kept_python_file(repo):
    repo.write("src/app.py", TEXT)
    d = _decide(repo, "src/app.py")
    assert d.kept and d.rule.language == "python"


def test_filter1_unknown_type_is_text_but_data_is_not(repo):
    repo.write("data/blob.xyz", TEXT)
    d = _decide(repo, "data/blob.xyz")
    assert d.kept and d.rule == collect.UNKNOWN_TYPE_RULE and "unknown-type rule" in d.reason
    for rel in ["data/table.csv", "data/rows.jsonl", "art/logo.svg", ".editorconfig", "LICENSE", "docs/api/index.html", "tests/data/test1"]:
        repo.write(rel, TEXT)
        d = _decide(repo, rel)
        assert (d.kept, d.filter) == (False, "type"), d


@pytest.mark.parametrize("rel", [".paqad/configs/x.md", ".claude/notes.md", ".cursor/rules.md", "package-lock.json", "pnpm-lock.yaml", "packages.lock.json"])
def test_filter2_hard_exclusions(repo, rel):
    repo.write(rel, '{"a": "' + "x" * 80 + '"}\n' if rel.endswith(".json") else "# notes\n" + "words " * 20)
    d = _decide(repo, rel)
    assert (d.kept, d.filter) == (False, "hard"), d


def test_filter3_nested_gitignore_with_negation_and_anchoring(repo):
    repo.write(".gitignore", "/generated.py\n*.gen.py\n!keep.gen.py\nlogs\n")
    repo.write("pkg/.gitignore", "local_*.py\n")
    for rel in ["generated.py", "sub/generated.py", "a.gen.py", "keep.gen.py", "logs/x.py", "pkg/local_a.py", "pkg/ok.py"]:
        repo.write(rel, TEXT)
    kept = {d.path for d in collect.Eligibility(repo.root, 153600).collect().kept}
    assert kept == {"sub/generated.py", "keep.gen.py", "pkg/ok.py"}
    d = _decide(repo, "pkg/local_a.py")
    assert d.filter == "ignore" and "pkg/.gitignore" in d.reason


def test_filter3_info_exclude_and_build_dirs(repo):
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "exclude").write_text("private.py\n")
    for rel in ["private.py", "node_modules/lib/index.js", "dist/bundle.js", ".venv/lib/x.py", "src/ok.py"]:
        repo.write(rel, TEXT if rel.endswith(".py") else "function f() { return 'more than fifty visible characters here'; }\n")
    kept = {d.path for d in collect.Eligibility(repo.root, 153600).collect().kept}
    assert kept == {"src/ok.py"}
    assert "build or dependency folder" in _decide(repo, "node_modules/lib/index.js").reason


@pytest.mark.parametrize("name", [".env", ".env.production", "server.pem", "private.key", "id_rsa", "id_ed25519.pub", ".netrc", ".npmrc", ".pypirc", "credentials.json", "secrets.yaml"])
def test_filter3_secrets_never_indexed_even_with_include(repo, name):
    repo.write(".paqad/rag.ignore.yaml", f"include:\n  - '{name}'\n")
    repo.write(name, "API_KEY=" + "s" * 80 + "\n")
    d = _decide(repo, name)
    assert not d.kept
    assert d.filter in ("type", "ignore")
    if d.filter == "ignore":
        assert "secrets" in d.reason


def test_secrets_json_is_dropped_as_secret(repo):
    repo.write("config/credentials.json", '{"token": "' + "t" * 80 + '"}\n')
    d = _decide(repo, "config/credentials.json")
    assert d.filter == "ignore" and "secrets" in d.reason


def test_rag_ignore_exclude_and_include_override(repo):
    repo.write(".gitignore", "build/\n")
    repo.write(".paqad/rag.ignore.yaml", "exclude:\n  - 'docs/old/**'\ninclude:\n  - 'build/generated_api.py'\n")
    for rel in ["docs/old/a.md", "docs/new/a.md", "build/generated_api.py", "build/other.py"]:
        repo.write(rel, TEXT if rel.endswith(".py") else "# Title\n\n" + "documentation words " * 10)
    kept = {d.path for d in collect.Eligibility(repo.root, 153600).collect().kept}
    assert kept == {"docs/new/a.md", "build/generated_api.py"}
    assert "rag.ignore.yaml" in _decide(repo, "docs/old/a.md").reason


def test_include_cannot_readmit_hard_exclusion_or_failed_check(repo):
    repo.write(".paqad/rag.ignore.yaml", "include:\n  - '.claude/**'\n  - 'tiny.py'\n")
    repo.write(".claude/agent.md", "# Agent\n\n" + "instructions " * 20)
    repo.write("tiny.py", "x = 1\n")
    assert _decide(repo, ".claude/agent.md").filter == "hard"
    assert _decide(repo, "tiny.py").filter == "check"


@pytest.mark.parametrize("content", ["", "{", "not: [valid"])
def test_malformed_ignore_file_is_an_error(repo, content):
    repo.write(".paqad/rag.ignore.yaml", content if content else "exclude: 5\n")
    with pytest.raises(ConfigError, match="rag.ignore.yaml"):
        collect.Eligibility(repo.root, 153600)


def test_unknown_key_in_ignore_file(repo):
    repo.write(".paqad/rag.ignore.yaml", "exclude: []\nexlude: []\n")
    with pytest.raises(ConfigError, match="unknown key 'exlude'"):
        collect.Eligibility(repo.root, 153600)


def test_filter4_file_checks(repo):
    repo.write("empty.py", "")
    repo.write("binary.py", b"print('x')\0" + b"y" * 100)
    repo.write("latin1.py", "# caf\xe9 ".encode("latin-1") + b"z" * 100)
    repo.write("short.py", "x = 1\n")
    repo.write("huge.py", "# " + "h" * 2000 + "\n")
    repo.write("real.py", TEXT)
    os.symlink("real.py", repo.root / "link.py")
    reasons = {rel: _decide(repo, rel, max_size=1000) for rel in ["empty.py", "binary.py", "latin1.py", "short.py", "huge.py", "link.py"]}
    assert all(d.filter == "check" for d in reasons.values()), reasons
    assert "empty" in reasons["empty.py"].reason
    assert "NUL" in reasons["binary.py"].reason
    assert "UTF-8" in reasons["latin1.py"].reason
    assert "visible characters" in reasons["short.py"].reason
    assert "rag_max_file_size" in reasons["huge.py"].reason
    assert "symlink" in reasons["link.py"].reason


def test_symlink_loop_does_not_hang_outside_git(tmp_path):
    root = tmp_path / "plain"
    (root / "a").mkdir(parents=True)
    os.symlink("..", root / "a" / "loop")
    (root / "a" / "mod.py").write_text(TEXT)
    (root / ".gitignore").write_text("skip_me.py\n")
    (root / "a" / ".gitignore").write_text("*.tmp.py\n")
    (root / "skip_me.py").write_text(TEXT)
    (root / "a" / "x.tmp.py").write_text(TEXT)
    kept = {d.path for d in collect.Eligibility(root, 153600).collect().kept}
    assert kept == {"a/mod.py"}


def test_order_type_before_hard(repo):
    # a data file is dropped by filter 1 even under a lockfile name; any lockfile by filter 2,
    # an unknown-type one too (the unknown-type rule passes filter 1, the name fails filter 2)
    repo.write("yarn.lock", "x" * 100)
    repo.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n" + "# " + "x" * 100 + "\n")
    repo.write("deps.lock.csv", "a,b\n" * 40)
    assert _decide(repo, "yarn.lock").filter == "hard"
    assert _decide(repo, "pnpm-lock.yaml").filter == "hard"
    assert _decide(repo, "deps.lock.csv").filter == "type"


@pytest.mark.parametrize(
    "path",
    [
        "config/production.env", "deploy/app.env", "config/.env.example", "terraform.tfstate", "infra/prod.tfstate.backup", ".git-credentials",
        ".docker/config.json", "home/.docker/config.json", ".kube/config", ".pgpass", ".s3cfg", ".ssh/config", ".vault-token",
    ],
)
def test_secrets_files_by_common_name_or_path_are_never_indexed(repo, path):
    """Issue 31: dotenv files under any name, Terraform state, git's credential store, Docker's
    and kubectl's credentials; ``include`` cannot readmit them."""
    repo.write(".paqad/rag.ignore.yaml", f"include:\n  - '{path}'\n")
    repo.write(path, "PASSWORD=" + "Zq7" * 10 + "\n")
    d = _decide(repo, path)
    assert not d.kept and d.filter in ("type", "ignore"), d


@pytest.mark.parametrize("path", ["app/settings.py", "docker/config.json", "kube/config.py", "src/env.py", "terraform/main.tf", "docs/environment.md"])
def test_files_that_only_resemble_secrets_files_are_kept(repo, path):
    repo.write(path, "value = 1\n")
    assert collect.secrets_match(path) is None
