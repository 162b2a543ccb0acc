"""Issue 34, item 5: paqad never indexes the files it writes. Install every host's hooks and every
MCP entry in a real repository, list what changed, and check each changed file is in the one
registry (``paqad.written``) and is dropped by the eligibility filter, then that a search does
not find paqad's own hook file."""

from __future__ import annotations

import json

from paqad import written
from paqad.eligibility import collect
from testing.repos import Repo, make_shop


def _changed(repo: Repo) -> list[str]:
    out = repo.git("status", "--porcelain", "-uall", "--ignored=no")
    return sorted(line[3:] for line in out.splitlines() if line.strip())


def test_every_file_paqad_writes_is_registered_and_never_indexed(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    (repo.root / "lefthook.yml").write_text("pre-commit:\n  commands: {}\n")
    repo.commit("lefthook")
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    installed = paqad_cli("hooks", "install", "--agents", "all", cwd=repo.root)
    assert installed.returncode == 0, installed.stderr
    assert paqad_cli("mcp", "install", "--host", "all", cwd=repo.root).returncode in (0, 1)
    changed = _changed(repo)
    assert ".github/hooks/paqad.json" in changed and ".mcp.json" in changed and "lefthook-local.yml" in changed, changed
    for path in changed:
        assert collect.hard_exclusion(path) is not None, f"{path}: paqad wrote it, and the eligibility filter would index it"
        inside = path.split("/", 1)[0] in written.FOLDERS
        assert inside or written.written_by_paqad(path), f"{path}: not in paqad.written"
    assert paqad_cli("rag", "update", cwd=repo.root).returncode == 0
    found = json.loads(paqad_cli("rag", "probe", "post tool use hook", "--json", cwd=repo.root).stdout)
    assert not [r for r in found["results"] if written.written_by_paqad(r["path"])]
