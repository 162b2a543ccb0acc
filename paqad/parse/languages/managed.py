"""Tree-sitter tables for Java, Kotlin, Scala, C#, Swift and Dart."""

from __future__ import annotations

from paqad.parse.languages.spec import CLASS, FUNCTION, SCOPE, STRING_ARGUMENT, Decl, LangSpec, ro

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

# Dart (the UserNobody14 grammar): a method is a ``method_signature`` followed by its sibling
# ``function_body``, a top-level function a bare ``function_signature`` and its body, and a
# member without a body (abstract, ``external``, a constructor ending in ``;``) a
# ``declaration``. So the signature nodes are the units, widened to those wrappers, with the body
# beside them (``trailing``). A call is a ``selector`` holding the arguments, after the callee.
_DART_SIGNATURES = frozenset({"program", "method_signature", "declaration"})
_DART_FUNCTION = Decl("function", parents=_DART_SIGNATURES)
_DART_CONSTRUCTOR = Decl("function", name=("identifier$",), parents=_DART_SIGNATURES)  # ``Shop.fromJson``: ``fromJson``
_DART_CONSTRUCTORS = ("constructor_signature", "constant_constructor_signature", "factory_constructor_signature", "redirecting_factory_constructor_signature")

DART = LangSpec(
    language="dart",
    module="tree_sitter_dart",
    decls=ro(
        class_definition=Decl("class", kind_by=ro(interface="interface")),
        extension_type_declaration=CLASS,
        mixin_declaration=Decl("trait", name=("identifier",)),
        enum_declaration=Decl("enum"),
        extension_declaration=Decl(SCOPE, alt_name=("class",)),  # ``extension on int``: members of ``int``
        function_signature=_DART_FUNCTION,
        getter_signature=_DART_FUNCTION,
        setter_signature=_DART_FUNCTION,
        operator_signature=Decl("function", name=("binary_operator",), parents=_DART_SIGNATURES),
        **dict.fromkeys(_DART_CONSTRUCTORS, _DART_CONSTRUCTOR),
    ),
    calls=ro(selector="<", cascade_section="cascade_selector", const_object_expression="type_identifier", new_expression="type_identifier"),
    call_arguments=frozenset({"argument_part", "arguments"}),  # ``.length`` is a selector too
    imports=ro(import_or_export=STRING_ARGUMENT),
    bases=frozenset({"superclass", "interfaces"}),
    wrappers=frozenset({"method_signature", "declaration"}),
    leading=frozenset({"annotation"}),
    trailing=frozenset({"function_body"}),
    headers=frozenset({"function_signature", "getter_signature", "setter_signature", "operator_signature", *_DART_CONSTRUCTORS}),
    body_types=frozenset({"class_body", "extension_body", "enum_body"}),
    comments=frozenset({"comment", "documentation_comment"}),
)
