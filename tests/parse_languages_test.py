"""Elixir, Haskell, Lua, Zig, OCaml, Perl, SQL, HCL, Julia and Dart through the tree-sitter engine: exact units and spans per fixture.

Same contract as ``parse_treesitter_test.py`` (every unit's kind, qualified name and span; one
unit's details; the module imports; no non-blank line lost), plus what these languages needed
from the engine: clauses of one function merged into one unit (Elixir ``def``, Haskell
equations), a declaration head that is not a call, a qualifier separator (Lua ``M.new``,
Elixir ``Bank.Account``), a binding that names a container (Zig ``const Ring = struct``), a
docstring that is a string literal (Julia) and a body beside its signature (Dart).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from paqad.eligibility import content, stackpacks
from paqad.parse import parse_file, treesitter
from testing import parsing
from testing.parsing import FIXTURES, Case, Detail, parse_case, unit_named

CASES: dict[str, Case] = {
    "elixir": Case(
        "elixir/account.ex",
        "elixir",
        [
            ("interface", "Bank.Printable", 35, 37),
            ("method", "Bank.Account.deposit", 17, 19),
            ("method", "Bank.Account.handle_call", 21, 26),
            ("method", "Bank.Account.log", 28, 28),
            ("method", "Bank.Account.start_link", 11, 14),
            ("method", "Bank.Printable.print", 36, 36),
            ("method", "Bank.Printable.print@2", 40, 40),
            ("module", "", 1, 41),
        ],
        ["GenServer", "Bank.Ledger", "Logger"],
        Detail("Bank.Account.deposit", "def deposit(pid, amount) when amount > 0", "Deposit a positive amount.", ["call"]),
    ),
    "haskell": Case(
        "haskell/Queue.hs",
        "haskell",
        [
            ("function", "empty", 29, 30),
            ("function", "pop", 37, 40),
            ("function", "push", 33, 34),
            ("function", "toList", 42, 46),
            ("function", "toList.go", 45, 45),
            ("function", "toList.step", 46, 46),
            ("interface", "Sized", 22, 23),
            ("method", "Queue.size", 26, 26),
            ("method", "Sized.size", 23, 23),
            ("module", "", 1, 36),
            ("struct", "Queue", 14, 15),
            ("struct", "Size", 17, 17),
        ],
        ["Data.List", "Data.Maybe"],
        Detail("pop", "pop (Queue [] [])", "Take the front element, if any.", ["pop", "Queue", "reverse", "Just"]),
    ),
    "lua": Case(
        "lua/cache.lua",
        "lua",
        [
            ("function", "encode", 40, 42),
            ("function", "oldest", 30, 38),
            ("method", "M.get", 17, 23),
            ("method", "M.new", 9, 14),
            ("method", "M.set", 25, 28),
            ("module", "", 1, 44),
        ],
        ["cache.util", "cjson"],
        Detail("M.new", "function M.new(size)", "Create a cache holding at most `size` entries.", ["setmetatable"]),
    ),
    "hcl": Case(
        "hcl/main.tf",
        "hcl",
        [
            ("class", "aws_ami.ubuntu", 24, 26),
            ("class", "aws_instance.web", 16, 22),
            ("class", "vpc", 28, 31),
            ("module", "", 1, 15),
            ("struct", "region", 6, 9),
            ("struct", "web_ip", 33, 35),
        ],
        [],
        Detail("aws_instance.web", 'resource "aws_instance" "web"', "The public web server.", []),
    ),
    "ocaml": Case(
        "ocaml/stack.ml",
        "ocaml",
        [
            ("function", "drain", 25, 29),
            ("function", "empty", 9, 9),
            ("function", "pop", 14, 17),
            ("function", "push", 11, 11),
            ("method", "Printer.print", 22, 22),
            ("method", "Printer.show", 20, 20),
            ("module", "", 1, 23),
            ("struct", "t", 4, 4),
        ],
        ["Printf"],
        Detail("Printer.show", "let show s", "", ["concat", "map"]),
    ),
    "julia": Case(
        "julia/Geometry.jl",
        "julia",
        [
            ("interface", "Geometry.Shape", 22, 22),
            ("method", "Geometry.Base.show", 40, 40),
            ("method", "Geometry.Circle.Circle", 27, 27),
            ("method", "Geometry.area", 31, 31),
            ("method", "Geometry.centroid", 36, 38),
            ("method", "Geometry.check", 42, 44),
            ("method", "Geometry.distance", 33, 33),
            ("module", "", 1, 46),
            ("struct", "Geometry.Circle", 24, 28),
            ("struct", "Geometry.Point", 17, 20),
        ],
        ["LinearAlgebra", "Statistics", "Printf", "transforms.jl"],
        Detail("Geometry.centroid", "function centroid(points::Vector{<:Point})", "Mean of the points' coordinates.", ["Point", "mean"]),
    ),
    "dart": Case(
        "dart/cart.dart",
        "dart",
        [
            ("class", "Cart", 31, 42),
            ("class", "Line", 10, 23),
            ("enum", "Currency", 29, 29),
            ("function", "summary", 48, 48),
            ("interface", "Priced", 5, 7),
            ("method", "Cart.add", 35, 38),
            ("method", "Cart.cents", 40, 41),
            ("method", "Discounts.discounted", 26, 26),
            ("method", "Formatting.format", 45, 45),
            ("method", "Line.Line", 12, 12),
            ("method", "Line.cents", 21, 22),
            ("method", "Line.fromJson", 14, 15),
            ("method", "Priced.cents", 6, 6),
            ("module", "", 1, 46),
            ("trait", "Discounts", 25, 27),
        ],
        ["dart:math", "package:meta/meta.dart"],
        Detail("Cart.add", "void add(Line line)", "Add a line, merging it with one of the same name.", ["removeWhere", "add"]),
    ),
    "perl": Case(
        "perl/Inventory.pm",
        "perl",
        [
            ("function", "add", 15, 20),
            ("function", "new", 9, 13),
            ("function", "total", 22, 25),
            ("module", "", 1, 27),
        ],
        ["strict", "warnings", "List::Util", "Carp"],
        Detail("add", "sub add", "", ["Carp::croak", "log"]),
    ),
    "sql": Case(
        "sql/schema.sql",
        "sql",
        [
            ("function", "credit", 22, 24),
            ("module", "", 1, 26),
            ("struct", "accounts", 2, 6),
            ("struct", "entries", 8, 12),
            ("struct", "owner_balances", 17, 20),
        ],
        [],
        Detail("owner_balances", "CREATE VIEW owner_balances", "Balance per owner, for the monthly report.", ["SUM"]),
    ),
    "zig": Case(
        "zig/ring.zig",
        "zig",
        [
            ("enum", "Mode", 23, 23),
            ("function", "push wraps around", 37, 41),
            ("function", "sum", 31, 35),
            ("method", "Ring.init", 12, 15),
            ("method", "Ring.push", 17, 20),
            ("module", "", 1, 30),
            ("struct", "Ring", 6, 21),
            ("struct", "Value", 25, 28),
        ],
        ["std"],
        Detail(
            "Ring.init",
            "pub fn init(allocator: Allocator, capacity: usize) !Ring",
            "Allocate a ring holding `capacity` bytes.",
            ["alloc"],
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
def test_unit_details_and_imports(language: str) -> None:
    parsing.check_unit_details_and_imports(CASES[language])


@pytest.mark.parametrize("language", sorted(CASES))
def test_text_is_exact_lines_and_nothing_is_lost(language: str) -> None:
    parsing.check_text_is_exact_lines_and_nothing_is_lost(CASES[language])


@pytest.mark.parametrize("language", sorted(CASES))
def test_signatures_are_single_short_lines(language: str) -> None:
    parsing.check_signatures_are_single_short_lines(CASES[language])


def test_clauses_of_one_function_are_one_unit() -> None:
    """``handle_call`` has a ``do`` clause and a ``do:`` clause; ``pop`` has three equations."""
    _, units = parse_case(CASES["elixir"])
    handle = unit_named(units, "Bank.Account.handle_call")
    assert handle.text.count("def handle_call(") == 2 and handle.calls == ["record"]
    _, units = parse_case(CASES["haskell"])
    pop = unit_named(units, "pop")
    assert pop.text.startswith("pop :: Queue a -> Maybe (a, Queue a)\npop (Queue [] [])")
    assert [u.qualified_name for u in units].count("pop") == 1


def test_clauses_do_not_merge_across_other_declarations() -> None:
    text = "f 0 = 1\ng x = x\nf n = n\n"
    units = treesitter.parse("A.hs", text, "haskell")
    assert [(u.qualified_name, u.start_line, u.end_line) for u in units] == [("f", 1, 1), ("g", 2, 2), ("f@2", 3, 3)]


def test_elixir_head_field_access_and_attributes_are_not_calls() -> None:
    """The head ``start_link(owner)`` is not a call of itself; ``state.owner`` is a field; the
    ``@doc`` attribute above a ``def`` is part of its span."""
    _, units = parse_case(CASES["elixir"])
    start = unit_named(units, "Bank.Account.start_link")
    assert start.text.startswith('  @doc "Start an account for `owner`."\n  def start_link(owner) do')
    assert start.calls == ["start_link"]  # GenServer.start_link, not the head
    assert unit_named(units, "Bank.Account.log").calls == ["info"]  # the body of a ``do:`` one-liner


def test_haskell_types_are_not_calls_and_docs_attach_past_the_imports() -> None:
    _, units = parse_case(CASES["haskell"])
    module = next(u for u in units if u.kind == "module")
    assert module.calls == []  # ``Queue a`` in a signature is a type application
    assert unit_named(units, "Queue").docstring == "A queue as two lists."
    assert unit_named(units, "Sized").signature == "class Sized f where"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("lib/bank/account.ex", "elixir"),
        ("test/account_test.exs", "elixir"),
        ("src/Data/Queue.hs", "haskell"),
        ("lua/cache.lua", "lua"),
        ("src/ring.zig", "zig"),
        ("lib/Shop/Inventory.pm", "perl"),
        ("t/inventory.t", "perl"),
        ("db/schema.sql", "sql"),
        ("src/stack.ml", "ocaml"),
        ("infra/main.tf", "hcl"),
        ("src/Geometry.jl", "julia"),
        ("lib/src/cart.dart", "dart"),
        ("test/cart_test.dart", "dart"),
    ],
)
def test_builtin_packs_route_the_suffixes_to_the_grammar(tmp_path: Path, path: str, language: str) -> None:
    packs = stackpacks.load_builtin_packs()
    assert stackpacks.detect(tmp_path, packs, [path]) == [language]
    rule = stackpacks.rule_for(path, packs.values(), stackpacks.repo_context([path]))
    assert rule is not None and (rule.language, rule.parser, rule.grammar) == (language, "tree-sitter", language)


@pytest.mark.parametrize(("marker", "language"), [("mix.exs", "elixir"), ("queue.cabal", "haskell"), ("cache-1.0-1.rockspec", "lua"), ("build.zig", "zig"), ("cpanfile", "perl"), ("dune-project", "ocaml"), ("terragrunt.hcl", "hcl"), ("Project.toml", "julia"), ("JuliaProject.toml", "julia"), ("pubspec.yaml", "dart")])
def test_root_markers_detect_the_stack(tmp_path: Path, marker: str, language: str) -> None:
    (tmp_path / marker).write_text("", encoding="utf-8")
    assert stackpacks.detect(tmp_path, stackpacks.load_builtin_packs(), []) == [language]


@pytest.mark.parametrize("language", sorted(CASES))
def test_parse_file_keeps_units_through_the_dispatch(language: str) -> None:
    case = CASES[language]
    text = (FIXTURES / case.file).read_text(encoding="utf-8")
    units = parse_file(case.file, text, "tree-sitter", case.grammar)
    assert {u.kind for u in units} - {"module"} and all(u.language == language for u in units)


def test_ocaml_doc_comments_are_cleaned_and_local_lets_are_not_units() -> None:
    _, units = parse_case(CASES["ocaml"])
    assert unit_named(units, "pop").docstring == "Remove the top element."
    assert unit_named(units, "empty").docstring == "The empty stack."
    assert "rest" not in {u.name for u in units}  # ``let x, rest = pop s in`` inside ``drain``


def test_hcl_unlabelled_blocks_stay_in_the_module_unit() -> None:
    _, units = parse_case(CASES["hcl"])
    module = next(u for u in units if u.kind == "module")
    assert module.text.startswith("# Network and web tier for one environment.\nterraform {")
    assert "locals {" in module.text and unit_named(units, "vpc").calls == ["cidrsubnet"]


def test_julia_short_form_definitions_are_units_and_string_docstrings_attach() -> None:
    _, units = parse_case(CASES["julia"])
    area = unit_named(units, "Geometry.area")
    assert (area.text, area.signature, area.docstring) == ("area(c::Circle) = pi * c.radius^2", "area(c::Circle)", "Area of a circle.")
    assert unit_named(units, "Geometry.Point").docstring == "Point(x, y)\n\nA point in the plane."  # a triple-quoted string
    assert unit_named(units, "Geometry.distance").calls == ["norm"]  # its head ``distance(a, b)`` is not a call
    text = 'using A, B.C\n\n"Twice `x`."\n@inline twice(x) = 2x\nv = twice(1)\nw::Int = 3\n'
    units = treesitter.parse("s.jl", text, "julia")
    assert [(u.kind, u.qualified_name, u.start_line, u.signature, u.docstring) for u in units[1:]] == [
        ("function", "twice", 4, "@inline twice(x)", "Twice `x`.")  # the macro is part of the span; ``v = ...`` is no unit
    ]
    assert units[0].imports == ["A", "B.C"] and units[0].calls == ["twice"]


def test_dart_members_take_the_body_beside_their_signature() -> None:
    """A method's ``function_body`` is a sibling of its signature: still its text and its calls."""
    _, units = parse_case(CASES["dart"])
    assert unit_named(units, "Cart.cents").calls == ["fold"] and unit_named(units, "Cart").calls == []
    assert unit_named(units, "Line.cents").text == "  @override\n  int get cents => unitCents * quantity;"
    assert unit_named(units, "Line.fromJson").text.endswith(": this(json['name'] as String, json['cents'] as int);")
    # a named parameter's ``{`` is not a body, so the signature is whole
    assert unit_named(units, "Line.Line").signature == "const Line(this.name, this.unitCents, {this.quantity = 1})"
    assert unit_named(units, "Priced").docstring == "Something that can be priced in cents."
    assert unit_named(units, "Cart").bases == ["Discounts", "Priced"]  # ``with`` and ``implements``


def test_dart_generated_parts_are_left_out_by_their_header() -> None:
    """``*.g.dart`` and ``*.freezed.dart`` cannot be excluded by name in a pack; their header does it."""
    freezed = "// coverage:ignore-file\n// GENERATED CODE - DO NOT MODIFY BY HAND\n// ignore_for_file: type=lint\n\npart of 'cart.dart';\n"
    assert content.generated_marker(freezed) == "// GENERATED CODE - DO NOT MODIFY BY HAND"
    assert content.generated_marker((FIXTURES / "dart/cart.dart").read_text(encoding="utf-8")) is None
