"""Tree-sitter tables for JavaScript, TypeScript (and TSX) and PHP."""

from __future__ import annotations

from dataclasses import replace

from paqad.parse.languages.spec import (
    CLASS,
    FUNCTION,
    STRING_ARGUMENT,
    Decl,
    LangSpec,
    ro,
)

_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})

_JS_CONST_FUNCTION = Decl(
    "function",
    name=("variable_declarator", "name"),
    value=("variable_declarator", "value"),
    value_types=_JS_FUNCTION_VALUES,
    parents=frozenset({"program", "export_statement"}),
)

# ``app.use = function use(fn) {}``, ``exports.parse = (s) => {}``, ``Foo.prototype.bar = function``:
# CommonJS modules and prototype-style classes declare most of their functions by assignment, so
# without this express's ``response.js`` (22 such functions) is one unit. Named by the whole
# left-hand side; the separator splits ``res.send`` into the qualifier ``res`` and ``send``.
_JS_ASSIGNED_FUNCTION = Decl(
    "function",
    name=("left",),
    value=("right",),
    value_types=_JS_FUNCTION_VALUES,
    parents=frozenset({"expression_statement"}),
    name_node_types=frozenset({"identifier", "member_expression"}),
)
# ``module.exports = { parse: function () {}, format() {} }``: functions as object members.
_JS_MEMBER_FUNCTION = Decl("function", name=("key",), value=("value",), value_types=_JS_FUNCTION_VALUES)

JAVASCRIPT = LangSpec(
    language="javascript",
    module="tree_sitter_javascript",
    decls=ro(
        function_declaration=FUNCTION,
        generator_function_declaration=FUNCTION,
        class_declaration=CLASS,
        **{"class": CLASS},  # class expressions: unnamed, so only a scope whose members are methods
        method_definition=Decl("function", parents=frozenset({"class_body", "object"})),
        assignment_expression=_JS_ASSIGNED_FUNCTION,
        pair=_JS_MEMBER_FUNCTION,
        lexical_declaration=_JS_CONST_FUNCTION,
        variable_declaration=_JS_CONST_FUNCTION,
        field_definition=Decl("function", name=("property",), value=("value",), value_types=_JS_FUNCTION_VALUES),
    ),
    calls=ro(call_expression="function", new_expression="constructor"),
    imports=ro(import_statement="source", export_statement="source"),
    import_calls=frozenset({"require"}),
    bases=frozenset({"class_heritage"}),
    wrappers=frozenset({"export_statement"}),
    name_types=frozenset({"member_expression"}),
    separator=r"\.",
)

TYPESCRIPT = replace(
    JAVASCRIPT,
    language="typescript",
    module="tree_sitter_typescript",
    factory="language_typescript",
    decls=ro(
        JAVASCRIPT.decls,
        abstract_class_declaration=CLASS,
        interface_declaration=Decl("interface"),
        enum_declaration=Decl("enum"),
        function_signature=FUNCTION,
        method_signature=FUNCTION,
        abstract_method_signature=FUNCTION,
        public_field_definition=Decl("function", value=("value",), value_types=_JS_FUNCTION_VALUES),
    ),
    bases=frozenset({"class_heritage", "extends_type_clause"}),
)

TSX = replace(TYPESCRIPT, factory="language_tsx")

PHP = LangSpec(
    language="php",
    module="tree_sitter_php",
    factory="language_php",
    decls=ro(
        class_declaration=CLASS,
        anonymous_class=CLASS,  # unnamed, so only a scope whose members are methods
        interface_declaration=Decl("interface"),
        trait_declaration=Decl("trait"),
        enum_declaration=Decl("enum"),
        function_definition=FUNCTION,
        method_declaration=FUNCTION,
    ),
    calls=ro(
        function_call_expression="function",
        member_call_expression="name",
        nullsafe_member_call_expression="name",
        scoped_call_expression="name",
        object_creation_expression="name",
    ),
    imports=ro(
        namespace_use_declaration="",
        require_expression=STRING_ARGUMENT,
        require_once_expression=STRING_ARGUMENT,
        include_expression=STRING_ARGUMENT,
        include_once_expression=STRING_ARGUMENT,
    ),
    bases=frozenset({"base_clause", "class_interface_clause"}),
)
