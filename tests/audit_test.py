"""The audit log: one line per build, rebuild reasons, corrupt-index recovery; secrets redacted."""

from __future__ import annotations

import re

from paqad import audit, config, workspace
from paqad.index import store
from paqad.index.writing import build
from testing.env import LEXICAL
from testing.repos import make_shop

LINE = re.compile(r'^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] (INFO|WARN|ERROR) [a-z-]+( [a-z_]+="[^"]*")*$')


def test_builds_are_logged_one_line_each(repo):
    make_shop(repo)
    cfg = config.load(repo.root, environ=LEXICAL)
    build.build_full(repo.root, cfg)
    build.update(repo.root, cfg)
    lines = audit.read(repo.root)
    assert all(LINE.match(line) for line in lines), lines
    events = [line.split()[2] for line in lines]
    assert events == ["build-started", "build-completed", "build-completed"]
    assert 'mode="full"' in lines[1] and 'units="' in lines[1] and 'mode="incremental"' in lines[2]


def test_update_replaces_a_corrupt_index_and_says_so(repo):
    make_shop(repo)
    cfg = config.load(repo.root, environ=LEXICAL)
    build.build_full(repo.root, cfg)
    store.current_path(repo.root).write_bytes(b"garbage" * 500)
    report = build.update(repo.root, cfg)
    assert report.mode.startswith("full") and report.files_indexed == 3
    assert any("index-rebuilt-after-corruption" in line for line in audit.read(repo.root))


def test_secrets_never_reach_the_file(repo):
    workspace.ensure(repo.root)
    audit.log(repo.root, "ERROR", "provider-failed", error="401 for key sk-abcdefghijklmnopqrstuvwx1234", detail='say "hi"\nnext')
    [line] = audit.read(repo.root)
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in line and "***" in line
    assert '\\"hi\\"' in line and "\\n" in line


def test_no_paqad_folder_no_file(tmp_path):
    audit.log(tmp_path, "INFO", "build-started")
    assert not (tmp_path / ".paqad").exists() and not workspace.local_dir(tmp_path).exists()
