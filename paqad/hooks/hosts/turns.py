"""What a prompt hook may search: the user's own words, once per turn.

Three rules, each learnt from a real host (issue 13):

- **Never search paqad's own text.** Gemini CLI in headless mode prepends a session start's hook
  context to the prompt as ``<hook_context>…</hook_context>``; Qwen Code wraps hook context in
  ``<qwen:user-prompt-submit-context>``. Those blocks, and anything from one of paqad's own
  headings to its end mark, are cut before the prompt is searched or recorded.
- **Machine-made prompts are skipped**: scheduled loops, subagent results, tool-result
  continuations, messages from other sessions. Each host module recognises them from its own
  fields (``Event.machine``); the hook log says why nothing was delivered.
- **One delivery per turn.** Some hosts run more than one paqad hook for one prompt: Copilot CLI
  also runs the hooks in ``.claude/settings.json``, so with both installed the same prompt
  arrives twice, a few milliseconds apart. The first hook to claim a prompt answers it; a claim
  of the same text by another host's hook in the same repository within ``WINDOW_S`` is skipped.
  The same host sending the same words again is the user asking again, and is answered, except
  right after a session start that answered them: Copilot CLI 1.0.102 (``copilot -p``) sends the
  prompt as ``sessionStart``'s ``initialPrompt`` and then again as ``userPromptSubmitted``, ~0.1 s
  apart, same ``sessionId`` (seen by tests/hosts_e2e_test.py), and the model got the block twice.
  On a loaded machine the gap between the two can pass ``WINDOW_S`` (a CI run saw the block twice
  again), so a session start's claim is honoured for ``SESSION_WINDOW_S`` when both events name the
  same session; without session ids the short window stays the rule. The two events can also
  arrive the other way round (a full CI run saw ``userPromptSubmitted``'s hook claim the prompt
  before ``sessionStart``'s hook, started first, got to it): whichever of the pair comes second is
  skipped. The claim is a file per prompt hash, created exclusively with its content already in
  it (``_publish``), so two hooks racing each other cannot both win, and none reads a half-made claim.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from paqad import workspace
from paqad.delivery import context

#: The heading paqad's hook text starts with, and the line it ends with.
OWN_HEADINGS = (f"{context.SECTION} (paqad)", "## paqad (orientation)")
END_MARK = "(end of paqad context)"
_BLOCKS = re.compile(r"<(hook_context|qwen:user-prompt-submit-context)>.*?</\1>", re.S)
TURNS_DIR = "hosts-turns"
WINDOW_S = 10.0
#: How long a session start's answer covers the same session's first prompt event with its words.
SESSION_WINDOW_S = 300.0


def strip_own(text: str) -> tuple[str, str]:
    """``text`` without the blocks paqad or a host's hook plumbing put there; a note when cut."""
    out = _BLOCKS.sub("", text)
    for heading in OWN_HEADINGS:
        while heading in out:
            start = out.index(heading)
            end = out.find(END_MARK, start)
            out = out[:start] + (out[end + len(END_MARK) :] if end >= 0 else "")
    out = out.strip()
    return out, ("" if out == text.strip() else "; hook context text removed from the prompt")


def end_marked(text: str | None) -> str | None:
    """paqad's hook text with its end mark, so a host that echoes it back can have it cut."""
    return f"{text.rstrip()}\n{END_MARK}" if text else text


def _key(prompt: str) -> str:
    return hashlib.sha256(" ".join(prompt.split()).encode("utf-8", "replace")).hexdigest()[:32]


def claim(root: Path, prompt: str, host: str, now: float | None = None, kind: str = "prompt", session: str = "") -> str | None:
    """Claim this prompt's turn for ``host``; None when claimed, else why it is a duplicate.
    ``kind`` is the event's (``prompt`` or ``session-start``), ``session`` the host's session id."""
    now = time.time() if now is None else now
    folder = workspace.state_dir(root) / TURNS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _key(prompt)
    for _ in range(2):
        try:
            _publish(path, f"{host}\n{kind}\n{session}")
        except FileExistsError:
            try:
                age = now - path.stat().st_mtime
                first, first_kind, first_session = (path.read_text(encoding="utf-8").split("\n") + ["", ""])[:3]
            except OSError:
                continue  # released meanwhile: try again
            first = first.strip()
            if not first:  # written by a hook that died mid-claim (or an older paqad's, still writing)
                path.unlink(missing_ok=True)
                continue
            if 0 <= age < WINDOW_S and first != host:
                return f"duplicate: the {first} hook answered this prompt {age:.1f}s ago"
            same_session = bool(first_session and session and first_session == session)
            window = SESSION_WINDOW_S if same_session else WINDOW_S
            if 0 <= age < window and {first_kind, kind} == {"session-start", "prompt"} and (same_session or not (first_session and session)):
                _write(path, host, "prompt", session)  # consumed: the same words once more are asked again
                which = "start" if first_kind == "session-start" else "prompt event"
                return f"duplicate: this session's {which} answered this prompt {age:.1f}s ago"
            path.unlink(missing_ok=True)  # an old turn: this is a new one with the same words
            continue
        _prune(folder, now)
        return None
    return None


def _publish(path: Path, content: str) -> None:
    """Create ``path`` holding ``content``, or raise FileExistsError: the claim appears whole. An
    ``O_EXCL`` create followed by a write left an empty file for a moment, and a second hook of the
    same host reading it then took it for another host's claim (a CI run under load saw Cline's
    two TaskStart hooks, the user's and the project's, skip one turn that way). The content goes
    to a private file first and is hard-linked into place; where links are not allowed, the old
    create-then-write (an empty claim read meanwhile is then taken as stale, not as another host's)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}")
    tmp.write_text(content, encoding="utf-8")
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
    finally:
        tmp.unlink(missing_ok=True)


def _write(path: Path, host: str, kind: str, session: str) -> None:
    try:
        path.write_text(f"{host}\n{kind}\n{session}", encoding="utf-8")
    except OSError:
        pass


def _prune(folder: Path, now: float) -> None:
    try:
        for entry in os.scandir(folder):
            if now - entry.stat().st_mtime > SESSION_WINDOW_S:
                os.unlink(entry.path)
    except OSError:
        pass
