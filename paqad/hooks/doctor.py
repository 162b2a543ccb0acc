"""``paqad doctor``: run each installed host's hook command as the host would, and say what is wrong.

For every host whose hooks are installed here, the check replays that host's recorded input
(``paqad/hooks/hosts/recorded/<host>/<event>.json``, the JSON the real CLIs send) through the very
command written into the host's config, through ``sh -c`` in the repository, and checks what the
host would check: exit 0, nothing on stderr, the output's shape (one JSON object, or plain text
for the hosts that take text), its size against the host's limit, and the time against the host's
timeout. It also says which paqad the command ran (the shim, PATH, or none), whether the host
will run the hook at all (Codex's project trust and hook review, Gemini's ``hooksConfig.enabled``,
Qwen's ``disableAllHooks``), whether a config was written by an older paqad, and whether a
registered MCP server can start. One finding per line, each with its fix.

The replay asks a question the index can answer, taken from the index itself (:func:`probe`: a
documented unit's docstring with its identifiers taken out, the way ``paqad rag eval`` makes its
questions), so a prompt hook that exits 0 with nothing is an error, not ``ok`` (issue 34: a hook
returned 0 characters in 4.2 s and doctor said ``ok``); the hook's own ``hooks.log`` line for the
replay says why. An old (stale) context is shown as such; one replay is one sample of this
moment's load, so the counts of real prompts below are what warns about it. With no index there
is nothing to answer from: a warning with the fix, and the replay's silence is not judged.

It also counts how the last prompts were really answered, per host (:mod:`paqad.hooks.tally`),
and warns when too many got an old context or none.

The replay asks a real question, so it would record a prompt and a delivery: the state files a
hook writes are kept before and put back after, so a doctor run leaves the next prompt's context
as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from paqad import config, trust, workspace
from paqad.channel import paths
from paqad.errors import IndexMissingError, PaqadError
from paqad.evaluation import questions as qmod
from paqad.hooks import hosts, mcp_install, runner, tally
from paqad.hooks.hosts import base, cline, gemini, launcher, turns
from paqad.index.reader import Index

PROBE_PROMPT = "where is the configuration of this project loaded"  # asked when the index has nothing to ask about
PROBE_SESSION = "paqad-doctor"
RECORDED = Path(hosts.__file__).parent / "recorded"
#: A recorded event (``recorded/<host>/<event>.json``) -> the hint in the installed command (``paqad hook run HINT``).
HINTS = {
    "prompt": "prompt-submit",
    "session-start": "session-start",
    "subagent-start": "subagent-start",
    "tool": "tool-use",
    "post-tool-use": "file-changed",
    "file-changed": "file-changed",
}
PLAIN = ("kiro", "opencode")  # hosts whose hook output is the context as plain text
#: The files a hook run writes, relative to ``.paqad/``; kept and put back around the replay.
STATE = ("state/prompt.json", "state/context.json", "context/session-context.md", "state/hosts-delivered.json", "logs/hooks.log", "logs/uptake.jsonl")


#: Warn when more than this share of a host's answered prompts got an old context, nothing, or
#: failed. One prompt in five answered from another question's passages is often enough for an
#: agent to be misled in a session; below it, the odd cold start (the first prompt after a model
#: load or an index build is stale by design) stays quiet.
MISSED_SHARE = 0.2
#: ... and only when at least this many missed: a single cold start in a short log never warns.
MISSED_MIN = 2


@dataclass
class Probe:
    """The question the replay asks, and where its answer is (``where`` empty: not answerable here)."""

    question: str
    where: str = ""


@dataclass
class Finding:
    host: str
    level: str  # ok | warn | error
    what: str
    fix: str = ""

    def line(self) -> str:
        fix = f" — fix: {self.fix}" if self.fix else ""
        return f"{self.level:<5} {self.host:<9} {self.what}{fix}"


def check(root: Path, home: Path | None = None) -> list[Finding]:
    """Every finding for the hosts installed in ``root`` (an empty install is one finding too)."""
    out = trust_findings(root)
    installed = [name for name, host in hosts.HOSTS.items() if host.status(root).state != "absent"]
    if not installed:
        return [*out, Finding("-", "warn", "no agent host is installed here", "paqad hooks install (or --agents NAME)")]
    out.extend(_which_paqad(root))
    asked, found = probe(root)
    out.extend(found)
    for name in installed:
        out.extend(_host_findings(root, name, home or Path.home(), asked))
    out.extend(_mcp_findings(root))
    out.extend(runtime_findings(root))
    out.extend(tally_findings(root))
    return out


def probe(root: Path) -> tuple[Probe, list[Finding]]:
    """A question the live index answers: the docstring of a documented unit (not a test), its
    identifiers taken out (:mod:`paqad.evaluation.questions`), first in a fixed seeded order so
    runs over one index ask the same; else "where is NAME defined" for a code unit. An index that is
    absent, empty or unreadable gives :data:`PROBE_PROMPT` and a warning with the fix."""
    try:
        index = Index.open(root)
        try:
            units = index.all_units(("id", "path", "name", "kind", "docstring", "part", "is_test"))
        finally:
            index.close()
    except IndexMissingError:
        return Probe(PROBE_PROMPT), [Finding("-", "warn", "no index here: the prompt hooks have nothing to answer from, so their replies are not judged", "paqad rag init")]
    except (PaqadError, OSError) as exc:
        return Probe(PROBE_PROMPT), [Finding("-", "warn", f"the index cannot be read, so the prompt hooks' replies are not judged: {exc}", "paqad rag rebuild")]
    code = [u for u in units if u.part == 1 and not u.is_test and u.kind in qmod.CODE_KINDS]
    picked = qmod.sample(qmod.docstring_candidates(u for u in code if u.docstring), seed=0)
    if not code:
        return Probe(PROBE_PROMPT), [Finding("-", "warn", "the index holds no function or class to ask about, so the prompt hooks' replies are not judged", "paqad rag update")]
    unit, _para, question = picked[0] if picked else (min(code, key=lambda u: u.id), "", "")
    asked = Probe(question or f"where is {unit.name} defined", f"{unit.path} ({unit.name})")
    return asked, [Finding("-", "ok", f"the replays ask {asked.question[:120]!r}, which the index answers with {asked.where}")]


def tally_findings(root: Path, window: int = tally.DEFAULT_WINDOW) -> list[Finding]:
    """One line per host: how its last prompts were answered (from ``hooks.log``); ``warn`` when
    more than :data:`MISSED_SHARE` of them (and at least :data:`MISSED_MIN`) missed their own context."""
    counted = tally.count(root, window)
    if not counted.hosts:
        return [Finding("-", "ok", f"no prompt answered yet in {counted.log}")]
    out = []
    for name, host in counted.hosts.items():
        seen = host.answered + host.counts["skipped"] + host.counts["recorded"]
        what = f"{seen} prompts among the last {window} prompt-hook lines of hooks.log: {host.summary()}"
        if host.missed >= MISSED_MIN and host.missed > MISSED_SHARE * host.answered:
            fix = f"the budget may be too short: paqad config set rag_prompt_budget 3, or paqad config set rag_serve true; the reasons are in {counted.log}"
            out.append(Finding(name, "warn", f"{host.missed} of {host.answered} answered prompts got an old context or none; {what}", fix))
        else:
            out.append(Finding(name, "ok", what))
    return out


def trust_findings(root: Path) -> list[Finding]:
    """Where this work tree's per-developer files are; what under ``.paqad/`` paqad ignores (tracked
    per-developer files, symlinks: a commit's attempt to reach this machine); a launcher that is not paqad's."""
    local = workspace.local_dir(root)
    out = [Finding("-", "ok", f"per-developer files (settings, keys, index, logs) in {local}" if local.is_dir() else f"paqad is not set up in this work tree ({local} does not exist)")]
    for found in trust.findings(root):
        what = "tracked by git" if found.why == "tracked" else "a symlink"
        out.append(Finding("-", "error", f"{found.path} is {what}; paqad never reads it (a commit put it there: see who added it)", f"git rm -r --cached {found.path}, or delete it"))
    shim = launcher.shim_path()
    if os.path.lexists(shim) and not launcher.is_our_shim(shim):
        out.append(Finding("-", "error", f"{shim} is not paqad's launcher; hook commands would run it", "paqad hooks install (replaces it)"))
    return out


def runtime_findings(root: Path) -> list[Finding]:
    """A refused runtime folder (another user's, open to others, a symlink): refused correctly,
    but otherwise silent, and with none usable the resident service is off (issue 31)."""
    refused = paths.refused_problem(root)
    return [Finding("-", "warn", refused[0], refused[1])] if refused else []


def _which_paqad(root: Path) -> list[Finding]:
    shim = launcher.shim_path()
    found, how = launcher.resolve()
    if how == "none":
        return [Finding("-", "error", f"no paqad for the hook commands: no launcher at {shim} and no paqad on PATH", "paqad hooks install")]
    if how == "shim → PATH":
        return [Finding("-", "warn", f"the launcher's interpreter is gone; hooks run {found} from PATH", f"paqad hooks install (rewrites {shim})")]
    if how == "PATH":
        return [Finding("-", "warn", f"no launcher at {shim}; hooks run {found} from PATH", "paqad hooks install")]
    return [Finding("-", "ok", f"hook commands run {found} (through {shim})")]


def _host_findings(root: Path, name: str, home: Path, asked: Probe) -> list[Finding]:
    host: Any = hosts.HOSTS[name]
    state = host.status(root)
    out = []
    if state.state == "partial":
        out.append(Finding(name, "error", "only some of paqad's hooks are installed", f"paqad hooks install --agents {name}"))
    if state.note:
        out.append(Finding(name, "warn", state.note, ""))
    if _old_command(root, state.paths):
        out.append(Finding(name, "warn", "its config was written by an older paqad (PATH only, or a launcher inside the repository)", f"paqad hooks install --agents {name}"))
    if name == "codex":
        out.extend(_codex_trust(root, home))
    if name == "gemini":
        off = gemini.disabled_in(root, home)
        if off and not state.note:
            out.append(Finding(name, "error", f"hooksConfig.enabled is false in {off}: Gemini CLI runs no hooks", 'set "hooksConfig": {"enabled": true}'))
    for event in sorted(p.stem for p in (RECORDED / name).glob("*.json")):
        out.append(_replay(root, name, event, asked))
    return out


def _old_command(root: Path, paths: list[str]) -> bool:
    for rel in paths:
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except OSError:
            continue
        if any(mark in text for mark in launcher.OLD_MARKS):
            return True
    return False


def _codex_trust(root: Path, home: Path) -> list[Finding]:
    """Codex runs project hooks only in a trusted project, and only once they were reviewed."""
    path = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    found = data.get("projects")
    projects: dict = found if isinstance(found, dict) else {}
    entry = projects.get(str(root)) or projects.get(str(root.resolve())) or {}
    out = []
    if not isinstance(entry, dict) or entry.get("trust_level") != "trusted":
        out.append(Finding("codex", "error", f"Codex does not trust this project ({path}): it runs no project hook", "start `codex` here and trust the folder"))
    state = (data.get("hooks") or {}).get("state") if isinstance(data.get("hooks"), dict) else None
    reviewed = isinstance(state, dict) and any(str(root) in key and isinstance(v, dict) and v.get("trusted_hash") for key, v in state.items())
    if not reviewed:
        out.append(Finding("codex", "warn", "paqad's hooks are not reviewed in Codex (`codex exec` skips unreviewed hooks)", "start `codex` here and approve them (/hooks)"))
    return out


def _mcp_findings(root: Path) -> list[Finding]:
    registered = [name for name, cfg in mcp_install.HOSTS.items() if base.registers_paqad(cfg, root)]
    missing = mcp_install.cannot_start() if registered else None
    if missing:
        why = missing.removeprefix("not registered: ").split("; ")
        return [Finding("mcp", "error", f"`paqad mcp` is registered for {', '.join(registered)} but cannot start: {why[0]}", why[-1].removesuffix(", then run this again"))]
    return [Finding("mcp", "ok", f"`paqad mcp` can start ({', '.join(registered)})")] if registered else []


# ---- the replay ---------------------------------------------------------------------------------


def _replay(root: Path, name: str, event: str, asked: Probe) -> Finding:
    """Run the installed command for ``event`` with the host's recorded input; judge the output."""
    command = _command(root, name, event)
    if command is None:
        return Finding(name, "error", f"no installed command for {event}", f"paqad hooks install --agents {name}")
    shim = launcher.shim_path()
    if os.path.lexists(shim) and not launcher.is_our_shim(shim):
        return Finding(name, "error", f"{event}: not replayed: the command would run {shim}, which is not paqad's launcher", "paqad hooks install (replaces it)")
    if not _is_paqads(root, name, command):
        shown = command if len(command) <= 160 else command[:157] + "..."
        return Finding(name, "error", f"{event}: the installed command is not one paqad writes, so doctor did not run it: {shown!r}", f"review it; paqad hooks install --agents {name} rewrites it")
    payload = _payload(root, name, event, asked.question)
    kept = _keep_state(root)
    seen = len(runner.read_log(root))
    started = time.perf_counter()
    try:
        done = subprocess.run(["sh", "-c", command], cwd=root, input=payload, capture_output=True, text=True, timeout=base.HOOK_TIMEOUT_S * 3, check=False)
        logged = [e for e in runner.read_log(root)[seen:] if e.get("action") == f"context:{name}"]  # read before the log is put back
    except subprocess.TimeoutExpired:
        return Finding(name, "error", f"{event}: no answer within {base.HOOK_TIMEOUT_S * 3}s (the host gives up after {base.HOOK_TIMEOUT_S}s)", f"paqad hooks status; {runner.log_path(root)}")
    finally:
        _put_back(root, kept)
        shutil.rmtree(workspace.state_dir(root) / turns.TURNS_DIR, ignore_errors=True)
    seconds = time.perf_counter() - started
    found = _judge(name, event, done, seconds, str(runner.log_path(root)))
    if found.level == "ok" and asked.where and _answers_prompt(name, event, command):
        return _judge_answer(root, name, event, done, seconds, asked, logged[-1] if logged else None)
    return found


def _answers_prompt(name: str, event: str, command: str) -> bool:
    """Whether this replay must carry context: the prompt event of a host that takes context on its
    prompt (not Copilot's ``prompt-record`` for a CLI older than 1.0.65, nor Cursor)."""
    host: Any = hosts.HOSTS[name]
    return event == "prompt" and bool(host.DELIVERS_ON_PROMPT) and " prompt-record " not in command


def _delivered(name: str, stdout: str) -> bool:
    """Whether the host got context: Cline's quiet reply is JSON without ``contextModification``."""
    if name != "cline":
        return bool(stdout.strip())
    try:
        data = json.loads(stdout)
    except ValueError:
        return False
    return isinstance(data, dict) and bool(data.get("contextModification"))


def _judge_answer(root: Path, name: str, event: str, done: subprocess.CompletedProcess[str], seconds: float, asked: Probe, line: dict | None) -> Finding:
    """A prompt replay that ran cleanly: did it answer the question the index can answer?"""
    status = str((line or {}).get("status") or "")
    said = f"{status}: {_detail(line)}" if line else "no hooks.log line"
    if not _delivered(name, done.stdout):
        why, fix = _why_nothing(root, line)
        return Finding(name, "error", f"{event}: delivered nothing ({len(done.stdout):,} chars in {seconds:.2f}s) for a question the index answers with {asked.where}; {why}", fix)
    if status == "stale":  # one sample under this moment's load: the counts of real prompts (tally_findings) warn
        return Finding(name, "ok", f"{event}: exit 0, the last context, not this question's ({len(done.stdout):,} chars, {said}) in {seconds:.2f}s")
    return Finding(name, "ok", f"{event}: exit 0, context ({len(done.stdout):,} chars, {said}) in {seconds:.2f}s")


def _why_nothing(root: Path, line: dict | None) -> tuple[str, str]:
    """Why a prompt replay delivered nothing, and the fix, from its ``hooks.log`` line (or its absence)."""
    log = runner.log_path(root)
    if line is None:
        try:
            off = not config.load(root).rag_enabled
        except Exception:  # noqa: BLE001 - a broken setting is reported by the hook's error line, if any
            off = False
        if off:
            return "retrieval is off here (rag_enabled is false): every prompt hook stays silent", "paqad rag init (switches it on)"
        return "the hook logged nothing", f"paqad hooks install; see {log}"
    status = str(line.get("status") or "")
    why = f"the hook logged {status}: {_detail(line)}"
    if status in ("timeout", "stale"):
        return why, "paqad config set rag_prompt_budget 3, or paqad config set rag_serve true"
    if status in ("silent", "error"):
        return why, f"paqad rag update (repairs the index); see {log}"
    return why, f"see {log}"


def _detail(line: dict | None) -> str:
    """A replay's ``hooks.log`` detail (or error) without the clock note every hook line carries."""
    text = str((line or {}).get("detail") or (line or {}).get("error") or "")
    return text.replace("; seconds from process start", "")


def _judge(name: str, event: str, done: subprocess.CompletedProcess[str], seconds: float, log: str) -> Finding:
    host: Any = hosts.HOSTS[name]
    if done.returncode != 0:
        return Finding(name, "error", f"{event}: exit {done.returncode}; the host may show or block on it", f"paqad hooks install; see {log}")
    if done.stderr.strip():
        return Finding(name, "warn", f"{event}: wrote to stderr: {done.stderr.strip()[:200]}", f"see {log}")
    shape = _shape(name, done.stdout)
    if shape:
        return Finding(name, "error", f"{event}: {shape}", "paqad hooks install")
    size = len(done.stdout)
    if size > host.LIMIT + 500:
        return Finding(name, "error", f"{event}: {size:,} characters, over the host's {host.LIMIT:,}", "report it: paqad should cut to the limit")
    if seconds > base.HOOK_TIMEOUT_S:
        return Finding(name, "error", f"{event}: {seconds:.1f}s, over the host's {base.HOOK_TIMEOUT_S}s timeout", "paqad config set rag_prompt_budget 1.5")
    said = "context" if done.stdout.strip() else "nothing"
    return Finding(name, "ok", f"{event}: exit 0, {said} ({size:,} chars) in {seconds:.2f}s")


def _shape(name: str, stdout: str) -> str:
    """What is wrong with the output's shape for this host ("" when nothing)."""
    if name in PLAIN or not stdout.strip():
        return ""
    try:
        data = json.loads(stdout)
    except ValueError:
        return "stdout is not JSON; the host would ignore it or fail"
    return "" if isinstance(data, dict) else "stdout is JSON but not an object"


def _is_paqads(root: Path, name: str, command: str) -> bool:
    """True when ``command`` is exactly one paqad writes today: the host configs are committed,
    so a command that merely mentions ``paqad hook run`` may carry anything else, and doctor runs
    what it replays. Cline's hook is a file: it must be a regular file with paqad's exact text."""
    if name == "cline":
        path = Path(command)
        if path.is_symlink() or workspace.linked_part(root, path) is not None:
            return False
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        return any(text == cline.script(event) for event in cline.EVENTS)
    words = command.split(" hook run ", 1)[-1].split()
    return len(words) >= 3 and words[1] == "--host" and command == launcher.command(words[0], words[2])


def _command(root: Path, name: str, event: str) -> str | None:
    """The command paqad wrote into the host's config for this recorded event."""
    host: Any = hosts.HOSTS[name]
    hint = HINTS[event]
    if name == "cline":
        path = root / (".clinerules/hooks/TaskStart" if hint == "session-start" else ".clinerules/hooks/UserPromptSubmit")
        return str(path) if path.exists() else None
    try:
        text = (root / host.CONFIG).read_text(encoding="utf-8")
    except OSError:
        return None
    if name == "opencode":
        return str(json.loads(text.split("const COMMAND = ", 1)[1].split(";\n", 1)[0])) if "const COMMAND = " in text else None
    hooks_map = json.loads(text).get("hooks") or {}
    for groups in hooks_map.values():
        for group in groups if isinstance(groups, list) else []:
            entry = group["hooks"][0] if isinstance(group, dict) and "hooks" in group else group
            command = str(entry.get("command") or entry.get("bash") or "") if isinstance(entry, dict) else ""
            if base.is_ours(command) and (f" {hint} " in command or (hint == "prompt-submit" and " prompt-record " in command)):
                return command
    return None


def _payload(root: Path, name: str, event: str, question: str = PROBE_PROMPT) -> str:
    values = {"cwd": str(root), "prompt": question, "session_id": PROBE_SESSION, "initial_prompt": None, "file_path": None, "content": "", "agent_id": "paqad-doctor-agent"}
    data = json.loads((RECORDED / name / f"{event}.json").read_text(encoding="utf-8"))

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        if isinstance(node, str) and node.startswith("{{") and node.endswith("}}"):
            return values.get(node[2:-2])
        return node

    return json.dumps(fill(data))


def _keep_state(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for rel in STATE:
        path = workspace.local_dir(root) / rel
        out[rel] = path.read_bytes() if path.exists() else None
    return out


def _put_back(root: Path, kept: dict[str, bytes | None]) -> None:
    for rel, data in kept.items():
        path = workspace.local_dir(root) / rel
        if data is None:
            path.unlink(missing_ok=True)
        else:
            tmp = path.with_name(path.name + ".doctor")
            tmp.write_bytes(data)
            os.replace(tmp, path)


def to_json(findings: list[Finding]) -> dict:
    return {"ok": not any(f.level == "error" for f in findings), "findings": [asdict(f) for f in findings]}
