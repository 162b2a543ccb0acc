"""Index terms (``paqad.tokenize``): the same for documents and queries, so each rule below holds
for both sides, and a search for a name finds the declaration of that name."""

from __future__ import annotations

from paqad import config
from paqad.index.writing import build
from paqad.search import pipeline, ranking
from paqad.tokenize import terms
from testing.env import LEXICAL


def test_identifiers_split_and_stay_whole():
    assert terms("retryCharge retry_charge") == ["retri", "charg", "retrycharge", "retri", "charg", "retrycharge"]
    assert terms("HTTPException") == ["http", "exception", "httpexception"]


def test_a_name_whose_split_drops_a_one_letter_piece_is_still_kept_whole():
    # ``HCursor`` split into ``h`` + ``cursor``; the one-letter piece is dropped, and before
    # tokenizer version 3 so was the whole name: only ``cursor`` was left of it.
    assert terms("HCursor") == ["cursor", "hcursor"]
    assert terms("IDisposable") == ["disposabl", "idisposable"]
    assert terms("utf8 sha256") == ["utf", "utf8", "sha", "sha256"]
    assert terms("Cursor") == ["cursor"] and terms("x") == [] and terms("h cursor") == ["cursor"]
    assert terms("M1 x2 T3") == []  # a letter and digits is a throwaway name, not one to look up


def test_a_run_of_capitals_before_a_word_is_a_name_in_a_sentence():
    assert ranking.shape("HCursor and cursor navigation").symbols == ("HCursor",)
    assert ranking.shape("where is IOException raised").symbols == ("IOException",)
    assert ranking.shape("IDs and URLs of the APIs").symbols == ()  # plurals of acronyms are words
    assert ranking.shape("the HTTP client").symbols == ()


def test_an_interface_named_with_a_one_letter_prefix_is_found_by_its_name(repo):
    repo.write("src/Disposable.cs", "namespace Shop {\n  /// A disposable resource handle.\n  public class Disposable {\n"
               "    public void Dispose() { }\n    public bool Disposed;\n  }\n}\n")
    repo.write("src/IDisposable.cs", "namespace Shop {\n  public interface IDisposable {\n    void Dispose();\n  }\n}\n")
    repo.write("src/Cursors.scala", "package shop\n\nabstract class HCursor(focus: Int) {\n  def up: HCursor\n}\n\n"
               "class CursorList(items: List[Int]) {\n  def cursor: Int = items.head\n}\n")
    repo.commit("shop")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    first = lambda q: pipeline.search(repo.root, q, top_n=5, gate=False).results[0]  # noqa: E731
    assert first("IDisposable").qualified_name.endswith("IDisposable")
    assert first("Disposable").qualified_name.endswith("Disposable") and not first("Disposable").qualified_name.endswith("IDisposable")
    assert first("HCursor and cursor navigation").name == "HCursor"
