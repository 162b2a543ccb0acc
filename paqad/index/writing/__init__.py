"""Writing an index: the full build and the incremental update (`build`), what an update must rewrite (`edits`), and the stamp that says which working-tree state the index reflects (`syncstamp`)."""
