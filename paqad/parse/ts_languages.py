"""What each tree-sitter grammar's nodes mean, as data: one table per language.

The engine in :mod:`paqad.parse.treesitter` knows nothing about any language; adding one is a
``LangSpec`` here plus a fixture. Node and field names come from each grammar's
``node-types.json`` (print a tree with ``str(tree.root_node)`` to find them).

Name paths (``Decl.name``, ``Decl.value``, ``Decl.receiver``) are steps from the declaration
node: a field name, else the first named child of that node type; ``^type_definition`` is the
parent if it has that type, and ``declarator*`` follows the ``declarator`` field as far as it
goes (C's nested declarators).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

Path = tuple[str, ...]

# The kind a declaration gets when it has no default and no ``kind_by`` key matches: no unit.
NOT_A_UNIT = "?"
# A ``Decl`` of this kind is a naming scope, not a unit (Rust ``impl``, Swift ``extension``).
SCOPE = ""
# An ``imports`` field meaning "the first string literal inside" (PHP ``require __DIR__ . 'x'``).
STRING_ARGUMENT = "<string>"


def _ro(table: Mapping[str, object] | None = None, **entries: object) -> Mapping:
    """Read-only mapping, so the shared tables cannot be mutated by a caller."""
    return MappingProxyType({**(table or {}), **entries})


@dataclass(frozen=True)
class Decl:
    """How one declaration node type becomes a unit (or a scope that qualifies its members)."""

    kind: str
    name: Path = ("name",)
    alt_name: Path = ()  # tried when ``name`` finds nothing (C ``typedef struct {..} Name``)
    default_name: str = ""  # Kotlin's unnamed ``companion object``
    kind_by: Mapping[str, str] = field(default_factory=_ro)  # keyword or child type → kind
    value: Path = ()  # JS ``const f = () => {}``: the initialiser must be one of ``value_types``
    value_types: frozenset[str] = frozenset()
    parents: frozenset[str] = frozenset()  # if set, the parent node must be one of these types
    needs_body: bool = False  # C ``struct foo;`` forward declarations are not units
    receiver: Path = ()  # Go ``func (s *Server) Handle``: the qualifier and method-ness


@dataclass(frozen=True)
class LangSpec:
    """One grammar: where to load it and which of its node types mean what."""

    language: str  # ``CodeUnit.language``
    module: str  # the grammar wheel's Python module
    decls: Mapping[str, Decl]
    calls: Mapping[str, str]  # call node type → callee field or child type ("" = first named child)
    imports: Mapping[str, str] = field(default_factory=_ro)  # node type → field ("" = own text)
    import_calls: frozenset[str] = frozenset()  # ``require("x")``: the callee names that import
    bases: frozenset[str] = frozenset()  # child node types listing supertypes
    wrappers: frozenset[str] = frozenset()  # parents that are part of the span (``export``)
    leading: frozenset[str] = frozenset()  # preceding siblings that are part of the span
    body_types: frozenset[str] = frozenset()  # bodies without a ``body`` field (end of signature)
    name_types: frozenset[str] = frozenset()  # name nodes taken whole (C++ ``Foo::bar``)
    factory: str = "language"  # the module function returning the grammar
    comments: frozenset[str] = frozenset({"comment", "line_comment", "block_comment", "multiline_comment"})


FUNCTION = Decl("function")
CLASS = Decl("class")

_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_CONST_FUNCTION = Decl(
    "function",
    name=("variable_declarator", "name"),
    value=("variable_declarator", "value"),
    value_types=_JS_FUNCTION_VALUES,
    parents=frozenset({"program", "export_statement"}),
)

JAVASCRIPT = LangSpec(
    language="javascript",
    module="tree_sitter_javascript",
    decls=_ro(
        function_declaration=FUNCTION,
        generator_function_declaration=FUNCTION,
        class_declaration=CLASS,
        **{"class": CLASS},  # class expressions: unnamed, so only a scope whose members are methods
        method_definition=Decl("function", parents=frozenset({"class_body"})),
        lexical_declaration=_JS_CONST_FUNCTION,
        variable_declaration=_JS_CONST_FUNCTION,
        field_definition=Decl("function", name=("property",), value=("value",), value_types=_JS_FUNCTION_VALUES),
    ),
    calls=_ro(call_expression="function", new_expression="constructor"),
    imports=_ro(import_statement="source", export_statement="source"),
    import_calls=frozenset({"require"}),
    bases=frozenset({"class_heritage"}),
    wrappers=frozenset({"export_statement"}),
)

TYPESCRIPT = replace(
    JAVASCRIPT,
    language="typescript",
    module="tree_sitter_typescript",
    factory="language_typescript",
    decls=_ro(
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

GO = LangSpec(
    language="go",
    module="tree_sitter_go",
    decls=_ro(
        function_declaration=FUNCTION,
        method_declaration=Decl("function", receiver=("receiver", "parameter_declaration", "type")),
        type_spec=Decl(NOT_A_UNIT, kind_by=_ro(struct_type="struct", interface_type="interface")),
        method_elem=FUNCTION,
    ),
    calls=_ro(call_expression="function"),
    imports=_ro(import_spec="path"),
    wrappers=frozenset({"type_declaration"}),
    body_types=frozenset({"field_declaration_list"}),
)

RUST = LangSpec(
    language="rust",
    module="tree_sitter_rust",
    decls=_ro(
        function_item=FUNCTION,
        function_signature_item=FUNCTION,
        struct_item=Decl("struct"),
        union_item=Decl("struct"),
        enum_item=Decl("enum"),
        trait_item=Decl("trait"),
        impl_item=Decl(SCOPE, name=("type",)),
    ),
    calls=_ro(call_expression="function", macro_invocation="macro"),
    imports=_ro(use_declaration="argument", extern_crate_declaration="name"),
    bases=frozenset({"trait_bounds"}),
    leading=frozenset({"attribute_item"}),
)

JAVA = LangSpec(
    language="java",
    module="tree_sitter_java",
    decls=_ro(
        class_declaration=CLASS,
        record_declaration=CLASS,
        interface_declaration=Decl("interface"),
        annotation_type_declaration=Decl("interface"),
        enum_declaration=Decl("enum"),
        method_declaration=FUNCTION,
        constructor_declaration=FUNCTION,
        compact_constructor_declaration=FUNCTION,
    ),
    calls=_ro(method_invocation="name", object_creation_expression="type"),
    imports=_ro(import_declaration=""),
    bases=frozenset({"superclass", "super_interfaces", "extends_interfaces"}),
)

KOTLIN = LangSpec(
    language="kotlin",
    module="tree_sitter_kotlin",
    decls=_ro(
        class_declaration=Decl("class", kind_by=_ro(interface="interface", enum="enum")),
        object_declaration=CLASS,
        companion_object=Decl("class", default_name="Companion"),
        function_declaration=FUNCTION,
    ),
    calls=_ro(call_expression=""),
    imports=_ro(**{"import": ""}),
    bases=frozenset({"delegation_specifiers"}),
    body_types=frozenset({"class_body", "enum_class_body", "function_body"}),
)

_TYPEDEF_NAME = ("^type_definition", "declarator")  # ``typedef struct { ... } name;``
_C_DECLS = _ro(
    function_definition=Decl("function", name=("declarator*",)),
    struct_specifier=Decl("struct", alt_name=_TYPEDEF_NAME, needs_body=True),
    union_specifier=Decl("struct", alt_name=_TYPEDEF_NAME, needs_body=True),
    enum_specifier=Decl("enum", alt_name=_TYPEDEF_NAME, needs_body=True),
)

C = LangSpec(
    language="c",
    module="tree_sitter_c",
    decls=_C_DECLS,
    calls=_ro(call_expression="function"),
    imports=_ro(preproc_include="path"),
    wrappers=frozenset({"type_definition"}),
)

CPP = replace(
    C,
    language="cpp",
    module="tree_sitter_cpp",
    decls=_ro(_C_DECLS, class_specifier=Decl("class", alt_name=_TYPEDEF_NAME, needs_body=True)),
    calls=_ro(call_expression="function", new_expression="type"),
    bases=frozenset({"base_class_clause"}),
    wrappers=frozenset({"type_definition", "template_declaration"}),
    name_types=frozenset({"qualified_identifier", "operator_name", "destructor_name"}),
)

CSHARP = LangSpec(
    language="csharp",
    module="tree_sitter_c_sharp",
    decls=_ro(
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
    calls=_ro(invocation_expression="function", object_creation_expression="type"),
    imports=_ro(using_directive=""),
    bases=frozenset({"base_list"}),
)

RUBY = LangSpec(
    language="ruby",
    module="tree_sitter_ruby",
    decls=_ro(
        **{"class": CLASS, "module": CLASS},
        method=FUNCTION,
        singleton_method=FUNCTION,
        singleton_class=Decl(SCOPE, name=()),
    ),
    calls=_ro(call="method"),
    import_calls=frozenset({"require", "require_relative", "load"}),
    bases=frozenset({"superclass"}),
    name_types=frozenset({"scope_resolution"}),
)

PHP = LangSpec(
    language="php",
    module="tree_sitter_php",
    factory="language_php",
    decls=_ro(
        class_declaration=CLASS,
        anonymous_class=CLASS,  # unnamed, so only a scope whose members are methods
        interface_declaration=Decl("interface"),
        trait_declaration=Decl("trait"),
        enum_declaration=Decl("enum"),
        function_definition=FUNCTION,
        method_declaration=FUNCTION,
    ),
    calls=_ro(
        function_call_expression="function",
        member_call_expression="name",
        nullsafe_member_call_expression="name",
        scoped_call_expression="name",
        object_creation_expression="name",
    ),
    imports=_ro(
        namespace_use_declaration="",
        require_expression=STRING_ARGUMENT,
        require_once_expression=STRING_ARGUMENT,
        include_expression=STRING_ARGUMENT,
        include_once_expression=STRING_ARGUMENT,
    ),
    bases=frozenset({"base_clause", "class_interface_clause"}),
)

SWIFT = LangSpec(
    language="swift",
    module="tree_sitter_swift",
    decls=_ro(
        class_declaration=Decl(
            "class", kind_by=_ro(struct="struct", enum="enum", actor="class", extension=SCOPE)
        ),
        protocol_declaration=Decl("interface"),
        function_declaration=FUNCTION,
        protocol_function_declaration=FUNCTION,
        init_declaration=FUNCTION,
        deinit_declaration=Decl("function", name=(), default_name="deinit"),
    ),
    calls=_ro(call_expression=""),
    imports=_ro(import_declaration=""),
    bases=frozenset({"inheritance_specifier"}),
)

SCALA = LangSpec(
    language="scala",
    module="tree_sitter_scala",
    decls=_ro(
        class_definition=CLASS,
        object_definition=CLASS,
        trait_definition=Decl("trait"),
        enum_definition=Decl("enum"),
        function_definition=FUNCTION,
        function_declaration=FUNCTION,
    ),
    calls=_ro(call_expression="function", instance_expression=""),
    imports=_ro(import_declaration=""),
    bases=frozenset({"extends_clause"}),
)

BASH = LangSpec(
    language="shell",
    module="tree_sitter_bash",
    decls=_ro(function_definition=FUNCTION),
    calls=_ro(command="name"),
    import_calls=frozenset({"source", "."}),
)

# Grammar name (a stack pack's ``grammar`` field) → table. ``tsx`` and ``typescript`` differ
# only in the grammar loaded: JSX is a syntax error for the plain TypeScript grammar.
GRAMMARS: Mapping[str, LangSpec] = _ro(
    javascript=JAVASCRIPT,
    typescript=TYPESCRIPT,
    tsx=TSX,
    go=GO,
    rust=RUST,
    java=JAVA,
    kotlin=KOTLIN,
    c=C,
    cpp=CPP,
    csharp=CSHARP,
    ruby=RUBY,
    php=PHP,
    swift=SWIFT,
    scala=SCALA,
    bash=BASH,
)


def language_spec(grammar: str) -> LangSpec:
    """The table for ``grammar``; an unknown name is a ``LookupError`` listing the known ones."""
    try:
        return GRAMMARS[grammar]
    except KeyError:
        raise LookupError(f"no tree-sitter grammar {grammar!r}. Choose from: {', '.join(GRAMMARS)}") from None
