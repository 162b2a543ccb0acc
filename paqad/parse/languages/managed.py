"""Tree-sitter tables for Java, Kotlin, Scala, C# and Swift."""

from __future__ import annotations

from paqad.parse.languages.spec import CLASS, FUNCTION, SCOPE, Decl, LangSpec, ro

JAVA = LangSpec(
    language="java",
    module="tree_sitter_java",
    decls=ro(
        class_declaration=CLASS,
        record_declaration=CLASS,
        interface_declaration=Decl("interface"),
        annotation_type_declaration=Decl("interface"),
        enum_declaration=Decl("enum"),
        method_declaration=FUNCTION,
        constructor_declaration=FUNCTION,
        compact_constructor_declaration=FUNCTION,
    ),
    calls=ro(method_invocation="name", object_creation_expression="type"),
    imports=ro(import_declaration=""),
    bases=frozenset({"superclass", "super_interfaces", "extends_interfaces"}),
)

KOTLIN = LangSpec(
    language="kotlin",
    module="tree_sitter_kotlin",
    decls=ro(
        class_declaration=Decl("class", kind_by=ro(interface="interface", enum="enum")),
        object_declaration=CLASS,
        companion_object=Decl("class", default_name="Companion"),
        function_declaration=FUNCTION,
    ),
    calls=ro(call_expression=""),
    imports=ro(**{"import": ""}),
    bases=frozenset({"delegation_specifiers"}),
    body_types=frozenset({"class_body", "enum_class_body", "function_body"}),
)

CSHARP = LangSpec(
    language="csharp",
    module="tree_sitter_c_sharp",
    decls=ro(
        class_declaration=CLASS,
        record_declaration=CLASS,
        struct_declaration=Decl("struct"),
        record_struct_declaration=Decl("struct"),
        interface_declaration=Decl("interface"),
        enum_declaration=Decl("enum"),
        method_declaration=FUNCTION,
        constructor_declaration=FUNCTION,
        destructor_declaration=FUNCTION,
        local_function_statement=FUNCTION,
    ),
    calls=ro(invocation_expression="function", object_creation_expression="type"),
    imports=ro(using_directive=""),
    bases=frozenset({"base_list"}),
)

SWIFT = LangSpec(
    language="swift",
    module="tree_sitter_swift",
    decls=ro(
        class_declaration=Decl(
            "class", kind_by=ro(struct="struct", enum="enum", actor="class", extension=SCOPE)
        ),
        protocol_declaration=Decl("interface"),
        function_declaration=FUNCTION,
        protocol_function_declaration=FUNCTION,
        init_declaration=FUNCTION,
        deinit_declaration=Decl("function", name=(), default_name="deinit"),
    ),
    calls=ro(call_expression=""),
    imports=ro(import_declaration=""),
    bases=frozenset({"inheritance_specifier"}),
)

SCALA = LangSpec(
    language="scala",
    module="tree_sitter_scala",
    decls=ro(
        class_definition=CLASS,
        object_definition=CLASS,
        trait_definition=Decl("trait"),
        enum_definition=Decl("enum"),
        function_definition=FUNCTION,
        function_declaration=FUNCTION,
    ),
    calls=ro(call_expression="function", instance_expression=""),
    imports=ro(import_declaration=""),
    bases=frozenset({"extends_clause"}),
)
