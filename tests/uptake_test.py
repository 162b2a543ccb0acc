"""The uptake record and ``paqad report``, driven the way hosts drive paqad: the installed prompt
hook fed the recorded JSON of each host, with a real session transcript file, in a real git
repository; then ``paqad report --json`` as a user runs it.

The transcript lines are written the way Claude Code 2.1 writes them (an ``assistant`` entry with
a ``tool_use`` block, a ``user`` entry with its ``tool_result``): what the agent read, searched
and edited after the delivery, and the report must count exactly that.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paqad import workspace
from paqad.hooks import transcript, uptake
from testing.hosts import host_json, run_host
from testing.repos import Repo

PROMPT = "how do we reconcile the quarterly ledger"
LEDGER = '''\
"""Quarter-end bookkeeping."""


def reconcile_quarterly_ledger(entries: list[dict]) -> list[dict]:
    """Match each invoice against its bank transfer at quarter end and return the unmatched ones."""
    return [entry for entry in entries if not entry.get("matched")]


def quarterly_ledger_totals(entries: list[dict]) -> float:
    """The sum of the quarterly ledger's entries."""
    return sum(entry["amount"] for entry in entries)
'''
TAX = '''\
"""Sales tax."""


def vat_for(amount: float) -> float:
    """Value added tax on an amount at the standard rate."""
    return amount * 0.2
'''


@pytest.fixture
def books(repo: Repo, paqad_cli, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("PAQAD_HOOK_BUDGET", "20")  # a loaded machine must not turn a delivery into "over budget"
    repo.write("books/ledger.py", LEDGER)
    repo.write("books/tax.py", TAX)
    repo.write("notes/unrelated.txt", "shopping list\n")
    repo.commit("books")
    assert paqad_cli("rag", "init", cwd=repo.root).returncode == 0
    done = paqad_cli("hooks", "install", "--agents", "claude,codex,qwen,droid,copilot,cursor", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return repo


def tool_use(call_id: str, name: str, arguments: dict) -> str:
    """One Claude Code transcript line: the assistant asks for one tool."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}, "uuid": call_id}) + "\n"


def tool_result(call_id: str, text: str) -> str:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return json.dumps({"type": "user", "message": {"role": "user", "content": [block]}}) + "\n"


def prompt(root: Path, host: str, text: str, log: Path | str, session_id: str = "s-1") -> str:
    """Run ``host``'s installed prompt hook with its recorded JSON naming ``log`` as the transcript; its stdout."""
    data = host_json(host, "prompt", cwd=root, prompt=text, session_id=session_id)
    data["transcript_path"] = str(log)
    done = run_host(root, host, stdin=json.dumps(data))
    assert done.returncode == 0, done.stderr
    return done.stdout


def records(root: Path) -> list[dict]:
    return [json.loads(line) for line in uptake.path(root).read_text(encoding="utf-8").splitlines()]


def report(paqad_cli, root: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    done = paqad_cli("report", "--json", *args, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_each_delivery_is_recorded_with_paths_lines_and_counts_and_no_prompt_text(books, tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "earlier"}}) + "\n", encoding="utf-8")
    size = log.stat().st_size
    out = prompt(books.root, "claude", PROMPT, log, session_id="s-7")
    assert "books/ledger.py:L" in out, out
    [row] = records(books.root)
    assert (row["host"], row["session"], row["status"], row["transcript"], row["offset"]) == ("claude", "s-7", "live", str(log), size)
    assert row["tokens"] == -(-len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) // 4)
    assert {"path": "books/ledger.py", "start": 4, "end": 6, "name": "reconcile_quarterly_ledger"} in row["delivered"]
    assert row["ranked"] and all(set(r) == {"path", "start", "end", "name"} for r in row["ranked"]) and len(row["ranked"]) <= 10
    text = uptake.path(books.root).read_text(encoding="utf-8")
    assert PROMPT not in text and "Match each invoice" not in text  # counts and paths: no prompt, no code
    assert uptake.path(books.root).parent == workspace.logs_dir(books.root)
    assert os.stat(uptake.path(books.root)).st_mode & 0o077 == 0


def scripted_turn(root: Path) -> str:
    """What the agent does after the ledger delivery: read the delivered file (lines 1-8), grep for
    the delivered unit, grep for another name and open the file it found (ranked, not delivered),
    open a file paqad never ranked, edit the delivered file; plus two lines no parser knows."""
    ledger, tax, notes = (str(root / p) for p in ("books/ledger.py", "books/tax.py", "notes/unrelated.txt"))
    return "".join([
        tool_use("t1", "Read", {"file_path": ledger, "offset": 1, "limit": 8}), tool_result("t1", "(file text)"),
        tool_use("t2", "Grep", {"pattern": "reconcile_quarterly", "path": str(root)}), tool_result("t2", f"Found 1 file\n{ledger}"),
        "not json at all\n", '{"type": "assistant", "message": {"content": [{"type": "tool_use"\n',
        tool_use("t3", "Grep", {"pattern": "def vat_", "output_mode": "files_with_matches"}), tool_result("t3", f"Found 1 file\n{tax}"),
        tool_use("t4", "Read", {"file_path": tax}), tool_result("t4", "(file text)"),
        tool_use("t5", "Read", {"file_path": notes}), tool_result("t5", "(file text)"),
        tool_use("t6", "Edit", {"file_path": ledger, "old_string": "a", "new_string": "b"}), tool_result("t6", "ok"),
        tool_use("t7", "Read", {"file_path": "/etc/hostname"}), tool_result("t7", "outside the work tree: not counted"),
    ])


def test_report_counts_what_the_agent_did_in_each_turn(books, paqad_cli, tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_text("", encoding="utf-8")
    assert "books/ledger.py:L4-6" in prompt(books.root, "claude", PROMPT, log)
    with log.open("a", encoding="utf-8") as out:
        out.write(scripted_turn(books.root))
    assert "books/tax.py:L" in prompt(books.root, "claude", "what does vat_for compute on an amount", log)
    with log.open("a", encoding="utf-8") as out:  # the second turn: the agent answers without a tool
        out.write(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}) + "\n")
    data = report(paqad_cli, books.root)
    claude = data["hosts"]["claude"]
    assert (claude["deliveries"], claude["measured"], claude["passages"]) == (2, 2, 2), claude
    assert (claude["used"], claude["opened"], claude["searched"], claude["edited"]) == (1, 1, 1, 1), claude
    assert claude["share_used"] == 0.5
    assert (claude["missed_ranked"], claude["missed_unranked"]) == (1, 1), claude
    assert claude["prompts"]["live"] == 2 and claude["prompts"]["stale"] == 0
    rows = records(books.root)
    assert claude["tokens"] == sum(r["tokens"] for r in rows) > 0
    assert report(paqad_cli, books.root, "--last", "1")["hosts"]["claude"]["used"] == 0  # only the second turn
    text = paqad_cli("report", cwd=books.root)
    assert text.returncode == 0 and "used: 1 of 2 passages (50%)" in text.stdout and "1 ranked but not delivered, 1 not ranked" in text.stdout, text.stdout


def test_a_transcript_paqad_cannot_read_is_a_note_never_a_failure(books, paqad_cli, tmp_path):
    folder = tmp_path / "a-folder.jsonl"
    folder.mkdir()
    prompt(books.root, "claude", PROMPT, folder)  # a folder where the transcript should be
    prompt(books.root, "claude", "what does vat_for compute on an amount", tmp_path / "missing.jsonl")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"")
    out = prompt(books.root, "codex", "where is the quarterly ledger total computed", binary)
    assert "books/ledger.py" in out
    binary.write_bytes(os.urandom(50_000) + b"\n{\n" * 1000)
    data = report(paqad_cli, books.root)
    claude, codex = data["hosts"]["claude"], data["hosts"]["codex"]
    assert (claude["deliveries"], claude["measured"]) == (2, 0) and len(claude["notes"]) == 2, claude
    assert "transcript is not a regular file" in claude["notes"], claude["notes"]  # the folder
    assert any("unreadable (No such file or directory)" in n for n in claude["notes"]), claude["notes"]  # never created
    assert (codex["deliveries"], codex["measured"], codex["used"]) == (1, 0, 0), codex  # garbage lines only: not a turn paqad read
    assert len(codex["notes"]) == 1 and codex["notes"][0].startswith("transcript not understood ("), codex


def test_a_huge_transcript_line_is_skipped_and_reading_is_capped(tmp_path):
    log = tmp_path / "t.jsonl"
    with log.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"blob": "x" * (transcript.MAX_LINE + 10)}) + "\n")
        out.write(tool_use("t1", "Read", {"file_path": "/r/books/ledger.py"}))
    turn = transcript.read_turn(str(log), 0, None)
    assert turn.note == "" and turn.skipped == 1 and turn.read == 1 and [(a.kind, a.path) for a in turn.actions] == [("read", "/r/books/ledger.py")]
    assert transcript.read_turn(str(log), 0, 100).actions == []  # the turn's end bounds what is read
    assert "shorter" in transcript.read_turn(str(log), 10**9, None).note
    assert transcript.read_turn("relative.jsonl", 0, None).note == "the host named no transcript"
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert transcript.read_turn(str(fifo), 0, None).note == "transcript is not a regular file"  # never opened: it would block
    assert transcript.read_turn("/dev/zero", 0, None).note == "transcript is not a regular file"


@pytest.mark.parametrize(("line", "expected"), [
    # Codex 0.171 rollout: a response_item whose payload is a function_call with JSON arguments.
    ({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
      "arguments": json.dumps({"command": ["bash", "-lc", "sed -n '3,9p' books/ledger.py && rg -n vat_for books"]})}},
     [("read", "books/ledger.py", 3, 9, ""), ("search", "books", None, None, "vat_for")]),
    # Gemini CLI and Qwen Code: a functionCall part with args.
    ({"type": "gemini", "message": {"parts": [{"functionCall": {"name": "read_file", "args": {"absolute_path": "/r/books/tax.py", "offset": 2, "limit": 3}}}]}},
     [("read", "/r/books/tax.py", 2, 4, "")]),
    ({"parts": [{"functionCall": {"name": "search_file_content", "args": {"pattern": "ledger"}}}]}, [("search", "", None, None, "ledger")]),
    # Codex apply_patch, and shell edits.
    ({"type": "function_call", "name": "apply_patch", "arguments": json.dumps({"input": "*** Begin Patch\n*** Update File: books/tax.py\n@@\n"})},
     [("edit", "books/tax.py", None, None, "")]),
    ({"type": "tool_use", "id": "x", "name": "Bash", "input": {"command": "cat books/tax.py | head -5 > out.txt"}},
     [("read", "books/tax.py", None, None, ""), ("edit", "out.txt", None, None, "")]),
    # paqad's own MCP tools (mcp__paqad__open) and an unknown tool.
    ({"type": "tool_use", "id": "y", "name": "mcp__paqad__open", "input": {"path": "books/ledger.py", "start_line": 4, "end_line": 6}},
     [("read", "books/ledger.py", 4, 6, "")]),
    ({"type": "tool_use", "id": "z", "name": "WebFetch", "input": {"url": "https://example.com"}}, []),
])
def test_tool_calls_are_read_in_each_hosts_shape(tmp_path, line, expected):
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    turn = transcript.read_turn(str(log), 0, None)
    assert [(a.kind, a.path, a.start, a.end, a.pattern) for a in turn.actions] == expected


# ---- repository content is untrusted: a planted record does nothing ---------------------------------

PLANTED = json.dumps({"host": "claude", "status": "live", "tokens": 999_999, "transcript": "/etc/passwd", "offset": 0,
                      "delivered": [{"path": "books/ledger.py", "start": 1, "end": 9, "name": "x"}], "ranked": []}) + "\n"


def test_a_symlink_where_the_record_lives_is_never_written_through_nor_read(books, paqad_cli, tmp_path):
    victim = tmp_path / "bashrc"
    victim.write_text("# the victim's own file\n", encoding="utf-8")
    record = uptake.path(books.root)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.symlink_to(victim)
    assert "books/ledger.py:L" in prompt(books.root, "claude", PROMPT, tmp_path / "t.jsonl")
    assert victim.read_text(encoding="utf-8") == "# the victim's own file\n"  # nothing appended through the link
    victim.write_text(PLANTED, encoding="utf-8")
    data = report(paqad_cli, books.root)
    assert data["deliveries"] == 0 and "claude" not in data["hosts"] or data["hosts"]["claude"]["deliveries"] == 0, data
    assert "a symlink; ignored" in data["note"], data


def test_a_force_committed_record_in_the_repository_counts_nothing(books, paqad_cli, tmp_path):
    for rel in (".paqad/logs/uptake.jsonl", ".paqad/state/uptake.jsonl", ".paqad/uptake.jsonl"):
        books.write(rel, PLANTED)
    books.git("add", "-f", ".paqad")
    books.commit("a record of deliveries that never happened")
    data = report(paqad_cli, books.root)
    assert data["deliveries"] == 0 and data["hosts"] == {}, data
    doctor = paqad_cli("doctor", cwd=books.root)
    assert ".paqad/logs/uptake.jsonl is tracked by git" in doctor.stdout, doctor.stdout


def test_a_record_git_tracks_is_ignored_even_in_the_per_developer_folder(books, paqad_cli, tmp_path):
    """``PAQAD_DATA_DIR`` inside a work tree puts the per-developer folder where a commit can
    reach: a record git tracks there may have come with a pull, and counts nothing."""
    data_dir = books.root / "vendor" / "paqad-data"
    env = {"PAQAD_DATA_DIR": str(data_dir)}
    record = Path(uptake.path(books.root).as_posix().replace(str(workspace.local_dir(books.root)), os.path.join(str(data_dir), "trees") + os.path.realpath(books.root) + ".paqad"))
    record.parent.mkdir(parents=True)
    record.write_text(PLANTED, encoding="utf-8")
    assert report(paqad_cli, books.root, env=env)["deliveries"] == 1  # untracked: the developer's own
    books.git("add", "-f", str(record))
    books.commit("vendored data")
    data = report(paqad_cli, books.root, env=env)
    assert data["deliveries"] == 0 and "tracked by git" in data["note"], data


def copilot_tool(root: Path, name: str, args: dict, result: str, session_id: str = "s-1") -> None:
    """Copilot CLI's postToolUse, as its recorded JSON has it, for one tool call of the agent's."""
    data = host_json("copilot", "tool", cwd=root, session_id=session_id)
    data.update({"toolName": name, "toolArgs": json.dumps(args), "toolResult": {"resultType": "success", "textResultForLlm": result}})
    done = run_host(root, "copilot", "tool", stdin=json.dumps(data))
    assert done.returncode == 0, done.stderr


def test_tool_events_measure_a_host_that_names_no_transcript(books, paqad_cli):
    # Copilot CLI names no transcript; its postToolUse events (which paqad's hook already gets)
    # carry each tool call. The record keeps paths and span keys, never the pattern or the result.
    data = host_json("copilot", "prompt", cwd=books.root, prompt=PROMPT, session_id="s-1")
    assert "books/ledger.py:L" in run_host(books.root, "copilot", stdin=json.dumps(data)).stdout
    root = books.root
    copilot_tool(root, "view", {"path": str(root / "books/ledger.py"), "view_range": [1, 8]}, "(file text)")
    copilot_tool(root, "grep", {"pattern": "reconcile_quarterly_ledger", "path": str(root)}, f"{root}/books/ledger.py")
    copilot_tool(root, "grep", {"pattern": "def vat_", "path": str(root)}, f"{root}/books/tax.py:4:def vat_for(amount)")
    copilot_tool(root, "view", {"path": str(root / "books/tax.py")}, "(file text)")
    copilot_tool(root, "view", {"path": str(root / "notes/unrelated.txt")}, "(file text)")
    copilot_tool(root, "edit", {"path": str(root / "books/ledger.py"), "old_str": "a", "new_str": "b"}, "ok")
    copilot_tool(root, "view", {"path": str(root / "books/ledger.py")}, "(file text)", session_id="another-session")  # not this session's
    copilot = report(paqad_cli, books.root)["hosts"]["copilot"]
    got = {k: copilot[k] for k in ("deliveries", "measured", "used", "opened", "searched", "edited", "missed_ranked", "missed_unranked")}
    assert got == {"deliveries": 1, "measured": 1, "used": 1, "opened": 1, "searched": 1, "edited": 1, "missed_ranked": 1, "missed_unranked": 1}, copilot
    moves = [r for r in records(books.root) if r.get("kind") == "tool"]
    assert len(moves) == 6 and all(r["session"] == "s-1" for r in moves), moves  # another session's event is not this delivery's
    text = json.dumps(moves)
    assert "def vat_" not in text and "(file text)" not in text and "amount" not in text and "pattern" not in text  # no pattern, no result


def test_cursor_tool_events_count_too(books, paqad_cli):
    # Cursor (no CLI here): its documented beforeSubmitPrompt and postToolUse JSON (recorded/cursor/).
    # It records the prompt and delivers on the first tool use; the tool events after it are counted.
    data = host_json("cursor", "prompt", cwd=books.root, prompt=PROMPT, session_id="c-1")
    assert run_host(books.root, "cursor", stdin=json.dumps(data)).returncode == 0
    from paqad.delivery import context
    from testing.env import wait_for

    assert wait_for(lambda: (context.last_delivery(books.root) or context.Delivery("x", "")).query == PROMPT)
    for name, args in (("Read", {"path": "README.md"}), ("Read", {"path": str(books.root / "books/ledger.py")}), ("Grep", {"pattern": "vat_for"})):
        event = host_json("cursor", "tool", cwd=books.root, session_id="c-1")
        event.update({"tool_name": name, "tool_input": args, "tool_output": "books/tax.py:4"})
        assert run_host(books.root, "cursor", "tool", stdin=json.dumps(event)).returncode == 0
    cursor = report(paqad_cli, books.root)["hosts"]["cursor"]
    assert [r["status"] for r in records(books.root) if r.get("kind") != "tool"] == ["handover"]  # delivered on the first tool use
    assert (cursor["measured"], cursor["used"], cursor["opened"]) == (1, 1, 1), cursor  # the first Read delivered: the second counts
    assert (cursor["missed_unranked"], cursor["missed_ranked"]) == (0, 0), cursor  # README.md was read before the context arrived


def test_doctors_replays_leave_the_record_as_it_was(books, paqad_cli, tmp_path):
    """``paqad doctor`` runs every installed host's hook with its recorded input: those are not
    the agent's turns, and ``paqad report`` must not count them."""
    prompt(books.root, "claude", PROMPT, tmp_path / "t.jsonl")
    before = uptake.path(books.root).read_bytes()
    doctor = paqad_cli("doctor", "--json", cwd=books.root)
    assert json.loads(doctor.stdout)["findings"], doctor.stderr
    assert uptake.path(books.root).read_bytes() == before



def test_a_subagents_moves_count_for_the_turn_that_started_it(books, paqad_cli, tmp_path):
    # Claude Code 2.1 writes a subagent's transcript to <session>/subagents/agent-<id>.jsonl.
    log = tmp_path / "sess.jsonl"
    log.write_text("", encoding="utf-8")
    subagents = tmp_path / "sess" / "subagents"
    subagents.mkdir(parents=True)
    old = subagents / "agent-old.jsonl"  # an earlier turn's subagent: written before this delivery
    old.write_text(tool_use("o1", "Edit", {"file_path": str(books.root / "books/ledger.py")}), encoding="utf-8")
    os.utime(old, (1_000_000, 1_000_000))
    prompt(books.root, "claude", PROMPT, log)
    with log.open("a", encoding="utf-8") as out:
        out.write(tool_use("t1", "Agent", {"description": "look", "prompt": "find the ledger code"}))
    (subagents / "agent-new.jsonl").write_text(tool_use("s1", "Read", {"file_path": str(books.root / "books/ledger.py"), "offset": 3, "limit": 2}), encoding="utf-8")
    claude = report(paqad_cli, books.root)["hosts"]["claude"]
    assert (claude["measured"], claude["used"], claude["opened"], claude["edited"]) == (1, 1, 1, 0), claude
