"""``paqad rag eval --mode feature-off-vs-on``: real git repositories, real indexes, the installed CLI."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from paqad import tokenize, workspace
from paqad.evaluation import EXIT_COULD_NOT_RUN, masked, questions
from paqad.index.records import StoredUnit
from testing.env import wait_for
from testing.repos import Repo, make_shop

FIXTURES = Path(__file__).parent / "fixtures" / "languages"

# A notes app: one big generic dispatcher (as real projects have: flask's app.py, a Django views.py)
# and many small focused modules, each documented the way people document code, with an
# implementation comment that restates the intent in other words (so the question's words live on
# in the code once the docstring is masked, as they do in real code bases).
TOPICS = [
    ("app/thumbnails.py", "make_thumbnail", "Shrink an uploaded picture to fit inside a square box, keeping its aspect ratio.",
     "# scale the uploaded picture down (never up) so it fits the square box; the aspect ratio is kept\n    width, height = picture.size\n    ratio = min(box / width, box / height, 1.0)\n    return picture.resize((int(width * ratio), int(height * ratio)))"),
    ("app/passwords.py", "hash_password", "Derive a salted key from the plain secret with many PBKDF2 rounds so stolen hashes are slow to crack.",
     "# a random salt per secret; many rounds make each guess slow, so stolen hashes are slow to crack\n    salt = os.urandom(16)\n    key = hashlib.pbkdf2_hmac('sha256', plain.encode(), salt, ROUNDS)\n    return salt.hex() + '$' + key.hex()"),
    ("app/webhooks.py", "verify_webhook", "Check the signature header of an incoming webhook against the shared secret before trusting its payload.",
     "# the incoming payload is only trusted when its signature header matches our shared secret\n    expected = hmac.new(secret, payload, 'sha256').hexdigest()\n    return hmac.compare_digest(expected, signature_header)"),
    ("app/ratelimit.py", "allow_request", "Decide whether a client may make another call, using a token bucket that refills every second.",
     "# token bucket: each client may call again while tokens remain; it refills every second\n    bucket = BUCKETS.setdefault(client, [CAPACITY, time.time()])\n    bucket[0] = min(CAPACITY, bucket[0] + (time.time() - bucket[1]) * REFILL)\n    bucket[1] = time.time()\n    if bucket[0] < 1:\n        return False\n    bucket[0] -= 1\n    return True"),
    ("app/exporter.py", "export_csv", "Write every note of a user as comma separated rows under a header line.",
     "# one comma separated row per note of the user, after the header line\n    writer = csv.writer(out)\n    writer.writerow(['title', 'created', 'body'])\n    for note in notes:\n        writer.writerow([note.title, note.created, note.body])"),
    ("app/mailer.py", "send_digest", "Email each subscriber a weekly summary of the notes they starred.",
     "# weekly summary email: each subscriber gets the notes they starred\n    for subscriber in subscribers:\n        starred = [n for n in subscriber.notes if n.starred]\n        smtp.send(subscriber.email, 'Your week', format_summary(starred))"),
    ("app/audit_trail.py", "record_event", "Append who did what and when to the append-only audit trail.",
     "# append-only audit trail: who did what, and when\n    line = json.dumps({'actor': actor, 'action': action, 'at': time.time()})\n    with open(TRAIL, 'a') as trail:\n        trail.write(line + '\\n')"),
    ("app/slugs.py", "slugify", "Turn arbitrary text into a lowercase, hyphen separated fragment that is safe inside URLs.",
     "# arbitrary text to a lowercase, hyphen separated fragment that is safe in URLs\n    words = re.findall(r'[a-z0-9]+', text.lower())\n    return '-'.join(words)[:80]"),
    ("app/pagination.py", "paginate", "Cut a long list of results into pages of a fixed size and report whether more follow.",
     "# cut the long list of results into pages of a fixed size; report whether more pages follow\n    start = (page - 1) * size\n    chunk = results[start:start + size]\n    return chunk, start + size < len(results)"),
    ("app/translations.py", "translate", "Look up the message in the catalogue of the reader's language, falling back to English.",
     "# look the message up in the catalogue of the reader's language, falling back to English\n    catalogue = CATALOGUES.get(language) or CATALOGUES['en']\n    return catalogue.get(message, message)"),
    ("app/backup.py", "snapshot_database", "Copy the database file to the archive folder with a timestamp in its name.",
     "# copy the database file into the archive folder, with a timestamp in the copy's name\n    stamp = time.strftime('%Y%m%d-%H%M%S')\n    shutil.copy2(DB_FILE, os.path.join(ARCHIVE, f'notes-{stamp}.sqlite'))"),
    ("app/tags.py", "merge_tags", "Combine two tag lists, removing duplicates while keeping the first spelling seen.",
     "# combine both lists, removing duplicates; the first spelling seen is kept\n    seen = {}\n    for tag in first + second:\n        seen.setdefault(tag.lower(), tag)\n    return list(seen.values())"),
    ("app/reminders.py", "due_reminders", "Find reminders whose time has passed and that have not fired yet.",
     "# reminders whose time has passed and that have not fired yet\n    now = time.time()\n    return [r for r in reminders if r.fire_at <= now and not r.fired]"),
    ("app/attachments.py", "scan_attachment", "Reject an attachment that is too large or whose extension is on the blocked list.",
     "# reject attachments that are too large or whose extension is on the blocked list\n    if attachment.size > MAX_BYTES:\n        raise Rejected('too large')\n    if attachment.extension in BLOCKED_EXTENSIONS:\n        raise Rejected('blocked extension')"),
    ("app/rendering.py", "render_note", "Convert the note body from Markdown to HTML and strip script tags.",
     "# Markdown body to HTML; script tags are stripped\n    html = markdown.markdown(note.body)\n    return re.sub(r'<script.*?</script>', '', html, flags=re.S)"),
    ("app/sharing.py", "share_link", "Create an expiring read-only link that lets someone without an account open a note.",
     "# an expiring read-only link: someone without an account can open the note until it expires\n    token = secrets.token_urlsafe(24)\n    LINKS[token] = (note.id, time.time() + ttl)\n    return f'/s/{token}'"),
    ("app/colors.py", "contrast_ratio", "Compute how readable text of one colour is against a background colour.",
     "# how readable is text of one colour against a background colour\n    lighter, darker = sorted([luminance(fg), luminance(bg)], reverse=True)\n    return (lighter + 0.05) / (darker + 0.05)"),
    ("app/trash.py", "purge_trash", "Permanently delete notes that have been in the bin for more than thirty days.",
     "# permanently delete notes that have been in the bin for more than thirty days\n    cutoff = time.time() - 30 * 86400\n    for note in list(bin_notes):\n        if note.trashed_at < cutoff:\n            store.delete(note.id)"),
    ("app/sessions.py", "rotate_session", "Issue a fresh session identifier after login so an old cookie cannot be replayed.",
     "# issue a fresh identifier after login so an old cookie cannot be replayed\n    old = request.cookies.get('sid')\n    SESSIONS.pop(old, None)\n    sid = secrets.token_hex(16)\n    SESSIONS[sid] = user.id\n    return sid"),
    ("app/spellcheck.py", "suggest_words", "Offer the closest dictionary entries for a misspelt word, ranked by edit distance.",
     "# offer the closest dictionary entries for a misspelt word, ranked by edit distance\n    scored = sorted(DICTIONARY, key=lambda entry: edit_distance(word, entry))\n    return scored[:limit]"),
]
GENERIC = ["request", "response", "value", "config", "handler", "error", "user", "data", "result", "context"]


GUIDE = """# User guide

## Pictures
Uploaded pictures are shown as small previews: we shrink each one so it fits inside a square, keeping
its aspect ratio, and never make a small picture bigger.

## Accounts and security
Passwords are never stored: we derive a salted key with many rounds, so stolen data is slow to crack.
After you log in you get a fresh session, so an old cookie cannot be replayed by someone else.
Webhooks we receive are checked against the shared secret in their signature header before we trust them.
A client that calls the API too often is slowed down: every client has a bucket of calls that refills each second.

## Notes
You can export all your notes as comma separated rows with a header line.
Each week subscribers get an email with a summary of the notes they starred.
Every change is appended to an audit trail that records who did what and when.
Titles become a lowercase, hyphen separated fragment that is safe in links.
Long lists of results are cut into pages of a fixed size; the page says whether more follow.
The interface is translated into the reader's language, falling back to English when a message is missing.
Tags from two sources are combined without duplicates, keeping the first spelling we saw.
Reminders fire once their time has passed; one that already fired never fires again.
Attachments that are too large, or whose extension is on the blocked list, are rejected.
Note bodies are written in Markdown and shown as HTML, with script tags stripped.
A read-only link lets someone without an account open one note until the link expires.
Text colours are checked for how readable they are against the background.
Deleted notes stay in the bin for thirty days, then they are permanently removed.
Misspelt words get suggestions: the closest dictionary entries, ranked by edit distance.

## Operations
The database file is copied to the archive folder every night, with a timestamp in its name.
"""


PARAMS = {  # real signatures: parameters name the concepts, as in real code
    "make_thumbnail": "picture, box", "hash_password": "plain, rounds=ROUNDS", "verify_webhook": "payload, signature_header, secret",
    "allow_request": "client", "export_csv": "notes, out, header=HEADER_ROW", "send_digest": "subscribers, smtp", "record_event": "actor, action",
    "slugify": "text", "paginate": "results, page, size", "translate": "message, language", "snapshot_database": "archive=ARCHIVE",
    "merge_tags": "first, second", "due_reminders": "reminders", "scan_attachment": "attachment", "render_note": "note",
    "share_link": "note, ttl", "contrast_ratio": "fg, bg", "purge_trash": "bin_notes, store", "rotate_session": "request, user, cookie_name='sid'",
    "suggest_words": "word, limit=5",
}


def make_notes_app(repo: Repo) -> Repo:
    for path, name, doc, body in TOPICS:
        repo.write(path, f'"""{name.replace("_", " ").capitalize()} for the notes app."""\n\nimport os, re, time\n\n\ndef {name}({PARAMS[name]}):\n    """{doc}"""\n    {body}\n')
    core = ['"""The request dispatcher: every handler of the notes app, registered by name."""\n']
    for i in range(80):
        w, v = GENERIC[i % len(GENERIC)], GENERIC[(i * 3 + 1) % len(GENERIC)]
        core.append(
            f"\ndef handle_{w}_{i}(request, config):\n    value = request.data.get('{w}')\n    if value is None:\n"
            f"        raise ValueError('missing {w} in the request data for this user')\n"
            f"    result = config.handler(value, user=request.user, error=None, context='{v}')\n    return result\n"
        )
    repo.write("app/core.py", "".join(core))
    repo.write("README.md", "# Notes\n\nA small notes app: write notes, tag them, share them, export them.\n")
    repo.write("docs/guide.md", GUIDE)
    repo.commit("notes app")
    return repo


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _index_files(root: Path) -> dict[str, str]:
    folder = workspace.vectors_dir(root)
    return {p.name: _sha(p) for p in folder.iterdir() if p.name == "CURRENT" or p.name.endswith(".sqlite")}


def _eval(paqad_cli, root: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict | None]:
    proc = paqad_cli("rag", "eval", "--json", *args, cwd=root)
    data = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return proc, data


# ---- the CLI, end to end -----------------------------------------------------------------------


def test_eval_pays_on_a_focused_repo_and_leaves_the_live_index_alone(repo: Repo, paqad_cli) -> None:
    make_notes_app(repo)
    assert paqad_cli("rag", "init", "--provider", "none", cwd=repo.root).returncode == 0
    before = _index_files(repo.root)

    proc, data = _eval(paqad_cli, repo.root)

    assert proc.returncode == 0, proc.stderr + proc.stdout[-2000:]
    assert data["exit_code"] == 0 and data["verdict"]["pays"] is True
    assert data["mode"] == "feature-off-vs-on"
    assert len(TOPICS) - 2 <= data["sources"]["docstring"] == data["masked_units"] and data["not_masked"] == []
    assert data["sources"]["unanswerable"] >= 15 and data["sources"]["team"] == 0
    for arm in ("off", "on"):
        assert set(data["metrics"][arm]) >= {"hit@1", "hit@5", "silence", "chars_per_question", "counts"}
    on, off = data["metrics"]["on"], data["metrics"]["off"]
    assert on["hit@5"] >= off["hit@5"] and on["silence"] > off["silence"]
    assert len(data["questions"]) == data["sources"]["docstring"] + data["sources"]["unanswerable"]
    # the live index is byte-identical, and the scratch copy is gone
    assert _index_files(repo.root) == before
    assert not list((workspace.state_dir(repo.root)).glob("eval-*"))


def test_questions_carry_none_of_the_units_identifiers(repo: Repo, paqad_cli) -> None:
    make_notes_app(repo)
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    _, data = _eval(paqad_cli, repo.root)
    by_name = {f"{path}::{name}": (name, doc) for path, name, doc, _ in TOPICS}
    docs = [r for r in data["questions"] if r["source"] == "docstring"]
    assert docs
    for row in docs:
        name, _doc = by_name[row["unit"]]
        words = row["question"].split()
        assert not set(tokenize.terms(row["question"])) & set(tokenize.terms(name)), row
        assert not any("_" in w or "`" in w or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|\w\.\w", w) for w in words), row
        assert len(questions.content_words(row["question"])) >= questions.MIN_CONTENT_WORDS
        assert row["answers"] == [row["unit"].split("::")[0]]
        for arm in ("off", "on"):
            assert set(row[arm]) >= {"rank", "silent", "chars", "files"}


def test_a_tiny_repo_where_grep_finds_everything_does_not_pay(tmp_path: Path, paqad_cli) -> None:
    """Fifteen small files: grep's top five holds nearly every answer, and paqad's evidence gate
    refuses most questions once the docstring that carried their words is masked: exit 1."""
    repo = Repo.init(tmp_path / "langs")
    shutil.copytree(FIXTURES, repo.root, dirs_exist_ok=True)
    repo.commit("fixtures")
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)

    proc, data = _eval(paqad_cli, repo.root, "--limit", "40")

    assert proc.returncode == 1, proc.stderr
    assert data["verdict"]["pays"] is False and data["exit_code"] == 1
    assert any("lowers hit@5" in r for r in data["verdict"]["reasons"])
    assert data["not_masked"] == []  # doc comments of C, Go, Java, Ruby, ... were masked too
    text = paqad_cli("rag", "eval", cwd=repo.root)
    assert text.returncode == 1 and "retrieval does not pay" in text.stdout and "hit@5" in text.stdout


def test_a_floor_only_perfect_scores_reach_makes_retrieval_not_pay(repo: Repo, paqad_cli) -> None:
    make_notes_app(repo)
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    proc = paqad_cli("-c", "rag_similarity_threshold=1.0", "-c", "rag_relief_floor=1.0", "rag", "eval", "--json", cwd=repo.root)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1, proc.stderr
    assert any("lowers hit@5" in r for r in data["verdict"]["reasons"])
    assert data["metrics"]["on"]["silent_answerable"] > 0


def test_no_index_could_not_run(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    proc = paqad_cli("rag", "eval", cwd=repo.root)
    assert proc.returncode == EXIT_COULD_NOT_RUN == 3
    assert "no index" in proc.stderr and "paqad rag init" in proc.stderr
    assert proc.stdout == ""


def test_too_few_questions_could_not_run(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    proc = paqad_cli("rag", "eval", "--limit", "2", cwd=repo.root)
    assert proc.returncode == 3
    assert "answerable question" in proc.stderr and "eval.yaml" in proc.stderr


def test_mode_is_validated(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    proc = paqad_cli("rag", "eval", "--mode", "feature-on-vs-peer", cwd=repo.root)
    assert proc.returncode == 2
    assert "feature-off-vs-on" in proc.stderr


@pytest.mark.parametrize(
    "text, message",
    [
        ("questions: [", "not valid YAML"),
        ("question: []\n", "unknown key 'question'"),
        ("questions: []\n", "non-empty list"),
        ("questions:\n  - q: where are cards charged\n", "either 'answers'"),
        ("questions:\n  - q: where are cards charged\n    answers: [shop/nowhere.py]\n", "no such file 'shop/nowhere.py'"),
        ("questions:\n  - q: where are cards charged\n    answers: ['shop/payments.py:5-900']\n", "span 5-900"),
        ("questions:\n  - q: where are cards charged\n    answers: ['shop/payments.py::Nope']\n", "no unit"),
        ("questions:\n  - q: where are cards charged\n    answers: [../outside.py]\n", "outside the repository"),
        ("questions:\n  - q: x\n    unanswerable: true\n    colour: red\n", "unknown key 'colour'"),
    ],
)
def test_malformed_eval_yaml_could_not_run(repo: Repo, paqad_cli, text: str, message: str) -> None:
    make_notes_app(make_shop(repo))
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    repo.write(".paqad/eval.yaml", text)
    proc = paqad_cli("rag", "eval", cwd=repo.root)
    assert proc.returncode == 3, proc.stderr
    assert ".paqad/eval.yaml" in proc.stderr and message in proc.stderr
    assert not list((workspace.state_dir(repo.root)).glob("eval-*"))


def test_team_questions_are_asked_and_reported(repo: Repo, paqad_cli) -> None:
    make_notes_app(make_shop(repo))
    paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    repo.write(
        ".paqad/eval.yaml",
        "questions:\n"
        "  - id: charge\n    q: where is a card charged again after a processor timeout\n"
        "    answers: ['shop/payments.py::retry_charge', 'shop/payments.py:21-28']\n"
        "  - q: where is the session cookie signed with a secret\n    answers: [shop/sessions.py]\n"
        "  - q: how do we bill customers in bitcoin\n    unanswerable: true\n",
    )
    proc, data = _eval(paqad_cli, repo.root, "--limit", "5")
    assert proc.returncode in (0, 1), proc.stderr
    assert data["sources"]["team"] == 3
    team = {r["id"]: r for r in data["questions"] if r["source"] == "team"}
    assert team["charge"]["answers"] == ["shop/payments.py"]
    assert team["charge"]["accepted"] == ["shop/payments.py::retry_charge", "shop/payments.py:21-28"]
    assert team["charge"]["on"]["rank"] == 1
    assert team["team-003"]["answers"] == [] and team["team-003"]["on"]["silent"] is True


# ---- the parts -----------------------------------------------------------------------------------


def test_strip_identifiers_removes_names_code_and_the_units_own_words() -> None:
    para = "Sign the session ``cookie`` with :func:`hmac.new` so the client_side code or the SessionStore cannot forge signed values."
    out = questions.strip_identifiers(para, "sign_values")
    assert out == "the session with so the code or the cannot forge"


def test_mask_text_keeps_lines_and_syntax() -> None:
    src = 'def a():\n    """One line doc here."""\n    return 1\n\n\ndef b():\n    """First line of b.\n\n    Second paragraph.\n    """\n    return 2\n'
    units = [
        StoredUnit(id="m.py::a", path="m.py", name="a", language="python", start_line=1, end_line=3, docstring="One line doc here."),
        StoredUnit(id="m.py::b", path="m.py", name="b", language="python", start_line=6, end_line=11, docstring="First line of b.\n\nSecond paragraph."),
    ]
    out = masked.mask_text(src, units)
    assert out.count("\n") == src.count("\n")
    assert "One line" not in out and "First line" not in out and "Second" not in out
    compile(out, "m.py", "exec")
    go = "package x\n\n// Server routes requests.\n// It is safe.\ntype Server struct{}\n"
    unit = StoredUnit(id="x.go::Server", path="x.go", name="Server", language="go", start_line=5, end_line=5, docstring="Server routes requests.\nIt is safe.")
    assert masked.mask_text(go, [unit]) == "package x\n\n// \n// \ntype Server struct{}\n"


def test_unanswerable_subjects_are_dropped_when_their_words_occur() -> None:
    kept, dropped = questions.unanswerable(["we deploy with Kubernetes", "class ChessBoard: pass"])
    assert "how is the Kubernetes pod autoscaler configured" in dropped
    assert all("Kubernetes" not in q.text for q in kept)
    assert len(kept) + len(dropped) == len(questions.SUBJECTS) >= 15
    assert any("chess" in q.text for q in kept)  # ChessBoard is not the whole word "chess"


def test_a_scratch_folder_of_a_killed_run_is_swept(tmp_path: Path) -> None:
    state = workspace.state_dir(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (state / f"eval-{dead.pid}-abcd").mkdir(parents=True)
    (state / f"eval-{os.getpid()}-live").mkdir()
    removed = masked.sweep_stale(tmp_path)
    assert [p.name for p in removed] == [f"eval-{dead.pid}-abcd"]
    assert (state / f"eval-{os.getpid()}-live").is_dir()


def test_sigterm_removes_the_scratch_folder(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from paqad.evaluation import masked\n"
        "with masked.scratch_root(Path(sys.argv[1])) as p:\n    print(p, flush=True)\n    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    scratch = Path(proc.stdout.readline().strip())
    assert scratch.is_dir()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert wait_for(lambda: not scratch.exists(), timeout=5)
