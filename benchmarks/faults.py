"""The fault suite: the project's promise, probed. "The index is always the old one or the new
one, and a hook never blocks or fails git or a prompt."

    nice -n 10 python -m benchmarks faults [--corpus flask-3.1.3] [--kills 20] [--seeds 16]
        [--race-seconds 30] [--hook-runs 10] [--only kills,damage,race,hooks] [--json OUT]

On a copy of the corpus (lexical index: the faults are the store's and the hooks', not the
model's), four probes, each printing its figures:

* kills: SIGKILL ``paqad rag rebuild`` and ``paqad rag update`` (after touching files) at a
  random moment, then read the index with a fresh process: count reads that are not the old or
  the new index; after all kills, ``rag update`` must equal a clean ``rag rebuild``.
* damage: for each seed, a few random bytes in random pages of the live file, then what the git
  hooks run (``rag update``): count repaired (exit 0, then a search answers, indexed columns
  equal a clean build), failed and tracebacks.
* race: rebuilds in a loop while this process opens the index afresh and reads it in a loop:
  count opens that failed and database files left at an old generation's name.
* hooks: the prompt hook (Claude Code's configured command and JSON) under every failure:
  healthy, no index, corrupt, older schema, writer lock held, garbage, empty and over-cap input,
  a lone surrogate, paqad off PATH; exit codes and p50/p95/max milliseconds against the budget.

Uses the installed ``paqad`` console script (PYTHONPATH decides which paqad it imports).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from benchmarks import hook_latency  # the corpus copy, the hook command and the summary are shared
from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent

QUESTION = "where is the session cookie signed"
BUDGET_S = 1.5  # rag_prompt_budget's default


def paqad(root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([hook_latency.paqad_exe(), *args], cwd=root, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def current(root: Path) -> Path:
    return root / ".paqad" / "vectors" / (root / ".paqad" / "vectors" / "CURRENT").read_text().strip()


def units(root: Path, columns: str = "id, path, content_hash") -> list[tuple]:
    con = sqlite3.connect(f"{current(root).as_uri()}?mode=ro", uri=True)
    try:
        return sorted(con.execute(f"SELECT {columns} FROM units").fetchall())
    finally:
        con.close()


def readable(root: Path) -> bool:
    """A fresh process can search the index (the old or the new one)."""
    done = paqad(root, "rag", "search", QUESTION, "--json")
    return done.returncode == 0 and bool(json.loads(done.stdout).get("results"))


# ---- kills -------------------------------------------------------------------------------------


def kill_probe(root: Path, kills: int, rng: random.Random) -> dict:
    started = time.perf_counter()
    assert paqad(root, "rag", "rebuild").returncode == 0
    full_s = time.perf_counter() - started
    out: dict = {"rebuild_seconds": round(full_s, 2)}
    files = sorted(p for p in root.rglob("*.py") if ".paqad" not in p.parts)[:20]
    for mode in ("rebuild", "update"):
        unusable = killed = 0
        for i in range(kills):
            if mode == "update":
                for f in rng.sample(files, k=min(5, len(files))):
                    f.write_text(f.read_text() + f"\n# fault-suite touch {i}\n")
            proc = subprocess.Popen([hook_latency.paqad_exe(), "rag", mode], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, full_s))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
            proc.wait()
            unusable += 0 if readable(root) else 1
        out[mode] = {"runs": kills, "killed_mid_run": killed, "unusable_after": unusable}
    assert paqad(root, "rag", "update").returncode == 0
    after_update = units(root)
    assert paqad(root, "rag", "rebuild").returncode == 0
    out["update_after_kills_equals_clean_rebuild"] = after_update == units(root)
    return out


# ---- damage ------------------------------------------------------------------------------------


def damage_probe(root: Path, seeds: int) -> dict:
    assert paqad(root, "rag", "rebuild").returncode == 0
    clean = units(root, "id, path")
    vectors = root / ".paqad" / "vectors"
    backup = root.parent / "damage-backup"
    shutil.rmtree(backup, ignore_errors=True)
    shutil.copytree(vectors, backup)
    good = current(root).read_bytes()
    repaired, failed, tracebacks, rebuilt = 0, 0, 0, 0
    for seed in range(seeds):
        shutil.rmtree(vectors)
        shutil.copytree(backup, vectors)
        db = current(root)
        data = bytearray(good)
        rng = random.Random(seed)
        pages = len(data) // 4096
        for page in rng.sample(range(1, pages), k=min(3, pages - 1)):
            for _ in range(16):
                data[page * 4096 + rng.randrange(4096)] = rng.randrange(256)
        db.write_bytes(bytes(data))
        done = paqad(root, "rag", "update")
        tracebacks += "Traceback" in done.stderr or "unexpected error" in done.stderr
        rebuilt += "damaged" in done.stdout
        if done.returncode == 0 and readable(root) and units(root, "id, path") == clean:
            repaired += 1
        else:
            failed += 1
    return {"seeds": seeds, "repaired_by_rag_update": repaired, "failed": failed, "tracebacks": tracebacks, "rebuilt_as_damaged": rebuilt}


# ---- race --------------------------------------------------------------------------------------


def race_probe(root: Path, seconds: float) -> dict:
    from paqad.errors import PaqadError
    from paqad.index.reader import Index

    assert paqad(root, "rag", "rebuild").returncode == 0
    stop = threading.Event()
    rebuilds = [0]

    def rebuild_loop() -> None:
        while not stop.is_set():
            paqad(root, "rag", "rebuild")
            rebuilds[0] += 1

    worker = threading.Thread(target=rebuild_loop, daemon=True)
    worker.start()
    opens, failures, errors = 0, 0, {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        index = Index(root)
        try:
            index.refresh()
            index.meta()
            opens += 1
        except PaqadError as exc:
            failures += 1
            key = str(exc)[:80]
            errors[key] = errors.get(key, 0) + 1
        finally:
            index.close()
    stop.set()
    worker.join()
    live = current(root).name
    stray = sorted(p.name for p in (root / ".paqad" / "vectors").glob("index-*.sqlite") if p.name != live)
    return {"seconds": seconds, "rebuilds": rebuilds[0], "opens": opens, "failed_opens": failures, "errors": errors, "db_files_at_old_names": stray}


# ---- hooks under failure -----------------------------------------------------------------------


def hook_probe(root: Path, runs: int) -> dict:
    import filelock

    command = hook_latency.hook_command(root)
    env = {**os.environ, "PATH": f"{Path(hook_latency.paqad_exe()).parent}:{os.environ.get('PATH', '')}"}
    env.pop("PAQAD_HOOK_BUDGET", None)
    payload = {"session_id": "faults", "transcript_path": "/tmp/faults.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit"}
    vectors = root / ".paqad" / "vectors"
    backup = root.parent / "vectors-backup"
    assert paqad(root, "rag", "rebuild").returncode == 0
    shutil.rmtree(backup, ignore_errors=True)
    shutil.copytree(vectors, backup)

    def restore() -> None:
        hook_latency.settle(root)
        shutil.rmtree(vectors, ignore_errors=True)
        shutil.copytree(backup, vectors)

    def corrupt() -> None:
        restore()
        current(root).write_bytes(b"not an index " * 500)

    def outdated() -> None:
        restore()
        con = sqlite3.connect(current(root))
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        con.commit()
        con.close()

    def missing() -> None:
        hook_latency.settle(root)
        shutil.rmtree(vectors, ignore_errors=True)

    text = json.dumps({**payload, "prompt": QUESTION})
    cases = {
        "healthy": (restore, text, env),
        "no_index": (missing, text, env),
        "corrupt_index": (corrupt, text, env),
        "older_schema": (outdated, text, env),
        "writer_lock_held": (restore, text, env),
        "garbage_input": (restore, "\x00\xff not json {{{", env),
        "empty_input": (restore, "", env),
        "over_cap_input": (restore, json.dumps({**payload, "prompt": "charge " * 200_000}), env),
        "lone_surrogate": (restore, json.dumps({**payload, "prompt": QUESTION + " \ud800"}), env),
        "paqad_off_path": (restore, text, {**env, "PATH": "/usr/bin:/bin"}),
    }
    out: dict = {"budget_ms": BUDGET_S * 1000}
    for name, (prepare, stdin, case_env) in cases.items():
        samples, codes, over = [], {}, 0
        for _ in range(runs):
            prepare()
            lock = filelock.FileLock(str(root / ".paqad" / "state" / "index.lock")) if name == "writer_lock_held" else None
            if lock is not None:
                lock.acquire()
            try:
                started = time.perf_counter()
                done = subprocess.run(["sh", "-c", command], cwd=root, input=stdin, capture_output=True, text=True, env=case_env, timeout=60)
                ms = (time.perf_counter() - started) * 1000
            finally:
                if lock is not None:
                    lock.release()
            samples.append(ms)
            codes[done.returncode] = codes.get(done.returncode, 0) + 1
            over += ms > BUDGET_S * 1000
        out[name] = {**hook_latency.summary(samples), "exit_codes": codes, "over_budget": over}
    restore()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--race-seconds", type=float, default=30.0)
    parser.add_argument("--hook-runs", type=int, default=10)
    parser.add_argument("--only", default="kills,damage,race,hooks")
    parser.add_argument("--json", dest="out", default=None, help="Also write the result to this file.")
    args = parser.parse_args()
    only = set(args.only.split(","))
    result: dict = {"corpus": args.corpus, "cpus": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="paqad-faults-") as tmp:
        root = hook_latency.prepare(args.corpus, Path(tmp), "none")
        probes = {"kills": lambda: kill_probe(root, args.kills, random.Random(14)), "damage": lambda: damage_probe(root, args.seeds),
                  "race": lambda: race_probe(root, args.race_seconds), "hooks": lambda: hook_probe(root, args.hook_runs)}
        for name, probe in probes.items():
            if name in only:
                started = time.perf_counter()
                result[name] = {**probe(), "probe_seconds": round(time.perf_counter() - started, 1)}
                print(name, json.dumps(result[name]), flush=True)
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    emit(result, args.out)


if __name__ == "__main__":
    main()
