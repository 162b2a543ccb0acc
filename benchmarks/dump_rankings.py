#!/usr/bin/env python3
"""Dump what ``paqad rag search`` ranks for every ruler question, to diff two versions of paqad.

    python -m benchmarks dump_rankings OUT.json [--provider none|local]   # after corpora.py fetch
    python -m benchmarks dump_rankings --diff A.json B.json               # exit 1 on any difference

Indexes a copy of each ruler corpus (in a temp folder) with default settings (``--provider``
picks the embedding provider; ``local`` is the shipped default) and, for every ruler question
and every refusal question, records the ranked ``(unit id, score)`` list of the gated search
(``rag search``) and of the ungated one (``rag probe``), with no deadline. A refactoring that
must not change rankings is checked by dumping before and after and diffing.

Only the public CLI command is used (``paqad rag search|probe --json`` in one process per corpus
through ``paqad agent``, which answers with the same pipeline), so the script runs unchanged
across versions whose library layout differs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks import corpora

HERE = Path(__file__).resolve().parent
RULERS = HERE / "rulers"
CORPORA = {"flask": "flask-3.1.3", "requests": "requests-2.32.3", "cobra": "cobra-1.6.1", "rxjs": "rxjs-7.8.1"}


def questions(short: str) -> list[str]:
    own = [q["q"] for q in yaml.safe_load((RULERS / f"{short}.yaml").read_text())["questions"]]
    refusal = [q["q"] for q in yaml.safe_load((RULERS / "refusal.yaml").read_text())["questions"]]
    return own + refusal


def paqad(*args: str, cwd: Path) -> str:
    done = subprocess.run([shutil.which("paqad") or "paqad", *args], cwd=cwd, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise SystemExit(f"paqad {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def ask_all(root: Path, qs: list[str]) -> dict[str, dict]:
    """Every question through one ``paqad agent`` session, gated and ungated."""
    proc = subprocess.Popen([shutil.which("paqad") or "paqad", "agent", "--root", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout
    out: dict[str, dict] = {}
    for i, q in enumerate(qs):
        row: dict[str, object] = {}
        for gate in (True, False):
            proc.stdin.write(json.dumps({"id": i, "action": "search", "query": q, "gate": gate, "source_chars": 0}) + "\n")
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            res = reply.get("result") or {}
            row["search" if gate else "probe"] = {
                "answered": res.get("answered"), "ranked": [[r["id"], r["score"]] for r in res.get("results", [])],
                "vector_note": res.get("vector_note"), "error": reply.get("error"),
            }
        out[q] = row
    proc.stdin.close()
    proc.wait(timeout=60)
    return out


def dump(out_path: Path, provider: str) -> int:
    data: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="paqad-dump-") as tmp:
        for short, corpus in CORPORA.items():
            root = corpora.private_copy(corpora.CACHE / corpus, Path(tmp) / corpus)
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            paqad("rag", "init", "--provider", provider, cwd=root)
            data[short] = ask_all(root, questions(short))
            print(f"{short}: {len(data[short])} questions", file=sys.stderr)
    out_path.write_text(json.dumps(data, indent=1, sort_keys=True))
    return 0


def diff(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    total = differ = 0
    for corpus in sorted(set(a) | set(b)):
        for q in sorted(set(a.get(corpus, {})) | set(b.get(corpus, {}))):
            total += 1
            if a.get(corpus, {}).get(q) != b.get(corpus, {}).get(q):
                differ += 1
                print(f"DIFF {corpus}: {q!r}")
    print(f"{total - differ}/{total} questions identical")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--diff", action="store_true")
    parser.add_argument("--provider", default="none", choices=("none", "local"))
    args = parser.parse_args()
    if args.diff:
        return diff(*args.paths)
    return dump(args.paths[0], args.provider)


if __name__ == "__main__":
    sys.exit(main())
