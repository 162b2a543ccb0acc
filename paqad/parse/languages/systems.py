"""Tree-sitter tables for Go, Rust, C, C++ and Zig."""

from __future__ import annotations

from dataclasses import replace

from paqad.parse.languages.spec import FUNCTION, NOT_A_UNIT, SCOPE, Decl, LangSpec, ro

GO = LangSpec(
    language="go",
    module="tree_sitter_go",
    decls=ro(
        function_declaration=FUNCTION,
        method_declaration=Decl("function", receiver=("receiver", "parameter_declaration", "type")),
        type_spec=Decl(NOT_A_UNIT, kind_by=ro(struct_type="struct", interface_type="interface")),
        method_elem=FUNCTION,
    ),
    calls=ro(call_expression="function"),
    imports=ro(import_spec="path"),
    wrappers=frozenset({"type_declaration"}),
    body_types=frozenset({"field_declaration_list"}),
)

RUST = LangSpec(
    language="rust",
    module="tree_sitter_rust",
    decls=ro(
        function_item=FUNCTION,
        function_signature_item=FUNCTION,
        struct_item=Decl("struct"),
        union_item=Decl("struct"),
        enum_item=Decl("enum"),
        trait_item=Decl("trait"),
        impl_item=Decl(SCOPE, name=("type",)),
    ),
    calls=ro(call_expression="function", macro_invocation="macro"),
    imports=ro(use_declaration="argument", extern_crate_declaration="name"),
    bases=frozenset({"trait_bounds"}),
    leading=frozenset({"attribute_item"}),
)

_TYPEDEF_NAME = ("^type_definition", "declarator")  # ``typedef struct { ... } name;``

_C_DECLS = ro(
    function_definition=Decl("function", name=("declarator*",)),
    struct_specifier=Decl("struct", alt_name=_TYPEDEF_NAME, needs_body=True),
    union_specifier=Decl("struct", alt_name=_TYPEDEF_NAME, needs_body=True),
    enum_specifier=Decl("enum", alt_name=_TYPEDEF_NAME, needs_body=True),
)

C = LangSpec(
    language="c",
    module="tree_sitter_c",
    decls=_C_DECLS,
    calls=ro(call_expression="function"),
    imports=ro(preproc_include="path"),
    wrappers=frozenset({"type_definition"}),
)

CPP = replace(
    C,
    language="cpp",
    module="tree_sitter_cpp",
    decls=ro(_C_DECLS, class_specifier=Decl("class", alt_name=_TYPEDEF_NAME, needs_body=True)),
    calls=ro(call_expression="function", new_expression="type"),
    bases=frozenset({"base_class_clause"}),
    wrappers=frozenset({"type_definition", "template_declaration"}),
    name_types=frozenset({"qualified_identifier", "operator_name", "destructor_name"}),
)

# Zig names containers by binding them: ``const Ring = struct { ... };`` is the struct ``Ring``.
ZIG = LangSpec(
    language="zig",
    module="tree_sitter_zig",
    decls=ro(
        function_declaration=FUNCTION,
        variable_declaration=Decl(
            NOT_A_UNIT,
            name=("identifier",),
            kind_by=ro(
                struct_declaration="struct",
                union_declaration="struct",
                opaque_declaration="struct",
                enum_declaration="enum",
            ),
        ),
        test_declaration=Decl("function", name=("string",), alt_name=("identifier",), default_name="test"),
    ),
    calls=ro(call_expression="function", builtin_function=""),
    import_calls=frozenset({"@import"}),
    keywords=frozenset({"@as", "@This"}),
)
