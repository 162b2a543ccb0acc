"""The tree-sitter parser: exact units and lines per language, plus the contract's edge cases.

Each fixture under ``tests/fixtures/languages/<language>/`` is a small realistic file; the test
asserts every unit found (kind, qualified name, span), one unit's details, the module imports,
and that no non-blank line is lost.
"""

from __future__ import annotations

import pytest

from paqad.parse import treesitter
from paqad.parse.ts_languages import GRAMMARS
from testing import parsing
from testing.parsing import FIXTURES, Case, Detail, unit_named

CASES: dict[str, Case] = {
    "javascript": Case(
        "javascript/cart.js",
        "javascript",
        [
            ("class", "Cart", 10, 26),
            ("function", "noop", 42, 42),
            ("function", "receipt", 29, 36),
            ("function", "receipt.footer", 31, 33),
            ("function", "saveReceipt", 38, 40),
            ("method", "Cart.add", 18, 21),
            ("method", "Cart.onChange", 13, 15),
            ("method", "Cart.total", 23, 25),
            ("module", "", 1, 28),
        ],
        ["./format.js", "node:fs", "path"],
        Detail(
            "receipt",
            "export function receipt(cart)",
            "Render the cart as a receipt.",
            ["map", "formatPrice", "push", "footer", "join"],
        ),
    ),
    "typescript": Case(
        "typescript/store.ts",
        "typescript",
        [
            ("class", "MemoryStore", 20, 31),
            ("enum", "Level", 12, 15),
            ("function", "describe", 43, 43),
            ("function", "find", 33, 33),
            ("function", "find@2", 34, 34),
            ("function", "find@3", 35, 41),
            ("interface", "Store", 7, 10),
            ("method", "MemoryStore.get", 23, 25),
            ("method", "MemoryStore.put", 27, 30),
            ("method", "Store.get", 8, 8),
            ("method", "Store.put", 9, 9),
            ("module", "", 1, 19),
        ],
        ["events", "./models"],
        Detail(
            "MemoryStore",
            "export class MemoryStore extends EventEmitter implements Store",
            "An in-memory store that emits an event on every write.",
            ["Map"],
            ("EventEmitter", "Store"),
        ),
    ),
    "go": Case(
        "go/server.go",
        "go",
        [
            ("function", "NewServer", 24, 26),
            ("function", "clean", 42, 45),
            ("interface", "Handler", 12, 14),
            ("method", "Handler.Serve", 13, 13),
            ("method", "Server.Handle", 29, 36),
            ("method", "Server.Register", 38, 40),
            ("module", "", 1, 28),
            ("struct", "Server", 18, 21),
        ],
        ["fmt", "net/http", "strings"],
        Detail(
            "Server.Handle",
            "func (s *Server) Handle(w http.ResponseWriter, r *http.Request) error",
            "Handle dispatches one request.",
            ["clean", "NotFound", "Errorf", "Serve"],
        ),
    ),
    "rust": Case(
        "rust/shapes.rs",
        "rust",
        [
            ("enum", "Kind", 42, 45),
            ("function", "totals", 48, 57),
            ("function", "totals.add", 49, 51),
            ("method", "Circle.area", 31, 33),
            ("method", "Circle.fmt", 37, 39),
            ("method", "Circle.grow", 25, 27),
            ("method", "Circle.new", 21, 23),
            ("method", "Shape.area", 8, 8),
            ("method", "Shape.describe", 9, 11),
            ("module", "", 1, 47),
            ("struct", "Circle", 15, 18),
            ("trait", "Shape", 7, 12),
        ],
        ["std::collections::HashMap", "std::fmt"],
        Detail(
            "totals",
            "pub fn totals(shapes: &[(String, Circle)]) -> HashMap<String, f64>",
            "Total area per shape name.",
            ["new", "add", "area"],
        ),
    ),
    "java": Case(
        "java/Inventory.java",
        "java",
        [
            ("class", "Inventory", 10, 44),
            ("class", "Inventory.Item", 14, 22),
            ("interface", "Auditor", 46, 48),
            ("method", "Auditor.audit", 47, 47),
            ("method", "Inventory.Item.Item", 18, 21),
            ("method", "Inventory.add", 27, 30),
            ("method", "Inventory.add@2", 32, 34),
            ("method", "Inventory.iterator", 36, 39),
            ("method", "Inventory.log", 41, 43),
            ("module", "", 1, 9),
        ],
        ["java.util.ArrayList", "java.util.List", "java.util.Objects.requireNonNull"],
        Detail(
            "Inventory.add",
            "public void add(String sku, int count)",
            "Adds stock for a product.",
            ["add", "Item", "log"],
        ),
    ),
    "kotlin": Case(
        "kotlin/Library.kt",
        "kotlin",
        [
            ("class", "Book", 9, 9),
            ("class", "Library", 14, 29),
            ("class", "Library.Companion", 26, 28),
            ("enum", "Genre", 35, 35),
            ("function", "daysLeft", 38, 41),
            ("interface", "Catalog", 31, 33),
            ("method", "Catalog.lend", 32, 32),
            ("method", "Library.Companion.open", 27, 27),
            ("method", "Library.lend", 17, 21),
            ("method", "Library.overdue", 23, 24),
            ("module", "", 1, 37),
        ],
        ["kotlin.math.max", "java.time.LocalDate"],
        Detail(
            "Library.lend",
            "override fun lend(book: Book): LocalDate",
            "",
            ["now", "plusDays", "toLong"],
        ),
    ),
    "c": Case(
        "c/buffer.c",
        "c",
        [
            ("enum", "mode", 19, 19),
            ("function", "buffer_append", 26, 34),
            ("function", "grow", 37, 49),
            ("module", "", 1, 36),
            ("struct", "buffer", 8, 12),
            ("struct", "result_t", 14, 17),
        ],
        ["stdlib.h", "string.h", "buffer.h"],
        Detail(
            "buffer_append",
            "int buffer_append(struct buffer *b, const char *src, size_t len)",
            "Append len bytes to the buffer, growing it if needed.",
            ["grow", "memcpy"],
        ),
    ),
    "cpp": Case(
        "cpp/matrix.cpp",
        "cpp",
        [
            ("class", "Matrix", 8, 25),
            ("function", "trace", 41, 46),
            ("method", "Matrix.Matrix", 27, 27),
            ("method", "Matrix.at", 12, 12),
            ("method", "Matrix.index", 30, 35),
            ("method", "Matrix.size", 37, 37),
            ("module", "", 1, 39),
            ("struct", "Matrix.Size", 14, 17),
        ],
        ["vector", "stdexcept", "matrix.hpp"],
        Detail(
            "Matrix.index",
            "int Matrix::index(int r, int c) const",
            "Bounds-checked offset of (r, c).",
            ["out_of_range", "describe"],
        ),
    ),
    "csharp": Case(
        "csharp/Orders.cs",
        "csharp",
        [
            ("class", "Audit", 38, 44),
            ("class", "Order", 16, 34),
            ("class", "Order.Line", 20, 20),
            ("enum", "Status", 36, 36),
            ("interface", "IPriced", 10, 13),
            ("method", "Audit.Log", 41, 41),
            ("method", "Audit.Stamp", 43, 43),
            ("method", "IPriced.Price", 12, 12),
            ("method", "Order.Add", 22, 26),
            ("method", "Order.Price", 28, 33),
            ("module", "", 1, 45),
        ],
        ["System", "System.Collections.Generic", "System.Math"],
        Detail(
            "Audit.Log",
            "public static void Log(string message)",
            "Write one line to the console.",
            ["WriteLine", "Stamp"],
        ),
    ),
    "ruby": Case(
        "ruby/account.rb",
        "ruby",
        [
            ("class", "Banking", 6, 30),
            ("class", "Banking.Account", 11, 29),
            ("class", "Banking.Overdrawn", 8, 8),
            ("function", "format_amount", 37, 39),
            ("function", "to_json_payload", 33, 35),
            ("method", "Banking.Account.initialize", 14, 17),
            ("method", "Banking.Account.open", 26, 28),
            ("method", "Banking.Account.withdraw", 20, 24),
            ("module", "", 1, 32),
        ],
        ["json", "support/ledger"],
        Detail(
            "Banking.Account",
            "class Account < Base::Record",
            "A bank account with a running balance.",
            ["attr_reader"],
            ("Base::Record",),
        ),
    ),
    "php": Case(
        "php/Invoice.php",
        "php",
        [
            ("class", "Invoice", 21, 38),
            ("function", "render_invoice", 41, 45),
            ("interface", "Billable", 13, 16),
            ("method", "Billable.total", 15, 15),
            ("method", "Invoice.__construct", 25, 27),
            ("method", "Invoice.addLine", 29, 32),
            ("method", "Invoice.total", 34, 37),
            ("module", "", 1, 40),
        ],
        ["App\\Models\\Customer", "Carbon\\Carbon", "/helpers.php"],
        Detail(
            "render_invoice",
            "function render_invoice(Invoice $invoice): string",
            "Render an invoice as plain text.",
            ["now", "toDateString", "sprintf", "total"],
        ),
    ),
    "swift": Case(
        "swift/Counter.swift",
        "swift",
        [
            ("class", "Counter", 12, 32),
            ("function", "log", 41, 43),
            ("interface", "Resettable", 7, 9),
            ("method", "Counter.increment", 24, 27),
            ("method", "Counter.init", 20, 22),
            ("method", "Counter.reset", 29, 31),
            ("method", "Counter.snapshot", 35, 37),
            ("method", "Resettable.reset", 8, 8),
            ("module", "", 1, 40),
            ("struct", "Counter.Snapshot", 15, 18),
        ],
        ["Foundation", "Combine"],
        Detail(
            "Counter",
            "final class Counter: ObservableObject, Resettable",
            "A counter that publishes its value.",
            [],
            ("ObservableObject", "Resettable"),
        ),
    ),
    "scala": Case(
        "scala/Queue.scala",
        "scala",
        [
            ("class", "Echo", 30, 32),
            ("class", "JobQueue", 15, 28),
            ("class", "JobQueue.Stats", 25, 27),
            ("class", "Runner", 34, 38),
            ("method", "Echo.run", 31, 31),
            ("method", "Job.name", 9, 9),
            ("method", "Job.run", 8, 8),
            ("method", "JobQueue.Stats.pending", 26, 26),
            ("method", "JobQueue.iterator", 23, 23),
            ("method", "JobQueue.push", 18, 21),
            ("method", "Runner.runAll", 36, 37),
            ("module", "", 1, 14),
            ("trait", "Job", 7, 10),
        ],
        ["scala.collection.mutable", "scala.concurrent"],
        Detail(
            "Runner.runAll",
            "def runAll(queue: JobQueue)(implicit ec: ExecutionContext): Future[Unit]",
            "Run every job, one future each.",
            ["traverse", "Future", "run", "map"],
        ),
    ),
    "shell": Case(
        "shell/deploy.sh",
        "bash",
        [
            ("function", "build", 15, 19),
            ("function", "log", 10, 12),
            ("function", "main", 27, 30),
            ("function", "upload", 21, 25),
            ("module", "", 1, 32),
        ],
        ["./lib/common.sh", '$(dirname "$0")/env.sh'],
        Detail(
            "build",
            "build()",
            "Build the release archive.",
            ["log", "make", "tar"],
        ),
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_fixture_parses_without_errors(language: str) -> None:
    parsing.check_parses_without_errors(CASES[language])


@pytest.mark.parametrize("language", sorted(CASES))
def test_units_are_exact(language: str) -> None:
    parsing.check_units_are_exact(CASES[language], language)


@pytest.mark.parametrize("language", sorted(CASES))
def test_unit_details(language: str) -> None:
    parsing.check_unit_details_and_imports(CASES[language])


@pytest.mark.parametrize("language", sorted(CASES))
def test_text_is_exact_lines_and_nothing_is_lost(language: str) -> None:
    parsing.check_text_is_exact_lines_and_nothing_is_lost(CASES[language])


@pytest.mark.parametrize("language", sorted(CASES))
def test_signatures_are_single_short_lines(language: str) -> None:
    parsing.check_signatures_are_single_short_lines(CASES[language])


def test_tsx_needs_the_tsx_grammar() -> None:
    text = (FIXTURES / "typescript" / "component.tsx").read_text(encoding="utf-8")
    assert treesitter.syntax_tree(text, "typescript").root_node.has_error
    assert not treesitter.syntax_tree(text, "tsx").root_node.has_error
    units = treesitter.parse("ui/component.tsx", text, "tsx")
    found = sorted((u.kind, u.qualified_name, u.start_line, u.end_line) for u in units)
    assert found == [("function", "Banner", 6, 14), ("module", "", 1, 5)]
    banner = unit_named(units, "Banner")
    assert banner.language == "typescript"
    assert banner.docstring == "A dismissable banner."
    assert banner.calls == ["toUpperCase", "onClose"]


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
def test_broken_source_does_not_raise(grammar: str) -> None:
    text = "class Foo {\n  def (((( bar\n}}} <<< fn ;;\n  func )\n<?php ?> \x00 end end\n"
    units = treesitter.parse("broken.src", text, grammar)
    lines = text.split("\n")
    for unit in units:
        assert 1 <= unit.start_line <= unit.end_line <= len(lines)


def test_broken_declaration_keeps_what_parsed() -> None:
    text = "func good() int {\n\treturn 1\n}\n\nfunc bad( {\n"
    units = treesitter.parse("x.go", text, "go")
    assert ("function", "good", 1, 3) in [(u.kind, u.qualified_name, u.start_line, u.end_line) for u in units]


def test_unknown_grammar_raises_lookup_error() -> None:
    with pytest.raises(LookupError, match="Choose from"):
        treesitter.parse("a.cob", "IDENTIFICATION DIVISION.", "cobol")


def test_overloads_get_numbered_names() -> None:
    text = "class A {\n  void f(int a) {}\n  void f(String s) {}\n  void f() {}\n}\n"
    units = treesitter.parse("A.java", text, "java")
    assert [u.qualified_name for u in units] == ["A", "A.f", "A.f@2", "A.f@3"]
    assert len({u.id for u in units}) == 4


def test_bash_is_shell_and_empty_file_has_no_units() -> None:
    assert treesitter.parse("a.sh", "", "bash") == []
    units = treesitter.parse("a.sh", "f() {\n  ls\n}\n", "bash")
    assert [(u.language, u.kind, u.name) for u in units] == [("shell", "function", "f")]


def test_leftover_comments_alone_make_no_module_unit() -> None:
    text = "// Package doc.\n\n// Run runs.\nfunc Run() {}\n"
    units = treesitter.parse("run.go", text, "go")
    assert [(u.kind, u.name, u.docstring) for u in units] == [("function", "Run", "Run runs.")]


def test_anonymous_functions_are_not_units() -> None:
    text = (
        "setTimeout(function () { tick(); }, 10);\n"
        "function outer() {\n"
        "  const inner = () => helper();\n"
        "  return [1].map(function (x) { return x; });\n"
        "}\n"
        "const obj = { method() {} };\n"
    )
    units = treesitter.parse("a.js", text, "javascript")
    # ``obj``'s ``method`` is named, so it is a unit (see the CommonJS test below); the callbacks
    # and the arrow function bound inside ``outer`` are not
    assert [(u.kind, u.qualified_name) for u in units] == [("module", ""), ("function", "outer"), ("function", "method")]
    assert units[0].calls == ["setTimeout", "tick"]
    assert units[1].calls == ["helper", "map"]


def test_functions_declared_by_assignment_and_as_object_members_are_units() -> None:
    text = (
        "res.send = function send(body) {\n  return this.end(body);\n};\n"
        "exports.parse = (s) => split(s);\n"
        "Router.prototype.route = async function () { await go(); };\n"
        "module.exports = {\n  format: function (x) { return pad(x); },\n  render(view) { draw(view); },\n  depth: 3,\n};\n"
        "counter = 1;\n"
        "handlers[name] = function () {};\n"
    )
    for grammar, path in (("javascript", "a.js"), ("typescript", "a.ts")):
        units = treesitter.parse(path, text, grammar)
        got = [(u.kind, u.qualified_name, u.start_line, u.end_line) for u in units]
        assert got == [
            ("module", "", 6, 12),  # the lines no declaration covers
            ("method", "res.send", 1, 3),
            ("method", "exports.parse", 4, 4),
            ("method", "Router.prototype.route", 5, 5),
            ("function", "format", 7, 7),
            ("function", "render", 8, 8),
        ], grammar
        assert units[1].calls == ["end"] and units[3].calls == ["go"] and units[5].calls == ["draw"]


def test_deep_nesting_does_not_hit_the_recursion_limit() -> None:
    text = "const x = " + "[" * 3000 + "]" * 3000 + ";\nfunction f() { g(); }\n"
    units = treesitter.parse("deep.js", text, "javascript")
    assert [u.qualified_name for u in units] == ["", "f"]


def test_unnamed_classes_are_scopes_not_units() -> None:
    units = treesitter.parse("a.ts", "export default class {\n  m() { run(); }\n}\n", "typescript")
    assert [(u.kind, u.qualified_name, u.calls) for u in units] == [("module", "", []), ("method", "m", ["run"])]
    text = "struct { int x; } anon;\ntypedef struct { int y; } Point;\n"
    units = treesitter.parse("a.c", text, "c")
    assert [(u.kind, u.qualified_name) for u in units] == [("module", ""), ("struct", "Point")]
