"""Tree-sitter tables for SQL and HCL (Terraform), the declarative languages.

SQL: ``CREATE TABLE``/``VIEW``/``FUNCTION``/``TYPE`` are the units; queries and ``INSERT``s
between them stay in the module unit; ``schema.accounts`` is ``accounts`` qualified by its schema.
HCL: a labelled block is a unit named by its labels, Terraform's own address without the block
type (``resource "aws_instance" "web"`` is ``aws_instance.web``); an unlabelled block
(``terraform``, ``locals``) is only a scope, so its lines stay in the module unit.
"""

from __future__ import annotations

from paqad.parse.languages.spec import Decl, LangSpec, ro

_SQL_NAMED = ("object_reference",)

SQL = LangSpec(
    language="sql",
    module="tree_sitter_sql",
    decls=ro(
        create_table=Decl("struct", name=_SQL_NAMED),
        create_view=Decl("struct", name=_SQL_NAMED),
        create_materialized_view=Decl("struct", name=_SQL_NAMED),
        create_type=Decl("struct", name=_SQL_NAMED),
        create_function=Decl("function", name=_SQL_NAMED),
    ),
    calls=ro(invocation=""),
    wrappers=frozenset({"statement"}),
    body_types=frozenset({"column_definitions", "create_query", "function_body", "keyword_as"}),
    separator=r"\.",
)

_HCL_BLOCK = Decl("struct", name=(), labels="string_lit", keyword=("identifier",), kind_by=ro(resource="class", data="class", module="class"))

HCL = LangSpec(
    language="hcl",
    module="tree_sitter_hcl",
    decls=ro(block=_HCL_BLOCK),
    calls=ro(function_call=""),
    body_types=frozenset({"block_start"}),
    separator=r"\.",
)
