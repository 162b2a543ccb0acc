"""``paqad describe promote``: descriptions into docstrings or doc comments, as a unified diff for review.

Nothing is written here: the diff is applied by the user (``paqad describe promote | git apply``).
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.describe.ops import parse_current
from paqad.errors import UsageError
from paqad.index.sidecar import Sidecar, description_for, read_sidecar

if TYPE_CHECKING:
    from paqad.eligibility.collect import Eligibility


def promote(root: Path) -> str:
    """A unified diff (``git apply``-able, paths ``a/…`` ``b/…``) that writes each valid
    description into the source: a docstring in Python, a ``//`` or ``#`` comment block above the
    declaration elsewhere. Units that already have a docstring, and languages without line
    comments, are skipped. Nothing is written here."""
    from paqad import config  # with eligibility and the parsers, ~50 ms that pending and status skip
    from paqad.eligibility import collect  # see above: only put and promote parse

    sidecar = read_sidecar(root)
    by_path: dict[str, list[str]] = {}
    for unit_id in sorted(sidecar.entries):
        by_path.setdefault(unit_id.partition("::")[0], []).append(unit_id)
    if not by_path:
        return ""
    elig = collect.Eligibility(root, config.load(root).rag_max_file_size)
    return "".join(_promote_file(root, path, ids, sidecar, elig) for path, ids in sorted(by_path.items()))


def _promote_file(root: Path, path: str, ids: list[str], sidecar: Sidecar, elig: Eligibility) -> str:
    try:
        units, _ = parse_current(root, path, elig)
    except UsageError:
        return ""
    wanted = {u.id: u for u in units if u.id in ids and u.part == 1 and not u.docstring.strip()}
    todo = [(u, description_for(sidecar, u.id, u.content_hash)) for u in wanted.values()]
    todo = [(u, text) for u, text in todo if text]
    if not todo:
        return ""
    old = (root / path).read_text(encoding="utf-8")
    lines = old.splitlines(keepends=True)
    inserts = _python_inserts(old, todo) if todo[0][0].language == "python" else _comment_inserts(lines, todo)
    new = list(lines)
    for at, block in sorted(inserts, key=lambda item: -item[0]):
        new[at:at] = block
    return _unified(path, lines, new)


def _python_inserts(source: str, todo: list) -> list[tuple[int, list[str]]]:
    """A docstring as the first statement of each def/class (matched by its ``def`` line)."""
    lines = source.splitlines(keepends=True)
    nodes = {n.lineno: n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    out = []
    for unit, text in todo:
        node = nodes.get(unit.start_line)
        if node is None or not node.body:
            continue
        first = node.body[0]
        at = min([first.lineno, *[d.lineno for d in getattr(first, "decorator_list", [])]])
        if at <= node.lineno or at > len(lines):  # a one-line def: no body line to put it above
            continue
        indent = re.match(r"[ \t]*", lines[at - 1]).group(0)  # type: ignore[union-attr]
        out.append((at - 1, _docstring(text, indent)))
    return out


def _docstring(text: str, indent: str, width: int = 88) -> list[str]:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    one = f'{indent}"""{body}"""\n'
    if len(one) <= width + 1:
        return [one]
    wrapped = textwrap.wrap(body, max(20, width - len(indent)), break_long_words=False, break_on_hyphens=False)
    return [f'{indent}"""{wrapped[0]}\n', *[f"{indent}{w}\n" for w in wrapped[1:]], f'{indent}"""\n']


#: Line-comment marker per language for the comment block ``promote`` writes above a declaration.
COMMENT_MARKERS = {
    "go": "//", "javascript": "//", "typescript": "//", "java": "//", "kotlin": "//", "c": "//", "cpp": "//",
    "csharp": "///", "rust": "///", "swift": "///", "scala": "//", "php": "//", "ruby": "#", "shell": "#",
}


def _comment_inserts(lines: list[str], todo: list) -> list[tuple[int, list[str]]]:
    out = []
    for unit, text in todo:
        marker = COMMENT_MARKERS.get(unit.language)
        if marker is None or not 1 <= unit.start_line <= len(lines):
            continue
        indent = re.match(r"[ \t]*", lines[unit.start_line - 1]).group(0)  # type: ignore[union-attr]
        text = _go_doc(unit.name, text) if unit.language == "go" else text
        width = max(20, 88 - len(indent) - len(marker) - 1)
        wrapped = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
        out.append((unit.start_line - 1, [f"{indent}{marker} {w}\n" for w in wrapped]))
    return out


def _go_doc(name: str, text: str) -> str:
    """Go doc comments start with the declared name (``// Void cancels ...``, Effective Go; golint
    and gofmt's doc tooling expect it): "Cancels an invoice" becomes "Void cancels an invoice"."""
    if not name or text.split(" ", 1)[0].strip(".,:;") == name:
        return text
    first, _, rest = text.partition(" ")
    lowered = first[:1].lower() + first[1:] if first[1:2].islower() or len(first) == 1 else first
    return f"{name} {lowered} {rest}".rstrip()


def _unified(path: str, old: list[str], new: list[str]) -> str:
    """difflib's unified diff with git's headers and ``\\ No newline at end of file`` markers."""
    out = []
    for line in difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return f"diff --git a/{path} b/{path}\n" + "".join(out) if out else ""
