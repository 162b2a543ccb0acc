"""A first index the user does not wait for (issue 34): ``rag init`` says what already works as
it happens (lexical search, stand-in vectors, the model's vectors), with a time left computed from
the throughput it observes, and ``rag status`` carries the same facts. The installed CLI, a real
git repository, the real packaged models; the estimator's arithmetic on a fake clock. No timed
assertions: speed is measured in benchmarks/first_index.py."""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import pty
import struct
import subprocess
import termios
from pathlib import Path
from typing import Any

import pytest

from paqad import config
from paqad.cli import progress
from paqad.index import timeline
from paqad.index.embedding import interim
from paqad.index.writing import build
from testing.env import paqad_exe
from testing.repos import CARDS, Repo


def _helpers(n: int) -> str:
    return "\n\n".join(f"def helper_{i}(value):\n    \"\"\"Scale value by {i}.\"\"\"\n    return value * {i}\n" for i in range(n))


@pytest.fixture
def many(repo: Repo) -> Repo:
    """Over ``interim.MIN_UNITS`` units, so a first index makes stand-in vectors before the model's."""
    repo.write("shop/cards.py", CARDS)
    for part in range(3):
        repo.write(f"shop/helpers_{part}.py", _helpers(100).replace("helper_", f"helper{part}_"))
    repo.commit("many units")
    return repo


# -- the estimator: observed throughput, pure arithmetic ---------------------------------------


def test_the_rate_is_the_units_over_the_recent_window_not_since_the_start() -> None:
    # a slow start (the model loading: 64 units in 10 s), then 64 units every 2 s
    samples = [(0.0, 0), (10.0, 64)] + [(10.0 + 2 * k, 64 + 64 * k) for k in range(1, 21)]
    assert timeline.throughput(samples, window=30.0) == pytest.approx(32.0)
    assert timeline.throughput(samples[:2]) == pytest.approx(6.4)  # one batch: what it took, load included
    assert timeline.throughput(samples[:1]) is None  # nothing observed yet
    assert timeline.throughput([(0.0, 0), (5.0, 0)]) is None  # nothing moved


def test_a_machine_that_slows_down_is_followed_within_the_window() -> None:
    fast = [(float(t), 40 * t) for t in range(0, 61)]  # 40 units/s for a minute
    slow = [(60.0 + 4 * k, 2400 + 40 * k) for k in range(1, 16)]  # then 10 units/s (load)
    assert timeline.throughput(fast + slow, window=30.0) == pytest.approx(10.0)
    assert timeline.seconds_left(2400 + 40 * 15, 4000, 10.0) == pytest.approx(100.0)
    assert timeline.seconds_left(10, 10, None) == 0.0 and timeline.seconds_left(0, 10, None) is None


def test_the_time_left_follows_the_work_left_not_the_units_left() -> None:
    # 100 long texts (work 1,000 each) embed first, then 100 short ones (work 250 each)
    cum = list(itertools.accumulate([1000] * 100 + [250] * 100, initial=0))
    samples = [(float(t), 20 * t) for t in range(4)]  # 60 long units in 3 s: 20,000 of work a second
    assert timeline.work_seconds_left(samples, cum) == pytest.approx((40 * 1000 + 100 * 250) / 20_000)
    assert timeline.seconds_left(60, 200, timeline.throughput(samples)) == pytest.approx(7.0)  # by units: twice as long
    assert timeline.work_seconds_left(samples[:1], cum) is None


def test_the_line_says_estimating_until_a_rate_is_known() -> None:
    d = {
        "units": 2181, "embedder": "all-MiniLM-L6-v2", "state": "running", "done": 0, "total": 2181, "cached": 0,
        "rate": None, "rate_source": None, "eta_seconds": None, "stopped": None,
        "ready": {"lexical": True, "hybrid_interim": True, "full": False},
        "seconds_to": {"lexical": 1.4, "hybrid_interim": 3.0, "full": None},
    }
    assert progress.stages_text(d) == "lexical search ready (2,181 units, 1.4 s) · stand-in vectors ready (3.0 s) · full vectors 0/2,181, estimating…"
    d |= {"done": 640, "rate": 41.0, "rate_source": "observed", "eta_seconds": 37.6}
    assert progress.stages_text(d).endswith("· full vectors 640/2,181, ~37.6 s left at 41 units/s")
    # a narrow terminal keeps the fill's figures and drops the times of the stages done
    assert progress.stages_text(d, compact=True) == "lexical ✓ · stand-ins ✓ · full vectors 640/2,181, ~37.6 s left at 41 units/s"


# -- the CLI: the stage line and rag status ----------------------------------------------------


def test_rag_init_says_what_works_stage_by_stage_and_status_says_full(many: Repo, paqad_cli: Any, default_provider: None) -> None:
    done = paqad_cli("rag", "init", cwd=many.root)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("lexical search ready (")]
    # one line per stage change (stderr is a pipe): lexical, stand-ins, the first measured rate, full
    assert "full vectors 0/" in lines[0] and "estimating…" in lines[0] and "stand-in" not in lines[0]
    assert "stand-in vectors ready (" in lines[1]
    measured = next(ln for ln in lines if "units/s" in ln)
    assert lines.index(measured) > 1 and "s left at " in measured
    assert "full vectors ready (" in lines[-1] and len(lines) == len(set(lines))

    data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
    assert data["kind"] == "init" and data["state"] == "done" and data["stage"] == "full"
    assert data["ready"] == {"lexical": True, "hybrid_interim": True, "full": True}
    took = data["seconds_to"]
    assert 0 < took["lexical"] <= took["hybrid_interim"] <= took["full"]
    assert data["ready_at"]["full"] >= data["ready_at"]["lexical"] > "2026"
    assert data["rate"] > 0 and data["rate_source"] == "observed" and data["eta_seconds"] == 0
    assert data["done"] == data["total"] == data["units"] > 256 and data["cpu_seconds"] > 0
    text = paqad_cli("rag", "status", cwd=many.root).stdout
    assert "last init (" in text and "full vectors ready (" in text


def test_on_a_terminal_the_line_is_redrawn_in_place_and_stdout_keeps_the_json(many: Repo, default_provider: None) -> None:
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # 80 columns: the line must fit
    proc = subprocess.Popen([paqad_exe(), "rag", "init", "--json"], cwd=many.root, stdout=subprocess.PIPE, stderr=child, text=True)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(main)
    assert proc.returncode == 0
    frames = seen.decode().split("\r\x1b[K")[1:]
    assert frames and all(f.startswith("lexical ") and len(f.rstrip()) < 80 for f in frames)
    assert frames[-1].rstrip().endswith(")") and "full vectors ready (" in frames[-1] and seen.endswith(b"\r\n")
    assert any("units/s" in f for f in frames) and any("stand-in" in f for f in frames)
    assert frames[0].startswith("lexical search ready (") and frames[-1].startswith("lexical ✓ · stand-ins ✓ · ")  # too wide: compact
    assert json.loads(out)["timeline"]["stage"] == "full"  # stdout holds the JSON alone


def test_status_mid_fill_carries_stage_rate_and_time_left(many: Repo, paqad_cli: Any) -> None:
    """During the model's fill (this process builds; the CLI reads the record it writes)."""
    cfg = config.load(many.root, cli_overrides={"rag_embedding_provider": "local"}, environ={})
    seen: list[dict] = []

    def during_fill(done: int, total: int) -> None:
        if done < total and len(seen) < 2:
            seen.append(json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout))

    build.build_full(many.root, cfg, progress=during_fill, kind="init")
    assert seen, "the fill took one batch only"
    mid = seen[-1]["timeline"]
    assert mid["state"] == "running" and mid["stage"] == "hybrid_interim" and mid["ready"] == {"lexical": True, "hybrid_interim": True, "full": False}
    assert 0 < mid["done"] < mid["total"] and mid["rate"] > 0 and mid["rate_source"] == "observed" and mid["eta_seconds"] > 0
    assert mid["ready_at"]["full"] is None and mid["seconds_to"]["full"] is None
    assert interim.MIN_UNITS <= mid["units"]


def test_the_next_fill_starts_from_the_rate_the_last_one_measured(many: Repo, paqad_cli: Any, default_provider: None, tmp_path: Path) -> None:
    assert paqad_cli("rag", "init", cwd=many.root).returncode == 0
    # the user cache off: every unit goes through the model again
    again = paqad_cli("-c", "rag_embedding_cache_mb=0", "rag", "rebuild", cwd=many.root)
    assert again.returncode == 0, again.stderr
    first = next(ln for ln in again.stderr.splitlines() if ln.startswith("lexical search ready ("))
    assert "estimating" not in first and "units/s (the last fill's rate)" in first
    data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
    assert data["kind"] == "rebuild" and data["stage"] == "full"
    # another repository on this machine: its first index starts from the rate measured here
    other = Repo.init(tmp_path / "other")
    other.write("lib/scale.py", _helpers(300).replace("helper_", "scale_"))
    other.commit("other")
    new = paqad_cli("rag", "init", cwd=other.root)
    assert new.returncode == 0, new.stderr
    line = next(ln for ln in new.stderr.splitlines() if ln.startswith("lexical search ready ("))
    assert "estimating" not in line and "s left at " in line and "units/s (the last fill's rate)" in line


def test_background_init_hands_the_timeline_to_its_fill(many: Repo, paqad_cli: Any, default_provider: None) -> None:
    init = paqad_cli("rag", "init", "--background", "--json", cwd=many.root)
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout)["timeline"]["ready"]["lexical"] is True
    assert [ln for ln in init.stderr.splitlines() if ln.startswith("lexical search ready (")]
    for _ in range(600):
        data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
        assert {"stage", "done", "total", "rate", "eta_seconds", "ready", "ready_at", "seconds_to"} <= set(data)
        if data["state"] != "running":
            break
        subprocess.run(["sleep", "0.5"], check=True)
    assert data["state"] == "done" and data["ready"]["full"] and data["seconds_to"]["full"] >= data["seconds_to"]["lexical"]
    assert data["rate_source"] == "observed"  # measured by the background fill, which carried the record on


def test_a_lexical_only_index_is_full_at_once(many: Repo, paqad_cli: Any) -> None:
    done = paqad_cli("rag", "init", "--provider", "none", cwd=many.root)
    assert done.returncode == 0
    assert [ln for ln in done.stderr.splitlines() if ln.startswith("lexical search ready (")] and "full vectors" not in done.stderr
    data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
    assert data["stage"] == "full" and data["embedder"] is None and data["seconds_to"]["full"] == data["seconds_to"]["lexical"]


def test_a_fill_killed_midway_reads_as_stopped_and_the_update_carries_it_on(many: Repo, paqad_cli: Any, default_provider: None) -> None:
    proc = subprocess.Popen([paqad_exe(), "rag", "init"], cwd=many.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if "units/s" in line:  # the model's fill is under way
            break
    proc.kill()
    proc.communicate(timeout=60)
    data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
    assert data["state"] == "stopped" and "paqad rag update" in data["stopped"] and data["ready"]["full"] is False
    assert data["done"] < data["total"] and data["seconds_to"]["lexical"] is not None
    assert "stopped (" in paqad_cli("rag", "status", cwd=many.root).stdout

    assert paqad_cli("rag", "update", cwd=many.root).returncode == 0
    data = json.loads(paqad_cli("rag", "status", "--json", cwd=many.root).stdout)["timeline"]
    assert data["state"] == "done" and data["ready"]["full"] and data["kind"] == "init"
