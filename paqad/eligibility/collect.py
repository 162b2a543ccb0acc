"""Which files get indexed: four filters, always in this order, each decision explainable.

1. ``type``   the file is a type some stack pack (or the always-on prose/data packs) knows; a
              type no pack knows is still indexed as plain text (``UNKNOWN_TYPE_RULE``) unless
              it is data (CSV, SVG, ...), HTML, a dotfile, a licence or has no suffix;
2. ``hard``   hard exclusions: ``.paqad/``, agent folders, lockfiles, files paqad writes;
3. ``ignore`` ignore rules: git's own (every nested ``.gitignore``, ``.git/info/exclude``; asked
              of git itself so the semantics are exactly git's), common build and dependency
              folders, stack-pack excluded folders, secrets files, ``rag.ignore.yaml`` excludes;
              ``rag.ignore.yaml`` ``include`` re-admits what this filter dropped, except secrets;
4. ``check``  file checks: symlink, empty, binary, not UTF-8, too little text, too large (source
              code up to ``rag_max_file_size``, anything else up to 150 KiB), minified (by name
              or by line length), generated (a generator's header); see :mod:`.content`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec

from paqad import git, written
from paqad.eligibility import content, ignorefile, stackpacks
from paqad.eligibility.secretfiles import SECRET_PATTERNS as SECRET_PATTERNS  # re-exported: the one secrets-file predicate
from paqad.eligibility.secretfiles import secrets_match as secrets_match

AGENT_DIRS = written.FOLDERS
LOCKFILES = frozenset(
    {"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock", "poetry.lock", "Pipfile.lock", "uv.lock", "pdm.lock", "Cargo.lock", "go.sum", "Gemfile.lock", "composer.lock", "Podfile.lock", "Package.resolved", "pubspec.lock", "mix.lock", "flake.lock", "packages.lock.json", "gradle.lockfile", ".terraform.lock.hcl"}
)
BUILD_DIRS = frozenset(
    {"node_modules", "dist", "build", ".venv", "venv", "env", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", "target", ".next", ".nuxt", ".svelte-kit", "coverage", ".gradle", ".idea", ".vscode", "bower_components", "vendor", ".terraform", ".cache", "out", "_build", "Pods", "DerivedData"}
)
MIN_VISIBLE_CHARS = 50
# Files of a type no stack pack claims: one ``document`` unit, split into overlapping chunks by
# ``rag_max_unit_lines``, so a repository in an unfamiliar language is never silently empty.
UNKNOWN_TYPE_RULE = stackpacks.FileRule(language="text", parser="text", grammar="text")


@dataclass(frozen=True)
class Decision:
    """Why a path is in or out. ``filter`` names the filter that decided (None when kept)."""

    path: str
    kept: bool
    filter: str | None
    reason: str
    rule: stackpacks.FileRule | None = None


@dataclass
class Collection:
    """The eligible files with their rule and text, and every dropped path with its reason."""

    kept: list[Decision]
    dropped: list[Decision]
    active_packs: list[str]


class Eligibility:
    """The four filters for one repository, prepared once (packs, ignore rules, git listing)."""

    def __init__(self, root: Path, max_file_size: int) -> None:
        self.root = root
        self.max_file_size = max_file_size
        self.in_git = True  # until git says otherwise (_list_candidates)
        self.rules = ignorefile.load(root)
        self.packs = stackpacks.load_packs(root)
        self.listed = self._list_candidates()
        self.active_packs, self.context = stackpacks.activate(root, self.packs, self.listed)
        self.active = sorted(self.context.detected)
        self.pack_dirs = stackpacks.all_exclude_dirs(self.active_packs)

    def _list_candidates(self) -> list[str]:
        """git's listing, or a walk outside a work tree. The listing is asked for first and the
        work tree only when it fails (a ``rev-parse`` per sync less: the prompt path syncs on
        every prompt); a failure inside a work tree is raised, as before."""
        try:
            listed = git.listed_files(self.root)
        except git.GitError:
            if git.toplevel(self.root) is not None:
                raise
            self.in_git = False
            return walk_outside_git(self.root)
        self.git_listed = set(listed)
        self.git_ignored_included: set[str] = set()
        if self.rules.include is not None:
            extra = [p for p in git.ignored_files(self.root) if self.rules.included(p)]
            self.git_ignored_included = set(extra)
            listed = listed + extra
        return sorted(set(listed))

    def decide(self, path: str, read_text: bool = False) -> tuple[Decision, str | None]:
        """Run the four filters on one repository-relative path; return the decision and the text."""
        rule = stackpacks.rule_for(path, self.active_packs, self.context)
        kept = "kept: {language} ({parser}:{grammar})"
        if rule is None:
            not_text = content.unknown_type_reason(path)
            if not_text:
                return Decision(path, False, "type", f"no stack pack handles {_kind_of(path)}; {not_text}"), None
            rule = UNKNOWN_TYPE_RULE
            kept = f"kept: text (no stack pack handles {_kind_of(path)}; the unknown-type rule indexes it as plain text in chunks)"
        hard = hard_exclusion(path)
        if hard:
            return Decision(path, False, "hard", hard, rule), None
        ignored = self._ignore_reason(path)
        if ignored:
            return Decision(path, False, "ignore", ignored, rule), None
        failed, text = file_check(self.root / path, self.max_file_size, rule.parser)
        if failed:
            return Decision(path, False, "check", failed, rule), None
        return Decision(path, True, None, kept.format(language=rule.language, parser=rule.parser, grammar=rule.grammar), rule), text

    def _ignore_reason(self, path: str) -> str | None:
        secret = secrets_match(path)
        if secret:
            return f"secrets file (matches {secret}); never indexed, include cannot override"
        reason = self._overridable_reason(path)
        if reason is None:
            return None
        pattern = self.rules.included(path)
        return None if pattern else reason

    def _overridable_reason(self, path: str) -> str | None:
        if self.in_git and path not in self.git_listed:
            where = git.check_ignore(self.root, path)
            return f"ignored by git ({where})" if where else "ignored by git (not listed by git ls-files)"
        if not self.in_git:
            where = walk_ignore_source(self.root, path)
            if where:
                return f"ignored by {where}"
        parts = PurePosixPath(path).parts[:-1]
        for part in parts:
            if part in BUILD_DIRS:
                return f"inside a build or dependency folder ({part}/)"
            if part in self.pack_dirs:
                return f"inside a folder the stack packs exclude ({part}/)"
        pattern = self.rules.excluded(path)
        return f"excluded by .paqad/rag.ignore.yaml ({pattern})" if pattern else None

    def collect(self) -> Collection:
        """Decide every candidate; read the text of the kept ones."""
        kept: list[Decision] = []
        dropped: list[Decision] = []
        for path in self.listed:
            decision, _ = self.decide(path)
            (kept if decision.kept else dropped).append(decision)
        return Collection(kept, dropped, list(self.active))


def _kind_of(path: str) -> str:
    suffix = PurePosixPath(path).suffix
    return f"'{suffix}' files" if suffix else f"files named '{PurePosixPath(path).name}'"


def hard_exclusion(path: str) -> str | None:
    """A reason when ``path`` is never indexed whatever any rule says."""
    parts = PurePosixPath(path).parts
    for part in parts[:-1]:
        if part in AGENT_DIRS:
            return f"inside {part}/ (paqad's own or an agent's folder)"
    name = parts[-1]
    if name in LOCKFILES or name.endswith(".lock"):
        return f"lockfile ({name})"
    if written.written_by_paqad(path):
        return f"file written by paqad ({path})"
    return None


def file_check(full: Path, max_size: int, parser: str = "tree-sitter") -> tuple[str | None, str | None]:
    """Filter 4. Returns (reason it failed, None) or (None, decoded text).

    ``parser`` says what the file is: source code (``python-ast``, ``tree-sitter``) may be up to
    ``max_size``; prose, data and unknown types up to ``content.OTHER_MAX_BYTES`` as well.
    """
    try:
        st = full.lstat()
    except OSError as exc:
        return f"cannot read ({exc.strerror})", None
    if full.is_symlink():
        return "symlink (not followed: it could point outside the repository or loop)", None
    if not full.is_file():
        return "not a regular file", None
    if st.st_size == 0:
        return "empty file", None
    if st.st_size > max_size:
        return f"larger than rag_max_file_size ({st.st_size} > {max_size} bytes)", None
    if parser not in content.SOURCE_PARSERS and st.st_size > content.OTHER_MAX_BYTES:
        limit = content.OTHER_MAX_BYTES
        return f"larger than {limit} bytes, the limit for files that are not source code ({st.st_size} bytes)", None
    if content.minified_name(full.name):
        return f"minified (named as build output: {full.name})", None
    try:
        data = full.read_bytes()
    except OSError as exc:
        return f"cannot read ({exc.strerror})", None
    failed, text = _content_check(data)
    if text is not None:
        failed = content.long_lines(text, parser) or _generated(text)
    return (failed, None) if failed else (None, text)


def _generated(text: str) -> str | None:
    marker = content.generated_marker(text)
    return f"generated (its header says so: {marker!r})" if marker else None


def _content_check(data: bytes) -> tuple[str | None, str | None]:
    if b"\0" in data[:8192] or b"\0" in data:
        return "binary (contains a NUL byte)", None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start})", None
    text = text.removeprefix("\ufeff")
    visible = _visible_chars(text, MIN_VISIBLE_CHARS)
    if visible < MIN_VISIBLE_CHARS:
        return f"too little text ({visible} visible characters < {MIN_VISIBLE_CHARS})", None
    return None, text.replace("\r\n", "\n").replace("\r", "\n")


def _visible_chars(text: str, enough: int) -> int:
    """Non-space characters, counted only until ``enough`` (a large file need not be scanned)."""
    count = 0
    for chunk_start in range(0, len(text), 4096):
        count += len("".join(text[chunk_start : chunk_start + 4096].split()))
        if count >= enough:
            return count
    return count


def walk_outside_git(root: Path) -> list[str]:
    """Outside git: walk the tree, applying each folder's ``.gitignore`` (deepest match wins)."""
    found: list[str] = []
    specs: dict[str, pathspec.GitIgnoreSpec] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        _load_spec(Path(dirpath), rel_dir, specs)
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not _walk_ignored(f"{rel_dir}/{d}".lstrip("/") + "/", specs))
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}".lstrip("/")
            if not _walk_ignored(rel, specs):
                found.append(rel)
    return found


def _load_spec(folder: Path, rel_dir: str, specs: dict[str, pathspec.GitIgnoreSpec]) -> None:
    gi = folder / ".gitignore"
    if gi.is_file() and not gi.is_symlink():
        try:
            specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(gi.read_text(encoding="utf-8", errors="replace").splitlines())
        except Exception:  # a broken .gitignore line must not stop the walk
            pass


def _walk_ignored(rel: str, specs: dict[str, pathspec.GitIgnoreSpec]) -> bool:
    return _walk_verdict(rel, specs) is not None


def _walk_verdict(rel: str, specs: dict[str, pathspec.GitIgnoreSpec]) -> str | None:
    """The folder whose ``.gitignore`` ignores ``rel`` ("" = the top), or None when none does."""
    verdict: str | None = None
    for base, spec in sorted(specs.items(), key=lambda kv: len(kv[0])):
        if base and not rel.startswith(base + "/"):
            continue
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub)
        if result.include is not None:
            verdict = base if result.include else None
    return verdict


def walk_ignore_source(root: Path, rel: str) -> str | None:
    """Outside git, the ``.gitignore`` that drops ``rel`` (itself or a folder above it) as
    :func:`walk_outside_git` would, e.g. ``build/.gitignore``; None when the walk keeps it."""
    specs: dict[str, pathspec.GitIgnoreSpec] = {}
    parts = PurePosixPath(rel).parts
    for depth in range(len(parts)):
        rel_dir = "/".join(parts[:depth])
        _load_spec(root / rel_dir if rel_dir else root, rel_dir, specs)
        target = "/".join(parts[: depth + 1]) + ("/" if depth + 1 < len(parts) else "")
        base = _walk_verdict(target, specs)
        if base is not None:
            return f"{base}/.gitignore" if base else ".gitignore"
    return None
