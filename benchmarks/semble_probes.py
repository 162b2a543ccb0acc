#!/usr/bin/env python3
"""Unanswerable probes for the semble benchmark's repositories: does the gate stay silent?

Usage (from the repo root, after ``python -m benchmarks semble fetch``):
    python -m benchmarks semble_probes generate          # writes <semble cache>/probes.json
    python -m benchmarks semble_probes show [REPO]       # print the probes (local use only)

``semble.py score`` asks them (gated, through the same ``paqad agent`` session) whenever the
cache file exists and reports silence per half and per language.

THE RULE (version ``RULE_VERSION``; written down and committed before any probe was scored):

1. Subjects come from the fixed list ``SUBJECTS``: a phrase and its *distinctive words*. A subject
   is *absent* from a repository when no word of any text file of its tree (identifiers split on
   ``_``, digits and camelCase, lowercased; ``.git``/``.paqad`` skipped, files over 1 MB or with a
   NUL byte skipped) starts with any of the subject's distinctive words. Only absent subjects are
   used for that repository: no file mentions them, so a probe about them has no answer there.
2. Vocabulary of the repository, so that every probe shares at least one word with it (an
   identifier that occurs nowhere is refused by any lexical check and proves nothing):
   - ``word``: the words of *compound* identifiers (ones with ``_`` or a lower→upper case change,
     so keywords never qualify) of length ≥ 4, ranked by the number of files containing them
     (ties by the word); the top ``TOP_VOCAB``;
   - ``name``: capitalised identifiers (first letter upper case, at least one lower-case letter,
     length ≥ 4: ``Flask``, ``Blueprint``, ``BaseModel``) ranked the same way; the top ``TOP_VOCAB``.
     These are the repository's central names, exactly what a symbol lookup names, so a gate
     that takes a declaration's name as evidence is tested against them.
3. Per repository, ``random.Random(SEED + ":" + repo)`` shuffles the absent subjects and takes the
   first ``PER_REPO``; probe *i* takes kind ``name`` for odd *i* and ``word`` for even *i* (falling
   back to the other kind when one is empty), a vocabulary entry drawn with the same generator,
   and a template ``TEMPLATES[i % len(TEMPLATES)]``.
4. A repository with no absent subject or no vocabulary gets no probes (none is invented).

The output holds repository words, so it lives in the gitignored cache, never in git; this file
and its subject list are what is committed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import semble  # CACHE, load_specs: one definition

HERE = Path(__file__).resolve().parent

RULE_VERSION = "probes-1"
SEED = "paqad-semble-probes-1"
PER_REPO = 6
TOP_VOCAB = 20
MAX_FILE_BYTES = 1_000_000
PROBES = semble.CACHE / "probes.json"

#: (phrase, distinctive words). Fixed before scoring; topics no benchmark repository is about.
SUBJECTS: list[tuple[str, tuple[str, ...]]] = [
    ("payment refunds", ("refund",)),
    ("CUDA GPU kernels", ("cuda", "gpu")),
    ("OAuth authorization flows", ("oauth",)),
    ("SMTP email delivery", ("smtp",)),
    ("video transcoding", ("video", "transcod")),
    ("blockchain ledger consensus", ("blockchain",)),
    ("MIDI synthesizer playback", ("midi", "synthesiz")),
    ("genome sequence alignment", ("genome",)),
    ("PDF invoice rendering", ("invoice",)),
    ("Bluetooth device pairing", ("bluetooth",)),
    ("weather forecast ingestion", ("weather", "forecast")),
    ("chess move generation", ("chess",)),
    ("satellite orbit propagation", ("satellite", "orbit")),
    ("shopping cart checkout", ("shopping",)),
    ("payroll tax withholding", ("payroll", "withholding")),
    ("hotel room reservations", ("hotel",)),
    ("recipe ingredient scaling", ("recipe", "ingredient")),
    ("elevator dispatch scheduling", ("elevator",)),
    ("flight booking itinerary", ("flight", "itinerar")),
    ("soil moisture sensor readings", ("soil", "moisture")),
    ("vaccine dose scheduling", ("vaccin",)),
    ("karaoke lyrics synchronisation", ("karaoke", "lyric")),
    ("mortgage amortization schedule", ("mortgage", "amortiz")),
    ("poker hand evaluation", ("poker",)),
    ("drone flight stabilization", ("drone",)),
    ("insulin pump dosage", ("insulin",)),
    ("wine cellar inventory", ("wine", "cellar")),
    ("movie subtitle burn-in", ("subtitle", "movie")),
    ("crop harvest prediction", ("harvest",)),
    ("earthquake magnitude estimation", ("earthquake", "seismic")),
    ("lottery ticket drawing", ("lottery",)),
    ("tennis tournament brackets", ("tennis", "tournament")),
    ("pizza delivery routing", ("pizza",)),
    ("ECG heartbeat arrhythmia detection", ("arrhythm", "ecg")),
    ("fingerprint biometric enrollment", ("biometric",)),
    ("stock portfolio rebalancing", ("portfolio", "rebalanc")),
    ("skeletal mesh animation", ("skeletal",)),
    ("ocean tide prediction", ("ocean", "tide")),
    ("fuel consumption telemetry", ("fuel",)),
    ("airline seat upgrades", ("airline",)),
]
TEMPLATES = (
    "{v} {s}",
    "how does {v} handle {s}",
    "where is {s} implemented in {v}",
    "{s} support for {v}",
)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(tok: str) -> list[str]:
    """``getHTTPResponse_code2`` -> get, http, response, code (lowercased; digits dropped)."""
    return [p.lower() for p in _PART.findall(tok) if not p.isdigit()]


def is_compound(tok: str) -> bool:
    return "_" in tok.strip("_") or re.search(r"[a-z][A-Z]", tok) is not None


def is_name(tok: str) -> bool:
    return len(tok) >= 4 and tok[0].isupper() and any(c.islower() for c in tok)


def read_texts(root: Path) -> list[str]:
    out = []
    for _rel, p in semble.corpora.iter_files(root):
        if p.is_symlink() or not p.is_file() or p.stat().st_size > MAX_FILE_BYTES:
            continue
        data = p.read_bytes()
        if b"\0" in data[:8192]:
            continue
        out.append(data.decode("utf-8", errors="replace"))
    return out


def repo_vocabulary(texts: list[str]) -> tuple[set[str], list[str], list[str]]:
    """(every word of the repo, top compound-identifier words, top capitalised names)."""
    words: set[str] = set()
    word_files: Counter[str] = Counter()
    name_files: Counter[str] = Counter()
    for text in texts:
        toks = set(_TOKEN.findall(text))
        fw: set[str] = set()
        for tok in toks:
            parts = split_identifier(tok)
            words.update(parts)
            if is_compound(tok):
                fw.update(p for p in parts if len(p) >= 4)
        word_files.update(fw)
        name_files.update(t for t in toks if is_name(t))
    return words, _top(word_files), _top(name_files)


def _top(counts: Counter[str]) -> list[str]:
    """The ``TOP_VOCAB`` most frequent entries, ties by the entry (deterministic)."""
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_VOCAB]]


def absent_subjects(words: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    return [s for s in SUBJECTS if not any(w.startswith(d) for d in s[1] for w in words)]


def probes_for(repo: str, texts: list[str]) -> list[dict[str, Any]]:
    words, vocab_words, vocab_names = repo_vocabulary(texts)
    subjects = absent_subjects(words)
    rng = random.Random(f"{SEED}:{repo}")
    rng.shuffle(subjects)
    out = []
    for i, (phrase, dist) in enumerate(subjects[:PER_REPO]):
        kind = "name" if i % 2 else "word"
        pool = vocab_names if kind == "name" else vocab_words
        if not pool:
            kind, pool = ("word", vocab_words) if kind == "name" else ("name", vocab_names)
        if not pool:
            break
        v = rng.choice(pool)
        out.append({"pid": f"{repo}~{i}", "query": TEMPLATES[i % len(TEMPLATES)].format(v=v, s=phrase),
                    "subject": phrase, "distinctive": list(dist), "kind": kind, "vocab": v})
    return out


def cmd_generate(_args: argparse.Namespace) -> int:
    specs = semble.load_specs()
    out: dict[str, Any] = {"rule_version": RULE_VERSION, "seed": SEED, "repos": {}}
    for spec in specs:
        root = semble.CACHE / "repos" / spec["name"]
        if not root.is_dir():
            continue
        ps = probes_for(spec["name"], read_texts(root))
        out["repos"][spec["name"]] = {"language": spec["language"], "probes": ps}
        semble.log(f"{spec['name']:20} {len(ps)} probes")
    PROBES.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    semble.log(f"{sum(len(r['probes']) for r in out['repos'].values())} probes -> {PROBES}")
    return 0


def load_probes() -> dict[str, list[dict[str, Any]]]:
    """repo -> its probes ({} when not generated)."""
    if not PROBES.exists():
        return {}
    data = json.loads(PROBES.read_text())
    if data.get("rule_version") != RULE_VERSION:
        sys.exit(f"{PROBES} was made by rule {data.get('rule_version')}, not {RULE_VERSION}: run generate again")
    return {n: r["probes"] for n, r in data["repos"].items()}


def cmd_show(args: argparse.Namespace) -> int:
    for name, ps in load_probes().items():
        if args.repo and name != args.repo:
            continue
        for p in ps:
            print(f"{p['pid']:24} {p['kind']:5} {p['query']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("generate", help="write <semble cache>/probes.json")
    s = sub.add_parser("show", help="print the probes")
    s.add_argument("repo", nargs="?")
    args = ap.parse_args(argv)
    return {"generate": cmd_generate, "show": cmd_show}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
