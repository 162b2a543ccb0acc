"""The pure parts of benchmarks/docstring_ruler.py on tiny inline sources: first sentences per
language, the paraphrase rule, and that removing a doc comment keeps every line where it was."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from benchmarks import docstring_ruler as dr

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

PY = '''\
class Pool:
    def borrow(self, size):
        """Borrow an object from the :class:`~pkg.Pool`, creating one if ``empty``.

        Parameters
        ----------
        size : int
        """
        return self.items.pop()

    def abstract(self):
        """Subclasses decide which connection gets closed first."""

    @property
    def name(self):
        """The name of the pool, as given by the user."""
        return self._name
'''

GO = """package pool

// NewPool creates a pool that hands out [Conn] values and
// reuses them. It is safe for concurrent use.
//
// Deprecated: nothing.
func NewPool(size int) *Pool {
	return &Pool{size: size}
}
"""

JAVA = """class Pool {
    /**
     * Returns the {@link Conn#close() closed} connections of this {@code Pool<T>}, e.g. the stale ones.
     * <p>More text.
     * @param all whether all
     */
    @Override
    public List<Conn> closed(boolean all) {
        return list;
    }
}
"""

RUST = """impl Pool {
    /// Returns a [`Conn`] from the pool, waiting **until** one is free.
    ///
    /// # Examples
    #[inline]
    pub fn acquire(&self) -> Conn {
        self.next()
    }
}
"""

JS = """/**
 * Merges user-supplied and `default` options into one object.
 * @param {Object} a first
 */
export function merge(a, b) {
  return {...a, ...b};
}
"""


# --------------------------------------------------------------------------- first sentences


def test_python_first_sentence_drops_rest_roles_and_literals() -> None:
    doc = ast.get_docstring(ast.parse(PY).body[0].body[0]) or ""  # type: ignore[attr-defined]
    assert dr.first_sentence(doc, "Pool.borrow") == "Borrow an object from the Pool, creating one if empty"


def test_go_first_sentence_drops_the_leading_name_and_stops_at_the_period() -> None:
    lines = GO.split("\n")
    span = dr.comment_above(lines, 7, "go")
    assert span == (3, 6)
    assert dr.first_sentence(dr.doc_text(lines, span), "NewPool") == "creates a pool that hands out Conn values and reuses them"


def test_go_keeps_a_name_that_is_the_verb() -> None:
    assert dr.first_sentence("Decode the first record of the slice.", "Decode") == "Decode the first record of the slice"


def test_javadoc_first_sentence_cleans_links_code_and_html() -> None:
    lines = JAVA.split("\n")
    span = dr.comment_above(lines, 7, "java")  # the method starts at its annotation
    assert span == (2, 6)
    sentence = dr.first_sentence(dr.doc_text(lines, span), "Pool.closed")
    assert sentence == "Returns the closed connections of this Pool<T>, e.g. the stale ones"


def test_javadoc_summary_ends_at_a_block_tag() -> None:
    assert dr.first_sentence("Sets the mode, which decides how:<ul><li>named</li></ul>", "f") == "Sets the mode, which decides how"


def test_rust_first_sentence_cleans_intra_doc_links_and_emphasis() -> None:
    lines = RUST.split("\n")
    span = dr.comment_above(lines, 5, "rust")  # the unit starts at #[inline]
    assert span == (2, 4)
    assert dr.first_sentence(dr.doc_text(lines, span), "Pool.acquire") == "Returns a Conn from the pool, waiting until one is free"


def test_jsdoc_first_sentence_stops_before_tags() -> None:
    lines = JS.split("\n")
    span = dr.comment_above(lines, 5, "javascript")
    assert span == (1, 4)
    assert dr.first_sentence(dr.doc_text(lines, span), "merge") == "Merges user-supplied and default options into one object"


def test_a_plain_block_comment_is_no_doc_comment() -> None:
    assert dr.comment_above(["/* licence */", "function f() {", "}"], 2, "javascript") is None
    assert dr.comment_above(["// x", "//go:noinline", "func f() {", "}"], 3, "go") is None


def test_length_rules() -> None:
    assert not dr.keep_sentence("Returns the pool")  # fewer than 5 content words
    assert not dr.keep_sentence("Deprecated use the other pool builder with options instead")
    assert not dr.keep_sentence(" ".join(["word"] * 41))
    assert dr.keep_sentence("Borrow an object from the pool, creating one if empty")


def test_a_sentence_found_twice_is_dropped_in_every_copy() -> None:
    def cand(name: str, q: str, eligible: bool = True) -> dr.Candidate:
        return dr.Candidate("a.py", "python", name, 1, 3, (2, 2), False, f"def {name}():", q, eligible)

    kept = dr.dedupe_and_filter([cand("f", "Creates a new connection pool for given hosts"),
                                 cand("g", "creates a new connection  pool for given hosts."),
                                 cand("h", "Closes every idle connection older than the limit"),
                                 cand("i", "Opens every idle connection older than the limit"),
                                 cand("i2", "Opens every idle connection older than the limit", eligible=False)])
    assert [c.name for c in kept] == ["h"]  # an overload's signature without code still counts as a copy


# --------------------------------------------------------------------------- paraphrase, halves, paths


def test_paraphrase_means_no_shared_content_word_nor_stem() -> None:
    assert not dr.is_paraphrase("Borrow an object from the pool", "Pool.borrow", "def borrow(self, size):")
    assert not dr.is_paraphrase("Borrows objects lazily", "take", "def take(self, borrowed):")  # stem
    assert dr.is_paraphrase("Hands out a free connection", "Pool.borrow", "def borrow(self, size):")


def test_half_is_outside_md_rule() -> None:
    case_id = "uber-go/zap:logger.go:New"
    expected = "tune" if int(hashlib.sha256(f"docstring:{case_id}".encode()).hexdigest()[:8], 16) % 2 == 0 else "report"
    assert dr.half(case_id) == expected


def test_tests_examples_vendored_and_generated_files_are_skipped() -> None:
    assert dr.skip_path("pkg/tests/helpers.py", "")
    assert dr.skip_path("rayon-demo/src/main.rs", "")
    assert dr.skip_path("internal/github.com/x/y/z.go", "")
    assert dr.skip_path("pkg/conn_test.go", "")
    assert dr.skip_path("src/Foo.test.ts", "")
    assert dr.skip_path("pkg/tables.rs", "// DO NOT EDIT THIS FILE. It was automatically generated")
    assert not dr.skip_path("pkg/internal/pool.go", "package pool")


# --------------------------------------------------------------------------- removal


def test_python_candidates_skip_bodiless_and_accessors() -> None:
    found = dr.python_candidates("pool.py", PY)
    assert [(c.name, c.doc, c.eligible) for c in found] == [
        ("Pool.borrow", (3, 8), True), ("Pool.abstract", (12, 12), False), ("Pool.name", (16, 16), False)]


def test_blanking_a_python_docstring_keeps_lines_and_parses() -> None:
    c = dr.python_candidates("pool.py", PY)[0]
    text = dr.blank_docs(PY, [(*c.doc, c.only_statement)])
    assert len(text.split("\n")) == len(PY.split("\n"))
    assert '"""' not in "\n".join(text.split("\n")[:9])
    assert dr.locate("pool.py", text, [c]) == {"Pool.borrow": (2, 9)}
    ast.parse(text)


def test_a_docstring_that_was_the_whole_body_becomes_ellipsis() -> None:
    text = dr.blank_docs(PY, [(12, 12, True)])
    tree = ast.parse(text)
    method = tree.body[0].body[1]
    assert text.split("\n")[11] == "        ..."
    assert (method.lineno, method.end_lineno) == (11, 12)


def test_blanking_a_doc_comment_keeps_the_declaration_where_it_was() -> None:
    for source, path, start, language in ((GO, "p.go", 7, "go"), (JAVA, "P.java", 7, "java"),
                                          (RUST, "p.rs", 5, "rust"), (JS, "p.js", 5, "javascript")):
        (c,) = dr.other_candidates(path, source, dr.GRAMMAR[Path(path).suffix][0], language)
        assert c.start == start
        text = dr.blank_docs(source, [(*c.doc, False)])
        assert len(text.split("\n")) == len(source.split("\n"))
        assert all(not line for line in text.split("\n")[c.doc[0] - 1 : c.doc[1]])
        assert dr.locate(path, text, [c]) == {c.name: (c.start, c.end)}


def test_crlf_lines_keep_their_carriage_return() -> None:
    assert dr.blank_docs("a\r\n// doc\r\nb\r\n", [(2, 2, False)]) == "a\r\n\r\nb\r\n"
