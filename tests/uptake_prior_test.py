"""The file prior learned from uptake (issue 35, item 2): learned, kept, read back, and in force
for one search only; off unless ``rag_uptake_prior`` is set. Real index of a real git repository."""

from __future__ import annotations

import json
import os

import pytest

from paqad import config, workspace
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline, uptake_prior
from paqad.search.request import SearchRequest
from paqad.search.uptake_prior import FileUptake, learn
from testing.env import LEXICAL


@pytest.fixture
def twins(repo):
    """Two files answering the same question about equally well."""
    body = 'def {name}(payload):\n    """Parse the invoice payload into line items."""\n    return [line for line in payload.split("\\n")]\n'
    repo.write("billing/invoice.py", body.format(name="parse_invoice"))
    repo.write("legacy/invoice_old.py", body.format(name="parse_invoice_old") + "\n# older copy\n")
    repo.commit("twins")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def _first_path(root, prior=()):
    resp = pipeline.run(Index.shared(root), SearchRequest("parse the invoice payload into line items", gate=False, file_prior=prior))
    return resp.results[0].path


def test_learn_lifts_what_is_used_and_lowers_what_is_ignored():
    factors = dict(learn({
        "a.py": FileUptake(used=8),
        "b.py": FileUptake(ignored=8),
        "c.py": FileUptake(missed=3, ignored=1),
        "d.py": FileUptake(used=1),  # seen once: no factor
        "e.py": FileUptake(used=2, ignored=2),  # even: factor 1, left out
    }))
    assert factors["a.py"] == uptake_prior.CEILING  # (8 + 1) / 1 = 9, to the 0.5: 3, bounded to 2
    assert factors["b.py"] == uptake_prior.FLOOR  # 1 / 9 to the 0.5: 0.33, bounded to 0.5
    assert factors["c.py"] == pytest.approx(2 ** 0.5, abs=1e-4)  # (3 + 1) / (1 + 1), to the 0.5
    assert "d.py" not in factors and "e.py" not in factors
    assert all(uptake_prior.FLOOR <= f <= uptake_prior.CEILING for f in factors.values())


def test_the_prior_reorders_one_search_and_only_that_one(twins):
    first = _first_path(twins.root)
    other = "legacy/invoice_old.py" if first == "billing/invoice.py" else "billing/invoice.py"
    assert _first_path(twins.root, ((first, uptake_prior.FLOOR), (other, uptake_prior.CEILING))) == other
    assert _first_path(twins.root) == first  # nothing stays in force after the request
    assert uptake_prior.factor(first) == 1.0


def test_kept_factors_are_read_only_when_the_setting_is_on(twins):
    root = twins.root
    uptake_prior.save(root, (("legacy/invoice_old.py", 2.0), ("billing/invoice.py", 0.5)))
    off = SearchRequest.from_settings(config.load(root, environ=LEXICAL), root, "invoice")
    on = SearchRequest.from_settings(config.load(root, environ={**LEXICAL, "PAQAD_RAG_UPTAKE_PRIOR": "true"}), root, "invoice")
    assert off.file_prior == ()
    assert dict(on.file_prior) == {"legacy/invoice_old.py": 2.0, "billing/invoice.py": 0.5}
    assert SearchRequest.from_wire(json.loads(json.dumps(on.to_wire()))).file_prior == on.file_prior


def test_a_crafted_or_linked_prior_file_gives_nothing_unsafe(twins, tmp_path):
    root = twins.root
    target = workspace.state_dir(root) / uptake_prior.FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"factors": [["/etc/passwd", 2.0], ["../x.py", 2.0], ["a.py", 1e9], ["b.py", float("nan")],
                                               ["c.py", "2"], "junk", ["billing/invoice.py", 0.5]]}))
    assert uptake_prior.load(root) == (("billing/invoice.py", 0.5),)
    target.write_text("not json")
    os.utime(target, ns=(1, 1))
    assert uptake_prior.load(root) == ()
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"factors": [["billing/invoice.py", 0.5]]}))
    target.unlink()
    target.symlink_to(real)
    assert uptake_prior.load(root) == ()


def test_the_setting_is_documented_off():
    from paqad.settings import SETTINGS

    assert SETTINGS["rag_uptake_prior"].default is False


def test_paqad_report_learns_the_prior_from_real_hook_turns(repo, paqad_cli, tmp_path, monkeypatch):
    """Two Claude Code turns through the installed prompt hook: each time the agent leaves the
    delivered ledger alone and opens the tax file itself. With ``rag_uptake_prior`` on, ``paqad
    report`` learns that, keeps it per developer, and the next search carries it."""
    from testing.hosts import host_json, run_host

    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")
    repo.write("books/ledger.py", 'def reconcile_quarterly_ledger(entries):\n    """Match invoices at quarter end."""\n    return entries\n')
    repo.write("books/tax.py", 'def vat_for(amount):\n    """Value added tax on an amount."""\n    return amount * 0.2\n')
    repo.commit("books")
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    log = tmp_path / "session.jsonl"
    log.write_text("", encoding="utf-8")
    tax = str(repo.root / "books" / "tax.py")
    for n in (1, 2):
        data = host_json("claude", "prompt", cwd=repo.root, prompt="how do we reconcile the quarterly ledger", session_id="s-1")
        data["transcript_path"] = str(log)
        done = run_host(repo.root, "claude", stdin=json.dumps(data))
        assert done.returncode == 0 and "books/ledger.py" in done.stdout, done.stderr
        with log.open("a", encoding="utf-8") as out:
            block = {"type": "tool_use", "id": f"r{n}", "name": "Read", "input": {"file_path": tax}}
            out.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}}) + "\n")
    off = paqad_cli("report", "--json", cwd=repo.root)
    assert off.returncode == 0 and "file_prior" not in json.loads(off.stdout)
    assert uptake_prior.load(repo.root) == ()
    on = paqad_cli("report", "--json", cwd=repo.root, env={"PAQAD_RAG_UPTAKE_PRIOR": "true"})
    assert on.returncode == 0, on.stderr
    assert json.loads(on.stdout)["file_prior"] == {"files": 2, "lifted": 1, "lowered": 1}
    factors = dict(uptake_prior.load(repo.root))
    assert factors["books/tax.py"] == pytest.approx(3 ** 0.5, abs=1e-3)  # missed twice: (0 + 2 + 1) / (0 + 1)
    assert factors["books/ledger.py"] == pytest.approx((1 / 3) ** 0.5, abs=1e-3)  # ignored twice
    cfg = config.load(repo.root, environ={"PAQAD_RAG_UPTAKE_PRIOR": "true"})
    assert dict(SearchRequest.from_settings(cfg, repo.root, "ledger").file_prior) == factors
