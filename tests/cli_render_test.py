"""``rag search`` for people: a few results, ``matched`` in the query's own words, ``NO_COLOR``;
``--json`` keeps the versioned shape (every result, stems and fields)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest

from testing.env import paqad_exe
from testing.repos import Repo, make_shop

COUPONS = "\n\n".join(
    f"def apply_coupon_{n}(cart_total: int) -> int:\n    '''Apply the seasonal coupon number {n} to the cart total.'''\n    return cart_total - {n}\n" for n in range(12)
)
# Unrelated units, so that "coupon" names few of all units (a word in most units is no evidence).
TOPICS = ["invoice", "parcel", "ledger", "warehouse", "courier", "refund", "tax", "receipt", "supplier", "stock"]
OTHERS = "\n\n".join(
    f"def handle_{t}_{n}(record: dict) -> dict:\n    '''Process one {t} record, variant {n}.'''\n    return record\n" for t in TOPICS for n in range(12)
)
QUESTION = "where are seasonal coupons applied to the cart"


@pytest.fixture
def coupons(repo: Repo, paqad_cli: Any) -> Repo:
    make_shop(repo, commit=False)
    repo.write("shop/coupons.py", COUPONS)
    repo.write("shop/records.py", OTHERS)
    repo.commit("coupons")
    assert paqad_cli("rag", "init", "--provider", "none", cwd=repo.root).returncode == 0
    return repo


def _heads(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1].isdigit() and ". " in line[:4]]


def test_people_get_five_results_and_json_gets_them_all(coupons: Repo, paqad_cli: Any) -> None:
    full = json.loads(paqad_cli("rag", "search", QUESTION, "--json", cwd=coupons.root).stdout)
    assert len(full["results"]) > 5
    text = paqad_cli("rag", "search", QUESTION, cwd=coupons.root).stdout
    assert len(_heads(text)) == 5
    assert f"({len(full['results']) - 5} more: --show 0 prints them all" in text
    wide = paqad_cli("rag", "search", QUESTION, "--show", "0", cwd=coupons.root).stdout
    assert len(_heads(wide)) == len(full["results"]) and "more: --show" not in wide
    assert len(_heads(paqad_cli("rag", "search", QUESTION, "--show", "7", cwd=coupons.root).stdout)) == 7


def test_matched_shows_the_query_words_without_stems_or_filler(coupons: Repo, paqad_cli: Any) -> None:
    full = json.loads(paqad_cli("rag", "search", QUESTION, "--json", cwd=coupons.root).stdout)
    assert {"coupon", "appli"} <= set(full["results"][0]["matched_terms"])  # --json: the stems, as before
    text = paqad_cli("rag", "search", QUESTION, cwd=coupons.root).stdout
    matched = [line.strip() for line in text.splitlines() if line.strip().startswith("matched:")]
    assert matched and all("coupons (" in m and "applied (" in m for m in matched[:3]), matched
    for line in matched:
        words = {w.split(" (")[0] for w in line.removeprefix("matched: ").split(", ")}
        assert not words & {"where", "are", "the", "to", "coupon", "appli"}, line  # no stems, no filler


def _on_a_terminal(root: Path, env: dict[str, str]) -> str:
    """Run `rag search` with stdout on a pseudo-terminal (so click keeps styles) and read it all."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([paqad_exe(), "rag", "search", QUESTION], cwd=root, stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode()


def test_no_color_is_honoured_on_a_terminal(coupons: Repo) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    styled = _on_a_terminal(coupons.root, env)
    assert "\x1b[1m" in styled and "apply_coupon" in styled
    plain = _on_a_terminal(coupons.root, {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in plain and "apply_coupon" in plain


# ---- issue 34 item 6: output that does not contradict itself ---------------------------------------


def test_a_refusal_is_sentences_with_what_it_needed_not_python_dicts(coupons: Repo, paqad_cli: Any) -> None:
    text = paqad_cli("rag", "search", "kubernetes helm chart values", cwd=coupons.root).stdout
    data = json.loads(paqad_cli("rag", "search", "kubernetes helm chart values", "--json", cwd=coupons.root).stdout)["diagnosis"]
    assert text.startswith(f"No passage answers this ({data['reason']}).")
    assert "{" not in text and "': " not in text, text  # no Python dict
    assert f"(needed {data['bars']['coverage']:.0%})" in text


def test_the_terminal_never_says_no_query_word_when_json_lists_matched_terms() -> None:
    from paqad.cli import render
    from paqad.search.pipeline import Result

    result = Result(id="a.py::proxy", path="a.py", language="python", kind="function", name="select_proxy", qualified_name="select_proxy",
                    signature="def select_proxy(url, proxies)", start_line=1, end_line=2, score=0.5, signals={"cosine": 0.41},
                    matched_terms={"proxi": "name", "url": "signature"})
    line = render._matched(result, {"kubernet": "kubernetes"})
    assert "no query word" not in line and "proxi (name)" in line and "url (signature)" in line


def test_help_lists_whole_summaries_and_a_mistyped_command_names_the_right_one(paqad_cli: Any, tmp_path: Path) -> None:
    listing = paqad_cli("--help", cwd=tmp_path, env={"COLUMNS": "100"}).stdout
    assert "..." not in listing.split("Commands:")[1] and "which paqad ran, and whether the host will run the hook." in " ".join(listing.split())
    rag = paqad_cli("rag", "--help", cwd=tmp_path).stdout
    assert "..." not in rag.split("Commands:")[1]
    typo = paqad_cli("rag", "serch", "x", cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'search'?" in typo.stderr
