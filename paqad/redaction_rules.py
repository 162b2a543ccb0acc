"""gitleaks's rule set, run the way gitleaks runs it: keyword prefilter, regex, secret group,
entropy threshold, allowlists; only the secret is masked, the context around it stays.

The rules live in ``redaction_rules.toml`` next to this module: the ``[[rules]]`` and the global
``[allowlist]`` of ``config/gitleaks.toml`` from github.com/gitleaks/gitleaks (MIT licence,
Copyright (c) 2019 Zachary Rice; the commit is named in the file's header), without the
descriptions, and with the Go (RE2) syntax Python's ``re`` lacks rewritten by :func:`go_to_python`
(mid-pattern ``(?i)`` scoped to the rest of its branch, ``\\z``, ``[[:alnum:]]``). Regenerate it with
``python -m paqad.redaction_rules PATH/TO/gitleaks.toml COMMIT > paqad/redaction_rules.toml``.

Semantics kept from gitleaks (``detect/detect.go``): a rule runs only when one of its lower-case
keywords occurs in the lower-cased text (that is what keeps the cost per MB low: most rules never
compile or run on a given file); the secret is the rule's ``secretGroup``, else the first
non-empty group, else the whole match; a rule with an ``entropy`` skips secrets whose Shannon
entropy is not above it, and a ``generic-*`` rule also skips secrets without a digit; the global
and per-rule allowlists (regexes on the secret, the match or the line; stopwords) skip a finding.
Allowlist entries that need a file path are ignored, and the five rules scoped to a path
(``hashicorp-tf-password`` on ``*.tf``, ``kubernetes-secret-yaml`` on ``*.ya?ml``, ...) run only
when the caller names the file's path: run on every text, ``hashicorp-tf-password`` masked
``PASSWORD_FIELD = "password"`` in Python.

Two changes for Python's backtracking engine, which unlike RE2 retries a pattern at every
position. Many rules start with ``(?i)[\\w.-]{0,50}?`` (the key name before the keyword, so the
match shows it); it is dropped from the compiled regex and the match is extended back over up to
50 such characters afterwards, which is the match RE2's leftmost semantics gives (it only matters
to ``regexTarget = "match"`` allowlists). And a rule whose every match starts with known literals
(206 of 221: ``jwt`` with "ey", ``generic-api-key`` with "key", "token", ...; :func:`leading_literals`)
is tried only where those occur. On flask 3.1.3 (every file, best of 3) ``generic-api-key`` costs
12 ms per MB instead of 604 as gitleaks wrote it, ``jwt`` 1.7 instead of 8.6.
"""

from __future__ import annotations

import functools
import json
import math
import re
import re._parser as _sre
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).with_name("redaction_rules.toml")
_LAZY_PREFIX = r"[\w.-]{0,50}?"
_KEY_CHARS = re.compile(r"[\w.-]")


@dataclass(frozen=True)
class Allow:
    """One allowlist: a finding is skipped when any criterion matches (all of them for ``AND``)."""

    regexes: tuple[re.Pattern[str], ...] = ()
    stopwords: tuple[str, ...] = ()
    target: str = "secret"  # "secret", "match" or "line": what the regexes are tried on
    needs_all: bool = False
    has_paths: bool = False

    def allows(self, secret: str, match: str, line: str) -> bool:
        subject = {"match": match, "line": line}.get(self.target, secret)
        checks: list[bool] = []
        if self.regexes:
            checks.append(any(r.search(subject) for r in self.regexes))
        if self.stopwords:
            low = secret.lower()
            checks.append(any(w in low for w in self.stopwords))
        if self.has_paths:
            checks.append(False)  # no path here: a path criterion never holds
        return bool(checks) and (all(checks) if self.needs_all else any(checks))


@dataclass(frozen=True)
class Rule:
    """One gitleaks rule, compiled on first use (most rules never run on a given text)."""

    id: str
    regex: str
    keywords: tuple[str, ...]
    entropy: float = 0.0
    secret_group: int = 0
    allow: tuple[Allow, ...] = ()
    extend_back: bool = False  # the lazy key-name prefix was dropped: extend matches back
    path: str = ""  # gitleaks's ``path``: the rule runs only on files whose path matches

    # Compiled and analysed on first use (most rules never run in a process): a frozen dataclass
    # still lets functools.cached_property store into the instance's __dict__.
    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.ASCII)  # RE2's \w, \s and \b are ASCII

    @functools.cached_property
    def starts(self) -> tuple[str, ...]:
        """The lower-case literals every match starts with (:func:`leading_literals`), or ``()``."""
        return leading_literals(self.regex)

    @functools.cached_property
    def _starts_rx(self) -> re.Pattern[str]:
        return re.compile("|".join(re.escape(k) for k in sorted(self.starts, key=len, reverse=True)))

    def matches(self, text: str, lowered: str) -> Iterator[re.Match[str]]:
        if self.starts:
            return anchored_matches(self.pattern, text, self._starts_rx, lowered)
        return self.pattern.finditer(text)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allow: Allow  # the global allowlist (regexes and stopwords on the secret)
    by_keyword: dict[str, tuple[int, ...]]  # keyword -> indexes of the rules it enables
    always: tuple[int, ...]  # rules without keywords


def shannon(text: str) -> float:
    """Shannon entropy in bits per character, gitleaks's ``ShannonEntropy``."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _allow(entry: dict) -> Allow:
    return Allow(
        regexes=tuple(re.compile(r, re.ASCII) for r in entry.get("regexes", ())),
        stopwords=tuple(w.lower() for w in entry.get("stopwords", ())),
        target=entry.get("regexTarget", "secret"),
        needs_all=entry.get("condition", "OR").upper() == "AND",
        has_paths=bool(entry.get("paths")),
    )


def _rule(raw: dict) -> Rule:
    regex = raw["regex"]
    extend = False
    for head in ("(?i)" + _LAZY_PREFIX, _LAZY_PREFIX):
        if regex.startswith(head):
            regex, extend = regex[: len(head) - len(_LAZY_PREFIX)] + regex[len(head) :], True
            break
    return Rule(
        id=raw["id"],
        regex=regex,
        keywords=tuple(k.lower() for k in raw.get("keywords", ())),
        entropy=float(raw.get("entropy", 0.0)),
        secret_group=int(raw.get("secretGroup", 0)),
        allow=tuple(_allow(a) for a in raw.get("allowlists", ())),
        extend_back=extend,
        path=raw.get("path", ""),
    )


@functools.cache
def ruleset() -> RuleSet:
    """The ported rules, read once per process (compiled lazily, rule by rule)."""
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    rules = tuple(_rule(r) for r in data["rules"] if "regex" in r)
    by_keyword: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        for kw in rule.keywords:
            by_keyword.setdefault(kw, []).append(i)
    always = tuple(i for i, r in enumerate(rules) if not r.keywords)
    return RuleSet(rules, _allow(data.get("allowlist", {})), {k: tuple(v) for k, v in by_keyword.items()}, always)


def _trie(words: list[str]) -> str:
    """A regex matching any of ``words``, as a trie (one branch per first letter, not one per word):
    Python's engine then skips text fast, where a flat alternation of 244 words tries each."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body  # greedy: the longest keyword at a place

    return emit(root)


@dataclass(frozen=True)
class KeywordIndex:
    """Which keywords occur in a text, in one regex pass instead of one substring scan per keyword.

    The pass finds non-overlapping hits, the longest keyword at each place. A keyword also occurs
    when it lies inside a hit (``inside``) or when it starts inside a hit and runs past its end
    (``straddling``: "sk" then "key" in "whiskey"); only those few are checked with ``in``."""

    pattern: re.Pattern[str]
    inside: dict[str, frozenset[str]]
    straddling: dict[str, frozenset[str]]

    @classmethod
    def of(cls, words: list[str]) -> KeywordIndex:
        known = set(words)
        by_prefix: dict[str, set[str]] = {}
        for k in words:
            for i in range(1, len(k)):
                by_prefix.setdefault(k[:i], set()).add(k)  # proper prefixes only
        inside = {h: frozenset(h[i:j] for i in range(len(h)) for j in range(i + 1, len(h) + 1) if h[i:j] in known) for h in words}
        straddling = {h: frozenset().union(*(by_prefix.get(h[i:], ()) for i in range(1, len(h)))) for h in words}
        return cls(re.compile(_trie(words)), inside, straddling)

    def present(self, lowered: str) -> set[str]:
        hits = set(self.pattern.findall(lowered))
        found: set[str] = set().union(*(self.inside[h] for h in hits))
        maybe = set().union(*(self.straddling[h] for h in hits)) - found
        return found | {k for k in maybe if k in lowered}


@functools.cache
def keyword_index(extra: tuple[str, ...] = ()) -> KeywordIndex:
    """The index of every rule keyword, plus ``extra`` lower-case words (other layers' anchors)."""
    return KeywordIndex.of(sorted(set(ruleset().by_keyword) | set(extra)))


def candidates(present: set[str], path: str | None = None) -> list[Rule]:
    """The rules with a keyword in ``present`` (from :meth:`KeywordIndex.present`), in the file's
    order but the ``generic-*`` ones last (a SendGrid key is reported as ``sendgrid-api-token``)."""
    rs = ruleset()
    picked = set(rs.always)
    for kw in present:
        picked.update(rs.by_keyword.get(kw, ()))
    rules = (rs.rules[i] for i in picked)
    kept = [r for r in rules if not r.path or path is not None and re.search(r.path, path)]
    return sorted(kept, key=lambda r: (r.id.startswith("generic"), r.id))


def anchored_matches(pattern: re.Pattern[str], text: str, anchors: re.Pattern[str], lowered: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose every match starts where ``anchors`` (lower-case
    literals) occur in ``lowered``: ``pattern.match`` is tried at those places only, each place (not
    only non-overlapping ones). Scanning the lower-cased text case-sensitively is several times
    faster than an ``IGNORECASE`` scan; when lower-casing moved characters (``"İ".lower()`` is two),
    the whole text is searched instead."""
    if len(lowered) != len(text):
        yield from pattern.finditer(text)
        return
    pos = 0
    while (hit := anchors.search(lowered, pos)) is not None:
        m = pattern.match(text, hit.start())
        if m and m.end() > m.start():
            yield m
            pos = m.end()
        else:
            pos = hit.start() + 1


def leading_literals(regex: str) -> tuple[str, ...]:
    """The lower-case literal text every match of ``regex`` starts with, one per alternative (``()``
    when some match may start otherwise or with under two known characters). Found on the parse tree:
    zero-width ``\\b``/``^`` skipped, groups and alternations entered, ``[Aa]`` read as ``a``. Such a
    rule is tried only where one of them occurs: ``vault-service-token`` ("s.") and ``jwt`` ("ey")
    otherwise scan nearly every file whole."""
    try:
        tree = _sre.parse(regex, re.ASCII)
    except (re.error, RecursionError):
        return ()
    found = _literals(list(tree))
    return tuple(sorted(set(found))) if found and all(len(x) >= 2 for x in found) else ()


def _char(op: object, av: object) -> str | None:
    if op is _sre.LITERAL and isinstance(av, int):
        return chr(av).lower()
    if op is _sre.IN and isinstance(av, list) and av and all(o is _sre.LITERAL for o, _ in av):
        chars = {chr(c).lower() for _, c in av}
        return chars.pop() if len(chars) == 1 else None
    return None


def _literals(items: list) -> list[str] | None:
    i = 0
    while i < len(items) and items[i][0] is _sre.AT:
        i += 1
    if i == len(items):
        return None
    op, av = items[i]
    if op is _sre.SUBPATTERN:
        return _literals(list(av[-1]))
    if op is _sre.BRANCH:
        alternatives = [_literals(list(alt)) for alt in av[1]]
        return None if any(a is None for a in alternatives) else [x for a in alternatives if a for x in a]
    text = ""
    while i < len(items) and (ch := _char(*items[i])) is not None:
        text, i = text + ch, i + 1
    return [text] if text else None


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int]:
    """gitleaks's secret: the ``secretGroup``, else the first non-empty group, else the match. A
    first group under eight characters is a repeated part, not the secret (``([a-z0-9]{4}-){3}``
    in ``microsoft-teams-webhook`` would leave the webhook URL readable): the whole match then."""
    if m.re.groups == 0:
        return m.span()
    if group:
        return m.span(group) if group <= m.re.groups and m.group(group) else (-1, -1)
    for g in range(1, m.re.groups + 1):
        if m.group(g):
            return m.span(g) if m.end(g) - m.start(g) >= 8 else m.span()
    return m.span()


def _line_of(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : (text.find("\n", end) + 1 or len(text) + 1) - 1]


def _match_start(text: str, m: re.Match[str], rule: Rule) -> int:
    start = m.start()
    if rule.extend_back:
        floor = max(0, start - 50)
        while start > floor and _KEY_CHARS.match(text[start - 1]):
            start -= 1
    return start


def is_finding(rule: Rule, text: str, m: re.Match[str], span: tuple[int, int]) -> bool:
    """gitleaks's checks after a regex match: entropy, the digit rule for generic rules, allowlists."""
    secret = text[span[0] : span[1]]
    if not secret or secret.startswith("[REDACTED:"):
        return False
    if rule.entropy:
        if shannon(secret) <= rule.entropy:
            return False
        if rule.id.startswith("generic") and not any(c.isdigit() for c in secret):
            return False
    if ruleset().allow.allows(secret, secret, ""):
        return False
    if rule.allow:
        whole = text[_match_start(text, m, rule) : m.end()]
        line = _line_of(text, m.start(), m.end())
        if any(a.allows(secret, whole, line) for a in rule.allow):
            return False
    return True


def apply(rule: Rule, text: str, mark: Callable[[str, str], str], lowered: str) -> tuple[str, int]:
    """``text`` with the secret of every finding of ``rule`` replaced by ``mark(kind, secret)``;
    ``lowered`` is ``text.lower()`` (computed once by the caller for all rules)."""
    out: list[str] = []
    done = n = 0
    for m in rule.matches(text, lowered):
        span = _secret_span(m, rule.secret_group)
        if span[0] < done or not is_finding(rule, text, m, span):
            continue
        out += [text[done : span[0]], mark(rule.id, text[span[0] : span[1]])]
        done, n = span[1], n + 1
    if not n:
        return text, 0
    out.append(text[done:])
    return "".join(out), n


# ---- the port: gitleaks.toml (Go RE2 syntax) -> redaction_rules.toml (Python re syntax) --------------


def _branch_end(regex: str, pos: int) -> int:
    """Where the branch that contains ``pos`` ends: the next ``|`` or ``)`` at the same depth."""
    depth, i, in_class = 0, pos, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if regex[i + 1 : i + 2] == "]" or regex[i + 1 : i + 3] == "^]":
                i += 2 if regex[i + 1] == "]" else 3
                continue
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        elif c == "|" and depth == 0:
            return i
        i += 1
    return len(regex)


def go_to_python(regex: str) -> str:
    """RE2 syntax Python's ``re`` rejects, rewritten to the same meaning."""
    regex = regex.replace(r"\z", r"\Z").replace("[[:alnum:]]", "[A-Za-z0-9]").replace("[:alnum:]", "A-Za-z0-9")
    while True:
        pos = regex.find("(?i)", 1)
        if pos < 0:
            return regex
        end = _branch_end(regex, pos + 4)
        regex = regex[:pos] + "(?i:" + regex[pos + 4 : end] + ")" + regex[end:]


def _toml_str(value: str) -> str:
    return f"'''{value}'''" if "'''" not in value else json.dumps(value)  # JSON escapes are TOML's


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def _emit_allow(entry: dict, header: str) -> list[str]:
    lines = [header]
    for key in ("description", "condition", "regexTarget"):
        if key in entry and key != "description":
            lines.append(f'{key} = "{entry[key]}"')
    for key in ("regexes", "paths", "stopwords"):
        if key in entry:
            values = [go_to_python(v) for v in entry[key]] if key == "regexes" else list(entry[key])
            lines.append(f"{key} = {_toml_list(values)}")
    return lines


def port(source: Path, commit: str) -> str:
    """The text of ``redaction_rules.toml`` from a gitleaks ``config/gitleaks.toml``."""
    data = tomllib.loads(source.read_text(encoding="utf-8"))
    out = [
        "# Ported from github.com/gitleaks/gitleaks config/gitleaks.toml at commit " + commit,
        "# MIT licence, Copyright (c) 2019 Zachary Rice. Descriptions dropped; Go regex syntax rewritten",
        "# for Python by paqad.redaction_rules.go_to_python. Regenerate, do not edit by hand:",
        "#   python -m paqad.redaction_rules gitleaks.toml COMMIT > paqad/redaction_rules.toml",
        "",
        *_emit_allow(data.get("allowlist", {}), "[allowlist]"),
    ]
    for rule in data["rules"]:
        out += ["", "[[rules]]", f'id = "{rule["id"]}"']
        if "regex" in rule:
            out.append(f"regex = {_toml_str(go_to_python(rule['regex']))}")
        for key in ("secretGroup", "entropy"):
            if key in rule:
                out.append(f"{key} = {rule[key]}")
        if "path" in rule:
            out.append(f"path = {_toml_str(rule['path'])}")
        out.append(f"keywords = {_toml_list(rule.get('keywords', []))}")
        for entry in rule.get("allowlists", ()):
            out += _emit_allow(entry, "[[rules.allowlists]]")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(port(Path(sys.argv[1]), sys.argv[2]))
