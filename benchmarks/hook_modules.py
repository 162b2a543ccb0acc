"""Modules loaded and paqad's own functions called on the everyday paths: prompt hook, post-commit, rag search.

    python -m benchmarks hook_modules [--corpus requests-2.32.3] [--provider none|local] [--json OUT]

Issue 33's yardstick for "one seam for where a request runs": how much of paqad (and of
everything else) each door pulls in. A copy of a small real repository (from
``benchmarks/.cache/corpora``; ``python -m benchmarks corpora fetch``) gets ``rag init`` in a
private data folder (``PAQAD_DATA_DIR``) and runtime folder (``XDG_RUNTIME_DIR``), so the
developer's own services and settings are untouched. Each path then runs once in a fresh
``python -P`` whose first lines install a profiler (``sys.setprofile``, in every thread through
``_thread.start_new_thread``: the probe imports nothing a bare interpreter lacks) counting the
calls of functions defined in paqad's package folder;
when the process ends (``sys.exit``, or ``os._exit`` as the hooks end) it writes
``sys.modules`` split into paqad's own, the standard library's and the rest (third party), with
the distinct paqad functions called and their calls. The paths:

- ``prompt-hook/service``: ``paqad hook run prompt-submit --host claude`` with Claude Code's JSON,
  a warm service answering (the client side: what runs per prompt);
- ``prompt-hook/in-process``: the same with no service (``PAQAD_RAG_SERVE=false``);
- ``post-commit/service``: ``paqad hook run post-commit`` with the service running (the Python
  path; the installed shim itself only appends to a file then);
- ``post-commit/burst``: the Python the shim starts when no service runs (``git_burst_main``);
- ``rag-search/service`` and ``rag-search/in-process``: ``paqad rag search QUERY``.

The baseline is a bare ``python -P`` with the same profiler. Counts, not times: the profiler
slows the process, so the hook budget is raised for the run (``PAQAD_HOOK_BUDGET``).
Prints one JSON object (with the commit measured and the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpora
from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPORA = corpora.CACHE

QUERY = "where are the session cookies merged into a request"
PROMPT = "how does the session merge cookies into the prepared request"

#: Run as ``python -P -c PROBE OUT ENTRY ARGS...``: the profiler first, then ENTRY (``cli``: paqad's
#: console entry with ARGS; ``burst``: the git shim's background Python; ``bare``: nothing).
PROBE = r"""
import sys, os, _thread
_out, _entry, _args = sys.argv[1], sys.argv[2], sys.argv[3:]
_calls = {}
_pkg = [None]
def _prof(frame, event, arg):
    if event == "call":
        code = frame.f_code
        name = code.co_filename
        root = _pkg[0]
        if root is None:
            mod = sys.modules.get("paqad")
            if mod is None or not getattr(mod, "__file__", None):
                return
            root = _pkg[0] = os.path.dirname(mod.__file__) + os.sep
        if name.startswith(root):
            key = (name[len(root):], code.co_firstlineno, code.co_qualname)
            _calls[key] = _calls.get(key, 0) + 1
# every thread profiled without importing threading (which loads collections and more): its
# threads start through _thread.start_new_thread, as the hook's own watchdog does
_start_thread = _thread.start_new_thread
def _profiled_thread(function, args, kwargs={}):
    def run(*a, **k):
        sys.setprofile(_prof)
        return function(*a, **k)
    return _start_thread(run, args, kwargs)
_thread.start_new_thread = _profiled_thread
_done = []
def _dump():
    if _done:
        return
    _done.append(1)
    sys.setprofile(None)
    names = sorted(sys.modules)
    own = [n for n in names if n == "paqad" or n.startswith("paqad.")]
    std = [n for n in names if n not in own and n.split(".")[0] in sys.stdlib_module_names]
    third = [n for n in names if n not in own and n not in std]
    data = {"modules": len(names), "paqad_modules": own, "stdlib": len(std), "stdlib_modules": std, "third_party": third,
            "paqad_functions": len(_calls), "paqad_calls": sum(_calls.values()),
            "functions": sorted("%s:%d %s" % k for k in _calls)}
    with open(_out, "w") as fh:
        fh.write(__import__("json").dumps(data))
_real_exit = os._exit
def _exit(code):
    _dump()
    _real_exit(code)
os._exit = _exit
__import__("atexit").register(_dump)
sys.setprofile(_prof)
if _entry == "cli":
    from paqad.cli.main import main
    code = main(_args)
elif _entry == "burst":
    from paqad.serve.hookclient import git_burst_main
    code = git_burst_main(_args)
else:
    code = 0
sys.exit(code)
"""


def probe(entry: str, args: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> dict:
    with tempfile.NamedTemporaryFile(prefix="hook-modules-", suffix=".json", delete=False) as handle:
        out = handle.name
    try:
        proc = subprocess.run(
            [sys.executable, "-P", "-c", PROBE, out, entry, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=600,
        )
        text = Path(out).read_text(encoding="utf-8")
        if not text:
            sys.exit(f"{entry} {args}: no probe output (exit {proc.returncode}): {proc.stderr[-2000:]}")
        data = json.loads(text)
    finally:
        os.unlink(out)
    data["exit"] = proc.returncode
    data["stdout_chars"] = len(proc.stdout)
    return data


def paqad(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "paqad", *args], cwd=root, env=env, capture_output=True, text=True, timeout=1800)


def serve_running(root: Path, env: dict[str, str], timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        proc = paqad(root, env, "serve", "status", "--json")
        if proc.returncode == 0 and json.loads(proc.stdout).get("running"):
            return True
        time.sleep(0.2)
    return False


def summary(data: dict) -> dict:
    return {
        "modules": data["modules"], "paqad_modules": len(data["paqad_modules"]), "stdlib_modules": data["stdlib"],
        "third_party_modules": len(data["third_party"]), "paqad_functions": data["paqad_functions"], "paqad_calls": data["paqad_calls"],
        "exit": data["exit"], "stdout_chars": data["stdout_chars"],
    }


def run(corpus: str, provider: str, keep: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="pqm-", dir="/tmp"))  # short: the socket path must fit sun_path
    try:
        root = corpora.private_copy(CORPORA / corpus, tmp / "repo")
        runtime = tmp / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAQAD_")}
        env.update({"PAQAD_DATA_DIR": str(tmp / "data"), "XDG_RUNTIME_DIR": str(runtime), "PAQAD_HOOK_BUDGET": "60", "OPENBLAS_NUM_THREADS": "1"})
        init = paqad(root, {**env, "PAQAD_RAG_SERVE": "false"}, "rag", "init", "--provider", provider)
        if init.returncode != 0:
            sys.exit(f"rag init failed: {init.stderr[-2000:]}")
        hook_in = json.dumps({"session_id": "bench", "transcript_path": str(tmp / "t.jsonl"), "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
        prompt_args = ["hook", "run", "prompt-submit", "--host", "claude"]
        off = {**env, "PAQAD_RAG_SERVE": "false"}
        raw: dict[str, dict] = {"baseline": probe("bare", [], root, env)}
        raw["prompt-hook/in-process"] = probe("cli", prompt_args, root, off, hook_in)
        raw["rag-search/in-process"] = probe("cli", ["rag", "search", QUERY], root, off)
        raw["post-commit/burst"] = probe("burst", ["run", "post-commit"], root, off)
        paqad(root, env, "serve", "stop")
        subprocess.Popen([sys.executable, "-P", "-m", "paqad", "--root", str(root), "serve"], cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        if not serve_running(root, env):
            sys.exit("the service did not start")
        for _ in range(2):  # warm: the service's first answers load what the later ones reuse
            probe("cli", prompt_args, root, env, hook_in.replace("merge cookies", "warm up"))
        raw["prompt-hook/service"] = probe("cli", prompt_args, root, env, hook_in)
        raw["rag-search/service"] = probe("cli", ["rag", "search", QUERY], root, env)
        raw["post-commit/service"] = probe("cli", ["hook", "run", "post-commit"], root, env)
        paqad(root, env, "serve", "stop")
        log = (Path(env["PAQAD_DATA_DIR"]) / "trees").rglob("hooks.log")
        modes = [json.loads(line).get("mode") for f in log for line in f.read_text().splitlines() if '"context:claude"' in line]
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    where = subprocess.run([sys.executable, "-P", "-c", "import os, paqad; print(os.path.dirname(os.path.dirname(paqad.__file__)))"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where or REPO, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "paqad"], cwd=where or REPO, capture_output=True, text=True).stdout.strip())
    return {
        "benchmark": "hook_modules", "commit": commit + ("+dirty" if dirty else ""), "corpus": corpus, "provider": provider,
        "load_avg": list(os.getloadavg()), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "prompt_hook_modes": modes,
        "paths": {name: summary(data) for name, data in raw.items()},
        "detail": {
            name: {k: data[k] for k in ("paqad_modules", "stdlib_modules", "third_party", "functions")} for name, data in raw.items()
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="requests-2.32.3")
    ap.add_argument("--provider", default="none", choices=("none", "local"))
    ap.add_argument("--json", dest="out", default=None, help="also write the JSON here (with the per-path module and function lists)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (its path is in the output)")
    args = ap.parse_args()
    result = run(args.corpus, args.provider, args.keep)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    result.pop("detail")
    emit(result, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
