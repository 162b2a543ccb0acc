"""The scratch index the questions are asked of: a copy of the live index with the sampled units'
docstrings masked, built by the code an incremental update uses, and removed afterwards.

Step 1  ``scratch_root``: a folder ``<per-developer folder>/state/eval-<pid>-<hex>`` laid out like a repository's
        ``.paqad/`` (so an ``Index`` can be opened on it), removed on exit, on ^C, SIGTERM
        and SIGHUP; one left by a run killed with SIGKILL is swept by the next run.
Step 2  ``copy_index``: SQLite's online backup of the live index, read through a read-only
        connection: a consistent snapshot, and the live file is never written.
Step 3  ``mask_text``: in each affected file, the text of each docstring line is cut out of the
        source line that carries it (quotes and comment markers stay, so the file still parses and
        every line keeps its number).
Step 4  ``apply_masks``: the masked files are parsed by the builder (``build.parse_text``: the
        masked text, indexed as an update would index the file) and swapped into the copy with
        ``build.apply_files``, the incremental updater's own step (postings, document
        frequencies, field totals); a unit whose docstring survived the masking (an escape in the
        literal, say) is reported back and its question is not asked.
Step 5  with an embedding provider, the masked units' vectors are filled in the copy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from paqad import workspace
from paqad.config import Config
from paqad.eligibility import collect
from paqad.evaluation.questions import content_words
from paqad.index import store
from paqad.index.embedding import vectors
from paqad.index.reader import Index
from paqad.index.records import StoredUnit
from paqad.index.sidecar import for_index
from paqad.index.writing import build

PREFIX = "eval-"
STALE_AFTER_S = 24 * 3600  # a scratch folder whose owner cannot be checked is removed after this
LEAD_SLACK = 10  # lines above a declaration searched for its doc comment, beyond the comment's own length


# ---- Step 1: the scratch folder ------------------------------------------------------------


@contextlib.contextmanager
def scratch_root(root: Path) -> Iterator[Path]:
    """A fresh scratch folder under ``<per-developer folder>/state/``, removed however the run ends (but SIGKILL)."""
    sweep_stale(root)
    path = workspace.state_dir(root) / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    path.mkdir(parents=True)
    try:
        with _signals_raise():
            yield path
    finally:
        Index.forget(path)
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into SystemExit so ``finally`` blocks run (main thread only)."""
    def _exit(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    with contextlib.suppress(ValueError):  # not the main thread: leave the handlers alone
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                saved[sig] = signal.signal(sig, _exit)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def sweep_stale(root: Path) -> list[Path]:
    """Remove scratch folders whose process is gone (a run killed with SIGKILL)."""
    removed = []
    state = workspace.state_dir(root)
    for path in state.glob(f"{PREFIX}*") if state.is_dir() else []:
        if path.is_dir() and not path.is_symlink() and _abandoned(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _abandoned(path: Path) -> bool:
    pid_text = path.name[len(PREFIX) :].split("-", 1)[0]
    if not pid_text.isdigit():
        return time.time() - path.stat().st_mtime > STALE_AFTER_S
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return time.time() - path.stat().st_mtime > STALE_AFTER_S


# ---- Step 2: the copy ----------------------------------------------------------------------


def copy_index(live: Path, scratch: Path) -> Path:
    """Back the live index up into ``scratch``'s ``<per-developer folder>/vectors/`` and point CURRENT at the copy."""
    folder = workspace.vectors_dir(scratch)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "index-000001.sqlite"
    store.snapshot(live, target)
    (folder / "CURRENT").write_text(target.name + "\n", encoding="utf-8")
    return target


# ---- Step 3: masking the text --------------------------------------------------------------


def mask_text(text: str, units: list[StoredUnit]) -> str:
    """``text`` with each unit's docstring lines cut out of the source lines that carry them."""
    lines = text.splitlines(keepends=True)
    for unit in units:
        doc = [line.strip() for line in unit.docstring.splitlines() if len(line.strip()) >= 2]
        lead = 0 if unit.language == "python" else len(doc) + LEAD_SLACK  # doc comments sit above
        cursor, end = max(0, unit.start_line - 1 - lead), min(len(lines), unit.end_line)
        for piece in doc:
            for i in range(cursor, end):
                if piece in lines[i]:
                    lines[i] = lines[i].replace(piece, "", 1)
                    cursor = i
                    break
    return "".join(lines)


# ---- Step 4: the masked files in the copy --------------------------------------------------


def apply_masks(
    root: Path, cfg: Config, copy: Path, by_file: dict[str, list[StoredUnit]], elig: collect.Eligibility
) -> tuple[dict[str, str], set[str]]:
    """Mask, re-parse and swap the files into the copy; (masked texts by path, unit ids still unmasked)."""
    texts: dict[str, str] = {}
    failed: set[str] = set()
    changed: list[build.ParsedFile] = []
    sidecar = for_index(root)
    for path, units in sorted(by_file.items()):
        decision, text = elig.decide(path)
        if not decision.kept or text is None:
            failed.update(u.id for u in units)
            continue
        texts[path] = mask_text(text, units)
        # The builder's own parse step on the masked text: the same units, fields and (with a
        # descriptions sidecar) descriptions an update would index.
        item = build.parse_text(root, elig, path, texts[path], cfg, sidecar)
        after = {u.id: u for u in item.units} if item is not None else {}
        failed.update(u.id for u in units if u.id not in after or content_words(after[u.id].docstring))
        if item is not None:
            changed.append(item)
    build.apply_files(copy, changed)
    return texts, failed


# ---- Step 5: vectors -----------------------------------------------------------------------


def fill_vectors(scratch: Path, cfg: Config) -> vectors.VectorReport | None:
    """Embed the masked units in the copy when the index has vectors (cache first); None otherwise."""
    index = Index.open(scratch)
    try:
        has_vectors = index.meta().has_vectors
    finally:
        index.close()
    if not has_vectors:
        return None
    return vectors.fill(scratch, cfg, build.writer_lock(scratch))
