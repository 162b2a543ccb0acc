"""The documentation site builds with MkDocs, warnings as errors (a broken link or anchor, a page
missing from the nav, a nav entry without a page). Offline: no plugin, nothing fetched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n(pip install -e '.[test]' brings mkdocs)"
    for page in ("index.html", "reference/cli/index.html", "reference/settings/index.html", "security/index.html", "changelog/index.html"):
        assert (site / page).is_file(), page
    assert "rag_prompt_budget" in (site / "reference/settings/index.html").read_text(encoding="utf-8")
