"""Tree-sitter tables for Elixir, Haskell and OCaml.

Both define one function in several clauses (``def f(0)`` / ``def f(n)``; Haskell equations),
so ``clauses=True`` makes consecutive same-name declarations one unit, and both write a
function's head in the syntax of a call or a pattern, so ``head`` keeps it out of the calls.
"""

from __future__ import annotations

from paqad.parse.languages.spec import NOT_A_UNIT, SCOPE, Decl, LangSpec, ro

# Elixir has no declaration syntax: ``defmodule X do ... end`` is a call of the macro
# ``defmodule``, so a ``call`` is a unit when its target's text is one of these. A module is a
# naming scope, like a Python file: its ``use``/``alias`` lines and attributes stay in the module
# unit (with the imports), its functions are ``Bank.Account.deposit``.
_ELIXIR_DEFINERS = ro(
    {"defmodule": SCOPE, "defprotocol": "interface", "defimpl": SCOPE},
    **dict.fromkeys(["def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate"], "function"),
)
# Macros that are syntax or module attributes (``@doc``), never worth listing as a call.
_ELIXIR_SYNTAX = frozenset(
    {*_ELIXIR_DEFINERS, "if", "unless", "case", "cond", "with", "for", "receive", "try", "quote", "unquote"}
    | {"defstruct", "defexception", "defoverridable", "doc", "moduledoc", "typedoc", "spec", "impl"}
    | {"type", "typep", "opaque", "callback", "macrocallback", "behaviour", "derive", "__MODULE__"}
)

ELIXIR = LangSpec(
    language="elixir",
    module="tree_sitter_elixir",
    decls=ro(
        call=Decl(NOT_A_UNIT, name=("arguments",), keyword=("target",), kind_by=_ELIXIR_DEFINERS, head=("arguments", "."))
    ),
    calls=ro(call="target"),
    import_calls=frozenset({"alias", "import", "require", "use"}),
    import_args=frozenset({"alias"}),
    keywords=_ELIXIR_SYNTAX,
    call_arguments=frozenset({"arguments"}),  # ``state.owner`` parses as a call without arguments: a field
    body_types=frozenset({"do_block"}),
    leading=frozenset({"unary_operator"}),  # ``@doc``, ``@spec``, ``@impl`` above a ``def``
    separator=r"\.",  # ``defmodule Bank.Account``: the module ``Account`` inside ``Bank``
    clauses=True,
)

# Where a binding is a function; elsewhere ``function`` is also the type ``a -> b``.
_HASKELL_BINDS = frozenset({"declarations", "instance_declarations", "local_binds"})

HASKELL = LangSpec(
    language="haskell",
    module="tree_sitter_haskell",
    decls=ro(
        function=Decl("function", parents=_HASKELL_BINDS),
        bind=Decl("function", parents=frozenset({"declarations", "instance_declarations"})),
        signature=Decl("function", parents=frozenset({"class_declarations"})),  # class methods
        data_type=Decl("struct"),
        newtype=Decl("struct"),
        **{"class": Decl("interface")},
        instance=Decl(SCOPE, name=("patterns",)),  # ``instance Sized Queue``: methods of ``Queue``
    ),
    calls=ro(apply="function*"),  # ``f x y`` is ``(f x) y``: the callee is the innermost function
    imports=ro(**{"import": "module"}),
    leading=frozenset({"signature"}),  # ``push :: a -> Queue a`` belongs to ``push``
    name_leaves=frozenset({"variable", "constructor", "name"}),
    quiet=frozenset({"signature", "patterns", "data_type", "newtype", "type_synonym", "class"}),  # types
    body_types=frozenset({"match", "class_declarations", "instance_declarations"}),
    comments=frozenset({"comment", "haddock"}),
    clauses=True,
)

# OCaml: top-level and module-level ``let`` bindings are units (``let ... in`` inside an
# expression is not); ``module Printer = struct ... end`` is a naming scope, like a file.
_OCAML_TOP = frozenset({"compilation_unit", "structure"})

OCAML = LangSpec(
    language="ocaml",
    module="tree_sitter_ocaml",
    factory="language_ocaml",
    decls=ro(
        value_definition=Decl("function", name=("let_binding", "pattern"), parents=_OCAML_TOP),
        type_definition=Decl("struct", name=("type_binding", "name"), parents=_OCAML_TOP),
        module_definition=Decl(SCOPE, name=("module_binding", "module_name"), parents=_OCAML_TOP),
    ),
    calls=ro(application_expression="function"),
    imports=ro(open_module="module"),
    name_leaves=frozenset({"value_name"}),
)
