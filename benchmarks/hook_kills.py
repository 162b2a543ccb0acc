"""Prompt hooks while the resident service is SIGKILLed mid-request: how long the host waits.

    nice -n 10 python -m benchmarks hook_kills [--repo PATH] [--runs 80] [--no-kill] [--json OUT]

On a clone of ``--repo`` (default: this checkout's HEAD) with a lexical index, ``paqad hooks
install --agents claude`` and the service on (``PAQAD_RAG_SERVE=true``), each run starts the
service if none is running, runs Claude Code's configured ``UserPromptSubmit`` command with the
JSON Claude sends, and (unless ``--no-kill``) SIGKILLs the service a random 0 to 0.4 s after the
hook started, while the hook's request is in flight. Each run is timed the way a host times a
hook: from starting the command until it has exited and its stdout and stderr are closed. The
``hooks.log`` line the run wrote says what the hook itself counted (``seconds``).

Prints the count over the host's 10 s timeout (Claude Code's default for a command hook is 60 s;
10 s is what the issue measured against), p50/p95/max of the wall and of the logged time, how many
kills landed before the hook ended, and the load average before and after (``/proc/loadavg``).

HOME, XDG_* and the runtime folder are private temp folders: nothing of the user's is touched.
Uses the installed ``paqad`` console script; PYTHONPATH decides which paqad it imports (to measure
an older commit: ``git worktree add /tmp/before <commit>`` and ``PYTHONPATH=/tmp/before``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent
HOST_TIMEOUT_S = 10.0
GIT_ID = ["-c", "user.name=paqad bench", "-c", "user.email=bench@paqad.invalid", "-c", "commit.gpgsign=false"]
QUESTIONS = [
    "where is the prompt hook budget enforced",
    "how does the service acknowledge a request",
    "where is the crash report written",
    "how are hooks.yaml actions validated",
    "where is the runtime folder chosen",
    "how is the retrieved context section rendered",
    "what happens when the index is locked",
    "how does the lexical search rank passages",
]


def paqad_exe() -> str:
    exe = shutil.which("paqad", path=str(Path(sys.executable).parent)) or shutil.which("paqad")
    if not exe:
        sys.exit("the paqad console script is not installed")
    return exe


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def private_env(work: Path) -> dict[str, str]:
    """HOME, XDG folders and the runtime folder of the benchmark's own; the service on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAQAD_", "XDG_", "GIT_"))}
    for name in ("home", "runtime"):
        (work / name).mkdir(mode=0o700)
    env.update({"HOME": str(work / "home"), "XDG_RUNTIME_DIR": str(work / "runtime"), "PAQAD_RAG_SERVE": "true", "PAQAD_RAG_SERVE_IDLE_TIMEOUT": "120"})
    return env


def paqad(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([paqad_exe(), *args], cwd=root, capture_output=True, text=True, env=env, timeout=600, check=False)


def prepare(source: Path, work: Path, env: dict[str, str]) -> Path:
    root = work / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(source), str(root)], check=True)
    if (root / "paqad" / "__init__.py").exists():  # this checkout: `python -m paqad` run in the clone must not import the clone's paqad
        subprocess.run(["git", "mv", "paqad", "paqad_src"], cwd=root, check=True)
        subprocess.run(["git", *GIT_ID, "commit", "-qm", "bench: package renamed"], cwd=root, check=True)
    for args in (["rag", "init", "--provider", "none"], ["hooks", "install", "--agents", "claude"]):
        done = paqad(root, {**env, "PAQAD_RAG_SERVE": "false"}, *args)
        if done.returncode != 0:
            sys.exit(f"paqad {' '.join(args)} failed: {done.stderr}")
    return root


def hook_command(root: Path) -> str:
    data = json.loads((root / ".claude" / "settings.json").read_text())
    return str(data["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"])


def service_pid(root: Path, env: dict[str, str]) -> int | None:
    done = paqad(root, env, "serve", "status", "--json")
    try:
        info = json.loads(done.stdout).get("service") if done.returncode == 0 else None
    except ValueError:
        return None
    return int(info["pid"]) if info else None


def ensure_service(root: Path, env: dict[str, str], timeout: float = 60.0) -> int | None:
    """The running service's pid, starting one (detached, as a door would) when none runs."""
    pid = service_pid(root, env)
    if pid is not None:
        return pid
    subprocess.Popen([paqad_exe(), "--root", str(root), "serve"], cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = service_pid(root, env)
        if pid is not None:
            return pid
        time.sleep(0.1)
    return None


def logs_dir(root: Path) -> Path:
    """Where the paqad under test keeps hooks.log (it moved out of .paqad/ after 0f9180e)."""
    from paqad import workspace  # the paqad PYTHONPATH names: the one the hook runs

    return Path(workspace.logs_dir(root))


def logged_seconds(root: Path, seen: int) -> tuple[float | None, str, int]:
    """The ``seconds`` and detail of the first ``context:claude`` line after line ``seen``, and the line count."""
    try:
        lines = (logs_dir(root) / "hooks.log").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None, "", seen
    for line in lines[seen:]:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("action") == "context:claude":
            return float(entry.get("seconds") or 0.0), f"{entry.get('status')} {entry.get('mode')} {entry.get('detail') or ''}", len(lines)
    return None, "", len(lines)


def log_length(root: Path) -> int:
    try:
        return len((logs_dir(root) / "hooks.log").read_text(encoding="utf-8").splitlines())
    except OSError:
        return 0


def one_run(root: Path, env: dict[str, str], question: str, kill_after: float | None) -> dict:
    pid = ensure_service(root, env)
    seen = log_length(root)
    payload = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": question}
    killed = threading.Event()
    done = threading.Event()

    def killer() -> None:
        if kill_after is None or pid is None or done.wait(kill_after):
            return
        try:
            os.kill(pid, signal.SIGKILL)
            killed.set()
        except ProcessLookupError:
            pass

    thread = threading.Thread(target=killer, daemon=True)
    started = time.perf_counter()
    thread.start()
    proc = subprocess.Popen(["sh", "-c", hook_command(root)], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(json.dumps(payload), timeout=120)  # until exit and both pipes closed, as a host waits
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    wall = time.perf_counter() - started
    done.set()
    thread.join()
    time.sleep(0.2)  # the log line is written before the hook exits; a detached child may still be appending
    logged, detail, _ = logged_seconds(root, seen)
    return {"wall_s": round(wall, 3), "logged_s": logged, "killed": killed.is_set(), "answered": bool(out.strip()), "detail": detail[:160]}


def stats(samples: list[float]) -> dict:
    if not samples:
        return {}
    qs = statistics.quantiles(samples, n=20, method="inclusive") if len(samples) > 1 else samples * 19
    return {"p50": round(statistics.median(samples), 3), "p95": round(qs[18], 3), "max": round(max(samples), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(HERE.parent), help="a git repository to clone (default: this checkout)")
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--no-kill", action="store_true", help="the same runs without killing the service (the baseline)")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    parser.add_argument("--json", dest="out")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="paqad-hook-kills-"))
    try:
        env = private_env(work)
        os.environ.clear()  # this process reads the hook log where the hooks write it (HOME, XDG_* as theirs)
        os.environ.update(env)
        root = prepare(Path(args.repo).resolve(), work, env)
        import paqad

        result: dict = {"paqad": str(Path(paqad.__file__).parent), "runs": args.runs, "kill": not args.no_kill, "load_before": loadavg()}
        runs = [one_run(root, env, f"{QUESTIONS[i % len(QUESTIONS)]} ({i})", None if args.no_kill else rng.uniform(0.0, 0.4)) for i in range(args.runs)]
        walls = [r["wall_s"] for r in runs]
        logged = [r["logged_s"] for r in runs if r["logged_s"] is not None]
        over = [r for r in runs if r["wall_s"] > HOST_TIMEOUT_S]
        result.update({
            "load_after": loadavg(),
            "killed_mid_hook": sum(r["killed"] for r in runs),
            "over_host_timeout": len(over),
            "answered": sum(r["answered"] for r in runs),
            "wall_s": stats(walls),
            "logged_s": stats(logged),
            "unlogged": len(runs) - len(logged),
            "slowest": sorted(runs, key=lambda r: -r["wall_s"])[:5],
        })
        pid = service_pid(root, env)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):  # until it has exited: it writes its log into the folder removed below
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
        emit(result, args.out)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
