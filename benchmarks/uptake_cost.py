"""What the uptake record costs a warm prompt (issue 35, item 1), and what ``paqad report`` costs.

    nice -n 10 python -m benchmarks uptake_cost [--corpus flask-3.1.3] [--runs 40] [--json OUT]

On a copy of the corpus (lexical index, ``paqad hooks install --agents claude``) one process plays
the resident service: it answers Claude Code's prompt JSON through ``Repository.hook`` (what the
service runs per request), warm, a different question each time, naming a 5 MB transcript. Runs
alternate between the record on (as shipped) and off (``uptake.record`` replaced by a no-op), so
both arms see the same load; the figure is the difference of their medians (wall and CPU), and
the record's own time measured alone (``record_alone``: one line written, the transcript's
``stat``). Then ``paqad report --json`` is timed over ``--runs`` deliveries, each naming its turn of
one transcript of realistic size (every turn: 40 tool calls with 20 kB results). Prints one JSON
object; raw rows in ``benchmarks/.cache/uptake_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import corpora, hook_latency
from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent
RAW = HERE / ".cache" / "uptake_cost.json"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="flask-3.1.3")
    ap.add_argument("--runs", type=int, default=40, help="prompts per arm")
    ap.add_argument("--json", default=None, metavar="OUT")
    return ap


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _turn_lines(root: Path, n: int) -> str:
    """One turn's transcript lines as Claude Code writes them: ``n`` tool calls, each with a 20 kB result."""
    out = []
    for i in range(n):
        call = {"type": "tool_use", "id": f"t{i}", "name": "Read" if i % 2 else "Grep", "input": {"file_path": str(root / "src/flask/app.py"), "pattern": "route"}}
        out.append(json.dumps({"type": "assistant", "message": {"content": [call]}}))
        out.append(json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 20_000}]}}))
    return "\n".join(out) + "\n"


def main() -> int:
    args = parser().parse_args()
    from paqad import workspace
    from paqad.channel import calls
    from paqad.hooks import uptake
    from paqad.repository import Repository

    with tempfile.TemporaryDirectory(prefix="paqad-uptake-bench-") as tmp:
        root = corpora.private_copy(corpora.CACHE / args.corpus, Path(tmp) / args.corpus)
        env = {**os.environ, "PAQAD_RAG_SERVE": "false"}
        for cmd in (["rag", "init", "--provider", "none"], ["hooks", "install", "--agents", "claude"]):
            subprocess.run([sys.executable, "-P", "-m", "paqad", *cmd], cwd=root, env=env, check=True, capture_output=True)
        log = Path(tmp) / "transcript.jsonl"
        log.write_bytes(b"{}\n" * 1_700_000)  # 5 MB
        repo = Repository(root)
        real = uptake.record
        rows: list[dict[str, Any]] = []
        load_before = _load()
        for i in range(2 * args.runs + 4):
            on = i % 2 == 0
            uptake.record = real if on else (lambda root, entry: None)  # type: ignore[assignment]
            question = hook_latency.QUESTIONS[(i // 2) % len(hook_latency.QUESTIONS)] + f" ({i})"
            stdin = json.dumps({"session_id": "bench", "transcript_path": str(log), "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": question})
            t, c = time.perf_counter(), time.process_time()
            out = repo.hook(calls.Hook("prompt-submit", "claude", stdin, str(root), budget_env="20"), door="service")
            rows.append({"on": on, "wall_ms": (time.perf_counter() - t) * 1000, "cpu_ms": (time.process_time() - c) * 1000, "answered": bool(out), "warmup": i < 4})
        uptake.record = real  # type: ignore[assignment]
        alone = []
        for _ in range(500):
            t = time.perf_counter()
            real(root, {"host": "claude", "transcript": str(log), "offset": uptake.transcript_size(str(log)), "delivered": [uptake.span("a.py", 1, 9, "f")] * 5, "ranked": [uptake.span("a.py", 1, 9, "f")] * 10})
            alone.append((time.perf_counter() - t) * 1e6)
        report = _report_cost(root, log, uptake, workspace, args.runs)
        load_after = _load()
    kept = [r for r in rows if not r["warmup"]]

    def med(on: bool, key: str) -> float:
        return round(statistics.median(r[key] for r in kept if r["on"] == on), 2)

    result = {
        "corpus": args.corpus, "runs_per_arm": args.runs, "answered": sum(r["answered"] for r in kept),
        "warm_prompt_ms": {"record_on": {"wall": med(True, "wall_ms"), "cpu": med(True, "cpu_ms")}, "record_off": {"wall": med(False, "wall_ms"), "cpu": med(False, "cpu_ms")}},
        "record_alone_us": {"p50": round(statistics.median(alone), 1), "p95": round(sorted(alone)[int(len(alone) * 0.95)], 1)},
        "report": report, "load_before": load_before, "load_after": load_after,
    }
    RAW.parent.mkdir(parents=True, exist_ok=True)
    RAW.write_text(json.dumps({"result": result, "rows": rows}, indent=1) + "\n")
    emit(result, args.json)
    return 0


def _report_cost(root: Path, log: Path, uptake: Any, workspace: Any, turns: int) -> dict[str, Any]:
    """``paqad report --json`` over ``turns`` deliveries, each with a 40-call turn in one transcript."""
    record = uptake.path(root)
    record.unlink(missing_ok=True)
    log.write_text("", encoding="utf-8")
    for _ in range(turns):
        uptake.record(root, {"host": "claude", "transcript": str(log), "offset": log.stat().st_size,
                             "delivered": [uptake.span("src/flask/app.py", 1, 40, "Flask")], "ranked": [uptake.span("src/flask/app.py", 1, 40, "Flask")]})
        with log.open("a", encoding="utf-8") as out:
            out.write(_turn_lines(root, 40))
    times = []
    for _ in range(3):
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-P", "-m", "paqad", "report", "--json", "--last", str(turns)], cwd=root, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t)
    measured = json.loads(done.stdout)["hosts"]["claude"]["measured"]
    return {"deliveries": turns, "measured": measured, "transcript_mb": round(log.stat().st_size / 1e6, 1), "wall_s_median": round(statistics.median(times), 2)}


if __name__ == "__main__":
    raise SystemExit(main())
