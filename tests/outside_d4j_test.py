"""benchmarks/outside_d4j.py: Defects4J bug reports as an issue-localization ruler (pure parts).

The report lines, the reversed Defects4J patch and the methods it touches, on samples written here.
"""

from __future__ import annotations

from benchmarks import outside_convert as oc
from benchmarks import outside_d4j as d4j

BUGGY = """package org.acme;

public class NumberUtils {
    public static int toInt(String s) {
        return Integer.parseInt(s);
    }

    public static long createLong(String s) {
        return Long.valueOf(s);
    }

    public static int max(int a, int b) {
        return a > b ? a : b;
    }
}
"""

# Defects4J's patch turns the fixed file into the buggy one: its "-" lines are the fix's.
PATCH = """diff --git a/src/org/acme/NumberUtils.java b/src/org/acme/NumberUtils.java
index 1..2 100644
--- a/src/org/acme/NumberUtils.java
+++ b/src/org/acme/NumberUtils.java
@@ -8,7 +8,7 @@ public class NumberUtils {
     public static long createLong(String s) {
-        return Long.decode(s);
+        return Long.valueOf(s);
     }

     public static int max(int a, int b) {
"""


def test_report_lines_give_title_and_body() -> None:
    got = d4j.reports("Lang-1$$NumberUtils does not handle Long Hex numbers$$createLong() does not handle hex.\nLang-2$$A title$$None\n")
    assert got == {"Lang-1": ("NumberUtils does not handle Long Hex numbers", "createLong() does not handle hex."), "Lang-2": ("A title", "")}


def test_the_patch_is_read_as_the_fix_and_names_the_method_it_changes() -> None:
    assert "+        return Long.decode(s);" in d4j.reverse_patch(PATCH)
    files = {"src/org/acme/NumberUtils.java": BUGGY}
    answers = d4j.answers_of(PATCH, files.get)
    assert answers == [{"path": "src/org/acme/NumberUtils.java", "lines": [8, 10], "name": "NumberUtils.createLong"}]


def test_a_change_outside_every_method_answers_by_path() -> None:
    patch = PATCH.replace("@@ -8,7 +8,7 @@ public class NumberUtils {\n     public static long createLong(String s) {\n-        return Long.decode(s);\n+        return Long.valueOf(s);\n     }\n",
                          "@@ -1,3 +1,3 @@\n-package org.acme.fixed;\n+package org.acme;\n \n public class NumberUtils {\n")
    assert d4j.answers_of(patch, {"src/org/acme/NumberUtils.java": BUGGY}.get) == [{"path": "src/org/acme/NumberUtils.java", "lines": None, "name": None}]


def test_a_case_is_an_issue_of_its_project_at_the_buggy_commit_with_the_rule_half() -> None:
    bug = {"bug.id": "1", "revision.id.buggy": "396afc3e4693cfee182efe582455f2d97058c068", "report.id": "LANG-747",
           "report.url": "https://issues.apache.org/jira/browse/LANG-747"}
    raw = d4j.raw("Lang", bug, ("Title", "Body"), [{"path": "a.java", "lines": None, "name": None}])
    assert (raw.ruler, raw.id, raw.repo, raw.commit, raw.style, raw.q) == (
        "d4j-reports", "Lang-1", "apache/commons-lang", bug["revision.id.buggy"], "issue", "Title\n\nBody")
    case, lost = oc.finish(raw, {"a.java": 10}, "java")
    assert case is not None and lost == 0 and case["half"] == oc.half("d4j-reports", "Lang-1")
    assert not oc.from_swe_bench({"id": raw.id, "repo": raw.repo})


def test_the_pin_digests_patches_per_project() -> None:
    d = d4j.digests({"LICENSE": b"x"}, {"license.txt": b"y", "framework/projects/Lang/patches/1.src.patch": b"p"})
    assert set(d) == {"LICENSE", "rjust/defects4j:license.txt", *(f"rjust/defects4j:framework/projects/{p}/patches/*.src.patch" for p in d4j.PROJECTS)}
    assert d != d4j.digests({"LICENSE": b"x"}, {"license.txt": b"y", "framework/projects/Lang/patches/1.src.patch": b"q"})


def test_mockito_reports_from_google_code_are_left_out() -> None:
    google = {"bug.id": "36", "report.url": "https://code.google.com/archive/p/mockito/issues/140"}
    github = {"bug.id": "1", "report.url": "https://github.com/mockito/mockito/issues/188"}
    assert not d4j.report_matches("Mockito", google)
    assert d4j.report_matches("Mockito", github) and d4j.report_matches("Closure", google)

