"""Smoke test of the benchmark scorer (benchmarks/scoring.py + score.py).

The arithmetic is asserted on hand-made outcomes, so a wrong MRR or a too-lenient HIT RULE fails
here rather than silently moving every published number. Then a tiny corpus and ruler run end to
end through paqad-lexical and grep (bm25 lives in the optional ``bench`` extra, the peer needs its
own venv and the network, so neither runs here).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import score, scoring
from benchmarks.scoring import Answer, Expected, Passage, Question

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

# --------------------------------------------------------------------------- HIT RULE

ANSWER = Expected("pkg/mod.py", 10, 19)  # a 10-line function


def test_exact_span_hits():
    assert scoring.unit_hit(Passage("pkg/mod.py", 10, 19), ANSWER)


def test_whole_file_span_is_rejected_but_counts_at_file_level():
    whole = Passage("pkg/mod.py", 1, 200)
    assert not scoring.unit_hit(whole, ANSWER)
    assert scoring.file_hit(whole, ANSWER)


def test_overlap_must_be_half_the_shorter_span():
    assert scoring.unit_hit(Passage("pkg/mod.py", 15, 24), ANSWER)  # 5 of 10 lines shared
    assert not scoring.unit_hit(Passage("pkg/mod.py", 16, 25), ANSWER)  # 4 of 10
    assert scoring.unit_hit(Passage("pkg/mod.py", 12, 13), ANSWER)  # a short part inside it


def test_result_span_cap_is_four_times_plus_twenty():
    assert scoring.unit_hit(Passage("pkg/mod.py", 1, 60), ANSWER)  # 60 = 4 * 10 + 20
    assert not scoring.unit_hit(Passage("pkg/mod.py", 1, 61), ANSWER)


def test_other_path_never_hits():
    assert not scoring.unit_hit(Passage("pkg/other.py", 10, 19), ANSWER)
    assert not scoring.file_hit(Passage("pkg/other.py", 10, 19), ANSWER)


def test_first_rank_respects_k():
    miss = Passage("pkg/other.py", 1, 5)
    results = [miss] * 10 + [Passage("pkg/mod.py", 10, 19)]
    assert scoring.first_rank(results, [ANSWER], k=10) is None
    assert scoring.first_rank(results, [ANSWER], k=11) == 11


# --------------------------------------------------------------------------- metrics


def _row(q: Question, ans: Answer, ms: float = 1.0) -> dict:
    return scoring.question_row(q, "tiny", "fake", ans, 10, ms)


def _known_rows() -> list[dict]:
    miss, hit = Passage("pkg/other.py", 1, 5, 100), Passage("pkg/mod.py", 10, 19, 300)
    q = lambda i: Question(f"q{i}", "?", "plain", [ANSWER])  # noqa: E731
    r = lambda i: Question(f"r{i}", "?", "plain", [], refusal=True)  # noqa: E731
    return [
        _row(q(1), Answer([hit], False)),  # unit rank 1
        _row(q(2), Answer([miss, hit], False)),  # unit rank 2
        _row(q(3), Answer([], True)),  # silent on an answerable question
        _row(q(4), Answer([Passage("pkg/mod.py", 1, 400, 0)], False)),  # whole file: file hit only
        _row(r(1), Answer([], True)),  # silence kept
        _row(r(2), Answer([miss], False)),  # answered an unanswerable question
    ]


def test_metric_arithmetic_on_known_outcomes():
    rows = _known_rows()
    assert [r["unit_rank"] for r in rows[:4]] == [1, 2, None, None]
    assert [r["file_rank"] for r in rows[:4]] == [1, 2, None, 1]
    m = scoring.metrics(rows)
    assert (m["n"], m["n_refusal"]) == (4, 2)
    assert m["unit_hit1"] == pytest.approx(1 / 4)
    assert m["unit_hit3"] == pytest.approx(2 / 4)
    assert m["unit_mrr"] == pytest.approx((1 + 0.5) / 4)
    assert m["file_hit1"] == pytest.approx(2 / 4)
    assert m["file_mrr"] == pytest.approx((1 + 0.5 + 1) / 4)
    assert m["unit_wrong"] == pytest.approx(1 / 4)  # q4 answered, no unit hit
    assert m["file_wrong"] == 0.0
    assert m["silent_answerable"] == pytest.approx(1 / 4)
    assert m["silence"] == pytest.approx(1 / 2)
    assert m["chars"] == pytest.approx((300 + 400 + 0 + 0 + 0 + 100) / 6)


def test_hit_at_rank_two_gives_mrr_one_half():
    rows = _known_rows()[1:2]
    m = scoring.metrics(rows)
    assert (m["unit_mrr"], m["unit_hit1"], m["unit_hit3"]) == (0.5, 0.0, 1.0)


def test_empty_groups_print_a_dash():
    rows = [r for r in _known_rows() if not r["refusal"]]
    assert scoring.metrics(rows)["silence"] is None
    table = scoring.metrics_table(rows, ("retriever",))
    assert "| fake | 4 / 0 | 0.250 | 0.500 | 0.375 |" in table
    assert table.splitlines()[0].count("**file") == 3


def test_diff_lists_only_changed_questions():
    a = _known_rows()
    b = [dict(r) for r in a]
    b[1]["unit_rank"] = 1
    lines = scoring.diff_rows(a, b)
    assert len(lines) == 1 and "q2" in lines[0] and "unit@2" in lines[0] and "unit@1" in lines[0]


def test_content_words_drop_short_and_function_words():
    assert scoring.content_words("Where is the Session cookie signed? Signed!") == ["session", "cookie", "signed"]


# --------------------------------------------------------------------------- end to end

FILES = {
    "shop/sessions.py": '''\
"""Session handling for the shop."""

import hashlib
import hmac


def sign_cookie(value: str, secret: bytes) -> str:
    """Sign the session cookie value with the secret key so it cannot be forged."""
    mac = hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()
    return f"{value}.{mac}"


def load_session(cookie: str, secret: bytes) -> dict:
    """Read the session back from a signed cookie, or start an empty one."""
    value, _, _mac = cookie.rpartition(".")
    if sign_cookie(value, secret) != cookie:
        return {}
    return {"user": value}
''',
    "shop/payments.py": '''\
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


def refund_payment(payment_id: str) -> str:
    """Give the customer their money back for a captured payment."""
    return f"refund:{payment_id}"
''',
    "shop/inventory.py": '''\
"""Warehouse stock levels."""

STOCK: dict[str, int] = {}


def reserve_stock(sku: str, quantity: int) -> bool:
    """Hold warehouse stock for an order until the parcel ships."""
    if STOCK.get(sku, 0) < quantity:
        return False
    STOCK[sku] -= quantity
    return True


def release_stock(sku: str, quantity: int) -> None:
    """Put held stock back on the shelf when an order is cancelled."""
    STOCK[sku] = STOCK.get(sku, 0) + quantity
''',
    "shop/mailer.py": '''\
"""Customer e-mail."""


def send_receipt(address: str, order_id: str) -> str:
    """E-mail the order receipt to the customer after checkout."""
    return render_template("receipt", {"to": address, "order": order_id})


def render_template(name: str, fields: dict) -> str:
    """Fill a mail template with the order fields."""
    return name + ":" + ",".join(f"{k}={v}" for k, v in sorted(fields.items()))
''',
}


def _span(path: str, name: str) -> list[int]:
    """The ruler span of a top-level def, as check_rulers.py would accept it."""
    for node in ast.parse(FILES[path]).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [node.lineno, node.end_lineno]
    raise KeyError(name)


RULER = {
    "corpus": "tiny",
    "questions": [
        {"id": "tiny-1", "q": "where is the session cookie signed with the secret key", "style": "plain",
         "answers": [{"path": "shop/sessions.py", "lines": _span("shop/sessions.py", "sign_cookie")}]},
        {"id": "tiny-2", "q": "retry a declined card charge with backoff", "style": "plain",
         "answers": [{"path": "shop/payments.py", "lines": _span("shop/payments.py", "retry_charge")}]},
        {"id": "tiny-3", "q": "hold warehouse stock until the parcel ships", "style": "plain",
         "answers": [{"path": "shop/inventory.py", "lines": _span("shop/inventory.py", "reserve_stock")}]},
    ],
}
REFUSAL = {
    "corpus": "refusal",
    "questions": [
        {"id": "refusal-1", "q": "how are GPU shaders compiled for the graphics pipeline", "style": "plain", "answers": []},
        {"id": "refusal-2", "q": "which kernel driver powers the bluetooth radio", "style": "plain", "answers": []},
    ],
}


@pytest.fixture
def tiny(repo) -> score.Corpus:
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("tiny shop")
    questions = scoring.questions_from_ruler(RULER) + scoring.questions_from_ruler(REFUSAL)
    return score.Corpus("tiny", "1", "sha256:test", repo.root, questions, True)


def test_ruler_dicts_become_questions(tiny):
    assert [q.id for q in tiny.questions] == ["tiny-1", "tiny-2", "tiny-3", "refusal-1", "refusal-2"]
    assert [q.refusal for q in tiny.questions] == [False, False, False, True, True]
    assert tiny.questions[0].answers == [Expected("shop/sessions.py", 7, 10)]


def test_grep_end_to_end(tiny):
    rows, stats = score.run_retriever(score.REGISTRY["grep"](10), [tiny], 10)
    by_id = {r["id"]: r for r in rows}
    assert len(rows) == 5 and not stats.failures
    for qid in ("tiny-1", "tiny-2", "tiny-3"):  # each question's words are densest in its file
        assert by_id[qid]["file_rank"] == 1 and not by_id[qid]["silent"]
    assert by_id["tiny-1"]["top3"][0] == ["shop/sessions.py", 1, len(FILES["shop/sessions.py"].splitlines())]
    assert by_id["refusal-1"]["silent"] and by_id["refusal-1"]["chars"] == 0  # no word occurs
    assert by_id["tiny-1"]["chars"] > 0
    m = scoring.metrics(rows)
    assert m["file_hit1"] == 1.0 and m["silence"] is not None


def test_paqad_lexical_end_to_end(tiny):
    rows, stats = score.run_retriever(score.REGISTRY["paqad-lexical"](10), [tiny], 10)
    assert len(rows) == 5 and not stats.failures and not any(r.get("error") for r in rows)
    assert (tiny.root / ".paqad").is_dir()  # the index lands in the corpus root
    by_id = {r["id"]: r for r in rows}
    assert by_id["tiny-1"]["unit_rank"] == 1 and by_id["tiny-1"]["top3"][0][:2] == ["shop/sessions.py", 7]
    for r in rows:
        assert r["silent"] == (r["n_results"] == 0)
        assert set(r) >= {"id", "corpus", "style", "retriever", "silent", "unit_rank", "file_rank", "top3", "chars", "ms"}
    table = scoring.metrics_table(rows, ("retriever", "corpus"))
    assert "| paqad-lexical | tiny | 3 / 2 |" in table


def test_probe_is_never_silent(tiny):
    rows, _ = score.run_retriever(score.REGISTRY["paqad-probe"](10), [tiny], 10)
    assert not any(r["silent"] for r in rows)


# --------------------------------------------------------------------------- run output stays out of git

REPO = BENCH.parent
MAX_TRACKED = 200 * 1024  # a summary is a few KB; a ruler or lock file well under this
PROSE = {"benchmarks/README.md"}  # the write-up of every figure: long, but text


def _tracked(under: str) -> list[str] | None:
    done = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--", under], capture_output=True, text=True)
    return [p for p in done.stdout.split("\0") if p] if done.returncode == 0 and done.stdout else None


def test_no_run_logs_are_tracked():
    files = _tracked("benchmarks")
    if files is None:
        pytest.skip("not a git checkout")
    assert not [p for p in files if p.endswith(".jsonl")], "per-query rows belong under benchmarks/.cache/results/"
    assert not [p for p in files if p.startswith("benchmarks/results/")]
    large = [(p, (REPO / p).stat().st_size) for p in files if p not in PROSE and (REPO / p).is_file()]
    assert [x for x in large if x[1] > MAX_TRACKED] == []


def test_scripts_write_rows_under_the_ignored_cache():
    from benchmarks import combined_table, descriptions_eval, semble, speed, summarize, swebench

    cache = (BENCH / ".cache").resolve()
    for module in (score, semble, speed, swebench, descriptions_eval, combined_table, summarize):
        assert cache in Path(module.RESULTS).resolve().parents, module.__name__
    if _tracked("benchmarks") is not None:
        probe = str(summarize.RESULTS / "semble" / "x-gated.jsonl")
        assert subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", probe]).returncode == 0


def test_summaries_name_their_run_and_headline():
    from benchmarks import summarize

    paths = sorted(summarize.SUMMARIES.glob("2*.json"))
    assert paths
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["run"] == path.stem and data["kind"] in ("semble", "swebench", "speed", "rulers", "all_rulers")
        assert data["headline"] and "date" in data and "command" in data and data["raw"]["files"]


def test_published_table_rebuilds_from_summaries(monkeypatch, tmp_path, capsys):
    """docs/benchmarks.md's "Every ruler in one table": its command, run on the summaries alone, prints its lines."""
    from benchmarks import combined_table

    readme = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    m = re.search(r"benchmarks combined_table --lexical (\S+) --hybrid (\S+)\s+--rulers (\S+) --swe ([^`\s]+)", readme)
    assert m, "docs/benchmarks.md no longer shows the combined_table command"
    monkeypatch.setattr(combined_table, "RESULTS", tmp_path)  # no rows at hand: summaries only
    monkeypatch.setattr(sys, "argv", ["combined_table.py", "--lexical", m[1], "--hybrid", m[2], "--rulers", m[3], "--swe", m[4]])
    assert combined_table.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 20
    assert [line for line in lines[2:] if line not in readme] == []


def test_python_m_benchmarks_lists_and_runs_the_scripts():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "benchmarks", "list"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    names = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")}
    assert {"score", "semble", "swebench", "speed", "summarize", "combined_table", "corpora"} <= names
    assert "scoring" not in names and "scoring" in done.stdout  # shared code, listed apart
    done = subprocess.run([sys.executable, "-m", "benchmarks", "combined-table", "--help"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--lexical" in done.stdout
    done = subprocess.run([sys.executable, "-m", "benchmarks", "scor"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "did you mean score" in done.stderr
