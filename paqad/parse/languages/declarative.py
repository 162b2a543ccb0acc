"""Tree-sitter tables for SQL: ``CREATE TABLE``/``VIEW``/``FUNCTION``/``TYPE`` are the units.

Queries and ``INSERT``s between them stay in the module unit. ``schema.accounts`` is the table
``accounts`` qualified by its schema.
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
