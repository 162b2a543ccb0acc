"""Claude Code's prompt hook as a command (the shim) against the ``mcp_tool`` hook type, same run.

    nice -n 10 python -m benchmarks mcp_hook_cost [--corpus flask-3.1.3] [--runs 30] [--provider local|none] [--json OUT]

On a copy of the corpus (``rag init``, ``paqad hooks install --agents claude``) with the work
tree's service running and warm, each prompt is answered twice, alternately, by the same service:

* ``command``: the configured ``UserPromptSubmit`` command, run as Claude Code runs it (``sh -c``
  with its JSON on stdin); CPU is the hook's processes (``sh``, ``git``, Python);
* ``mcp_tool``: a call of ``prompt_context`` on a ``paqad mcp --hook-tool`` server that stays up,
  as Claude Code makes it for a hook of type ``mcp_tool`` (through the official SDK's stdio
  client here); CPU is the server process's own (``/proc/PID/stat``, clock ticks: the figure is
  the total over all calls divided by their number, a mean, not a median).

Both answers are checked to carry paqad's context block. Not counted on either side: what the
host itself spends to start a command or to write a JSON-RPC request. Prints one JSON object
(ms) with the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from benchmarks import hook_latency  # the corpus copy, the payload, the timing, the log reading
from benchmarks.emit import emit

HERE = Path(__file__).resolve().parent

BLOCK = "Retrieved context (paqad)"


def proc_cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime + stime


def server_pid(marker: str) -> int:
    """The ``paqad mcp --hook-tool`` process this benchmark started (its command line carries ``marker``)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker.encode() in argv and b"--hook-tool" in argv:
                return int(entry.name)
    sys.exit("the MCP server process was not found")


async def measure(root: Path, env: dict[str, str], runs: int) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=hook_latency.paqad_exe(), args=["mcp", "--root", str(root), "--hook-tool"], env=env, cwd=str(root))
    command = {"wall": [], "cpu": [], "ok": 0}
    tool = {"wall": [], "cpu_total": 0.0, "ok": 0}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        pid = server_pid(str(root))
        for i in range(3):  # warm both doors
            await client.call_tool("prompt_context", {"prompt": f"warm up {i}: where is the app object created", "cwd": str(root), "session_id": "bench"})
            hook_latency.time_prompt(root, f"warm up {i}: where is the app object created", env)
        for i in range(runs):
            question = hook_latency.question(400 + i)
            for door in (("command", "mcp_tool") if i % 2 == 0 else ("mcp_tool", "command")):
                if door == "command":
                    wall, cpu, path = hook_latency.time_prompt(root, question, env)
                    command["wall"].append(wall)
                    command["cpu"].append(cpu)
                    command["ok"] += path.startswith("live service")
                else:
                    before = proc_cpu_ms(pid)
                    started = time.perf_counter()
                    result = await client.call_tool("prompt_context", {"prompt": question, "cwd": str(root), "session_id": "bench"})
                    tool["wall"].append((time.perf_counter() - started) * 1000)
                    tool["cpu_total"] += proc_cpu_ms(pid) - before
                    tool["ok"] += BLOCK in "".join(getattr(c, "text", "") for c in result.content)
    return {
        "command": {**hook_latency.summary(command["wall"], command["cpu"]), "cpu_ms_mean": round(statistics.mean(command["cpu"]), 1), "answered_by_service": command["ok"]},
        "mcp_tool": {**hook_latency.summary(tool["wall"]), "server_cpu_ms_mean": round(tool["cpu_total"] / runs, 1), "with_context": tool["ok"]},
    }


def run(corpus: str, runs: int, provider: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="paqad-mcp-hook-bench-") as tmp:
        root = hook_latency.prepare(corpus, Path(tmp), provider)
        env = {**os.environ, "PATH": f"{Path(hook_latency.paqad_exe()).parent}:{os.environ.get('PATH', '')}"}
        for key in ("PAQAD_HOOK_BUDGET", "PAQAD_RAG_SERVE"):
            env.pop(key, None)
        result: dict = {"corpus": corpus, "provider": provider, "cpus": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()]}
        hook_latency.time_prompt(root, "warm up: where is the app object created", env)
        hook_latency.serve_ready(root, env)
        result.update(anyio.run(measure, root, env, runs))
        hook_latency.paqad(root, "serve", "stop", env=env)
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--provider", default="local", choices=["local", "none"])
    parser.add_argument("--json", dest="out", default=None)
    args = parser.parse_args()
    emit(run(args.corpus, args.runs, args.provider), args.out)


if __name__ == "__main__":
    main()
