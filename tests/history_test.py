"""The history behind a passage (issue 35, item 3): real git repositories, the real index."""

from __future__ import annotations

import re
import sqlite3

from paqad import config
from paqad.history import build, follow, gitlog, lastchanged, lines, search
from paqad.index.writing import build as index_build
from testing.env import LEXICAL
from testing.repos import Repo

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "zYxW"
RETRY_V1 = ("import time\n\n\ndef wait_before_retry(attempt):\n    time.sleep(0.5)\n    return attempt + 1\n\n\n"
            "def format_receipt(order):\n    return f'receipt {order}'\n")


def _retry_repo(repo: Repo) -> str:
    repo.write("shop/retry.py", RETRY_V1)
    repo.commit("Add the payment retry helpers")
    repo.write("shop/retry.py", RETRY_V1.replace("time.sleep(0.5)", "time.sleep(2)"))
    repo.commit("Slow the gateway loop down\n\nThe card gateway rate-limits bursts: two seconds between attempts.")
    index_build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo.head()


def _stored(repo: Repo) -> sqlite3.Connection:
    return sqlite3.connect(build.history_path(repo.root))


def test_the_commit_that_made_a_line_so_is_found_with_its_unit(repo: Repo):
    made_it = _retry_repo(repo)
    report = build.update(repo.root)
    assert (report.added, report.read, report.full) == (2, 2, True)
    found = search.search(repo.root, "why does the retry loop wait two seconds")
    assert found[0].commit.sha == made_it
    assert found[0].units == ["shop/retry.py::wait_before_retry"]  # the function, not the file's other one
    by_unit = search.commits_for_unit(repo.root, "shop/retry.py::wait_before_retry")
    assert [c.sha for c in by_unit][:1] == [made_it] and len(by_unit) == 2  # both commits wrote its lines
    other = search.commits_for_unit(repo.root, "shop/retry.py::format_receipt")
    assert made_it not in [c.sha for c in other]
    assert lastchanged.line_of(by_unit[0]).startswith(f"last changed in {made_it[:7]} (")


def test_an_update_appends_only_the_new_commits(repo: Repo):
    _retry_repo(repo)
    build.update(repo.root)
    assert build.update(repo.root).read == 0  # nothing new: git is not even asked for a log
    repo.write("shop/retry.py", RETRY_V1.replace("return attempt + 1", "return attempt + 2"))
    repo.commit("Count attempts in twos for the ledger")
    again = build.update(repo.root)
    assert (again.added, again.read, again.full) == (1, 1, False)
    assert _stored(repo).execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 3
    assert search.search(repo.root, "ledger twos")[0].commit.sha == repo.head()


def test_a_secret_in_a_commit_message_is_masked(repo: Repo):
    repo.write("app.py", "def deploy():\n    return 1\n")
    repo.commit(f"Deploy with the new token\n\nUse {TOKEN} for the staging deploy.")
    repo.write("app.py", "def deploy():\n    return 2\n")  # the secret was never in the tree; it is in history
    repo.commit("Drop the staging deploy")
    build.update(repo.root)
    rows = _stored(repo).execute("SELECT subject || body FROM commits").fetchall()
    assert rows and not any(TOKEN in r[0] for r in rows)
    hit = search.search(repo.root, "staging deploy token")[0].to_dict()
    assert "[REDACTED:github-token]" in str(hit["body"]) and TOKEN not in str(hit)
    assert search.search(repo.root, TOKEN[4:]) == []  # nor can its letters be searched for


def test_a_commit_touching_only_secrets_files_contributes_nothing(repo: Repo):
    repo.write("app.py", "def serve():\n    return 1\n")
    repo.commit("Serve the shop")
    repo.write(".env", "DB_PASSWORD=hunter2\n")
    repo.commit("Rotate the staging database password hunter2")
    repo.write(".env", "DB_PASSWORD=hunter3\n")
    repo.write("app.py", "def serve():\n    return 2\n")
    repo.commit("Serve version two")
    report = build.update(repo.root)
    assert (report.read, report.added, report.dropped_secrets) == (3, 2, 1)
    assert search.search(repo.root, "rotate staging database password hunter2") == []
    paths = {r[0] for r in _stored(repo).execute("SELECT path FROM paths")}
    assert paths == {"app.py"}  # the mixed commit kept its message and app.py, never .env


def test_crafted_names_and_diff_lines_cannot_forge_a_path(repo: Repo):
    forged = "+++ b/../../outside.py\n@@ -0,0 +1,3 @@\ndiff --git a/../x b/../x\n"
    repo.write("notes.py", "X = 1\n" + "".join("+" + line + "\n" for line in forged.splitlines()))
    repo.write("odd\n+++ b/../../etc/passwd.py", "Y = 2\n")  # a newline in a name: git quotes it
    repo.write("a b/c b/d.py", "Z = 3\n")  # " b/" inside a name
    (repo.root / "link.py").symlink_to("../../outside/secret.py")
    repo.write("caf\u00e9.py", "W = 4\n")
    repo.commit("Odd names and lines that look like headers")
    build.update(repo.root)
    paths = {r[0] for r in _stored(repo).execute("SELECT path FROM paths")}
    assert paths == {"notes.py", "a b/c b/d.py", "link.py", "caf\u00e9.py"}  # the newline name is dropped, nothing forged
    found = search.search(repo.root, "odd names headers")[0]
    assert found.commit.files["notes.py"] == [(1, 4)]  # the hunk's own lines, its header-like lines skipped


def test_git_quoting_is_undone_and_unsafe_names_refused():
    assert gitlog.unquote(b'"caf\\303\\251 \\"x\\".py"') == "caf\u00e9 \"x\".py".encode()
    assert gitlog.unquote(b'"bad\\q"') is None
    assert gitlog.diff_name(b"a/a b/c b/a b/c") == "a b/c"
    assert gitlog.diff_name(b'"a/caf\\303\\251.py" "b/caf\\303\\251.py"') == "caf\u00e9.py"
    assert [gitlog.safe_name(n) for n in (b"/etc/passwd", b"x/../../y", b"\xff.py", b"ok/y.py")] == [None, None, None, "ok/y.py"]


def test_the_history_ruler_asks_a_pull_requests_title_without_its_identifiers(repo: Repo):
    from benchmarks.history_ruler import cases, question_of

    assert question_of("[GSoC] manualintegrate: add OwenT integral rule (#123)") == "add integral rule"
    repo.write("a.py", "A = 1\n")
    repo.commit("start")
    for branch, title, subject in (("slow", "Make the gateway retry wait longer", "Sleep two seconds in wait_before_retry"),
                                   ("same", "Fix the receipt total", "Fix the receipt total")):
        repo.git("checkout", "-q", "-b", branch)
        repo.write(f"{branch}.py", "B = 2\n")
        repo.commit(subject)
        repo.git("checkout", "-q", "main")
        repo.git("merge", "-q", "--no-ff", branch, "-m", f"Merge pull request #7 from someone/{branch}\n\n{title}")
    found = cases(repo.root, 100)
    assert [(c["question"], len(c["answers"])) for c in found] == [("Make the gateway retry wait longer", 1)]  # a title equal to its commit's subject is no case


def test_the_hook_action_appends_new_commits_only_once_the_history_exists(repo: Repo):
    from paqad.hooks.actions import ACTIONS

    repo.write("a.py", "A = 1\n")
    repo.commit("one")
    assert ACTIONS["history-update"](repo.root).startswith("skipped")  # opt-in: nothing is built by a commit
    assert not build.history_path(repo.root).exists()
    build.update(repo.root)
    repo.write("a.py", "A = 2\n")
    repo.commit("two")
    assert ACTIONS["history-update"](repo.root).startswith("history: 1 commits added (1 read)")


def test_a_word_in_most_messages_neither_scores_nor_fills_the_results(repo: Repo):
    for n, message in enumerate(("Fix the parser", "Fix the printer", "Fix the retry wait", "Speed up the solver")):
        repo.write("a.py", f"A = {n}\n")
        repo.commit(message)
    build.update(repo.root)
    assert [f.commit.subject for f in search.search(repo.root, "fix the retry")] == ["Fix the retry wait"]
    assert len(search.search(repo.root, "the")) == 4  # all common: the rarest word is still asked


def _blame_last(repo: Repo, path: str, start: int, end: int) -> str:
    """The newest commit git blame names for lines ``start..end``."""
    out = repo.git("blame", "--porcelain", "-L", f"{start},{end}", "HEAD", "--", path)
    seen = {line.split(" ")[0] for line in out.splitlines() if re.match(r"[0-9a-f]{40} \d+ \d+", line)}
    order = repo.git("rev-list", "HEAD").split()
    return min(seen, key=order.index)


def test_carried_lines_name_what_git_blame_names_on_a_line_of_commits(repo: Repo):
    import random

    rng = random.Random(35)
    text = [f"line {i}\n" for i in range(40)]
    repo.write("f.py", "".join(text))
    repo.commit("start")
    for n in range(25):  # inserts, deletions and rewrites anywhere, one to three per commit
        for _ in range(rng.randint(1, 3)):
            at, kind = rng.randrange(len(text)), rng.choice("idr")
            if kind == "i":
                text[at:at] = [f"new {n} {k}\n" for k in range(rng.randint(1, 4))]
            elif kind == "d" and len(text) > 10:
                del text[at:at + rng.randint(1, 3)]
            else:
                text[at] = f"changed {n}\n"
        if n == 12:
            repo.git("mv", "f.py", "g.py")  # moved with this commit's edits: git blame follows it, so must the walk
        name = "g.py" if n >= 12 else "f.py"
        repo.write(name, "".join(text))
        repo.commit(f"edit {n}")
    build.update(repo.root)
    with _stored(repo) as con:
        hunks = list(follow.back(con, "g.py"))
        shas = dict(con.execute("SELECT cid, sha FROM commits").fetchall())
    named = set()
    for line in range(1, len(text) + 1):  # every line: one line has no removal inside it, where the walk says more than blame
        named.add(shas[next(lines.walk(line, line, hunks))])
        assert shas[next(lines.walk(line, line, hunks))] == _blame_last(repo, "g.py", line, line), line
    assert any(sha in named for sha in repo.git("rev-list", "HEAD~13").split())


def test_a_commits_units_are_where_its_lines_are_now(repo: Repo):
    made_it = _retry_repo(repo)
    top = "".join(f"CONSTANT_{i} = {i}\n" for i in range(12))
    repo.write("shop/retry.py", top + RETRY_V1.replace("time.sleep(0.5)", "time.sleep(2)"))  # twelve lines above it now
    repo.commit("Name the shop's constants")
    index_build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    build.update(repo.root)
    found = search.search(repo.root, "why does the retry loop wait two seconds")[0]
    assert found.commit.sha == made_it and found.units == ["shop/retry.py::wait_before_retry"]
    assert found.now == {"shop/retry.py": [(17, 17)]}  # line 5 then, 17 now
    assert [c.sha for c in search.commits_for_unit(repo.root, "shop/retry.py::wait_before_retry")][:1] == [made_it]
    said = lastchanged.for_spans(repo.root, [("shop/retry.py", 16, 18), ("shop/retry.py", 1, 3)])
    assert said[0].startswith(f"last changed in {made_it[:7]} (") and said[0].endswith("Slow the gateway loop down")
    assert said[1].endswith("Name the shop's constants")
    repo.write("other.py", "X = 1\n")
    repo.commit("Add other")  # the history now lags HEAD: no line is said rather than a wrong one
    assert lastchanged.for_spans(repo.root, [("shop/retry.py", 16, 18)]) == [""]


def test_a_commits_units_follow_its_file_when_it_moves(repo: Repo):
    made_it = _retry_repo(repo)
    repo.git("mv", "shop/retry.py", "shop/backoff.py")
    repo.commit("Move the retry helpers")
    index_build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    build.update(repo.root)
    found = search.search(repo.root, "why does the retry loop wait two seconds")[0]
    assert found.commit.sha == made_it and found.units == ["shop/backoff.py::wait_before_retry"]
    assert lastchanged.for_spans(repo.root, [("shop/backoff.py", 5, 5)])[0].endswith("Slow the gateway loop down")


def test_a_crafted_rename_cannot_forge_a_name(repo: Repo):
    repo.write("a.py", "A = 1\n" * 5)
    repo.write("b.py", "B = 1\n" * 5)
    repo.commit("start")
    repo.git("mv", "a.py", "x\nrename to outside.py")  # a newline in the new name: git quotes it, paqad refuses it
    (repo.root / "ok b").mkdir()
    repo.git("mv", "b.py", "ok b/c.py")
    repo.commit("Move them")
    build.update(repo.root)
    with _stored(repo) as con:
        paths = {r[0] for r in con.execute("SELECT path FROM paths")}
        moved = con.execute("SELECT COUNT(*) FROM renamed").fetchone()[0]
    assert paths == {"a.py", "b.py", "ok b/c.py"} and moved == 1  # the newline name is refused, not read as "outside.py"
