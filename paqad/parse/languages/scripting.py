"""Tree-sitter tables for Ruby, shell, Lua, Perl and Julia."""

from __future__ import annotations

from paqad.parse.languages.spec import CLASS, EACH_ARGUMENT, FUNCTION, SCOPE, Decl, LangSpec, ro

RUBY = LangSpec(
    language="ruby",
    module="tree_sitter_ruby",
    decls=ro(
        **{"class": CLASS, "module": CLASS},
        method=FUNCTION,
        singleton_method=FUNCTION,
        singleton_class=Decl(SCOPE, name=()),
    ),
    calls=ro(call="method"),
    import_calls=frozenset({"require", "require_relative", "load"}),
    bases=frozenset({"superclass"}),
    name_types=frozenset({"scope_resolution"}),
)

BASH = LangSpec(
    language="shell",
    module="tree_sitter_bash",
    decls=ro(function_definition=FUNCTION),
    calls=ro(command="name"),
    import_calls=frozenset({"source", "."}),
)

# ``local f = function() end`` and ``M.f = function() end``: a function bound to a name.
_LUA_BOUND_FUNCTION = Decl(
    "function",
    name=("variable_list", "name"),
    value=("expression_list", "value"),
    value_types=frozenset({"function_definition"}),
    parents=frozenset({"chunk", "variable_declaration"}),
)

# ``function M.new()`` and ``function M:get()`` are named by the whole ``M.new``; the separator
# splits it into the qualifier ``M`` and the name, so they read as methods of ``M``.
LUA = LangSpec(
    language="lua",
    module="tree_sitter_lua",
    decls=ro(function_declaration=FUNCTION, assignment_statement=_LUA_BOUND_FUNCTION),
    calls=ro(function_call="name"),
    import_calls=frozenset({"require", "dofile"}),
    wrappers=frozenset({"variable_declaration"}),
    name_types=frozenset({"dot_index_expression", "method_index_expression"}),
    separator=r"[.:]",
)

PERL = LangSpec(
    language="perl",
    module="tree_sitter_perl",
    decls=ro(subroutine_declaration_statement=FUNCTION, method_declaration_statement=FUNCTION),
    calls=ro(function_call_expression="function", method_call_expression="method", ambiguous_function_call_expression="function"),
    imports=ro(use_statement="module", require_expression=""),
    name_leaves=frozenset({"function", "method", "bareword"}),
)

# Julia: ``function f() end``, ``macro m() end`` and the short form ``f(x) = ...``, an assignment
# whose left side is a call, counted where a definition can stand: the file, a module, a struct
# (inner constructors), a function (local helpers) or under a macro (``@inline f(x) = ...``).
# A module is a naming scope, like a file; a docstring is the string literal just above.
_JULIA_DEFINES = frozenset({"source_file", "module_definition", "struct_definition", "function_definition", "macro_argument_list"})
_JULIA_FUNCTION = Decl("function", name=("signature",), head=("signature",))

JULIA = LangSpec(
    language="julia",
    module="tree_sitter_julia",
    decls=ro(
        function_definition=_JULIA_FUNCTION,
        macro_definition=_JULIA_FUNCTION,
        assignment=Decl(
            "function",
            name=(".",),
            name_node_types=frozenset({"call_expression", "where_expression"}),
            parents=_JULIA_DEFINES,
            head=(".",),
        ),
        struct_definition=Decl("struct", name=("type_head",)),
        primitive_definition=Decl("struct", name=("type_head",)),
        abstract_definition=Decl("interface", name=("type_head",)),  # a type only to subtype and dispatch on
        module_definition=Decl(SCOPE),
    ),
    calls=ro(call_expression="", broadcast_call_expression=""),
    imports=ro(using_statement=EACH_ARGUMENT, import_statement=EACH_ARGUMENT),
    import_args=frozenset({"selected_import", "import_alias"}),  # ``using A: f``, ``import A as B``: A
    import_calls=frozenset({"include"}),
    wrappers=frozenset({"macrocall_expression", "macro_argument_list"}),
    headers=frozenset({"signature", "type_head", "call_expression", "where_expression"}),
    name_types=frozenset({"field_expression"}),  # ``function Base.show(io, x)``: ``show`` of ``Base``
    separator=r"\.",
    comments=frozenset({"line_comment", "block_comment", "string_literal"}),
)
