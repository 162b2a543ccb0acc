"""Drivers for the two agent doors over real pipes: ``paqad agent`` (JSON lines, one reply line
per request line) and ``paqad mcp`` through the official MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import anyio

from testing.env import paqad_exe


class Agent:
    """A running ``paqad agent``; ``ask`` sends one line and waits for exactly one reply line."""

    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen([paqad_exe(), "agent", "--root", str(root), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self._pipe(self.proc.stdout):
            self.lines.put(line)
        self.lines.put(b"")

    @staticmethod
    def _pipe(pipe: IO[bytes] | None) -> IO[bytes]:
        assert pipe is not None
        return pipe

    def send(self, line: bytes | str | dict[str, Any]) -> None:
        data = json.dumps(line).encode() if isinstance(line, dict) else (line.encode() if isinstance(line, str) else line)
        stdin = self._pipe(self.proc.stdin)
        stdin.write(data + b"\n")
        stdin.flush()

    def reply(self) -> dict[str, Any]:
        line = self.lines.get(timeout=60)
        assert line.endswith(b"\n"), f"no reply line (agent exited? stderr: {self._pipe(self.proc.stderr).read()[-500:]!r})"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, line: bytes | str | dict[str, Any]) -> dict[str, Any]:
        self.send(line)
        return self.reply()

    def call(self, action: str, **params: Any) -> dict[str, Any]:
        reply = self.ask({"id": action, "action": action, **params})
        assert reply["id"] == action
        return reply

    def close(self) -> int:
        self._pipe(self.proc.stdin).close()
        return self.proc.wait(timeout=60)


def call_all(root: Path, calls: list[tuple[str, dict[str, Any]]], extra: tuple[str, ...] = ()) -> tuple[list[Any], list[Any]]:
    """Start `paqad mcp --root ROOT [EXTRA]` with the SDK's stdio client; list tools, then make each call."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session() -> tuple[list[Any], list[Any]]:
        params = StdioServerParameters(command=paqad_exe(), args=["mcp", "--root", str(root), *extra], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            assert init.server_info.name == "paqad"
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def text_of(result: Any) -> str:
    """The text of an MCP tool result (its content blocks joined)."""
    return "".join(c.text for c in result.content)
