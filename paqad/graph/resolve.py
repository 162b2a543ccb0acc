"""Turn the raw names the index stores into typed edges: ``contains``, ``calls``, ``imports``,
``inherits``. Pure Python over the index's ``StoredUnit`` records; no networkx here.

The parsers record callees by their last name (``self.save()`` and ``save()`` are both ``save``),
imports as dotted modules or specifiers, and bases as written. A call is resolved, in order:

1. **scope**: the caller's own nested definitions, then its class (and that class's resolved
   bases, three levels up), then the file's top level (Go: the whole package folder);
2. **imports**: a name the file imports (``from x import y as z`` binds ``z``; a package
   ``__init__`` that re-exports is followed), then a top-level definition in a module the file
   imports (``import x.y`` then ``x.y.f()``);
3. **unique name**: exactly one definition of that name in the repository, in the same language
   family; never for names Python's builtins or builtin types define (``d.update()`` is
   ``dict.update`` far more often than the one ``update`` a repository defines).

Anything else stays unresolved (``?name``, with ``ambiguous`` or ``unknown``): never guessed.
"""

from __future__ import annotations

import ast
import builtins
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from paqad.index.records import GRAPH_FIELDS, StoredUnit

if TYPE_CHECKING:
    from paqad.index.reader import Index

CODE_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait"})
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
FAMILY = {"typescript": "js", "tsx": "js", "javascript": "js", "c": "c", "cpp": "c"}
JS_SUFFIXES = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", "/index.ts", "/index.tsx", "/index.js", "/index.jsx")
BASE_DEPTH = 3  # inheritance levels searched for a method called on self
REEXPORT_DEPTH = 3  # ``__init__.py`` re-export hops followed
_PY_COMMON = frozenset(
    n for t in (builtins, dict, list, str, set, bytes, tuple, int, float, object, frozenset) for n in dir(t)
)
_JS_COMMON = frozenset(
    """push pop shift unshift slice splice map filter reduce forEach find findIndex some every includes
    indexOf join concat sort reverse keys values entries assign freeze then catch finally resolve reject
    toString valueOf hasOwnProperty call apply bind log error warn info debug parse stringify
    get set has delete add clear next return throw subscribe pipe emit on off once""".split()
)
_AT_SUFFIX = re.compile(r"@\d+$")


class Edge(NamedTuple):
    src: str
    type: str
    dst: str
    unresolved: str = ""  # "", "ambiguous" or "unknown"


@dataclass
class FileSyms:
    """One file's units by qualified name (first parts only), its imports and Python aliases."""

    path: str
    language: str
    by_qname: dict[str, StoredUnit] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted import entry
    modules: set[str] | None = None  # memo of Resolver.imported_modules

    def entry_for(self, name: str) -> str | None:
        """The import entry that binds ``name`` here: an alias, else an entry ending in ``.name``."""
        if name in self.aliases:
            return self.aliases[name]
        return next((e for e in self.imports if e == name or e.endswith("." + name)), None)


def read_units(index: Index) -> tuple[list[StoredUnit], dict[str, str]]:
    """Every unit's graph facts (no text), and the text of Python module units that contain an ``as``."""
    return index.all_units(GRAPH_FIELDS), index.module_texts_containing("python", " as ")


def python_aliases(text: str) -> dict[str, str]:
    """``import x.y as z`` → {z: x.y}; ``from x import y as z`` → {z: x.y}; relative kept dotted.

    Only import statements are parsed (each alone), so a module unit that is not valid Python as
    a whole (it is the lines left outside declarations) still yields its aliases."""
    out: dict[str, str] = {}
    for stmt in _import_statements(text):
        try:
            tree = ast.parse(stmt)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                out.update({a.asname: a.name for a in node.names if a.asname})
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                sep = "" if base.endswith(".") or not base else "."
                out.update({a.asname: f"{base}{sep}{a.name}" for a in node.names if a.asname})
    return out


def _import_statements(text: str) -> Iterable[str]:
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not (line.startswith("import ") or line.startswith("from ")):
            continue
        stmt = line
        while (stmt.count("(") > stmt.count(")") or stmt.endswith("\\")) and i < len(lines):
            stmt = stmt.rstrip("\\") + " " + lines[i].strip()
            i += 1
        if " as " in stmt:
            yield stmt


class Resolver:
    """Symbol tables over every unit of one index generation, and the resolution rules."""

    def __init__(self, units: list[StoredUnit], module_texts: dict[str, str]) -> None:
        self.units = units
        self.files: dict[str, FileSyms] = {}
        self.by_name: dict[tuple[str, str], list[StoredUnit]] = defaultdict(list)
        self.dir_top: dict[tuple[str, str], list[StoredUnit]] = defaultdict(list)  # Go: (folder, name)
        self.py_modules: dict[str, set[str]] = defaultdict(set)
        self.paths: set[str] = set()
        self.by_basename: dict[str, list[str]] = defaultdict(list)
        for u in units:
            self._register(u)
        for path, text in module_texts.items():
            if path in self.files:
                self.files[path].aliases = python_aliases(text)
        self._class_bases: dict[str, list[StoredUnit]] = {}

    def _register(self, u: StoredUnit) -> None:
        fs = self.files.get(u.path)
        if fs is None:
            fs = self.files[u.path] = FileSyms(u.path, u.language)
            self.paths.add(u.path)
            self.by_basename[posixpath.basename(u.path)].append(u.path)
            if u.path.endswith(".py"):
                for key in _module_keys(u.path):
                    self.py_modules[key].add(u.path)
        if u.kind == "module":
            fs.imports = u.imports
        if u.part != 1:
            return
        if u.qualified_name:
            fs.by_qname.setdefault(u.qualified_name, u)
        if u.kind in CODE_KINDS:
            self.by_name[(family(u.language), u.name)].append(u)
            if u.language == "go" and "." not in u.qualified_name:
                self.dir_top[(posixpath.dirname(u.path), u.name)].append(u)

    # -- edges ---------------------------------------------------------------------------------

    def edges(self) -> list[Edge]:
        """Every edge of the graph: inherits first (method lookup through bases needs them)."""
        out: list[Edge] = []
        for u in self.units:
            if u.kind in TYPE_KINDS and u.part == 1 and u.bases:
                targets = [self.resolve_base(u, b) for b in u.bases]
                self._class_bases[u.id] = [t for t in targets if isinstance(t, StoredUnit)]
                out += [_edge(u.id, "inherits", t, b) for b, t in zip(u.bases, targets)]
        for u in self.units:
            if u.part != 1:  # a split unit's parts share one node (their calls are copies)
                continue
            out.append(Edge(self._container(u), "contains", u.id))
            for name in u.calls:
                target = self.resolve_call(u, name)
                if target is not u:  # recursion is not a neighbour
                    out.append(_edge(u.id, "calls", target, name))
        for fs in self.files.values():
            out += [Edge(fs.path, "imports", dst) for dst in sorted(self.imported_files(fs)) if dst != fs.path]
        return out

    def _container(self, u: StoredUnit) -> str:
        if "." in u.qualified_name and u.kind != "module":
            parent = self.files[u.path].by_qname.get(u.qualified_name.rsplit(".", 1)[0])
            if parent is not None:
                return parent.id
        return u.path

    # -- calls ---------------------------------------------------------------------------------

    def resolve_call(self, u: StoredUnit, name: str, kinds: frozenset[str] = CODE_KINDS) -> StoredUnit | str:
        """The unit ``name`` means when ``u`` calls it, or "ambiguous"/"unknown"."""
        found = self._in_scope(u, name, kinds) or self._via_imports(u, name, kinds)
        if found is not None:
            return found
        return self._unique(u, name, kinds)

    def _in_scope(self, u: StoredUnit, name: str, kinds: frozenset[str]) -> StoredUnit | None:
        fs = self.files[u.path]
        parts = [_AT_SUFFIX.sub("", p) for p in u.qualified_name.split(".")] if u.qualified_name else []
        common = name in _common_names(u.language)
        for cut in range(len(parts), -1, -1):
            prefix = ".".join(parts[:cut])
            owner = fs.by_qname.get(prefix) if prefix else None
            in_class = owner is not None and owner.kind in TYPE_KINDS
            if in_class and common:  # ``x.get()`` in a method is rarely ``self.get()``
                continue
            hit = fs.by_qname.get(f"{prefix}.{name}" if prefix else name)
            if hit is not None and hit.kind in kinds:
                return hit
            if in_class and owner is not None:
                inherited = self._in_bases(owner, name, kinds, BASE_DEPTH)
                if inherited is not None:
                    return inherited
        if u.language == "go":
            same = [t for t in self.dir_top.get((posixpath.dirname(u.path), name), []) if t.kind in kinds]
            return same[0] if len(same) == 1 else None
        return None

    def _in_bases(self, cls: StoredUnit, name: str, kinds: frozenset[str], depth: int) -> StoredUnit | None:
        for base in self._class_bases.get(cls.id, []) if depth > 0 else []:
            hit = self.files[base.path].by_qname.get(f"{base.qualified_name}.{name}")
            if hit is not None and hit.kind in kinds:
                return hit
            deeper = self._in_bases(base, name, kinds, depth - 1)
            if deeper is not None:
                return deeper
        return None

    def _via_imports(self, u: StoredUnit, name: str, kinds: frozenset[str]) -> StoredUnit | None:
        fs = self.files[u.path]
        if fs.language == "python":
            entry = fs.entry_for(name)
            if entry is not None:
                hit = self.python_symbol(fs.path, entry, REEXPORT_DEPTH)
                if hit is not None and hit.kind in kinds:
                    return hit
        if name in _common_names(u.language):  # ``h.update()`` is not ``build.update()`` because the file imports build
            return None
        members = {t.id: t for m in self.imported_modules(fs) if (t := self.files[m].by_qname.get(name)) and t.kind in kinds}
        return next(iter(members.values())) if len(members) == 1 else None

    def _unique(self, u: StoredUnit, name: str, kinds: frozenset[str]) -> StoredUnit | str:
        if name in _common_names(u.language):
            return "unknown"
        defs = [t for t in self.by_name.get((family(u.language), name), []) if t.kind in kinds and t.id != u.id]
        if len(defs) == 1:
            return defs[0]
        return "ambiguous" if defs else "unknown"

    def resolve_base(self, u: StoredUnit, base: str) -> StoredUnit | str:
        """A base class as written (``Base``, ``mod.Base``, ``pkg.mod.Base``)."""
        if "." in base and u.language == "python":
            head, rest = base.split(".", 1)
            fs = self.files[u.path]
            entry = fs.entry_for(head)
            module = self.python_module(fs.path, entry) if entry else None
            if module is not None:
                hit = self.files[module].by_qname.get(rest)
                return hit if hit is not None else "unknown"
        return self.resolve_call(u, base.rsplit(".", 1)[-1], TYPE_KINDS)

    # -- modules -------------------------------------------------------------------------------

    def python_module(self, importer: str, dotted: str) -> str | None:
        """The repository file a Python module name (absolute or relative) names, if exactly one."""
        level = len(dotted) - len(dotted.lstrip("."))
        rest = [p for p in dotted[level:].split(".") if p]
        if level:
            base = posixpath.dirname(importer).split("/") if "/" in importer else []
            base = base[: len(base) - (level - 1)] if level > 1 else base
            stem = "/".join(base + rest)
            for cand in ((f"{stem}.py", f"{stem}/__init__.py") if stem else ("__init__.py",)):
                if cand in self.paths:
                    return cand
            return None
        found = self.py_modules.get(".".join(rest), set())
        return next(iter(found)) if len(found) == 1 else None

    def python_symbol(self, importer: str, entry: str, depth: int) -> StoredUnit | None:
        """``x.y`` imported from ``importer``: the unit ``y`` in module ``x`` (through re-exports)."""
        head, name = split_entry(entry)
        module = self.python_module(importer, head) if head else None
        if module is None:
            return None
        fs = self.files[module]
        hit = fs.by_qname.get(name)
        if hit is not None or depth <= 0:
            return hit
        again = fs.entry_for(name)
        return self.python_symbol(module, again, depth - 1) if again else None

    def imported_modules(self, fs: FileSyms) -> set[str]:
        """Files the file imports as whole modules (Python modules, relative JS/TS specifiers)."""
        if fs.modules is not None:
            return fs.modules
        out: set[str] = set()
        for entry in fs.imports:
            if fs.language == "python":
                target = self.python_module(fs.path, entry)
            elif family(fs.language) == "js":
                target = self.js_module(fs.path, entry)
            else:
                target = None
            if target is not None:
                out.add(target)
        fs.modules = out
        return out

    def imported_files(self, fs: FileSyms) -> set[str]:
        """Every repository file an import of ``fs`` names (a module, or a symbol's module)."""
        out = set(self.imported_modules(fs))
        for entry in fs.imports:
            if fs.language == "python":
                head = split_entry(entry)[0]
                target = self.python_module(fs.path, head) if head else None
            elif family(fs.language) == "js":
                continue
            else:
                target = self._by_path_suffix(fs.path, entry)
            if target is not None:
                out.add(target)
        return out

    def js_module(self, importer: str, spec: str) -> str | None:
        if not spec.startswith("."):
            return None
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        return next((stem + s for s in JS_SUFFIXES if stem + s in self.paths), None)

    def _by_path_suffix(self, importer: str, entry: str) -> str | None:
        """``#include "x/y.h"``-style imports: relative to the file, else a unique path suffix."""
        if "/" not in entry and "." not in entry:
            return None
        near = posixpath.normpath(posixpath.join(posixpath.dirname(importer), entry))
        if near in self.paths:
            return near
        hits = [p for p in self.by_basename.get(posixpath.basename(entry), []) if p == entry or p.endswith("/" + entry)]
        return hits[0] if len(hits) == 1 else None


def _common_names(language: str) -> frozenset[str]:
    return _PY_COMMON if language == "python" else _JS_COMMON if family(language) == "js" else frozenset()


def family(language: str) -> str:
    return FAMILY.get(language, language)


def split_entry(entry: str) -> tuple[str, str]:
    """A Python import entry as (module, name): ``x.y.z`` → (``x.y``, ``z``), ``.z`` → (``.``, ``z``),
    ``..m.z`` → (``..m``, ``z``), ``z`` → ("", ``z``)."""
    level = len(entry) - len(entry.lstrip("."))
    body = entry[level:]
    if "." in body:
        mod, name = body.rsplit(".", 1)
        return "." * level + mod, name
    return "." * level, body


def _module_keys(path: str) -> list[str]:
    """Dotted names a Python file may be imported by: every suffix of its folder path
    (``src/flask/app.py`` → ``src.flask.app``, ``flask.app``, ``app``), so a ``src/`` layout works."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))] if parts else []


def _edge(src: str, type_: str, target: StoredUnit | str, name: str) -> Edge:
    if isinstance(target, StoredUnit):
        return Edge(src, type_, target.id)
    return Edge(src, type_, unresolved_id(name), target)


def unresolved_id(name: str) -> str:
    return "?" + name
