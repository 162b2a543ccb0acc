"""MkDocs hooks (``hooks:`` in mkdocs.yml): the changelog page, and links to files outside ``docs/``.

- ``changelog.md`` is made from the repository's ``CHANGELOG.md`` at build time (one file, no copy to
  keep in step).
- A page may link a repository file outside ``docs/`` (``[benchmarks/README.md](../benchmarks/README.md)``,
  which works when the page is read on a forge). The site holds no such page, so the link becomes the
  file's path in code (no URL to guess); a link to a file that does not exist is left alone, and
  ``mkdocs build --strict`` fails on it as on any broken link.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from mkdocs.structure.files import File, Files

LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def _repo(config: Any) -> Path:
    return Path(config["docs_dir"]).resolve().parent


def _outside(markdown: str, page_dir: PurePosixPath, docs: Path, repo: Path) -> str:
    def swap(m: re.Match[str]) -> str:
        text, target = m[1], m[2]
        if "://" in target or target.startswith(("mailto:", "/")):
            return m[0]
        resolved = (docs / page_dir / target).resolve()
        if resolved.is_relative_to(docs) or not resolved.is_relative_to(repo) or not resolved.exists():
            return m[0]  # a page of the site, or a broken link: mkdocs judges it
        rel = resolved.relative_to(repo).as_posix()
        return text if text.strip("`") == rel else f"{text} (`{rel}`)"

    return LINK.sub(swap, markdown)


def _from_root(m: re.Match[str]) -> str:
    """A link written from the repository's root, as the changelog page in ``docs/`` reads it."""
    target = m[2]
    if "://" in target or target.startswith(("mailto:", "/")):
        return m[0]
    target = target.removeprefix("docs/") if target.startswith("docs/") else "../" + target
    return f"[{m[1]}]({target}{m[3] or ''})"


def on_files(files: Files, config: Any, **_: Any) -> Files:
    repo = _repo(config)
    text = (repo / "CHANGELOG.md").read_text(encoding="utf-8")
    text = LINK.sub(_from_root, text)
    files.append(File.generated(config, "changelog.md", content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    return _outside(markdown, PurePosixPath(page.file.src_uri).parent, docs, _repo(config))
