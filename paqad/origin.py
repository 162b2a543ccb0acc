"""Where this paqad was installed from, so every fix command paqad prints works as printed.

paqad is not on PyPI: ``pip install 'paqad[mcp]'`` fails in a fresh venv. pip records what it
installed from in the distribution's ``direct_url.json`` (PEP 610): a local folder (``dir_info``,
editable or not), a VCS URL (``vcs_info``, with the commit it resolved), or an archive
(``archive_info``: a wheel or sdist file or URL). No ``direct_url.json`` means an index (or an
installer that records nothing), so the name is all there is to give. :func:`pip_install` turns
that into a command for this interpreter: ``<python> -m pip install -e '/src/paqad[mcp]'``, say.
"""

from __future__ import annotations

import importlib.metadata
import json
import shlex
import sys
from typing import Required, TypedDict, cast
from urllib.parse import unquote, urlsplit

NAME = "paqad"


class VcsInfo(TypedDict, total=False):
    vcs: str
    commit_id: str
    requested_revision: str


class DirInfo(TypedDict, total=False):
    editable: bool


class DirectUrl(TypedDict, total=False):
    """The keys of PEP 610's ``direct_url.json`` this module reads (pip writes it; each is checked before use)."""

    url: Required[str]
    vcs_info: VcsInfo
    dir_info: DirInfo
    subdirectory: str


def _direct_url() -> DirectUrl | None:
    try:
        text = importlib.metadata.distribution(NAME).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    return cast(DirectUrl, data) if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def requirement(extras: str = "") -> tuple[str, bool]:
    """The pip requirement that installs this paqad again (with ``extras``, e.g. ``"mcp"``), and
    whether it was an editable install."""
    tag = f"[{extras}]" if extras else ""
    data = _direct_url()
    if data is None:
        return f"{NAME}{tag}", False
    url: str = data["url"]
    if isinstance(data.get("vcs_info"), dict):
        vcs = data["vcs_info"]
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        sub = data.get("subdirectory")
        ref = f"{vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else "") + (f"#subdirectory={sub}" if sub else "")
        return f"{NAME}{tag} @ {ref}", False
    parts = urlsplit(url)
    if isinstance(data.get("dir_info"), dict) and parts.scheme == "file":
        return unquote(parts.path) + tag, bool(data["dir_info"].get("editable"))
    return f"{NAME}{tag} @ {url}", False


#: ``<python> -m pip install``: printed in fix commands, never run here.
PIP_INSTALL = ("-m", "pip", "install")


def pip_install(extras: str = "", *, force: bool = False, python: str | None = None) -> str:
    """The command that (re)installs this paqad from where it came, into ``python`` (default: this one)."""
    req, editable = requirement(extras)
    flags = ["--force-reinstall"] * force + ["-e"] * editable
    return pip_command(*flags, req, python=python)


def pip_command(*args: str, python: str | None = None) -> str:
    """``<python> -m pip install ARGS`` (default: this interpreter), quoted for a POSIX shell."""
    interpreter = python or sys.executable
    return shlex.join([interpreter, *PIP_INSTALL, *args])


def extra_requirements(extra: str) -> list[str]:
    """The requirements an extra of this paqad adds (``mcp`` -> ``['mcp<3,>=2.3']``)."""
    try:
        found = importlib.metadata.requires(NAME) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    marker = f'extra == "{extra}"'
    return [r.split(";")[0].strip() for r in found if marker in r.replace("'", '"')]
