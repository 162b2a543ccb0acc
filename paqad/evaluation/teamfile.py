"""``.paqad/eval.yaml``: the team's own questions for ``paqad rag eval`` (optional, committed).

```yaml
questions:
  - q: "where is the session cookie signed"      # required, non-empty
    id: cookie-signing                           # optional, unique
    answers:                                     # one or more accepted answers, any of:
      - src/app/sessions.py                      #   a file
      - src/app/sessions.py:40-72                #   a line span of a file (1-based, inclusive)
      - src/app/sessions.py::SessionInterface.sign   # a unit id, as `paqad rag search --json` prints it
  - q: "how do we bill in bitcoin"
    unanswerable: true                           # instead of answers: nothing here should answer it
```

Both arms are scored per file, so every form counts as its file; spans and unit ids are checked
(a span must be inside the file, a unit id must be in the index) and reported as written. Any other
key, a missing file or a malformed entry is an error naming the file and the entry: the evaluation
does not run on a test set the team did not mean.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import yaml

from paqad import workspace, yamlio
from paqad.evaluation import EvalCannotRun
from paqad.evaluation.questions import Question

FILE_NAME = "eval.yaml"
TOP_KEYS = ("questions",)
ITEM_KEYS = ("id", "q", "answers", "unanswerable")
_SPAN = re.compile(r"^(?P<path>.+):(?P<start>\d+)-(?P<end>\d+)$")


def path_of(root: Path) -> Path:
    return workspace.paqad_dir(root) / FILE_NAME


def load(root: Path, unit_exists: Callable[[str], bool]) -> list[Question]:
    """The questions of ``.paqad/eval.yaml`` (none when the file is absent); EvalCannotRun when malformed."""
    path = path_of(root)
    if workspace.team_file(root, path) is None:  # absent, or reached through a symlink (never read)
        return []
    where = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    data = _read(path, where)
    items = data.get("questions")
    if not isinstance(items, list) or not items:
        raise EvalCannotRun(f"{where}: 'questions' must be a non-empty list")
    out, ids = [], set()
    for i, item in enumerate(items):
        question = _question(root, where, i, item, unit_exists)
        if question.id in ids:
            raise EvalCannotRun(f"{where}: questions[{i}]: duplicate id {question.id!r}")
        ids.add(question.id)
        out.append(question)
    return out


def _read(path: Path, where: str) -> dict[object, object]:
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EvalCannotRun(f"{where}: not valid YAML ({' '.join(str(exc).split())})") from exc
    if not isinstance(data, dict):
        raise EvalCannotRun(f"{where}: expected a mapping with the key 'questions', got {type(data).__name__}")
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise EvalCannotRun(f"{where}: unknown key {unknown[0]!r}; allowed keys: {', '.join(TOP_KEYS)}")
    return data


def _question(root: Path, where: str, i: int, item: object, unit_exists: Callable[[str], bool]) -> Question:
    at = f"{where}: questions[{i}]"
    if not isinstance(item, dict):
        raise EvalCannotRun(f"{at}: expected a mapping with keys {', '.join(ITEM_KEYS)}")
    unknown = [k for k in item if k not in ITEM_KEYS]
    if unknown:
        raise EvalCannotRun(f"{at}: unknown key {unknown[0]!r}; allowed keys: {', '.join(ITEM_KEYS)}")
    text = item.get("q")
    if not isinstance(text, str) or not text.strip():
        raise EvalCannotRun(f"{at}: 'q' must be a non-empty question string")
    qid = item.get("id", f"team-{i + 1:03d}")
    if not isinstance(qid, (str, int)) or not str(qid).strip():
        raise EvalCannotRun(f"{at}: 'id' must be a non-empty string")
    unanswerable, answers = item.get("unanswerable", False), item.get("answers")
    if unanswerable not in (True, False):
        raise EvalCannotRun(f"{at}: 'unanswerable' must be true or false")
    if unanswerable == (answers is not None):
        raise EvalCannotRun(f"{at}: give either 'answers' (a list of accepted answers) or 'unanswerable: true'")
    if unanswerable:
        return Question(str(qid), text.strip(), "team")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
        raise EvalCannotRun(f"{at}: 'answers' must be a non-empty list of strings (path, path:START-END or a unit id)")
    files = [_answer_file(root, f"{at}.answers[{j}]", a.strip(), unit_exists) for j, a in enumerate(answers)]
    return Question(str(qid), text.strip(), "team", list(dict.fromkeys(files)), accepted=[a.strip() for a in answers])


def _answer_file(root: Path, at: str, answer: str, unit_exists: Callable[[str], bool]) -> str:
    """The file an accepted answer names, after checking the answer against the repository."""
    if "::" in answer:
        if not unit_exists(answer):
            raise EvalCannotRun(f"{at}: no unit {answer!r} in the index (ids are printed by `paqad rag search --json`)")
        return _existing_file(root, at, answer.split("::", 1)[0])
    span = _SPAN.match(answer)
    if span is None:
        return _existing_file(root, at, answer)
    rel, start, end = span["path"], int(span["start"]), int(span["end"])
    full = _existing_path(root, at, rel)
    lines = full.read_text(encoding="utf-8", errors="replace").count("\n") + 1
    if not 1 <= start <= end <= lines:
        raise EvalCannotRun(f"{at}: span {start}-{end} is not inside {rel} (1-{lines})")
    return rel


def _existing_file(root: Path, at: str, rel: str) -> str:
    _existing_path(root, at, rel)
    return rel


def _existing_path(root: Path, at: str, rel: str) -> Path:
    try:
        full = workspace.join_within(root, rel)
    except ValueError as exc:
        raise EvalCannotRun(f"{at}: {exc}") from exc
    if not full.is_file():
        raise EvalCannotRun(f"{at}: no such file {rel!r} in the repository")
    return full
