"""Agent-written descriptions end to end: the installed CLI, real git repositories, a real index."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import describe, workspace
from paqad.errors import ConfigError, UsageError
from paqad.index.reader import Index
from paqad.index.sidecar import MAX_DESCRIPTION_CHARS, SIDECAR_NAME, read_sidecar
from testing.repos import Repo, make_shop

POST = "shop/payments.py::PaymentGateway._post"
WORD = "acquirer"  # in no file of the shop: only the description brings it

GO = """\
package billing

import "fmt"

// Invoice already says what it is.
func Invoice(id string) string {
\treturn fmt.Sprintf("invoice %s", id)
}

func Void(id string) error {
\tif id == "" {
\t\treturn fmt.Errorf("empty id")
\t}
\treturn nil
}
"""

TS = """\
export class Ledger {
  private rows: number[] = [];

  balance(): number {
    return this.rows.reduce((a, b) => a + b, 0);
  }
}
"""


def _json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _hash(paqad_cli, root: Path, unit_id: str) -> str:
    units = _json(paqad_cli("describe", "pending", "--limit", "100", "--json", cwd=root))["units"]
    return next(u["content_hash"] for u in units if u["id"] == unit_id)


def _probe_ids(paqad_cli, root: Path, query: str) -> list[str]:
    return [r["id"] for r in _json(paqad_cli("rag", "probe", query, "--json", cwd=root))["results"]]


def test_put_applies_on_update_and_search_finds_the_description_word(shop: Repo, paqad_cli) -> None:
    assert POST not in _probe_ids(paqad_cli, shop.root, WORD)
    digest = _hash(paqad_cli, shop.root, POST)
    stored = _json(paqad_cli("describe", "put", POST, f"Sends a request body to the card {WORD} and returns its answer.", "--hash", digest, "--json", cwd=shop.root))
    assert stored == {"id": POST, "content_hash": digest, "stored": True}
    report = _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert report["mode"] == "incremental"
    assert (report["files_changed"], report["descriptions_changed"]) == (1, 1)  # only payments.py
    assert report["files_unchanged"] >= 2
    probe = _json(paqad_cli("rag", "probe", WORD, "--json", cwd=shop.root))
    assert probe["results"][0]["id"] == POST
    assert probe["results"][0]["matched_terms"] == {"acquirer": "description"}
    found = _json(paqad_cli("rag", "search", f"gateway {WORD}", "--json", cwd=shop.root))
    assert found["answered"] and found["results"][0]["id"] == POST
    status = _json(paqad_cli("describe", "status", "--json", cwd=shop.root))
    assert (status["described"], status["stale"], status["pending"]) == (1, 0, status["total"] - 1)
    assert POST not in [u["id"] for u in _json(paqad_cli("describe", "pending", "--limit", "100", "--json", cwd=shop.root))["units"]]


def test_changed_code_makes_the_description_stale(shop: Repo, paqad_cli) -> None:
    _json(paqad_cli("describe", "put", POST, f"Posts to the {WORD}.", "--json", cwd=shop.root))
    _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert _probe_ids(paqad_cli, shop.root, WORD)[:1] == [POST]
    path = shop.root / "shop/payments.py"
    path.write_text(path.read_text().replace("return route + str(body)", "return f'{route}?{body}'"), encoding="utf-8")
    shop.commit("change _post")
    report = _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert report["mode"] == "incremental" and report["files_changed"] == 1
    status = _json(paqad_cli("describe", "status", "--json", cwd=shop.root))
    assert (status["described"], status["stale"]) == (0, 1)
    pending = _json(paqad_cli("describe", "pending", "--limit", "100", "--json", cwd=shop.root))["units"]
    assert next(u for u in pending if u["id"] == POST)["stale"] is True
    assert POST not in _probe_ids(paqad_cli, shop.root, WORD)
    stale = paqad_cli("describe", "put", POST, "Old words.", "--hash", json.loads((shop.root / SIDECAR_NAME).read_text())["descriptions"][POST]["content_hash"], cwd=shop.root)
    assert stale.returncode == 2 and "stale" in stale.stderr


def test_hand_edited_sidecar_reindexes_one_file_incrementally(shop: Repo, paqad_cli) -> None:
    _json(paqad_cli("describe", "put", POST, "Posts a body.", "--json", cwd=shop.root))
    first = _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert first["files_changed"] == 1
    assert _json(paqad_cli("rag", "update", "--json", cwd=shop.root))["files_changed"] == 0  # nothing new
    sidecar = shop.root / SIDECAR_NAME
    data = json.loads(sidecar.read_text())
    data["descriptions"][POST]["text"] = f"Talks to the {WORD}."
    sidecar.write_text(json.dumps(data))
    report = _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert (report["mode"], report["files_changed"], report["descriptions_changed"]) == ("incremental", 1, 1)
    assert _probe_ids(paqad_cli, shop.root, WORD)[:1] == [POST]
    del data["descriptions"][POST]
    sidecar.write_text(json.dumps(data))
    assert _json(paqad_cli("rag", "update", "--json", cwd=shop.root))["descriptions_changed"] == 1
    assert POST not in _probe_ids(paqad_cli, shop.root, WORD)


def test_malformed_sidecar_is_an_error_for_describe_but_search_goes_on(shop: Repo, paqad_cli) -> None:
    _json(paqad_cli("describe", "put", POST, f"Posts to the {WORD}.", "--json", cwd=shop.root))
    _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    sidecar = shop.root / SIDECAR_NAME
    sidecar.write_text('{"version": 1, "descriptions": {', encoding="utf-8")
    for args in (("describe", "status"), ("describe", "pending"), ("describe", "put", POST, "text"), ("describe", "promote")):
        proc = paqad_cli(*args, cwd=shop.root)
        assert proc.returncode == 2, args
        assert "paqad.descriptions.json: not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    assert sidecar.read_text() == '{"version": 1, "descriptions": {'  # put never overwrote it
    report = _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    assert report["descriptions_changed"] == 1  # the applied description is withdrawn
    found = _json(paqad_cli("rag", "search", "retry the charge with backoff", "--json", cwd=shop.root))
    assert found["answered"] and found["results"][0]["id"] == "shop/payments.py::retry_charge"
    assert "descriptions-ignored" in (workspace.local_dir(shop.root) / "audit.log").read_text()


def test_bad_entries_are_ignored_and_counted(shop: Repo, paqad_cli) -> None:
    digest = _hash(paqad_cli, shop.root, POST)
    (shop.root / SIDECAR_NAME).write_text(json.dumps({"version": 1, "descriptions": {
        POST: {"content_hash": digest, "text": f"Posts to the {WORD}."},
        "shop/payments.py::PaymentGateway.refund": {"content_hash": 7, "text": "wrong type"},
        "shop/payments.py::PaymentGateway.charge": {"content_hash": digest, "text": "x" * (MAX_DESCRIPTION_CHARS + 1)},
        "shop/gone.py::vanished": {"content_hash": digest, "text": "a unit that no longer exists"},
    }}))
    status = _json(paqad_cli("describe", "status", "--json", cwd=shop.root))
    assert (status["described"], status["invalid_entries"], status["unknown_ids"]) == (1, 2, 1)
    assert _json(paqad_cli("rag", "update", "--json", cwd=shop.root))["descriptions_changed"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("shop/payments.py::nope", "text"), "no unit"),
        ((POST, "   "), "empty"),
        ((POST, "x" * (MAX_DESCRIPTION_CHARS + 1)), f"at most {MAX_DESCRIPTION_CHARS}"),
        (("../outside.py::f", "text"), "outside the repository"),
        ((POST, "text", "--hash", "0123456789abcdef"), "stale"),
    ],
)
def test_put_refuses_with_a_clear_error(shop: Repo, paqad_cli, args: tuple, message: str) -> None:
    proc = paqad_cli("describe", "put", *args, cwd=shop.root)
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.count("\n") == 1
    assert not (shop.root / SIDECAR_NAME).exists()


def test_put_reads_a_file_or_stdin_and_writes_sorted_reviewable_json(shop: Repo, paqad_cli, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Gives  the money\nback.\n", encoding="utf-8")
    _json(paqad_cli("describe", "put", "shop/sessions.py::verify_cookie", "--file", str(note), "--json", cwd=shop.root))
    _json(paqad_cli("describe", "put", POST, "--json", cwd=shop.root, input="Posts a body\tsomewhere."))
    text = (shop.root / SIDECAR_NAME).read_text()
    data = json.loads(text)
    assert list(data["descriptions"]) == sorted(data["descriptions"])
    assert data["descriptions"]["shop/sessions.py::verify_cookie"]["text"] == "Gives the money back."
    assert data["descriptions"][POST]["text"] == "Posts a body somewhere."
    assert text == describe.dump(data)


def test_concurrent_puts_lose_nothing(shop: Repo) -> None:
    units = describe.pending(Index.shared(shop.root), limit=100)["units"]
    assert len(units) >= 5
    script = "import sys; from pathlib import Path; from paqad import describe; describe.put(Path(sys.argv[1]), sys.argv[2], 'described by ' + sys.argv[2])"
    # cwd: the test repository, so `python -c` imports the installed paqad, never a source checkout.
    procs = [subprocess.Popen([sys.executable, "-c", script, str(shop.root), u["id"]], cwd=shop.root) for u in units]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    stored = read_sidecar(shop.root).entries
    assert set(stored) == {u["id"] for u in units}


def test_library_api_shapes_and_order(shop: Repo) -> None:
    page = describe.pending(Index.shared(shop.root), limit=2)
    assert page["total"] == describe.status(Index.shared(shop.root))["pending"]
    first = page["units"][0]
    assert set(first) >= {"id", "path", "kind", "qualified_name", "signature", "start_line", "end_line", "content_hash", "source"}
    everything = describe.pending(Index.shared(shop.root), limit=100)["units"]
    flags = [u["has_docstring"] for u in everything]
    assert flags == sorted(flags)  # undocumented units come first
    assert len(describe.pending(Index.shared(shop.root), limit=100, offset=3)["units"]) == len(everything) - 3
    with pytest.raises(UsageError):
        describe.put(shop.root, "shop/payments.py::nope", "text")
    (shop.root / SIDECAR_NAME).write_text("[]")
    with pytest.raises(ConfigError):
        describe.status(Index.shared(shop.root))


def test_promote_diff_applies_and_yields_docstrings_and_comment_blocks(shop: Repo, paqad_cli) -> None:
    shop.write("billing/billing.go", GO)
    shop.write("web/ledger.ts", TS)
    shop.commit("go and ts")
    _json(paqad_cli("rag", "update", "--json", cwd=shop.root))
    long_text = "Serialises the body next to the route. " * 4 + 'It quotes "words" and a backslash \\ safely"'
    wanted = {
        POST: long_text,
        "shop/sessions.py::sign_cookie": "Never shown: this function already has a docstring.",
        "billing/billing.go::Void": "Cancels an invoice by id; an empty id is an error.",
        "billing/billing.go::Invoice": "Never shown either.",
        "web/ledger.ts::Ledger.balance": "Adds up every row of the ledger.",
    }
    for unit_id, text in wanted.items():
        _json(paqad_cli("describe", "put", unit_id, text, "--json", cwd=shop.root))
    diff = paqad_cli("describe", "promote", cwd=shop.root)
    assert diff.returncode == 0, diff.stderr
    assert "Never shown" not in diff.stdout
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=shop.root, input=diff.stdout, text=True, capture_output=True)
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", "-"], cwd=shop.root, input=diff.stdout, text=True, check=True)
    tree = ast.parse((shop.root / "shop/payments.py").read_text())
    gateway = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    post = next(n for n in gateway.body if isinstance(n, ast.FunctionDef) and n.name == "_post")
    assert " ".join(ast.get_docstring(post).split()) == " ".join(long_text.split())
    go = (shop.root / "billing/billing.go").read_text()
    assert "}\n\n// Void cancels an invoice by id; an empty id is an error.\nfunc Void(id string) error {" in go
    ts = (shop.root / "web/ledger.ts").read_text()
    assert "  // Adds up every row of the ledger.\n  balance(): number {" in ts
    assert _json(paqad_cli("describe", "promote", "--json", cwd=shop.root))["diff"] == ""  # nothing left to promote


@pytest.mark.usefixtures("default_provider")
def test_a_description_is_embedded_and_only_its_unit_is_re_embedded(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    _json(paqad_cli("rag", "init", "--provider", "local", "--json", cwd=repo.root))
    _json(paqad_cli("describe", "put", POST, f"Sends the charge to the card {WORD}.", "--json", cwd=repo.root))
    report = _json(paqad_cli("rag", "update", "--json", cwd=repo.root))
    assert report["files_changed"] == 1
    units_in_file = len([u for u in describe.pending(Index.shared(repo.root), limit=100)["units"] if u["path"] == "shop/payments.py"]) + 1
    assert report["vectors"]["embedded"] == 1  # the described unit; its neighbours come from the cache
    assert report["vectors"]["cached"] >= units_in_file - 1 and report["vectors"]["pending"] == 0
