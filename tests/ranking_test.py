"""The ranking stack (``paqad.search.ranking``) on a small real repository: each signal, switched
off and on, changes the order the way its docstring says, through the same ``pipeline.run``
every door calls."""

from __future__ import annotations

import random

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import paths, pipeline, ranking, reports, shape
from paqad.search.params import SearchParams, using
from testing.env import LEXICAL

FILLER = "\n\n".join(
    f"def tool_{i}(value):\n    '''Format value {i} for the shop's listing pages.'''\n    return str(value) + '{i}'\n" for i in range(40)
)


@pytest.fixture
def store(repo):
    # "Session" is mentioned all over the client, even in its names; only sessions.py declares it.
    repo.write("shop/client.py", "\n\n".join(
        f"def session_call_{i}(session):\n    '''Send request {i} with the Session: Session.send(Session.prepare()).'''\n"
        f"    session = Session(Session())\n    return session.send(session.prepare(), session, dispatch, dispatch)\n" for i in range(6)
    ))
    repo.write("shop/sessions.py", (
        "class Session:\n    '''Keeps cookies and settings across requests.'''\n\n"
        "    def send(self, request):\n        return request\n\n"
        "    def prepare(self):\n        return self\n\n\n"
        "def merge_settings(a, b):\n    '''Merge two settings dicts for a session.'''\n    return {**a, **b}\n"
    ))
    # The ledger: six units of one file mention it once each, one unit elsewhere repeats it.
    repo.write("shop/routing.py", "\n\n".join(
        f"def route_{i}(rule, view):\n    '''Register rule {i} for a view.'''\n    return ledger.add(rule, view)\n" for i in range(6)
    ))
    repo.write("shop/views.py", "def index_view(request):\n    '''Render the index page.'''\n    return ledger or ledger or ledger or ledger\n")
    # The client repeats "dispatch" in every unit; a queue mentions it once.
    repo.write("shop/queue.py", "def drain(items):\n    '''Empty the queue.'''\n    return [x for x in items]  # see dispatch\n")
    repo.write("shop/format.py", FILLER)
    repo.write("shop/templating.py", "def render(name, context):\n    '''Fill a page from its name and context.'''\n    return name.format(**context)\n")
    repo.write("shop/pages.py", "def page(name):\n    '''Build the template of a page and render the template with the template context.'''\n    return render(name, {})\n")
    repo.commit("shop")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def _ask(root, text, knobs=None):
    """Ungated top 10, with ``knobs`` ("module.NAME" -> value) as the request's SearchParams."""
    return pipeline.search(root, text, top_n=10, gate=False, params=SearchParams.of(knobs or {}))


def test_a_symbol_query_puts_the_declaration_above_its_mentions(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    knobs["ranking.DEFINITION_BOOST"] = 0.0
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    knobs["ranking.PATH_BOOST"] = 0.0
    before = _ask(store.root, "Session", knobs)
    assert before.results[0].path == "shop/client.py"  # the mentions win on term frequency alone
    knobs["ranking.DEFINITION_BOOST"] = 0.5
    after = _ask(store.root, "Session", knobs)
    assert after.results[0].id == "shop/sessions.py::Session"


def test_a_file_named_for_the_query_words_is_lifted(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    knobs["ranking.PATH_BOOST"] = 0.0
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    before = _ask(store.root, "template rendering", knobs)
    assert before.results[0].path == "shop/pages.py"
    knobs["ranking.PATH_BOOST"] = 1.0
    after = _ask(store.root, "template rendering", knobs)
    assert after.results[0].path == "shop/templating.py"


def test_several_hits_in_one_file_lift_that_file(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    knobs["ranking.PATH_BOOST"] = 0.0
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    before = _ask(store.root, "ledger", knobs)
    assert before.results[0].path == "shop/views.py"  # one unit saying it four times
    knobs["ranking.COHERENCE_BOOST"] = 1.0
    after = _ask(store.root, "ledger", knobs)
    assert after.results[0].path == "shop/routing.py"


def test_diversity_shows_other_files_before_a_files_further_units(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    knobs["ranking.CENTRAL_BOOST"] = 0.0  # diversity alone: no file lifted for being central
    knobs["ranking.DIVERSITY"] = 1.0
    plain = [r.path for r in _ask(store.root, "dispatch", knobs).results]
    assert plain[:2] == ["shop/client.py", "shop/client.py"]
    knobs["ranking.DIVERSITY"] = 0.3
    mixed = [r.path for r in _ask(store.root, "dispatch", knobs).results]
    assert mixed[0] == plain[0] and len(set(mixed[:2])) == 2
    assert mixed.count("shop/client.py") == plain.count("shop/client.py")  # reordered, not dropped


def test_diversity_leaves_the_best_files_next_units_free_only_when_asked():
    items = [("a", 1.0), ("a", 0.9), ("a", 0.8), ("b", 0.7), ("c", 0.6)]

    def order(free: int) -> list[str]:
        with using(SearchParams.of({"ranking.DIVERSITY": 0.6})):  # this test's factor, not the shipped one
            return [f"{p}{s}" for p, s in ranking.diversify(items, lambda x: x[1], lambda x: x[0], free)]

    assert order(0) == ["a1.0", "b0.7", "c0.6", "a0.9", "a0.8"]
    assert order(2) == ["a1.0", "a0.9", "a0.8", "b0.7", "c0.6"]
    assert order(1) == ["a1.0", "a0.9", "b0.7", "c0.6", "a0.8"]


def _greedy(items, score, path, free=0):
    """The diversity pass as first written: each step rescans every remaining item."""
    remaining, out = list(items), []
    seen = {path(items[0]): -free} if free else {}
    while remaining:
        at = max(range(len(remaining)), key=lambda i: (score(remaining[i]) * ranking.DIVERSITY ** max(0, seen.get(path(remaining[i]), 0)), -i))
        item = remaining.pop(at)
        seen[path(item)] = seen.get(path(item), 0) + 1
        out.append(item)
    return out


def test_diversity_keeps_the_greedy_passs_order_and_ties():
    """The heap pass (issue 34: the rescan was a tenth of a warm query) orders every list as the
    rescan did, equal scores and unsorted input included."""
    rng = random.Random(34)
    for _ in range(3000):
        n = rng.randint(2, 40)
        scores = [rng.choice([1.0, 0.6, 0.36, 0.0, rng.random(), 3 * rng.random()]) for _ in range(n)]
        items = [(f"f{rng.randint(0, rng.randint(0, 6))}", s, k) for k, s in enumerate(scores)]
        free = rng.choice([0, 0, 1, 2])
        assert ranking.diversify(items, lambda x: x[1], lambda x: x[0], free) == _greedy(items, lambda x: x[1], lambda x: x[0], free)


REPORT = (
    "Bug report: since upgrading, every dispatch of a prepared request through the Session "
    "hangs. Steps to reproduce: start an interpreter, construct the session, prepare a request, "
    "send it twice, then watch the dispatch queue grow without bound while nothing reaches the "
    "remote server. Expected behaviour: one send per call. Linux, version three point twelve."
)


def test_a_report_keeps_the_best_files_next_units_together(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    knobs["issues.ENABLED"] = False  # the diversified order of a report; an issue's own order: tests/issues_test.py
    knobs["ranking.DIVERSITY"] = 0.6  # a factor strong enough to mix this small shop's files
    assert len(ranking.shape(REPORT).words) >= shape.TOP_FILE_MIN_WORDS > len(ranking.shape("dispatch").words)
    report = [r.path for r in _ask(store.root, REPORT, knobs).results]
    assert report[:3] == ["shop/client.py"] * 3
    short = [r.path for r in _ask(store.root, "dispatch", knobs).results]
    assert short[0] == "shop/client.py" and short[1] != "shop/client.py"  # a short query still mixes files
    knobs["ranking.TOP_FILE_FREE"] = 0
    plain = [r.path for r in _ask(store.root, REPORT, knobs).results]
    assert plain[:2] == report[:2] and plain[2] != "shop/client.py"  # diversity counts from the second unit


def test_switching_the_stack_off_restores_plain_bm25f_order(store):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    on = [r.id for r in _ask(store.root, "Session", knobs).results]
    knobs["ranking.ENABLED"] = False
    knobs["ranking.DIVERSITY"] = 1.0
    off = [r.id for r in _ask(store.root, "Session", knobs).results]
    assert on[0] == "shop/sessions.py::Session" and off[0].startswith("shop/client.py")


@pytest.mark.parametrize("text, symbols, embedded", [
    ("Session", ("Session",), False),
    ("Sinatra::Base", ("Sinatra::Base",), False),
    ("flask.Blueprint", ("flask.Blueprint",), False),
    ("createStore", ("createStore",), False),
    ("session", (), False),  # a lowercase word is a word
    ("how does `parse_args` handle defaults", ("parse_args",), True),
    ("where is parseArgs called", ("parseArgs",), True),
    ("session management", (), False),
])
def test_query_shape(text, symbols, embedded):
    s = ranking.shape(text)
    assert s.symbols == symbols and s.embedded == embedded


@pytest.mark.parametrize("name, qualified, symbol, want", [
    ("Base", "Sinatra.Base", "Sinatra::Base", True),
    ("Base", "Other.Base", "Sinatra::Base", False),
    ("Blueprint", "Blueprint", "flask.Blueprint", True),  # a module qualifier the unit does not carry
    ("Session", "Session", "Session", True),
    ("SessionMixin", "SessionMixin", "Session", False),
])
def test_defines(name, qualified, symbol, want):
    assert ranking.defines(name, qualified, symbol) is want


def test_path_priors_demote_examples_unless_asked():
    ranking_priors = paths.PRIORS
    try:
        paths.PRIORS = "examples,stub"
        assert paths.path_prior("examples/app.py", frozenset()) < 1.0
        assert paths.path_prior("examples/app.py", frozenset(ranking.terms("examples"))) == 1.0
        assert paths.path_prior("src/types.d.ts", frozenset()) < 1.0
        assert paths.path_prior("src/app.py", frozenset()) == 1.0
    finally:
        paths.PRIORS = ranking_priors


def test_a_declaration_outside_the_candidates_is_found_by_name_and_answers(repo):
    """``Widget`` is in every unit's body, so BM25F ranks the long class low and the gate calls the
    word ubiquitous; the name lookup finds the class, lifts it and lets the gated search answer."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    users = "\n\n".join(
        f"def use_{i}(widget):\n    '''Draw a Widget.'''\n    return Widget(widget).draw(Widget.SIZE, widget)\n" for i in range(60)
    )
    repo.write("ui/users.py", users)
    body = "\n".join(f"    def op_{i}(self, value):\n        return value + {i}\n" for i in range(80))
    repo.write("ui/components.py", f"class Widget:\n    '''A box on screen.'''\n    SIZE = 3\n\n{body}\n")
    repo.commit("ui")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    gated = pipeline.search(repo.root, "Widget", top_n=5, params=SearchParams.of(knobs))
    assert gated.answered and gated.evidence.get("declared") == ["Widget"]
    assert gated.results[0].path == "ui/components.py" and gated.results[0].name == "Widget"
    assert gated.results[0].start_line == 1  # the part holding the declaration's first line
    knobs["ranking.ENABLED"] = False
    assert not pipeline.search(repo.root, "Widget", top_n=5, params=SearchParams.of(knobs)).answered  # the gate alone refuses it


def test_a_report_naming_a_file_lifts_it(repo):
    """A traceback frame names the file and its function: the frame's function is lifted above a
    unit that matches more of the report's words."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("pkg/format.py", FILLER)  # enough units for corpus statistics to mean something
    repo.write("pkg/core/basic.py", (
        "def number_value_helper(value, new):\n    \'\'\'Substitute a new number value when numbers fail.\'\'\'\n    return value\n\n\n"
        "def subs(expr, old, rule):\n    return expr.replace(old, rule)\n"
    ))
    repo.commit("pkg")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    report = (
        "Substituting a new number value fails for numbers: the number value stays\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/src/project/pkg/core/basic.py", line 6, in subs\n'
        "ValueError: cannot substitute the value"
    )
    knobs["reports.POINTER_BOOST"] = 0.0
    assert pipeline.search(repo.root, report, top_n=5, gate=False, params=SearchParams.of(knobs)).results[0].name == "number_value_helper"
    knobs["reports.POINTER_BOOST"] = 1.0
    top = pipeline.search(repo.root, report, top_n=5, gate=False, params=SearchParams.of(knobs)).results[0]
    assert (top.path, top.name) == ("pkg/core/basic.py", "subs")


def test_a_reports_calls_name_methods_a_short_querys_do_not():
    report = ("`expr.atoms()` with no arguments returns subclasses of Atom in expr, but the correct "
              "definition of a leaf node should be that it has no args; Point.vel() should also "
              "calculate the velocity if possible when positions are set, as orientations already do.")
    assert len(ranking.shape(report).words) >= shape.TOP_FILE_MIN_WORDS
    assert "Point.vel" in ranking.shape(report).symbols
    short = ranking.shape("why does `expr.atoms()` differ from Point.vel()")
    assert "atoms" not in short.symbols and "Point.vel" not in short.symbols


def test_a_file_the_code_is_built_around_is_lifted_for_a_how_question(repo):
    """Centrality: ``cart.py`` is what thirty handlers call (``cart.total(...)`` in their relations);
    ``notes.py`` matches the question's words a little better. Switched on, the central file leads."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("shop/format.py", FILLER)
    repo.write("shop/cart.py", (
        "def total(items):\n    '''Sum the item prices.'''\n    return sum(i.price for i in items)\n\n\n"
        "def add_item(items, item):\n    '''Put an item in.'''\n    return items + [item]\n"
    ))
    repo.write("shop/notes.py", "def price_note(items):\n    '''Explain how item prices sum into a total price.'''\n    return 'prices'\n")
    repo.write("shop/handlers.py", "\n\n".join(
        f"def handle_{i}(request):\n    import cart\n    return cart.total(request.items)\n" for i in range(30)
    ))
    repo.commit("shop")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    question = "how are item prices summed"
    knobs["ranking.CENTRAL_BOOST"] = 0.0
    assert _ask(repo.root, question, knobs).results[0].path == "shop/notes.py"
    knobs["ranking.CENTRAL_BOOST"] = 1.0
    assert _ask(repo.root, question, knobs).results[0].path == "shop/cart.py"
    # a bare symbol is looked up by name, never by how central its file is
    assert ranking.CENTRAL_BOOST and _ask(repo.root, "price_note", knobs).results[0].path == "shop/notes.py"


CSE = "\n\n".join([
    "def cse(exprs, symbols=None):\n    '''Common subexpression elimination over a list of expressions.'''\n    return tree_cse(exprs, symbols)\n",
    "def tree_cse(exprs, symbols):\n    '''Walk the expression trees once, counting repeated subtrees.'''\n    return exprs, symbols\n",
])
MATRICES = "\n\n".join(
    f"def matrix_entry_{i}(matrix, i, j):\n    '''Index a matrix symbol: entry {i} of the matrix expression, with symbols substituted.'''\n"
    f"    return matrix.subs(symbols(matrix.name), matrix[i, j])\n" for i in range(12)
)


def test_a_report_title_lifts_the_declarations_it_names(repo):
    """A report's first line names its subject (``cse() has strange behaviour ...``): the body talks
    about matrices and symbols, so BM25F ranks the matrix helpers first; the title's ``cse`` is a
    declaration here and takes the full definition lift. A short question gets no title lookup,
    and a title's names never make the gate count the report as a bare declared name."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("calc/cse_main.py", CSE)
    repo.write("calc/matrices.py", MATRICES)
    repo.write("calc/format.py", FILLER)
    repo.commit("calc")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    report = ("cse() has strange behaviour for MatrixSymbol indexing\n"
              "Substituting the matrix entries of a symbols matrix and indexing each entry gives copies of the "
              "whole matrix in the output: every entry of the matrix expression is repeated, the symbols are "
              "substituted twice, and the index of each matrix symbol entry is wrong after substitution of "
              "the symbols into the expression.")
    q = ranking.shape(report)
    assert q.report and q.title == ("cse", "MatrixSymbol") and "cse" not in q.symbols
    assert ranking.shape("cse() has strange behaviour").title == ()  # not a report
    knobs["ranking.TITLE_SCALE"] = 0.0
    ranking.shape.cache_clear()
    before = [r.name for r in _ask(repo.root, report, knobs).results]
    knobs["ranking.TITLE_SCALE"] = 1.0
    ranking.shape.cache_clear()
    after = [r.name for r in _ask(repo.root, report, knobs).results]
    assert "cse" not in before[:3] and after[0] == "cse", (before, after)
    plain = report.replace("cse() has strange behaviour for MatrixSymbol indexing", "cse() repeats entries when indexing")
    assert ranking.shape(plain).title == ("cse",) and not ranking.shape(plain).symbols
    gated = pipeline.search(repo.root, plain, top_n=10, params=SearchParams.of(knobs))
    assert not gated.evidence.get("declared"), gated.evidence
    assert gated.answered == gated.evidence["passed"] and (not gated.answered or gated.results[0].name == "cse"), (gated.evidence, gated.diagnosis)


def test_an_older_api_copy_kept_beside_the_current_one_ranks_below_it(repo):
    """``v3/`` beside ``v4/`` (and a lone ``v1/`` whose files are also one level up) is an old copy
    (``paths.older_copies``); its units rank below the current API's unless the query names it."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    schema = "export class ZodType {{\n  // parse and validate input values ({v})\n  parse(input) {{ return input }}\n}}\n"
    repo.write("v3/types.ts", schema.format(v="v3 parse validate parse validate"))
    repo.write("v4/core/schemas.ts", schema.format(v="current"))
    repo.write("lib/v1/fields.py", "def Field(default=None):\n    '''A model field.'''\n    return default\n")
    repo.write("lib/v1/main.py", "class BaseModel:\n    '''Old models.'''\n")
    repo.write("lib/fields.py", "def Field(default=None):\n    '''A model field.'''\n    return default\n")
    repo.write("lib/main.py", "class BaseModel:\n    '''Models.'''\n")
    repo.write("exposed/v1/core/Table.kt", "class Table\n")
    repo.write("exposed/v1/core/Column.kt", "class Column\n")
    repo.commit("versions")
    assert paths.older_copies(["v3/a.ts", "v4/a.ts", "lib/v1/fields.py", "lib/v1/main.py", "lib/fields.py", "lib/main.py",
                               "exposed/v1/core/Table.kt", "exposed/v1/core/Column.kt"]) == {"v3/": "3", "lib/v1/": "1"}
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    question = "how ZodType parses and validates input values"
    knobs["ranking.OLDER_COPY_PRIOR"] = 1.0
    assert _ask(repo.root, question, knobs).results[0].path == "v3/types.ts"
    knobs["ranking.OLDER_COPY_PRIOR"] = 0.5
    assert _ask(repo.root, question, knobs).results[0].path == "v4/core/schemas.ts"
    assert _ask(repo.root, "v3 " + question, knobs).results[0].path == "v3/types.ts"  # asked for by version
    assert _ask(repo.root, "Field", knobs).results[0].path == "lib/fields.py"


def test_a_report_title_words_name_the_file_its_body_does_not(repo):
    """``TITLE_PATHS``: a report's path words are its title's (``pretty printing`` names
    ``pretty.py``); over the whole report the file's one word is too small a share to count."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("calc/pretty.py", "def draw_power(expr):\n    '''Draw a power: the base, and its exponent raised above it.'''\n    return expr\n")
    repo.write("calc/basis.py", "\n\n".join(
        f"def basis_{i}(system):\n    '''The unit basis vector {i} of a coordinate system, with its base scalars.'''\n    return system.base_vectors()[{i}]\n"
        for i in range(6)))
    repo.write("calc/format.py", FILLER)
    repo.commit("calc")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    report = ("vectors break pretty printing\n"
              "With a coordinate system and its basis vector, a power of a fraction times the basis vector prints "
              "the base vector twice and the exponent sits too low; the unit basis vector should appear once, "
              "centred after the scalar, and the baseline of the whole expression should stay where it is.")
    q = ranking.shape(report)
    assert q.report and set(ranking.terms("pretty printing")) <= q.title_words and not set(ranking.terms("baseline")) & q.title_words
    knobs["ranking.TITLE_PATHS"] = False
    ranking.shape.cache_clear()
    before = [r.path for r in _ask(repo.root, report, knobs).results]
    knobs["ranking.TITLE_PATHS"] = True
    ranking.shape.cache_clear()
    after = [r.path for r in _ask(repo.root, report, knobs).results]
    assert before[0] == "calc/basis.py" and after[0] == "calc/pretty.py", (before, after)


def test_a_split_declaration_is_found_by_its_head_even_among_many_partial_ones(repo):
    """dapper's ``SqlMapper``: a partial class declared in 40 small files and, in ``SqlMapper.cs``,
    a class long enough to be split in parts. The name lookup reads heads first (the per-name limit
    cannot cut ``SqlMapper.cs`` off): the answer is the declaration's first line in the file named after it."""
    for i in range(40):
        repo.write(f"src/SqlMapper.Part{i:02d}.cs", f"namespace Dapper\n{{\n    public static partial class SqlMapper\n    {{\n"
                   f"        private static int Helper{i}(int value) => value + {i};\n    }}\n}}\n")
    methods = "\n".join(f"        public static int Query{i}(string sql) {{\n            return sql.Length + {i};\n        }}\n" for i in range(120))
    repo.write("src/SqlMapper.cs", "namespace Dapper\n{\n    /// Dapper, a simple object mapper for .Net\n    public static partial class SqlMapper\n    {\n" + methods + "    }\n}\n")
    repo.commit("dapper")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    top = _ask(repo.root, "SqlMapper").results[0]
    assert (top.path, top.start_line) == ("src/SqlMapper.cs", 4), (top.path, top.start_line, top.end_line)


MATRIX_OPS = "\n\n".join([
    "def col_insert(matrix, pos, other):\n    '''Insert the columns of other into matrix at column pos and return the widened matrix.'''\n"
    "    if pos < 0:\n        pos += matrix.cols\n    return _eval_widen(matrix, pos, other)\n",
    "def _eval_widen(m, at, extra):\n    # the work: shift the tail right by extra's width\n    out = [list(r) for r in m.rows]\n"
    "    for r, x in zip(out, extra.rows):\n        r[at:at] = x\n    return out\n",
    *(f"def col_{name}(matrix, pos):\n    '''Return the column {name} of the matrix at position pos, inserted columns included.'''\n    return matrix.rows[pos]\n"
      for name in ("swap", "del", "op", "sum", "max", "min")),
])



def test_an_abbreviated_file_name_lifts_its_file(repo):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("ser/impls.rs", "\n".join(f"impl Serialize for T{i} {{ fn serialize(&self) {{ emit({i}) }} }}" for i in range(3)) + "\n")
    repo.write("ser/mod.rs", "/// Serialize: the trait a data structure implements. Each implementation of it writes one value.\n"
               "pub trait Serialize { fn serialize(&self); }\n")
    repo.write("app/format.py", FILLER)
    repo.commit("impls")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    knobs["paths.PREFIX_MIN"] = 0
    before = [r.path for r in _ask(repo.root, "serialize implementations", knobs).results]
    knobs["paths.PREFIX_MIN"] = 4
    after = [r.path for r in _ask(repo.root, "serialize implementations", knobs).results]
    assert before[0] == "ser/mod.rs" and after[0] == "ser/impls.rs"


def test_a_glued_file_name_lifts_its_file_only_with_the_split(repo):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("app/secretfiles.py", "def matches(path):\n    '''True for key stores and dotenv paths.'''\n    return path.endswith('.env')\n")
    repo.write("app/secrets.py", "def get_secret(name):\n    '''Read one secret value by name from the secret files.'''\n    return name\n")
    repo.write("app/format.py", FILLER)
    repo.commit("glued")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    knobs["ranking.COHERENCE_BOOST"] = 0.0
    knobs["paths.COMPOUND_PATHS"] = False
    before = _ask(repo.root, "secret files paths", knobs)
    knobs["paths.COMPOUND_PATHS"] = True
    after = _ask(repo.root, "secret files paths", knobs)
    assert before.results[0].path == "app/secrets.py"
    assert after.results[0].path == "app/secretfiles.py"



def test_a_file_glued_from_the_query_words_counts_as_named_for_them():
    words = ranking.shape("which filter drops secrets files from the index").words
    assert {"secret", "fil"} <= paths.path_words("paqad/eligibility/secretfiles.py", words)
    assert paths.path_words("gin/routergroup.go", ranking.shape("router group").words) >= {"router", "group"}
    # only a whole split into query words: "profile" holds "file" but is not made of query words
    assert "fil" not in paths.path_words("app/profile.py", ranking.shape("user file").words)
    assert paths.path_words("x/secretfiles.py", ranking.shape("secret").words) == paths._path_words("x/secretfiles.py")



def test_a_path_word_stands_for_the_longer_query_word_it_abbreviates():
    words = ranking.shape("standard library type Serialize implementations").words
    assert "implementation" in paths.path_words("serde_core/src/ser/impls.rs", words)
    assert {"authentication", "configuration"} <= paths.path_words("app/auth/config.py", ranking.shape("authentication configuration").words)
    assert "implementation" not in paths.path_words("serde_core/src/ser/mod.rs", words)
    assert not paths.path_words("a/io.py", ranking.shape("iolanthe").words) & {"iolanth"}  # a two-letter name abbreviates nothing
    assert paths.path_words("app/user.py", ranking.shape("users").words) == paths._path_words("app/user.py")  # a stem is not an abbreviation



def test_a_report_lifts_what_its_best_function_calls_in_its_own_file(repo):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("calc/matrices.py", MATRIX_OPS)
    repo.write("calc/format.py", FILLER)
    repo.commit("matrices")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    report = ("col_insert() no longer works correctly: inserting columns into a matrix at position three "
              "shifts the wrong columns, the inserted columns appear at the top instead of the bottom rows. "
              "Expected the columns of the other matrix between column two and three of the result, "
              "as before the upgrade; version one point one.")
    assert ranking.shape(report).report
    after = [r.id for r in _ask(repo.root, report, knobs).results]  # as shipped
    knobs["reports.CALLEE_BOOST"] = 0.0
    before = [r.id for r in _ask(repo.root, report, knobs).results]
    helper = "calc/matrices.py::_eval_widen"  # shares no word with the report
    assert before[0] == after[0] == "calc/matrices.py::col_insert"
    assert helper not in before[:3] and after[1] == helper
    knobs["reports.CALLEE_BOOST"] = 0.3  # a short query is not a report: no lift
    assert helper not in [r.id for r in _ask(repo.root, "col_insert columns", knobs).results][:3]


def _dispatcher(helpers: int) -> str:
    """A public entry point that hands its work to ``helpers`` private functions of its file."""
    calls = "".join(f"    if kind == {i}:\n        return _step_{i}(rows)\n" for i in range(helpers))
    bodies = "\n\n".join(f"def _step_{i}(xs):\n    # stage {i}\n    return [x * {i + 2} for x in xs]\n" for i in range(helpers))
    return f"def transpose_blocks(rows, kind):\n    '''Transpose the blocks of rows by kind.'''\n{calls}    raise ValueError(kind)\n\n\n{bodies}"


RIVALS = "\n\n".join(
    f"def reorder_{i}(rows, kind):\n    \"\"\"Return the rows in the transposed order for block kind {i}; raises for an invalid input.\"\"\"\n    return rows\n"
    for i in range(12)
)


def test_a_caller_keeps_its_place_above_at_most_callee_max_of_its_callees(repo, monkeypatch):
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    repo.write("calc/blocks.py", _dispatcher(6))
    repo.write("calc/order.py", RIVALS)  # share the report's words; the helpers share none
    repo.write("calc/format.py", FILLER)
    repo.commit("blocks")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    report = ("transpose_blocks() returns the blocks in the wrong order when the kind is two: the rows come back "
              "reversed instead of transposed, and the same call with kind three raises for a valid input. "
              "Expected the transposed rows as in the previous release, one point four; seen on every platform.")
    assert ranking.shape(report).report
    for cap in (1, 3):
        monkeypatch.setattr(reports, "CALLEE_MAX", cap)
        ids = [r.id for r in _ask(repo.root, report, knobs).results]
        assert ids[0] == "calc/blocks.py::transpose_blocks"  # the caller stays first
        helpers = [i for i in ids[:6] if i.startswith("calc/blocks.py::_step_")]
        assert ids[1] == "calc/blocks.py::_step_0" and len(helpers) == cap, ids  # the first called first; the cap holds
    knobs["reports.CALLEE_BOOST"] = 0.0
    ids = [r.id for r in _ask(repo.root, report, knobs).results]
    assert ids[0] == "calc/blocks.py::transpose_blocks" and not any(i.startswith("calc/blocks.py::_step_") for i in ids[1:4]), ids


def test_a_name_led_by_underscores_is_a_name_in_a_sentence_and_in_a_title():
    report = ("@ (__matmul__) should fail if one argument is not a matrix\n"
              "Right now __matmul__ just copies __mul__ and returns the same answer for a scalar operand, "
              "which is wrong: numpy raises ValueError for a scalar on either side of the operator and "
              "we should do the same, as the tests of the matrix arithmetic mixin expect there.")
    shape = ranking.shape(report)
    assert shape.report
    assert "__matmul__" in shape.title
    assert {"__matmul__", "__mul__"} <= set(shape.symbols)
    assert "_" not in ranking.shape("what does _ mean in a loop").symbols


def test_a_title_name_many_files_declare_shares_its_lift():
    """sympy-18057's title names ``__eq__``, which dozens of classes declare: at twice the lift,
    each of them took it in full and crowded the one to fix out of the top five files. The lift is
    shared once more than ``TITLE_SPREAD`` files declare the name; a name one file declares keeps it."""
    knobs: dict = {}  # tuned constants this test sets, passed as the request's SearchParams
    from paqad.index.records import StoredUnit
    from paqad.search.fusion import Fused

    report = ("Sympy incorrectly attempts to eval reprs in its __eq__ method\n"
              "Passing strings produced by unknown objects into eval is very bad. It is especially surprising for an "
              "equality check to trigger that kind of behavior. This should be fixed ASAP. Repro code: class C with "
              "a repr of x.y, then comparing a symbol to it raises AttributeError from deep in the parser.")
    q = ranking.shape(report)
    assert q.report and "__eq__" in q.title

    def method(uid: int, path: str, name: str) -> StoredUnit:
        return StoredUnit(uid=uid, path=path, name=name, qualified_name=f"C{uid}.{name}", kind="method", part=1)

    info = {uid: method(uid, f"pkg/mod{uid}.py", "__eq__") for uid in range(12)}
    head = [Fused(uid, fused=1.0) for uid in info]
    knobs["ranking.TITLE_SCALE"] = 2.0
    shared: dict[int, float] = {}
    for spread in (0, 3):
        knobs["ranking.TITLE_SPREAD"] = spread
        add = dict.fromkeys(info, 0.0)
        with using(SearchParams.of(knobs)):
            ranking._definitions(head, info, q, 1.0, add)
        shared[spread] = add[0]
    assert shared[3] == pytest.approx(shared[0] * 3 / 12)
    lone = {0: method(0, "pkg/expr.py", "__eq__")}
    add = {0: 0.0}
    with using(SearchParams.of(knobs)):
        ranking._definitions([Fused(0, fused=1.0)], lone, q, 1.0, add)
    assert add[0] == pytest.approx(shared[0])


def test_a_split_class_answers_its_name_with_its_head_not_a_part_that_says_it_more():
    """fastapi's ``APIRouter`` (29 parts): its 5th part, which holds ``include_router``, outscores
    the head on BM25F and, with every part lifted alike, answered the bare name (semble's symbol
    queries with the default model: 0.937 without the head-first share, 0.962 with it). Later parts
    take ``CONTINUATION_SCALE`` of the lift; here the arithmetic, on the stack's own records."""
    from paqad.index.records import StoredUnit
    from paqad.search.fusion import Fused

    def part(uid: int, n: int) -> StoredUnit:
        return StoredUnit(uid=uid, path="fastapi/routing.py", name="APIRouter", qualified_name="APIRouter", kind="class", part=n)

    q = ranking.shape("APIRouter")
    head = [Fused(5, fused=1.0), Fused(1, fused=0.8)]  # the 5th part first on BM25F
    info = {5: part(5, 5), 1: part(1, 1)}
    for scale, head_wins in ((1.0, False), (0.5, True)):
        add = {5: 0.0, 1: 0.0}
        with using(SearchParams.of({"ranking.CONTINUATION_SCALE": scale})):
            ranking._definitions(head, info, q, 1.0, add)
        assert (0.8 + add[1] > 1.0 + add[5]) is head_wins, (scale, add)


def test_a_capitalised_name_finds_its_type_before_methods_named_so(repo):
    """gin's ``Engine`` struct against three interface methods ``Engine()``: all four declare the
    name; the type is what a bare capitalised name asks for (``TYPE_BONUS``; semble's gin with the
    default model put ``binding.go``'s method first without it, Dec 8)."""
    repo.write("gin.go", "package gin\n\n// Engine is the framework's instance: the muxer, middleware and settings.\ntype Engine struct {\n\tRouterGroup\n\ttrees methodTrees\n}\n")
    for name in ("binding", "validator", "render"):
        repo.write(f"{name}/{name}.go", f"package {name}\n\n// Engine returns the engine that powers the {name} engine.\n"
                   f"type Hook interface {{\n\tEngine() any\n}}\n\nfunc (h *impl) Engine() any {{ return h.engine }}\n")
    repo.write("format.py", FILLER)
    repo.commit("go")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    before = [(r.path, r.kind) for r in _ask(repo.root, "Engine", {"ranking.TYPE_BONUS": 0.0}).results]
    after = [(r.path, r.kind) for r in _ask(repo.root, "Engine").results]
    assert before[0] != ("gin.go", "struct") and after[0] == ("gin.go", "struct"), (before, after)
    # lower case is a function's or method's name: no type preference
    assert ranking.shape("engine").symbols == () and _ask(repo.root, "engine").results


def test_a_declaration_s_first_part_outranks_a_later_part_of_another_that_scored_higher():
    """nlohmann's "ADL-based to_json and from_json conversion hooks for custom types": the third
    part of a split ``namespace`` in ``to_json.hpp`` (no declaration of either name, lifted as the
    best unit of a file named after ``to_json``) outscores ``adl_serializer.hpp``'s ``from_json`` on
    the fused score; a declaration's first part takes ``PART_ONE_BONUS`` more of the
    (embedded-symbol) lift, which puts it above (semble with the default model: the target second
    with it, third without). The arithmetic, on the stack's own records."""
    from paqad.index.records import StoredUnit
    from paqad.search.fusion import Fused

    q = ranking.shape("ADL-based to_json and from_json conversion hooks for custom types")
    assert "from_json" in q.symbols and q.embedded
    info = {82: StoredUnit(uid=82, path="detail/conversions/to_json.hpp", name="namespace", qualified_name="namespace", kind="function", part=3),
            2: StoredUnit(uid=2, path="adl_serializer.hpp", name="from_json", qualified_name="from_json", kind="function", part=1)}
    head = [Fused(82, fused=1.0), Fused(2, fused=0.85)]
    for bonus, declaration_wins in ((0.0, False), (0.2, True)):
        add = {82: 0.0, 2: 0.0}
        with using(SearchParams.of({"ranking.PART_ONE_BONUS": bonus})):
            ranking._definitions(head, info, q, 1.0, add)
        assert (0.85 + add[2] > 1.0 + add[82]) is declaration_wins, (bonus, add)
