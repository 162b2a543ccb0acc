"""benchmarks/all_rulers.py: the half rule, the table's arithmetic on hand-made rows, loading an
OUTSIDE.md case file, and one real run (lexical) on a tiny repository with one answerable and one
unanswerable case."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from benchmarks import all_rulers, corpora
from benchmarks import all_rulers_cases as cases
from benchmarks import all_rulers_table as table

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

# --------------------------------------------------------------------------- the half rule


def test_half_is_the_outside_rule_for_every_ruler():
    for ruler, cid in [("flask", "flask-001"), ("refusal", "refusal-003"), ("arb-trace2code", "x-17"), ("semble", "flask#4")]:
        even = int(hashlib.sha256(f"{ruler}:{cid}".encode()).hexdigest()[:8], 16) % 2 == 0
        assert cases.half_of(ruler, cid) == ("tune" if even else "report")
    assert cases.half_of("flask", "flask-001") == "report" and cases.half_of("flask", "flask-002") == "tune"
    halves = {cases.half_of("r", str(i)) for i in range(20)}
    assert halves == {"tune", "report"}


# --------------------------------------------------------------------------- table arithmetic


def row(ruler: str, answerable: bool, answered: bool, gated: int | None = None, ungated: int | None = None, *,
        level: str = "unit", tokens: int = 0, ndcg: float = 0.0, half: str = "tune", language: str = "python") -> dict:
    ranks = {"unit_rank": None, "file_rank": None}
    key = "unit_rank" if level == "unit" else "file_rank"
    return {"ruler": ruler, "id": f"{ruler}-{id(ranks)}", "language": language, "half": half, "answerable": answerable,
            "level": level if answerable else None, "answered": answered, "tokens": tokens if answered else 0,
            "gated": {**ranks, key: gated}, "ungated": {**ranks, key: ungated, "ndcg10": ndcg}}


ROWS = [
    # ruler a: 4 answerable (3 answered: ranks 1, 2, none), 2 unanswerable (1 silent)
    row("a", True, True, 1, 1, tokens=100, ndcg=1.0),
    row("a", True, True, 2, 1, tokens=300, ndcg=1.0),
    row("a", True, True, None, 3, tokens=200, ndcg=0.5),
    row("a", True, False, None, 2, ndcg=0.0),
    row("a", False, False),
    row("a", False, True, tokens=400),
    # ruler b: file-level cases only, 2 answerable, both answered at rank 1
    row("b", True, True, 1, 1, level="file", tokens=1000, ndcg=1.0, half="report", language="go"),
    row("b", True, True, 1, 2, level="file", tokens=1000, ndcg=0.0, half="report", language="go"),
]


def test_metrics_of_one_ruler():
    m = table.metrics(ROWS[:6])
    assert (m["n_answerable"], m["n_unanswerable"]) == (4, 2)
    assert m["answered"] == 0.75 and m["silence"] == 0.5
    assert m["mrr"] == pytest.approx((1 + 0.5 + 0) / 3)  # over the 3 answered, not the 4 answerable
    assert m["hit1_gated"] == 0.25 and m["hit1_ungated"] == 0.5
    assert m["delivered"] == 0.5  # ranks 1 and 2 delivered; the third answered case's target was not among its passages
    assert m["ndcg_ungated"] == pytest.approx(2.5 / 4)
    assert m["tokens"] == pytest.approx((100 + 300 + 200 + 400) / 4)  # every answered case, the unanswerable one too


def test_file_level_rank_when_no_lines():
    m = table.metrics(ROWS[6:])
    assert m["mrr"] == 1.0 and m["hit1_gated"] == 1.0 and m["hit1_ungated"] == 0.5 and m["silence"] is None


def test_macro_weighs_rulers_equally_and_pooled_weighs_cases():
    pooled = table.metrics(ROWS)
    assert pooled["answered"] == pytest.approx(5 / 6)
    macro = table.macro({"a": table.metrics(ROWS[:6]), "b": table.metrics(ROWS[6:])})
    assert macro["answered"] == pytest.approx((0.75 + 1.0) / 2)
    assert macro["mrr"] == pytest.approx(((1.5 / 3) + 1.0) / 2)
    assert macro["silence"] == 0.5  # b has no unanswerable case: a's figure alone
    text = table.table(ROWS, "all")
    assert "| ruler a | 4 / 2 | 0.750 | 0.500 | 0.500 | 0.250 | 0.500 | 0.500 | 0.625 | 250 |" in text
    assert "| **all, rulers weighted equally** | 6 / 2 (2 rulers) | 0.875 |" in text
    assert "| language go | 2 / 0 |" in text


def test_half_filters_rows_and_errors_are_left_out():
    assert "ruler a" not in table.table(ROWS, "report") and "ruler b" in table.table(ROWS, "report")
    m = table.metrics([*ROWS[:2], {"ruler": "a", "id": "broken", "error": "boom", "answerable": True}])
    assert m["errors"] == 1 and m["n_answerable"] == 2


# --------------------------------------------------------------------------- loading a case file


def test_outside_case_file_loads(tmp_path):
    path = tmp_path / "mini.jsonl"
    lines = [
        {"ruler": "mini", "id": "1", "corpus": "o__n@0123456789ab", "language": "python", "style": "trace", "q": "boom in f",
         "answerable": True, "answers": [{"path": "a.py", "lines": [3, 9], "name": "f"}, {"path": "b.py", "lines": None}], "half": "tune"},
        {"ruler": "mini", "id": "2", "corpus": "o__n@0123456789ab", "language": "python", "style": "abstention", "q": "GPU shaders",
         "answerable": False, "answers": []},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "\n")
    got = cases.load_case_file(path)
    assert [c.id for c in got] == ["1", "2"]
    assert got[0].answers[0]["lines"] == [3, 9] and got[0].answers[1]["lines"] is None
    assert got[0].level == "unit" and got[1].level is None and not got[1].answerable
    assert got[0].half == cases.half_of("mini", "1")  # the rule, whatever the file says
    path.write_text(json.dumps({**lines[1], "answerable": True}) + "\n")
    with pytest.raises(ValueError):
        cases.load_case_file(path)


# --------------------------------------------------------------------------- one real run

SOURCE = '''\
"""Card payments."""

import time


def retry_charge(card: str, amount: int, attempts: int = 3) -> str:
    """Retry a declined card charge with exponential backoff between attempts."""
    for attempt in range(attempts):
        if charge(card, amount):
            return "ok"
        time.sleep(2 ** attempt)
    raise RuntimeError("card declined")


def charge(card: str, amount: int) -> bool:
    """Ask the card processor for the money."""
    return bool(card) and amount > 0
'''


def test_end_to_end_row_has_gated_and_ungated_ranks(repo, tmp_path):
    repo.write("shop/payments.py", SOURCE)
    repo.write("shop/mailer.py", 'def send_receipt(address: str) -> str:\n    """E-mail the order receipt."""\n    return address\n')
    repo.commit("tiny shop")
    fp, _ = corpora.fingerprint(repo.root)
    sel = cases.Selection()
    sel.corpora["tiny"] = cases.CorpusSource("tiny", fp, cases.copier(repo.root))
    sel.cases = [
        cases.Case("tiny", "t-1", "tiny", "python", "plain", "retry a declined card charge with backoff",
                   [{"path": "shop/payments.py", "lines": [6, 12], "name": "retry_charge"}]),
        cases.Case("tiny", "t-2", "tiny", "python", "abstention", "how are GPU shaders compiled for the graphics pipeline"),
    ]
    out = tmp_path / "rows.jsonl"
    run = all_rulers.Run(dict(all_rulers.LEXICAL), tmp_path / "data", tmp_path / "work")
    rows = all_rulers.run_all(sel, run, out)
    assert "PAQAD_DATA_DIR" not in os.environ  # put back as it was
    saved = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in saved] == ["t-1", "t-2"] == [r["id"] for r in rows]
    hit, miss = saved
    assert hit["answered"] and hit["gated"]["unit_rank"] == 1 and hit["ungated"]["unit_rank"] == 1
    assert hit["gated"]["file_rank"] == 1 and hit["ungated"]["ndcg10"] == 1.0 and hit["tokens"] == round(hit["chars"] / 4) > 0
    assert hit["candidates"][0][:3] == ["shop/payments.py", 6, 12] and hit["evidence"]["passed"]
    assert not miss["answered"] and miss["reason"] and miss["candidates"] is not None and miss["tokens"] == 0
    assert hit["settings"] == {"rag_embedding_provider": "none"} and hit["half"] == cases.half_of("tiny", "t-1")
    assert (tmp_path / "data" / "trees").is_dir() and (tmp_path / "work" / "tiny" / "shop" / "payments.py").is_file()
    assert not hit["index"]["reused"]
    again = all_rulers.run_all(sel, run, tmp_path / "rows2.jsonl")  # same corpus, paqad, settings: the index is reused
    assert again[0]["index"]["reused"] and again[0]["gated"] == hit["gated"]
    stamp = tmp_path / "data" / "stamps" / "tiny.json"
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "seeded": True}))  # as if --seed had made it
    fresh = all_rulers.run_all(sel, run, tmp_path / "rows3.jsonl")
    assert not fresh[0]["index"]["reused"] and json.loads(stamp.read_text())["seeded"] is False


def test_rescore_prints_the_table_of_saved_rows(tmp_path, capsys):
    rows = tmp_path / "20261207T000000Z.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert all_rulers.main(["--rescore", str(rows), "--half", "report", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "half **report**" in out and "| ruler b | 2 / 0 |" in out and "ruler a" not in out


def test_limit_corpora_per_ruler_prefers_corpora_in_use_then_the_smaller():
    noop = cases.copier(Path("/nonexistent"))
    sel = cases.Selection()
    sel.corpora = {k: cases.CorpusSource(k, "sha256:x", noop, files) for k, files in [("big", 900), ("flask", 200), ("small", 10), ("mid", 50)]}
    sel.cases = [cases.Case("flask", "f1", "flask", "python", "plain", "q", [{"path": "a.py", "lines": [1, 2]}])]
    sel.cases += [cases.Case("refusal", "r1", k, "python", "plain", "q") for k in ("big", "flask", "small")]
    sel.cases += [cases.Case("arb-x", str(i), k, "go", "trace", "q", [{"path": "a.go", "lines": None}]) for i, k in enumerate(("big", "mid", "small"))]
    assert cases.parse_limits(["1", "arb-*=2"]) == {"arb-*": 2, "*": 1}
    sel.limit(cases.parse_limits(["1", "arb-*=2"]))
    assert [(c.ruler, c.corpus) for c in sel.cases] == [("flask", "flask"), ("refusal", "flask"), ("arb-x", "mid"), ("arb-x", "small")]
    assert set(sel.corpora) == {"flask", "mid", "small"}
