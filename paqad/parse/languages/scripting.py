"""Tree-sitter tables for Ruby, shell, Lua and Perl."""

from __future__ import annotations

from paqad.parse.languages.spec import CLASS, FUNCTION, SCOPE, Decl, LangSpec, ro

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
