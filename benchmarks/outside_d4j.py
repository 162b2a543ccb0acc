"""Defects4J's bug reports as an issue-localization ruler (``d4j-reports``): pure parts of ``outside.py``.

The texts are the bug reports Quatrain's authors collected for Defects4J's bugs (GitHub
Trustworthy-Software/Quatrain, ``data/BugReport/<Project>_bugreport.txt``, one line per bug:
``<Project>-<id>$$<title>$$<description>``); which commit each bug was reported against and what
its fix changed come from Defects4J itself (GitHub rjust/defects4j,
``framework/projects/<Project>/active-bugs.csv`` and ``patches/<id>.src.patch``). Neither derives
from SWE-bench: Defects4J (2014) predates it and its projects are Java.

A case is one active Defects4J bug with a report, asked against its project at
``revision.id.buggy`` (the commit before the fix). Its answers are the files Defects4J's minimised
source patch changes (test files are never in a ``.src.patch``), each with the methods of that file
at the buggy commit that the fix touches, as paqad's parser names and spans them: a method whose
span contains a line the fix changes or removes, or that encloses a point where it only adds
lines (``swebench.py``'s rule; Defects4J's patches go from the fixed to the buggy version, so they
are read reversed). A file whose change lies outside every method is answered by path only.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from typing import Any

from benchmarks import outside_convert as oc
from benchmarks import swebench

RULER = "d4j-reports"
QUATRAIN_REPO, QUATRAIN_COMMIT = "Trustworthy-Software/Quatrain", "dae5778811b14414eba883b6eaf6d6b9732b454b"
D4J_REPO, D4J_COMMIT = "rjust/defects4j", "ca4a0ef98686bcd375336b1066acd6a54e875e34"
# Defects4J projects with a Quatrain report file whose history is a git repository on GitHub
# (Chart's revisions are Subversion numbers, so it is left out).
PROJECTS = {"Lang": "apache/commons-lang", "Math": "apache/commons-math", "Mockito": "mockito/mockito",
            "Time": "JodaOrg/joda-time", "Closure": "google/closure-compiler"}
LICENCE = ("MIT (Quatrain LICENSE: the collected report texts; Defects4J license.txt: the bug metadata and "
           "patches); the reports were written on the projects' public trackers (Apache JIRA, GitHub, Google Code)")


def report_matches(project: str, bug: dict[str, str]) -> bool:
    """Whether Quatrain's text can be the bug's report. Mockito's bugs reported on Google Code are
    not: Quatrain has the GitHub issue with the same number there (Mockito-36 and -37, Google Code
    issue 140, read "Make Mockito JUnit rule easier to use", GitHub's #140; their fixes are about
    ``callRealMethod()`` on an interface), so they are left out."""
    return not (project == "Mockito" and "code.google.com" in (bug.get("report.url") or ""))


def quatrain_files() -> list[str]:
    return ["LICENSE", *(f"data/BugReport/{p}_bugreport.txt" for p in PROJECTS)]


def d4j_files(patch_names: dict[str, list[str]]) -> list[str]:
    """Defects4J files read: the licence, each project's active-bugs.csv and its source patches."""
    out = ["license.txt"]
    for p in PROJECTS:
        out.append(f"framework/projects/{p}/active-bugs.csv")
        out += [f"framework/projects/{p}/patches/{n}" for n in sorted(patch_names.get(p, []))]
    return out


def digests(quatrain: dict[str, bytes], d4j: dict[str, bytes]) -> dict[str, str]:
    """sha256 per Quatrain file; per Defects4J file, except the patches: one sha256 per project over
    their sorted ``<name> <sha256>`` lines (Math alone has 106)."""
    out = {p: hashlib.sha256(b).hexdigest() for p, b in sorted(quatrain.items())}
    for path, b in sorted(d4j.items()):
        if "/patches/" not in path:
            out[f"{D4J_REPO}:{path}"] = hashlib.sha256(b).hexdigest()
    for p in PROJECTS:
        lines = "".join(f"{path.rsplit('/', 1)[1]} {hashlib.sha256(b).hexdigest()}\n"
                        for path, b in sorted(d4j.items()) if path.startswith(f"framework/projects/{p}/patches/"))
        out[f"{D4J_REPO}:framework/projects/{p}/patches/*.src.patch"] = hashlib.sha256(lines.encode()).hexdigest()
    return dict(sorted(out.items()))


def reports(text: str) -> dict[str, tuple[str, str]]:
    """``Project-id`` -> (title, description); a description of ``None`` is empty."""
    out = {}
    for line in text.splitlines():
        parts = line.split("$$", 2)
        if len(parts) == 3 and parts[0].strip():
            desc = parts[2].strip()
            out[parts[0].strip()] = (parts[1].strip(), "" if desc == "None" else desc)
    return out


def active_bugs(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


_HUNK = re.compile(r"^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$")


def reverse_patch(patch: str) -> str:
    """Defects4J's ``.src.patch`` turns the fixed version into the buggy one; this is the fix."""
    out = []
    for line in patch.split("\n"):
        if m := _HUNK.match(line):
            out.append(f"@@ -{m.group(2)} +{m.group(1)} @@{m.group(3)}")
        elif line.startswith(("--- ", "+++ ")):
            out.append(line)
        elif line.startswith("-"):
            out.append("+" + line[1:])
        elif line.startswith("+"):
            out.append("-" + line[1:])
        else:
            out.append(line)
    return "\n".join(out)


def touched_methods(path: str, source: str, hunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Methods of ``source`` (the buggy file) that the fix's hunks change, enclose an addition in, as
    paqad's Java parser names and spans them (whole methods: no split)."""
    from paqad.parse import parse_file

    removed, inserts, _ = swebench.locate_hunks(hunks, source.split("\n"))
    units = [u for u in parse_file(path, source, "tree-sitter", "java", max_lines=10**9) if u.kind in ("function", "method")]
    chosen = []
    for u in units:
        lo, hi = u.start_line, u.end_line
        hit = any(lo <= n <= hi for n in removed) or any(lo <= k - 1 and k <= hi for k, _ in inserts)
        if hit:
            chosen.append({"path": path, "lines": [lo, hi], "name": u.qualified_name})
    return chosen


def answers_of(patch: str, read: Any) -> list[dict[str, Any]]:
    """The case's answers from its source patch; ``read(path)`` is the buggy file's text or None."""
    answers: list[dict[str, Any]] = []
    for f in swebench.parse_patch(reverse_patch(patch)):
        if f["new"] or swebench.is_test_path(f["path"]):
            continue
        source = read(f["path"])
        methods = touched_methods(f["path"], source, f["hunks"]) if source is not None and f["path"].endswith(".java") else []
        answers += methods or [{"path": f["path"], "lines": None, "name": None}]
    return answers


def raw(project: str, bug: dict[str, str], report: tuple[str, str], answers: list[dict[str, Any]]) -> oc.Raw:
    title, desc = report
    q = f"{title}\n\n{desc}" if desc else title
    return oc.Raw(RULER, f"{project}-{bug['bug.id']}", PROJECTS[project], bug["revision.id.buggy"], "issue", q, answers,
                  {"source_url": bug.get("report.url"), "report_id": bug.get("report.id"), "project": project})
