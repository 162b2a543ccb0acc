"""Build the index in numbered steps, fully (new generation) or incrementally (one transaction).

Step 1  collect eligible files (paqad.eligibility.collect), Step 2  parse them into units,
Step 3  count field terms and lengths, Step 4  compute document frequencies and field averages,
Step 5  write postings with their BM25F weights, Step 6  publish (full) or commit (incremental),
Step 7  embed pending units (``index.embedding.vectors``; only with an embedding provider), after the lexical index is live, in resumable batches.

Agent-written descriptions (``paqad.describe``, the sidecar ``paqad.descriptions.json`` read by
``index.sidecar``) fill a unit's ``description`` field and join its embedded text while their content
hash matches the unit. The index keeps the description it applied per unit (table ``descriptions``)
and the sidecar's sha256 (meta ``descriptions_sha``): when the sidecar changes, an update re-indexes
only the files whose units gain, lose or change a description.
"""

from __future__ import annotations

import enum
import hashlib
import json
import sqlite3
import stat
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import filelock

from paqad import __version__, audit, git, redaction, workspace
from paqad.config import Config
from paqad.eligibility import collect, stackpacks
from paqad.errors import IndexCorruptError, IndexOutdatedError, LockedError
from paqad.index import fields, guard, integrity, postings, schema, store, timeline
from paqad.index.embedding import interim, reembed, vectors
from paqad.index.sidecar import Sidecar, description_for, for_index
from paqad.index.writing import edits, syncstamp
from paqad.parse import PARSER_VERSION, parse_file
from paqad.tokenize import TOKENIZER_VERSION
from paqad.units import CodeUnit

LOCK_TIMEOUT_S = workspace.INDEX_LOCK_TIMEOUT_S

# Receives one unit's postings: (uid, [(tid, w, mask), ...]).
PostingSink = Callable[[int, list[tuple[int, float, int]]], None]


@dataclass
class ParsedFile:
    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str
    units: list[CodeUnit]
    is_test: bool = False
    counts: list[list[Counter[str]]] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)


@dataclass
class BuildReport:
    """What a build or update did; rendered by the CLI, logged to the audit log."""

    mode: str
    files_indexed: int = 0
    files_changed: int = 0
    files_removed: int = 0
    files_unchanged: int = 0
    files_dropped: int = 0
    units: int = 0
    seconds: float = 0.0
    languages: dict[str, int] = field(default_factory=dict)
    active_packs: list[str] = field(default_factory=list)
    vectors: vectors.VectorReport | None = None
    interim_vectors: int = 0  # stand-in vectors made before the model's (paqad.index.embedding.interim)
    descriptions_changed: int = 0  # units whose applied description changed (full build: applied)
    unnamed: list[str] = field(default_factory=list)  # names not valid UTF-8, skipped (escaped; guard.split_names)


def writer_lock(root: Path, timeout: float = LOCK_TIMEOUT_S) -> filelock.FileLock:
    """The single-writer lock (:func:`paqad.workspace.index_lock`)."""
    return workspace.index_lock(root, timeout)


def _locked(root: Path, timeout: float) -> filelock.FileLock:
    lock = writer_lock(root, timeout)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise LockedError(f"another paqad process is writing the index (lock {lock.lock_file}); try again shortly") from exc
    return lock


def build_full(
    root: Path,
    cfg: Config,
    lock_timeout: float = LOCK_TIMEOUT_S,
    embed: bool = True,
    progress: vectors.Progress | None = None,
    on_lexical: Callable[[BuildReport], None] | None = None,
    on_interim: Callable[[int], None] | None = None,
    started_at: float | None = None,
    kind: str = "build",
) -> BuildReport:
    """Rebuild from scratch into a new generation and swap it in; then fill its vectors.
    ``on_lexical`` is called the moment the lexical index is live, before any embedding;
    ``on_interim`` with the count of stand-in vectors made (``paqad.index.embedding.interim``), when any were.
    The way to full quality is recorded (``paqad.index.timeline``: ``kind``, from ``started_at``)."""
    rec = timeline.begin(root, kind, started_at)
    lock = _locked(root, lock_timeout)
    try:
        audit.log(root, "INFO", "build-started", mode="full", provider=cfg.rag_embedding_provider)
        with syncstamp.stamping(root):  # what the work tree was: every answer's freshness
            report = _build_full_locked(root, cfg)
    finally:
        lock.release()
    interim.lexical_ready(root, cfg, rec, report.units)
    if on_lexical is not None:
        on_lexical(report)
    return _completed(root, _embed_after(root, cfg, report, lock_timeout, embed, progress, on_interim))


def _completed(root: Path, report: BuildReport) -> BuildReport:
    audit.log(
        root, "INFO", "build-completed", mode=report.mode, files=report.files_indexed, changed=report.files_changed,
        removed=report.files_removed, units=report.units, seconds=report.seconds,
    )
    return report


def _embed_after(
    root: Path, cfg: Config, report: BuildReport, lock_timeout: float, embed: bool, progress: vectors.Progress | None,
    on_interim: Callable[[int], None] | None = None,
) -> BuildReport:
    """Step 7: the lexical index is live; embed what is pending (nothing without a provider):
    stand-in vectors first when the model has many to embed, then the model's (``paqad.index.embedding.interim``)."""
    if embed and cfg.rag_embedding_provider != "none":
        try:
            report.interim_vectors, report.vectors = interim.fill_then_model(root, cfg, writer_lock(root, lock_timeout), progress, on_interim)
        except (OSError, sqlite3.OperationalError) as exc:
            if guard.disk_full(exc):  # the lexical index is live; its vectors wait for space
                raise guard.full_error(workspace.vectors_dir(root)) from None
            raise
    return report


def _build_full_locked(root: Path, cfg: Config) -> BuildReport:
    """A new generation, written as ``.building`` and swapped in; a full disk is one line
    (``StorageError``) and, like any failure, leaves no ``.building`` file behind."""
    try:
        return _build_generation(root, cfg)
    except (OSError, sqlite3.OperationalError) as exc:
        if guard.disk_full(exc):
            raise guard.full_error(workspace.vectors_dir(root)) from None
        raise


def _build_generation(root: Path, cfg: Config) -> BuildReport:
    started = time.perf_counter()
    workspace.ensure(root)
    guard.check_folder(root)
    guard.sweep(root)  # what a killed build or adoption left
    elig = collect.Eligibility(root, cfg.rag_max_file_size)
    sidecar = _sidecar(root)
    listed, unnamed = guard.named(root, elig.listed)
    parsed, dropped = _parse_all(root, elig, listed, cfg, sidecar)
    path = store.next_generation_path(root)
    tmp = path.with_name(path.name + ".building")
    try:
        con = store.create(tmp)
        try:
            con.execute(schema.DESCRIPTIONS)
            _write_all(con, parsed)
            store.set_meta(con, {**_meta(cfg, elig), "descriptions_sha": sidecar.sha})
            con.commit()
            con.execute("PRAGMA journal_mode=WAL")
        finally:
            con.close()
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    store.publish(root, path)
    report = _report("full", parsed, dropped + len(unnamed), elig, started, changed=len(parsed))
    report.descriptions_changed, report.unnamed = sum(1 for p in parsed for d in p.descriptions if d), unnamed
    return report


def _sidecar(root: Path, log: bool = True) -> Sidecar:
    """The descriptions sidecar as the index reads it: a broken one is ignored and logged."""
    sidecar = for_index(root)
    if sidecar.error and log:
        audit.log(root, "WARN", "descriptions-ignored", error=sidecar.error[:300])
    return sidecar


def _parse_all(root: Path, elig: collect.Eligibility, listed: list[str], cfg: Config, sidecar: Sidecar) -> tuple[list[ParsedFile], int]:
    parsed, dropped = [], 0
    for path in listed:
        item = _parse_one(root, elig, path, cfg, sidecar)
        if item is None:
            dropped += 1
        else:
            parsed.append(item)
    return parsed, dropped


def _parse_one(root: Path, elig: collect.Eligibility, path: str, cfg: Config, sidecar: Sidecar) -> ParsedFile | None:
    decision, text = elig.decide(path)
    if not decision.kept or text is None or decision.rule is None:
        return None
    return _parsed(root, elig, path, decision.rule, text, cfg, sidecar)


def parse_text(root: Path, elig: collect.Eligibility, path: str, text: str, cfg: Config, sidecar: Sidecar | None = None) -> ParsedFile | None:
    """``path`` parsed from ``text`` instead of its contents, exactly as an update would index it
    (the file's eligibility decision and stat, the sidecar's descriptions); None when ``path`` is
    not indexed. ``rag eval`` indexes docstring-masked files through this and :func:`apply_files`."""
    decision, _ = elig.decide(path)
    if not decision.kept or decision.rule is None:
        return None
    return _parsed(root, elig, path, decision.rule, text, cfg, sidecar if sidecar is not None else _sidecar(root, log=False))


def apply_files(index_file: Path, changed: list[ParsedFile], removed: list[str] | None = None) -> None:
    """Replace ``changed`` files (and drop ``removed`` ones) in the index file ``index_file``, in
    one transaction, by the incremental update's own step (postings, document frequencies, field
    totals). For a private copy of an index (``rag eval``'s): the live one is written by :func:`update`."""
    con = store.connect(index_file)
    try:
        with store.transaction(con):
            _apply_changes(con, changed, removed or [])
    except sqlite3.DatabaseError as exc:
        raise IndexCorruptError(f"index {index_file} update failed ({exc})") from exc
    finally:
        con.close()


def _parsed(root: Path, elig: collect.Eligibility, path: str, rule: stackpacks.FileRule, text: str, cfg: Config, sidecar: Sidecar) -> ParsedFile:
    st = (root / path).stat()
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # of the file as it is: what the update compares
    units = derive_units(path, text, rule, cfg)
    is_test = stackpacks.is_test_path(path, elig.active_packs)
    item = ParsedFile(path, digest, st.st_size, st.st_mtime_ns, rule.language, units, is_test)
    item.descriptions = [description_for(sidecar, u.id, u.content_hash) for u in units]
    item.counts = [fields.field_terms(u, d) for u, d in zip(units, item.descriptions)]
    return item


def derive_units(path: str, text: str, rule: stackpacks.FileRule, cfg: Config) -> list[CodeUnit]:
    """``path``'s units from its text as every build derives them (secrets masked first, by path);
    adoption's check (``paqad.index.team.verify``) compares an artifact's rows with exactly this."""
    return parse_file(path, redaction.redact(text, path), rule.parser, rule.grammar, cfg.rag_max_unit_lines)


def _write_all(con: sqlite3.Connection, parsed: list[ParsedFile]) -> None:
    totals = [0] * len(fields.FIELDS)
    df: Counter[str] = Counter()
    n_units = 0
    for item in parsed:
        for counts in item.counts:
            n_units += 1
            for f, c in enumerate(counts):
                totals[f] += sum(c.values())
            df.update({t for c in counts for t in c})
    avg = [t / n_units if n_units else 1.0 for t in totals]
    tids = edits.insert_terms(con, df)
    writer = postings.BlockWriter()
    con.execute("BEGIN")
    for item in parsed:
        _insert_file(con, item, avg, tids, writer.add_unit)
    writer.flush(con)
    store.set_meta(con, {"n_units": n_units, "field_totals": totals})
    con.execute("COMMIT")


def _insert_file(con: sqlite3.Connection, item: ParsedFile, avg: list[float], tids: dict[str, int], sink: PostingSink) -> None:
    """Insert a file and its units; each unit's postings go to ``sink(uid, [(tid, w, mask), ...])``."""
    con.execute(
        "INSERT OR REPLACE INTO files(path, hash, size, mtime_ns, language, units) VALUES (?, ?, ?, ?, ?, ?)",
        (item.path, item.hash, item.size, item.mtime_ns, item.language, len(item.units)),
    )
    for unit, counts, description in zip(item.units, item.counts, item.descriptions or [""] * len(item.units)):
        uid = edits.insert_unit(con, unit, counts, item.is_test)
        if description:
            con.execute("INSERT INTO descriptions(uid, text) VALUES (?, ?)", (uid, description))
        weights = fields.posting_weights(counts, avg, fields.unit_prior(unit.kind, item.is_test))
        sink(uid, [(tids[t], w, mask) for t, (w, mask) in weights.items()])


def _meta(cfg: Config, elig: collect.Eligibility) -> dict[str, object]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "tokenizer_version": TOKENIZER_VERSION,
        "parser_version": PARSER_VERSION,
        "paqad_version": __version__,
        **vectors.index_meta(cfg),
        "max_unit_lines": cfg.rag_max_unit_lines,
        "ranking_version": fields.RANKING_VERSION,
        "built_at": now,
        "updated_at": now,
        "active_packs": elig.active,
    }


def _report(mode: str, parsed: list[ParsedFile], dropped: int, elig: collect.Eligibility, started: float, changed: int = 0, removed: int = 0, unchanged: int = 0) -> BuildReport:
    langs: Counter[str] = Counter(p.language for p in parsed)
    return BuildReport(
        mode=mode, files_indexed=len(parsed) + unchanged, files_changed=changed, files_removed=removed, files_unchanged=unchanged,
        files_dropped=dropped, units=sum(len(p.units) for p in parsed), seconds=round(time.perf_counter() - started, 3),
        languages=dict(langs), active_packs=list(elig.active),
    )


def needs_full_rebuild(meta: dict[str, str], cfg: Config, defer_model_file: bool = False) -> str | None:
    """Why the current index cannot be updated in place (versions or settings changed), or None.
    ``defer_model_file``: a new file of the same model is not a reason yet (the prompt hook's update:
    its old vectors keep serving until a background update has re-embedded, ``reembed``)."""
    checks = {
        "tokenizer_version": str(TOKENIZER_VERSION),
        "parser_version": str(PARSER_VERSION),
        "max_unit_lines": str(cfg.rag_max_unit_lines),
        "ranking_version": str(fields.RANKING_VERSION),
        "embedding_fingerprint": str(vectors.index_meta(cfg)["embedding_fingerprint"]),
    }
    for key, want in checks.items():
        if meta.get(key, "" if key == "embedding_fingerprint" else None) != want:
            if key == "embedding_fingerprint" and defer_model_file and reembed.model_file_changed(meta, cfg):
                continue
            return f"{key} changed ({meta.get(key)} → {want})"
    return None


def update(
    root: Path,
    cfg: Config,
    lock_timeout: float = LOCK_TIMEOUT_S,
    embed: bool = True,
    progress: vectors.Progress | None = None,
    repair: bool = True,
    status: git.Status | None = None,
) -> BuildReport:
    """Re-index only files whose content changed, in one transaction; full build if none exists, if
    versions or the embedding provider changed, or (``repair``) the index is unreadable. Then fill
    pending vectors; a changed model file first re-embeds into the user cache (``reembed.prewarm``).
    ``status``: the caller's ``git status`` of a moment ago, for the sync stamp (else one is run)."""
    if embed:
        reembed.prewarm(root, cfg, progress)
    lock = _locked(root, lock_timeout)
    try:
        with syncstamp.stamping(root, status):
            report = _update_or_build_locked(root, cfg, repair, defer_model_file=not embed)
    finally:
        lock.release()
    return _completed(root, _embed_after(root, cfg, report, lock_timeout, embed, progress))


def _update_or_build_locked(root: Path, cfg: Config, repair: bool = True, defer_model_file: bool = False) -> BuildReport:
    """An update, or the full build it turns into: no index, an older schema, or (``repair``) damage."""
    if store.current_pointer(root).exists() is False:
        return _build_full_locked(root, cfg)
    try:
        return _update_current(root, cfg, repair, defer_model_file)
    except IndexOutdatedError as exc:
        if not repair:
            raise
        audit.log(root, "INFO", "index-upgraded", reason=str(exc))
        mode = "full (upgraded: the index was built by an older paqad)"
    except IndexCorruptError as exc:
        if not repair:
            raise
        audit.log(root, "WARN", "index-rebuilt-after-corruption", error=exc.detail)
        mode = "full (the previous index was damaged)"
    report = _build_full_locked(root, cfg)
    report.mode = mode
    return report


def _update_current(root: Path, cfg: Config, check: bool, defer_model_file: bool = False) -> BuildReport:
    """Update the live generation in place, or rebuild when versions or settings changed. With
    ``check``, the file is checked whole first (:mod:`paqad.index.integrity`), and a note left by
    a reader that found it damaged counts. Any damage found is ``IndexCorruptError``."""
    con = store.open_current(root, readonly=False)
    try:
        if check:
            found = store.damaged_note(root) or integrity.problem(con)
            if found:
                raise IndexCorruptError(found)
        reason = needs_full_rebuild(store.get_meta(con), cfg, defer_model_file)
        if not reason:
            return _update_locked(root, cfg, con)
    except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # a damaged row read back mid-update
        if guard.disk_full(exc):
            raise guard.full_error(workspace.vectors_dir(root)) from None
        raise IndexCorruptError(f"index update failed ({type(exc).__name__}: {exc})") from exc
    finally:
        con.close()
    audit.log(root, "WARN", "full-rebuild-required", reason=reason)
    report = _build_full_locked(root, cfg)
    report.mode = f"full ({reason})"
    return report


def _update_locked(root: Path, cfg: Config, con: sqlite3.Connection) -> BuildReport:
    started = time.perf_counter()
    elig = collect.Eligibility(root, cfg.rag_max_file_size)
    stored = {row[0]: row[1:] for row in con.execute("SELECT path, hash, size, mtime_ns FROM files")}
    sidecar = _sidecar(root, log=False)
    redescribed, n_redescribed = edits.redescribed(con, sidecar)
    if redescribed and sidecar.error:
        _sidecar(root)  # log it once per change of the file, not on every update
    changed, unchanged, dropped, seen = [], 0, 0, set()
    listed, unnamed = guard.named(root, elig.listed)
    for path in listed:
        state = _file_state(root, elig, path, stored.get(path), cfg, sidecar)
        if state is FileState.SAME and path in redescribed:
            state = _parse_one(root, elig, path, cfg, sidecar) or FileState.DROPPED
        if state is FileState.DROPPED:
            dropped += 1
            continue
        seen.add(path)
        if state is FileState.SAME:
            unchanged += 1
        else:
            changed.append(state)
    removed = [p for p in stored if p not in seen]
    dropped += len(unnamed)
    if edits.nothing_to_write(con, changed, removed, elig.active, sidecar):
        # No transaction at all: a commit would move PRAGMA data_version, and every reader (the
        # resident service's Index) would throw away its vector matrix and graph on each prompt.
        report = _report("incremental", changed, dropped, elig, started, changed=0, removed=0, unchanged=unchanged)
        report.unnamed = unnamed
        return report
    try:
        with store.transaction(con):
            schema.add_late(con)  # an index built before vectors, descriptions or the name index
            _apply_changes(con, changed, removed)
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            store.set_meta(con, {"updated_at": now, "active_packs": elig.active, "descriptions_sha": sidecar.sha})
    except sqlite3.DatabaseError as exc:
        if guard.disk_full(exc):  # not damage: a rebuild would need more space still
            raise guard.full_error(workspace.vectors_dir(root)) from None
        raise IndexCorruptError(f"index update failed ({exc})") from exc
    report = _report("incremental", changed, dropped, elig, started, changed=len(changed), removed=len(removed), unchanged=unchanged)
    report.descriptions_changed, report.unnamed = n_redescribed, unnamed
    return report


class FileState(enum.Enum):
    """What an update found for a listed file that did not change or cannot be indexed."""

    SAME = "same"  # size and mtime (or the content hash) match the index
    DROPPED = "dropped"  # gone, unreadable or no longer eligible


def _file_state(
    root: Path, elig: collect.Eligibility, path: str, old: tuple | None, cfg: Config, sidecar: Sidecar
) -> FileState | ParsedFile:
    """``SAME`` when size and mtime (or content hash) match the index, a ParsedFile when changed."""
    full = root / path
    if old is not None:
        try:
            st = full.lstat()
        except OSError:
            return FileState.DROPPED
        if st.st_size == old[1] and st.st_mtime_ns == old[2] and not stat.S_ISLNK(st.st_mode):
            return FileState.SAME
    item = _parse_one(root, elig, path, cfg, sidecar)
    if item is None:
        return FileState.DROPPED
    if old is not None and item.hash == old[0]:
        return FileState.SAME
    return item


def _apply_changes(con: sqlite3.Connection, changed: list[ParsedFile], removed: list[str]) -> None:
    meta = store.get_meta(con)
    totals = json.loads(meta.get("field_totals", json.dumps([0] * len(fields.FIELDS))))
    n_units = int(meta.get("n_units", "0"))
    gone: list[int] = []
    for path in removed + [c.path for c in changed]:
        gone.extend(edits.delete_file(con, path, totals))
    n_units -= len(gone)
    interim.forget(con, gone)
    for tid, n in postings.remove_units(con, gone).items():
        con.execute("UPDATE terms SET df = df - ? WHERE tid = ?", (n, tid))
    for item in changed:
        for counts in item.counts:
            n_units += 1
            for f, c in enumerate(counts):
                totals[f] += sum(c.values())
    avg = [t / n_units if n_units else 1.0 for t in totals]
    added: list[tuple[int, list[tuple[int, float, int]]]] = []
    for item in changed:
        tids = edits.ensure_terms(con, item.counts)
        _insert_file(con, item, avg, tids, lambda uid, weights: added.append((uid, weights)))
    postings.add_units(con, added)
    con.execute("DELETE FROM terms WHERE df <= 0")
    store.set_meta(con, {"n_units": n_units, "field_totals": totals})
