"""Stack packs: which files paqad reads, how it parses them, and what it skips, as data.

A stack pack is one YAML file per stack (``stackpacks/*.yaml``, shipped as ``paqad/stackpacks/``).
Repositories add or replace packs in ``.paqad/stackpacks/*.yaml``. The schema is declared once,
with cfgv, below; every error names the file, the pack and the key, and unknown keys are errors.

The flow a caller follows::

    packs = load_packs(repo_root)
    active, context = activate(repo_root, packs, candidate_paths)
    rule = rule_for(path, active, context)        # FileRule or None (not a file paqad parses)

Authors' guide: ``docs/stackpacks.md``.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import cast

import cfgv
import pathspec
import yaml

from paqad import resources, workspace, yamlio
from paqad.eligibility.pack_schema import DEFAULT_MODULE_DEPTH, PACK_SCHEMA, PackData, RuleData, check_pack_semantics
from paqad.errors import ConfigError, NotARepositoryError, PaqadError

BUILTIN = "builtin"
USER_PACK_DIR = ".paqad/stackpacks"

# The C/C++ header rule (docs/stackpacks.md, "The .h rule"): a file that both the ``c`` and the
# ``cpp`` pack claim is C++ when the repository has one of these, else C.
C_PACK, CPP_PACK = "c", "cpp"
CPP_SOURCE_SUFFIXES = frozenset({".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++"})



# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class FileRule:
    """How one kind of file is parsed: the ``language`` recorded on its units, the ``parser``
    (a :func:`paqad.parse.parser_names` value) and the ``grammar`` handed to that parser.

    A rule matches by ``suffixes`` (from a pack's ``files``) or by exact ``names`` (from its
    ``named_files``); ``pack`` names the pack it came from, so callers can explain a choice.
    """

    language: str
    parser: str
    grammar: str
    suffixes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    pack: str = ""


@dataclass(frozen=True)
class StackPack:
    """One validated stack pack. ``origin`` is ``"builtin"`` or the path of the user's file."""

    name: str
    description: str = ""
    always: bool = False
    files: tuple[FileRule, ...] = ()
    named_files: tuple[FileRule, ...] = ()
    exclude_dirs: tuple[str, ...] = ()
    test_patterns: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    module_depth: int = DEFAULT_MODULE_DEPTH
    origin: str = field(default=BUILTIN, compare=False)

    @property
    def languages(self) -> tuple[str, ...]:
        """Languages this pack produces, sorted."""
        return tuple(sorted({r.language for r in (*self.files, *self.named_files)}))

    @property
    def suffixes(self) -> tuple[str, ...]:
        """Every suffix the pack claims, in file order."""
        return tuple(s for r in self.files for s in r.suffixes)

    @property
    def file_names(self) -> tuple[str, ...]:
        """Every exact file name the pack claims, in file order."""
        return tuple(n for r in self.named_files for n in r.names)

    @functools.cached_property
    def _by_suffix(self) -> dict[str, FileRule]:
        return {s: r for r in self.files for s in r.suffixes}

    @functools.cached_property
    def _by_name(self) -> dict[str, FileRule]:
        return {n: r for r in self.named_files for n in r.names}

    def claims_name(self, file_name: str) -> FileRule | None:
        """The rule for an exact file name (case-sensitive: ``Makefile`` is not ``MAKEFILE``)."""
        return self._by_name.get(file_name)

    def claims_suffix(self, suffix: str) -> FileRule | None:
        """The rule for a lower-case suffix such as ``.ts`` or ``.d.ts``."""
        return self._by_suffix.get(suffix)

    def rule_for(self, path: str) -> FileRule | None:
        """This pack's own rule for ``path``: by exact name, else by its longest claimed suffix."""
        name = _file_name(path)
        by_suffix = (self.claims_suffix(s) for s in suffixes_of(name))
        return self.claims_name(name) or next((r for r in by_suffix if r), None)

    def to_dict(self) -> PackData:
        """The pack in its file form (schema keys, schema order): what ``stackpack show`` prints."""
        return {
            "name": self.name,
            "description": self.description,
            "always": self.always,
            "files": [_rule_dict(r, "suffixes", r.suffixes) for r in self.files],
            "named_files": [_rule_dict(r, "names", r.names) for r in self.named_files],
            "exclude_dirs": list(self.exclude_dirs),
            "test_patterns": list(self.test_patterns),
            "markers": list(self.markers),
            "module_depth": self.module_depth,
        }


@dataclass(frozen=True)
class RepoContext:
    """What a repository contains, for choices a single path cannot make (the ``.h`` rule).

    ``suffixes``: lower-case suffixes present among the candidate paths.
    ``detected``: names of the packs :func:`detect` found.
    """

    suffixes: frozenset[str] = frozenset()
    detected: frozenset[str] = frozenset()


Packs = Mapping[str, StackPack] | Iterable[StackPack]


def _rule_dict(rule: FileRule, match_key: str, values: tuple[str, ...]) -> RuleData:
    data: RuleData = {"language": rule.language, "parser": rule.parser, "grammar": rule.grammar}
    if match_key == "names":
        return {"names": list(values), **data}
    return {"suffixes": list(values), **data}


def _values(packs: Packs) -> list[StackPack]:
    """Accept both ``load_packs()``'s dict and a plain list of packs."""
    return list(packs.values()) if isinstance(packs, Mapping) else list(packs)


def _file_name(path: str) -> str:
    """Last part of a repository-relative POSIX path (no pathlib: this runs once per file)."""
    return path.rpartition("/")[2]


def suffixes_of(file_name: str) -> list[str]:
    """Lower-cased suffixes of a file name, longest first: ``x.d.TS`` → ``['.d.ts', '.ts']``.

    A leading dot is not a suffix, so ``.bashrc`` has none. Longest first lets a pack claim
    ``.d.ts`` apart from ``.ts``.
    """
    lower = file_name.lower()
    found: list[str] = []
    dot = lower.find(".", 1)
    while dot != -1:
        found.append(lower[dot:])
        dot = lower.find(".", dot + 1)
    return found


# ---------------------------------------------------------------- loading


def _rule(data: RuleData, pack: str) -> FileRule:
    return FileRule(
        language=data["language"],
        parser=data["parser"],
        grammar=data["grammar"],
        suffixes=tuple(data.get("suffixes", ())),
        names=tuple(data.get("names", ())),
        pack=pack,
    )


def _pack(data: PackData, origin: str) -> StackPack:
    name = data["name"]
    return StackPack(
        name=name,
        description=data["description"],
        always=data["always"],
        files=tuple(_rule(r, name) for r in data["files"]),
        named_files=tuple(_rule(r, name) for r in data["named_files"]),
        exclude_dirs=tuple(data["exclude_dirs"]),
        test_patterns=tuple(data["test_patterns"]),
        markers=tuple(data["markers"]),
        module_depth=data["module_depth"],
        origin=origin,
    )


def _validated(text: str, stem: str, full: bool = True) -> PackData:
    """Parse and check a pack. ``full=False`` (the shipped packs only) skips the schema and
    pattern checks: they cost ~40 ms per process, every prompt hook pays them, and the test suite
    validates every shipped pack from disk (``test_builtin_files_revalidate_from_disk``)."""
    try:
        data = yamlio.safe_load(text)
    except yaml.YAMLError as e:
        raise cfgv.ValidationError(f"Invalid YAML: {e}") from None
    if full:
        cfgv.validate(data, PACK_SCHEMA)
    pack = cast(PackData, cfgv.apply_defaults(data, PACK_SCHEMA))  # the schema's shape: checked above, or shipped
    if full:
        check_pack_semantics(pack, stem)
    return pack


def parse_pack(text: str, display_name: str, origin: str = BUILTIN, full: bool = True) -> StackPack:
    """Validate the YAML ``text`` of a pack file named ``display_name`` and build the pack.

    Raises :class:`ConfigError` whose message is cfgv's path (``==> File go.yaml`` /
    ``==> At StackPack(name='go')`` / ``==> At key: files`` / ``=====> Expected ...``).
    """
    stem = PurePosixPath(display_name.replace("\\", "/")).name.removesuffix(".yaml")
    try:
        with cfgv.validate_context(f"File {display_name}"):
            data = _validated(text, stem, full)
    except cfgv.ValidationError as e:
        raise ConfigError("invalid stack pack" + str(e)) from None
    return _pack(data, origin)


def load_pack_file(path: str | os.PathLike[str]) -> StackPack:
    """Load and validate one pack file from disk (a user pack, or one being authored)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"invalid stack pack\n==> File {path}\n=====> Cannot read it: {e}") from None
    return parse_pack(text, str(path), origin=str(path))


def _builtin_dir() -> Traversable:
    return resources.data_dir("stackpacks")


@functools.cache
def _builtin_packs() -> tuple[StackPack, ...]:
    """Read once per process: package data does not change under a running paqad."""
    folder = _builtin_dir()
    if not folder.is_dir():
        raise PaqadError("paqad's built-in stack packs are missing (paqad/stackpacks); reinstall paqad")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    return tuple(parse_pack(f.read_text(encoding="utf-8"), f"paqad/stackpacks/{f.name}", full=False) for f in files)


def load_builtin_packs() -> dict[str, StackPack]:
    """The packs shipped inside the paqad package, by name (package data only, no source tree)."""
    return {p.name: p for p in _builtin_packs()}


def load_user_packs(repo_root: str | os.PathLike[str]) -> dict[str, StackPack]:
    """The repository's own packs from ``.paqad/stackpacks/*.yaml``, by name (a symlinked folder or
    file is never read: :func:`paqad.workspace.linked_part`)."""
    root = Path(repo_root)
    folder = root / USER_PACK_DIR
    if workspace.linked_part(root, folder) is not None or not folder.is_dir():
        return {}
    packs = (load_pack_file(f) for f in sorted(folder.glob("*.yaml")) if workspace.team_file(root, f) is not None)
    return {p.name: p for p in packs}


def load_packs(repo_root: str | os.PathLike[str]) -> dict[str, StackPack]:
    """Built-in packs, then the repository's: a user pack with a built-in's name replaces it whole."""
    return dict(sorted({**load_builtin_packs(), **load_user_packs(repo_root)}.items()))


# ---------------------------------------------------------------- detection


def _root_entries(repo_root: str | os.PathLike[str]) -> list[str]:
    try:
        return os.listdir(repo_root)
    except OSError as e:
        raise NotARepositoryError(f"cannot list {os.fspath(repo_root)}: {e.strerror}") from None


def _detected_by_markers(entries: list[str], stacks: list[StackPack]) -> set[str]:
    """A marker is a root file or folder name, or a glob over them (``*.csproj``), case-sensitive."""
    return {p.name for p in stacks if any(fnmatch.fnmatchcase(e, m) for m in p.markers for e in entries)}


def _claimants(file_name: str, packs: list[StackPack]) -> list[StackPack]:
    """The packs that claim a file: by exact name if any pack does, else by the longest suffix."""
    named = [p for p in packs if p.claims_name(file_name)]
    if named:
        return named
    for suffix in suffixes_of(file_name):
        claimed = [p for p in packs if p.claims_suffix(suffix)]
        if claimed:
            return claimed
    return []


def _detected_by_files(names: set[str], stacks: list[StackPack], context: RepoContext) -> set[str]:
    """Each file detects the pack whose rule would read it; a file claimed by several packs goes
    through :func:`resolve_rule`, so a lone ``x.h`` detects C (or C++ under the ``.h`` rule)."""
    named = {n for p in stacks for n in p.file_names}
    # The answer depends only on the exact name (named files) or the suffixes: ask once per kind.
    samples = {(n if n in named else tuple(suffixes_of(n))): n for n in names}
    rules = (rule_for(name, stacks, context) for name in samples.values())
    return {rule.pack for rule in rules if rule is not None}


def detect(repo_root: str | os.PathLike[str], packs: Packs, candidate_paths: Iterable[str]) -> list[str]:
    """Names of the stacks this repository uses, sorted.

    A stack is detected by a marker at the repository root, or by a candidate file its pack
    would read. ``always`` packs are not "detected"; :func:`active_packs` adds them.
    """
    stacks = [p for p in _values(packs) if not p.always]
    paths = list(candidate_paths)
    found = _detected_by_markers(_root_entries(repo_root), stacks)
    names = {_file_name(path) for path in paths}
    found |= _detected_by_files(names, stacks, repo_context(paths, found))
    return sorted(found)


def active_packs(packs: Packs, detected: Iterable[str]) -> list[StackPack]:
    """The packs to use: ``always`` packs plus the detected ones, or every pack when nothing was
    detected, so an unrecognised repository is indexed broadly rather than silently not at all."""
    chosen = set(detected)
    every = _values(packs)
    if not chosen:
        return sorted(every, key=lambda p: p.name)
    return sorted((p for p in every if p.always or p.name in chosen), key=lambda p: p.name)


def repo_context(candidate_paths: Iterable[str], detected: Iterable[str] = ()) -> RepoContext:
    """Summarise the candidates for :func:`rule_for` (one pass, then reused for every path)."""
    suffixes = {s for path in candidate_paths for s in suffixes_of(_file_name(path))}
    return RepoContext(suffixes=frozenset(suffixes), detected=frozenset(detected))


def activate(
    repo_root: str | os.PathLike[str], packs: Packs, candidate_paths: Iterable[str]
) -> tuple[list[StackPack], RepoContext]:
    """Detect, pick the active packs and build the context: the usual start of a collection."""
    paths = list(candidate_paths)
    detected = detect(repo_root, packs, paths)
    return active_packs(packs, detected), repo_context(paths, detected)


# ---------------------------------------------------------------- file → rule


def _c_or_cpp(context: RepoContext) -> str:
    """The ``.h`` rule: C++ when the repository has C++ sources, or C++ was detected without C."""
    if context.suffixes & CPP_SOURCE_SUFFIXES:
        return CPP_PACK
    if CPP_PACK in context.detected and C_PACK not in context.detected:
        return CPP_PACK
    return C_PACK


def resolve_rule(path: str, packs: Packs, context: RepoContext) -> FileRule | None:
    """Choose one rule among packs that all claim ``path`` (their own :meth:`StackPack.rule_for`).

    Ties are settled by the ``.h`` rule when both ``c`` and ``cpp`` claim the file; otherwise a
    user pack beats a built-in and then the pack name decides, so the answer never depends on
    load order.
    """
    rules = {p.name: (p, r) for p in _values(packs) if (r := p.rule_for(path)) is not None}
    if {C_PACK, CPP_PACK} <= rules.keys():
        return rules[_c_or_cpp(context)][1]
    ranked = sorted(rules.values(), key=lambda pr: (pr[0].origin == BUILTIN, pr[0].name))
    return ranked[0][1] if ranked else None


def rule_for(path: str, active_packs: Packs, context: RepoContext) -> FileRule | None:
    """The (language, parser, grammar) for a repository-relative path, or None if no pack reads it.

    Exact file names win over suffixes; suffixes are compared lower-case, longest first.
    """
    claimed = _claimants(_file_name(path), _values(active_packs))
    if len(claimed) == 1:
        return claimed[0].rule_for(path)
    return resolve_rule(path, claimed, context) if claimed else None


# ---------------------------------------------------------------- exclusions and tests


def all_exclude_dirs(active_packs: Packs) -> frozenset[str]:
    """Folder names never indexed, anywhere in the tree, for the active packs."""
    return frozenset(d for p in _values(active_packs) for d in p.exclude_dirs)


@functools.lru_cache(maxsize=64)
def _test_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def is_test_path(path: str, packs: Packs) -> bool:
    """Whether a repository-relative POSIX path is a test file under any given pack's patterns."""
    patterns = tuple(sorted({t for p in _values(packs) for t in p.test_patterns}))
    return bool(patterns) and _test_spec(patterns).match_file(path)
