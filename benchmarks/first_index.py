"""A true first index, as a new user runs it: time-to-lexical, time-to-hybrid (stand-ins), time-to-full.

    python -m benchmarks first_index [flask requests ... | PATH] [--background] [--json OUT]

For each pinned corpus (``python -m benchmarks corpora fetch flask requests``) or git repository
(``PATH``: a clone of its HEAD, e.g. ``.`` for paqad itself), in a fresh copy
with a fresh per-developer data folder (``PAQAD_DATA_DIR``) and an empty user embedding cache
(``PAQAD_CACHE_DIR``), runs the installed ``paqad rag init`` (or ``rag init --background``) with
the default settings and reports:

- the three times, as the user sees them (when each stage line reaches stderr; full: when the
  process ends, or the background fill's record says full) and as ``rag status --json`` records
  them (``timeline.seconds_to``, counted from the process start);
- CPU seconds (the init process and its children; with ``--background``, the record's sum);
- the time left the record showed when the fill passed 10 % and 50 %, against the time it
  really took from there, and what the fixed-rate estimate paqad printed before issue 34
  (33 units/s per core, scaled by the load average) said at the lexical step;
- the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks import corpora
from benchmarks.emit import emit
from paqad import localstate

HERE = Path(__file__).resolve().parent

#: The rate the estimate before issue 34 assumed for the shipped MiniLM file (units/s per core).
OLD_PER_CORE = 33.0


def old_estimate(units: int, load: float) -> float:
    """What ``rag init`` printed before issue 34: a fixed per-core rate scaled by the load, plus 1 s."""
    cores = len(os.sched_getaffinity(0))
    share = min(1.0, cores / max(1.0, load + 1.0))
    return units / (OLD_PER_CORE * max(1, min(cores, 8)) * share) + 1.0


def _record(data_dir: Path, root: Path) -> dict[str, Any] | None:
    path = Path(localstate.tree_dir(root, {"PAQAD_DATA_DIR": str(data_dir)})) / "state" / "timeline.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class Poller(threading.Thread):
    """Reads the build's record every 0.25 s: (seconds since start, done, total, eta_s, rate)."""

    def __init__(self, data_dir: Path, root: Path, started: float) -> None:
        super().__init__(daemon=True)
        self.data_dir, self.root, self.started = data_dir, root, started
        self.samples: list[tuple[float, int, int, float | None, float | None]] = []
        self.last: dict[str, Any] | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            rec = _record(self.data_dir, self.root)
            if rec is not None and rec.get("lexical_s") is not None:
                self.last = rec
                self.samples.append((time.monotonic() - self.started, int(rec.get("done") or 0), int(rec.get("total") or 0), rec.get("eta_s"), rec.get("rate")))
                if rec.get("state") != "running":
                    return
            self.stop.wait(0.25)


def _at_fraction(samples: list[tuple[float, int, int, float | None, float | None]], fraction: float, full_t: float | None) -> dict[str, Any] | None:
    """The first sample at or past ``fraction`` of the fill, its time left against the real one."""
    for t, done, total, eta, rate in samples:
        if total and done >= fraction * total and done < total:
            real = None if full_t is None else round(full_t - t, 1)
            shown = None if eta is None else round(eta, 1)
            ratio = round(shown / real, 2) if shown is not None and real else None
            return {"at_s": round(t, 1), "done": done, "total": total, "rate": rate, "shown_left_s": shown, "real_left_s": real, "shown_over_real": ratio}
    return None


def run_one(name: str, background: bool) -> dict[str, Any]:
    """``name``: a pinned corpus, or the path of a git repository (a clone of its HEAD is indexed)."""
    lock = json.loads((HERE / "corpora.lock.json").read_text(encoding="utf-8"))
    clone = name not in lock and Path(name, ".git").exists()
    src = Path(name) if clone else corpora.CACHE / lock[name]["root"] if name in lock else Path(name)
    if not src.is_dir():
        raise SystemExit(f"{name} is not fetched: python -m benchmarks corpora fetch {name}")
    with tempfile.TemporaryDirectory(prefix="paqad-first-index-") as tmp:
        base = Path(tmp)
        root = base / "repo"
        if clone:
            subprocess.run(["git", "clone", "-q", str(src.resolve()), str(root)], check=True)
        else:
            shutil.copytree(src, root, symlinks=True, ignore=shutil.ignore_patterns(".paqad"))
        data_dir, cache_dir = base / "data", base / "cache"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
        env |= {"PAQAD_DATA_DIR": str(data_dir), "PAQAD_CACHE_DIR": str(cache_dir)}
        return _measure(name, root, data_dir, env, background)


def _measure(name: str, root: Path, data_dir: Path, env: dict[str, str], background: bool) -> dict[str, Any]:
    exe = shutil.which("paqad") or "paqad"
    load_before = os.getloadavg()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    argv = [exe, "rag", "init", *(["--background"] if background else [])]
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    poller = Poller(data_dir, root, started)
    poller.start()
    lines: list[tuple[float, str]] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append((round(time.monotonic() - started, 2), line.rstrip("\n")))
    proc.wait()
    returned = time.monotonic() - started
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    poller.join(timeout=3600)
    poller.stop.set()
    rec = poller.last or _record(data_dir, root) or {}
    seen = _seen(lines)
    full_t = returned if not background else (poller.samples[-1][0] if poller.samples and rec.get("state") == "done" else None)
    units = int(rec.get("units") or 0)
    return {
        "corpus": name, "mode": "background" if background else "foreground", "units": units, "returncode": proc.returncode,
        "seen_s": {"lexical": seen[0], "hybrid_interim": seen[1], "full": round(full_t, 2) if full_t is not None else None, "command_returned": round(returned, 2)},
        "recorded_s": {"lexical": rec.get("lexical_s"), "hybrid_interim": rec.get("interim_s"), "full": rec.get("full_s")},
        "cpu_s": round(cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 1) if not background else rec.get("cpu_s"),
        "final_rate": rec.get("rate"),
        "estimate_at_10pct": _at_fraction(poller.samples, 0.10, full_t), "estimate_at_50pct": _at_fraction(poller.samples, 0.50, full_t),
        "old_fixed_estimate_s": round(old_estimate(units, load_before[0]), 1),
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "stage_lines": [f"{t:>7.2f}s  {text}" for t, text in lines],
    }


def _seen(lines: list[tuple[float, str]]) -> tuple[float | None, float | None]:
    lexical = next((t for t, text in lines if text.startswith("lexical search ready (")), None)
    interim = next((t for t, text in lines if "stand-in vectors ready (" in text), None)
    return lexical, interim


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="*", default=["flask", "requests"])
    ap.add_argument("--background", action="store_true", help="run `rag init --background` and follow its detached fill")
    ap.add_argument("--json", dest="out", default=None, help="also write the result here")
    args = ap.parse_args()
    result: dict[str, Any] = {
        "command": "python -m benchmarks first_index " + " ".join(sys.argv[1:]),
        "cpus": len(os.sched_getaffinity(0)), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": [run_one(name, args.background) for name in args.corpora],
    }
    emit(result, args.out)
    return 0 if all(r["returncode"] == 0 for r in result["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
