"""The code graph on a real git repository and a real index: exact edges, walks, the CLI."""

from __future__ import annotations

import json

import pytest

from paqad import config, graph
from paqad.errors import UsageError
from paqad.graph import model
from paqad.index.reader import Index
from paqad.index.writing import build
from testing.env import LEXICAL

STORE = '''\
"""Persistence helpers."""


class BaseStore:
    def save(self, item):
        return self.write(item)

    def write(self, item):
        return item


def normalize(item):
    return str(item).strip()
'''

ORDERS = '''\
"""Orders."""

import json
from shop.store import BaseStore, normalize as clean
import shop.fmt


class OrderStore(BaseStore):
    def place(self, order):
        text = clean(order)
        self.save(text)
        shop.fmt.render_receipt(text)
        return mystery_helper(text)

    def cancel(self, order):
        self.place(order)
        return json.dumps(order)
'''

FMT = '''\
"""Formatting."""


def render_receipt(text):
    return "receipt: " + text
'''


@pytest.fixture
def graph_repo(repo):
    repo.write("shop/__init__.py", '"""Shop package."""\n')
    repo.write("shop/store.py", STORE)
    repo.write("shop/orders.py", ORDERS)
    repo.write("shop/fmt.py", FMT)
    repo.commit("shop")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def out_edges(root, unit_id, hops=1):
    found = graph.neighbors(Index.shared(root), unit_id, hops=hops, direction="out", budget=100)
    return {(e["src"], e["type"], e["dst"], e.get("unresolved", "")) for n in found for e in n["edges"][-1:]}


P = "shop/orders.py::OrderStore.place"


def test_exact_edges_alias_import_self_call_module_call_and_unresolved(graph_repo):
    assert out_edges(graph_repo.root, P) == {
        (P, "calls", "shop/store.py::normalize", ""),  # `normalize as clean`
        (P, "calls", "shop/store.py::BaseStore.save", ""),  # self.save through the base class
        (P, "calls", "shop/fmt.py::render_receipt", ""),  # import shop.fmt; shop.fmt.render_receipt()
        (P, "calls", "?mystery_helper", "unknown"),  # defined nowhere: kept, not guessed
    }


def test_inherits_contains_and_file_imports(graph_repo):
    root = graph_repo.root
    assert out_edges(root, "shop/orders.py::OrderStore") == {
        ("shop/orders.py::OrderStore", "inherits", "shop/store.py::BaseStore", ""),
        ("shop/orders.py::OrderStore", "contains", P, ""),
        ("shop/orders.py::OrderStore", "contains", "shop/orders.py::OrderStore.cancel", ""),
    }
    file_edges = out_edges(root, "shop/orders.py")
    assert ("shop/orders.py", "imports", "shop/store.py", "") in file_edges
    assert ("shop/orders.py", "imports", "shop/fmt.py", "") in file_edges
    assert ("shop/orders.py", "contains", "shop/orders.py::OrderStore", "") in file_edges
    # `json` is not a file of this repository: no import edge, and json.dumps stays unresolved
    assert not any(dst.startswith("json") for _s, t, dst, _u in file_edges if t == "imports")
    assert ("shop/orders.py::OrderStore.cancel", "calls", "?dumps", "unknown") in out_edges(root, "shop/orders.py::OrderStore.cancel")


def test_direction_hops_budget_and_evidence(graph_repo):
    root = graph_repo.root
    callers = graph.neighbors(Index.shared(root), "shop/store.py::normalize", hops=1, direction="in")
    assert [n["id"] for n in callers] == [P, "shop/store.py"]
    first = callers[0]
    assert first["evidence"] == f"shop/store.py::normalize <-calls- {P}"
    assert first["edges"] == [{"src": P, "type": "calls", "dst": "shop/store.py::normalize"}]
    assert (first["hops"], first["score"], first["path"], first["kind"]) == (1, 0.5, "shop/orders.py", "method")
    assert (first["start_line"], first["end_line"]) == (9, 13)

    two = graph.neighbors(Index.shared(root), "shop/store.py::normalize", hops=2, direction="in")
    cancel = next(n for n in two if n["id"] == "shop/orders.py::OrderStore.cancel")
    assert cancel["hops"] == 2 and cancel["score"] == 0.25
    assert cancel["evidence"] == f"shop/store.py::normalize <-calls- {P} <-calls- shop/orders.py::OrderStore.cancel"
    assert max(n["hops"] for n in two) == 2
    assert len(graph.neighbors(Index.shared(root), "shop/store.py::normalize", hops=3, budget=2)) == 2
    scores = [n["score"] for n in graph.neighbors(Index.shared(root), P, hops=3, budget=50)]
    assert scores == sorted(scores, reverse=True)
    assert all(n["hops"] <= 1 for n in graph.neighbors(Index.shared(root), P, hops=1, direction="both"))


def test_expand_leaves_out_seeds_and_non_units_and_decays_the_seed_score(graph_repo):
    found = graph.expand(Index.shared(graph_repo.root), [(P, 0.8), ("no/such.py::x", 1.0)], hops=1, budget=10)
    ids = [n["id"] for n in found]
    assert P not in ids and "shop/orders.py" not in ids and not any(i.startswith("?") for i in ids)
    assert ids[:3] == ["shop/store.py::normalize", "shop/store.py::BaseStore.save", "shop/fmt.py::render_receipt"]
    assert found[0]["score"] == pytest.approx(0.8 * graph.HOP_DECAY)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"unit_id": "shop/nope.py::x"}, "no unit or file"), ({"unit_id": P, "hops": 0}, "hops must be 1 to 3"),
     ({"unit_id": P, "hops": 4}, "hops must be 1 to 3"), ({"unit_id": P, "direction": "up"}, "direction 'up'"),
     ({"unit_id": "?mystery_helper"}, "no unit or file")],
)
def test_bad_arguments_raise_usage_errors(graph_repo, kwargs, message):
    with pytest.raises(UsageError, match=message):
        graph.neighbors(Index.shared(graph_repo.root), **kwargs)


def test_incremental_update_is_reflected(graph_repo, paqad_cli):
    root = graph_repo.root
    assert ("shop/orders.py::OrderStore.cancel", "calls", P, "") in out_edges(root, "shop/orders.py::OrderStore.cancel")
    graph_repo.write("shop/fmt.py", FMT + "\n\ndef mystery_helper(text):\n    return text\n")
    graph_repo.write("shop/orders.py", ORDERS.replace("        self.place(order)\n", ""))
    update = paqad_cli("rag", "update", cwd=root)
    assert update.returncode == 0, update.stderr
    # the same process sees the new generation of the same file (data_version changed)
    edges = out_edges(root, P)
    assert (P, "calls", "shop/fmt.py::mystery_helper", "") in edges
    assert not any(dst == "?mystery_helper" for _s, _t, dst, _u in edges)
    assert ("shop/orders.py::OrderStore.cancel", "calls", P, "") not in out_edges(root, "shop/orders.py::OrderStore.cancel")


def test_graph_is_cached_until_the_index_changes(graph_repo):
    first = model.load(Index.shared(graph_repo.root))
    assert model.load(Index.shared(graph_repo.root)) is first
    build.update(graph_repo.root, config.load(graph_repo.root, environ=LEXICAL))  # nothing changed, but a commit
    graph_repo.write("shop/fmt.py", FMT + "\n\ndef extra(text):\n    return text\n")
    build.update(graph_repo.root, config.load(graph_repo.root, environ=LEXICAL))
    assert model.load(Index.shared(graph_repo.root)) is not first
    assert "shop/fmt.py::extra" in model.load(Index.shared(graph_repo.root)).graph


def test_cli_neighbors_json_text_and_errors(graph_repo, paqad_cli):
    root = graph_repo.root
    out = paqad_cli("rag", "neighbors", P, "--direction", "out", "--json", cwd=root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["schema_version"], data["id"], data["hops"], data["direction"]) == (1, P, 1, "out")
    keys = {"id", "path", "kind", "qualified_name", "start_line", "end_line", "hops", "score", "evidence", "edges"}
    assert all(keys <= set(n) for n in data["neighbors"])
    assert "shop/fmt.py::render_receipt" in {n["id"] for n in data["neighbors"]}
    text = paqad_cli("rag", "neighbors", P, "--hops", "2", cwd=root)
    assert text.returncode == 0 and f"{P} -calls-> shop/store.py::normalize" in text.stdout
    bad = paqad_cli("rag", "neighbors", "shop/nope.py::x", cwd=root)
    assert bad.returncode == 2 and bad.stderr.startswith("paqad: error: no unit or file") and len(bad.stderr.strip().splitlines()) == 1
    hops = paqad_cli("rag", "neighbors", P, "--hops", "4", cwd=root)
    assert hops.returncode == 2 and "--hops" in hops.stderr


def test_cli_search_graph_adds_expansions_without_changing_the_rest(graph_repo, paqad_cli):
    root = graph_repo.root
    plain = json.loads(paqad_cli("rag", "search", "place order store", "--json", cwd=root).stdout)
    run = paqad_cli("rag", "search", "place order store", "--json", "--graph", "--hops", "2", "--graph-budget", "3", cwd=root)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert "expansions" not in plain
    for reply in (plain, data):  # the two searches run a moment apart: their index age differs
        reply["freshness"].pop("age_seconds", None)
    assert {k: v for k, v in data.items() if k not in ("expansions", "elapsed_ms")} == {k: v for k, v in plain.items() if k != "elapsed_ms"}
    assert 0 < len(data["expansions"]) <= 3
    seeds = {r["id"] for r in data["results"]}
    for n in data["expansions"]:
        assert n["id"] not in seeds and n["evidence"].split(" ")[0] in seeds and 1 <= n["hops"] <= 2
    text = paqad_cli("rag", "search", "place order store", "--graph", cwd=root)
    assert text.returncode == 0 and "Graph neighbours of these results:" in text.stdout
