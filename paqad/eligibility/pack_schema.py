"""The stack-pack schema, declared once with cfgv: every error names the file, the pack and the key.

:mod:`paqad.eligibility.stackpacks` validates each pack file against ``PACK_SCHEMA``, then
``check_pack_semantics`` (what a schema cannot say: unique suffixes, the name matching the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal, NotRequired, TypedDict

import cfgv
import pathspec

from paqad.parse import parser_names

DEFAULT_MODULE_DEPTH = 2
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")
WORD_RE = re.compile(r"[a-z0-9][a-z0-9_+-]*\Z")


#: A cfgv check: returns for a valid value, raises ``cfgv.ValidationError`` otherwise.
Check = Callable[[object], None]


class RuleData(TypedDict):
    """One rule of a pack file (``files``: by ``suffixes``; ``named_files``: by ``names``)."""

    suffixes: NotRequired[list[str]]
    names: NotRequired[list[str]]
    language: str
    parser: str
    grammar: str


class PackData(TypedDict):
    """A pack file once validated against ``PACK_SCHEMA`` with its defaults applied."""

    name: str
    description: str
    always: bool
    files: list[RuleData]
    named_files: list[RuleData]
    exclude_dirs: list[str]
    test_patterns: list[str]
    markers: list[str]
    module_depth: int


def _fail(expected: str, got: object) -> None:
    raise cfgv.ValidationError(f"Expected {expected} but got: {got!r}")


def _check_regex(pattern: re.Pattern[str], expected: str) -> Check:
    def check(v: object) -> None:
        if not isinstance(v, str) or not pattern.match(v):
            _fail(expected, v)

    return check


_check_pack_name = _check_regex(NAME_RE, "a lower-case name of letters, digits, '-' or '_'")
_check_word = _check_regex(WORD_RE, "a lower-case word (letters, digits, '_', '+', '-')")


def _check_suffix(v: object) -> None:
    """Suffixes are matched against the lower-cased file name, so an upper-case one never matches."""
    if not isinstance(v, str) or len(v) < 2 or not v.startswith(".") or "/" in v or v != v.lower():
        _fail("a lower-case suffix starting with '.' (like '.py')", v)


def _check_plain_name(v: object) -> None:
    """A single path component: exact file names, folder names and root markers."""
    if not isinstance(v, str) or not v.strip() or "/" in v or "\\" in v:
        _fail("a single file or folder name (no '/')", v)


def _check_pattern(v: object) -> None:
    cfgv.check_string(v)
    try:
        pathspec.GitIgnoreSpec.from_lines([str(v)])  # a str: check_string raised otherwise
    except ValueError as e:
        raise cfgv.ValidationError(f"Invalid gitwildmatch pattern {v!r}: {e}") from None


def _check_depth(v: object) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        _fail("an integer >= 1", v)


def _check_nonempty(inner: Check) -> Check:
    def check(v: object) -> None:
        cfgv.check_array(inner)(v)
        if not v:
            _fail("at least one entry", v)

    return check


def _check_rules(schema: cfgv.Map) -> Check:
    """An array of rule maps; errors say ``At index N`` and then ``At FileRule(language=...)``."""
    check: Check = cfgv.check_array(lambda rule: cfgv.validate(rule, schema))
    return check


def _rule_schema(object_name: str, match_key: str, check_match: Check) -> cfgv.Map:
    return cfgv.Map(
        object_name,
        "language",
        cfgv.Required(match_key, _check_nonempty(check_match)),
        cfgv.Required("language", _check_word),
        cfgv.Required("parser", cfgv.check_one_of(parser_names())),
        cfgv.Required("grammar", _check_word),
        cfgv.NoAdditionalKeys((match_key, "language", "parser", "grammar")),
    )


FILE_RULE_SCHEMA = _rule_schema("FileRule", "suffixes", _check_suffix)
NAMED_FILE_RULE_SCHEMA = _rule_schema("NamedFileRule", "names", _check_plain_name)

PACK_SCHEMA = cfgv.Map(
    "StackPack",
    "name",
    cfgv.Required("name", _check_pack_name),
    cfgv.Optional("description", cfgv.check_string, ""),
    cfgv.Optional("always", cfgv.check_bool, False),
    cfgv.Optional("files", _check_rules(FILE_RULE_SCHEMA), []),
    cfgv.Optional("named_files", _check_rules(NAMED_FILE_RULE_SCHEMA), []),
    cfgv.Optional("exclude_dirs", cfgv.check_array(_check_plain_name), []),
    cfgv.Optional("test_patterns", cfgv.check_array(_check_pattern), []),
    cfgv.Optional("markers", cfgv.check_array(_check_plain_name), []),
    cfgv.Optional("module_depth", _check_depth, DEFAULT_MODULE_DEPTH),
    cfgv.NoAdditionalKeys(
        (
            "name",
            "description",
            "always",
            "files",
            "named_files",
            "exclude_dirs",
            "test_patterns",
            "markers",
            "module_depth",
        )
    ),
)


def _check_unique(data: PackData, key: Literal["files", "named_files"], match_key: Literal["suffixes", "names"]) -> None:
    """Two rules of one pack claiming the same suffix or name would make the pack ambiguous."""
    seen: set[str] = set()
    with cfgv.validate_context(f"At key: {key}"):
        for value in (v for rule in data[key] for v in rule.get(match_key, ())):
            if value in seen:
                raise cfgv.ValidationError(f"{value!r} is listed twice; each {match_key[:-1]} needs one rule")
            seen.add(value)


def check_pack_semantics(data: PackData, stem: str) -> None:
    """Checks cfgv cannot express per key: the name matches the file, no duplicate claims."""
    with cfgv.validate_context(f"At StackPack(name={data['name']!r})"):
        if data["name"] != stem:
            with cfgv.validate_context("At key: name"):
                raise cfgv.ValidationError(f"Expected {stem!r} (the file name without .yaml) but got: {data['name']!r}")
        _check_unique(data, "files", "suffixes")
        _check_unique(data, "named_files", "names")


