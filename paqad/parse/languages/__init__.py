"""Tree-sitter language tables, one data module per family; the registry is :mod:`paqad.parse.ts_languages`."""
