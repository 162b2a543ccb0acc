#!/usr/bin/env python3
"""Fetch pinned third-party corpora (and generate synthetic ones) for paqad benchmarks.

Usage:
    python -m benchmarks corpora fetch [NAME ...] [--force] [--update-lock]
    python -m benchmarks corpora fingerprint [NAME ...]
    python -m benchmarks corpora path NAME
    python -m benchmarks corpora list

Every corpus lands in ``benchmarks/.cache/corpora/<root>/`` (gitignored; third-party code is
never committed). After unpacking, the script

1. checks the version it actually got (PKG-INFO, package.json, Debian control) and fails loudly
   if it is not the pinned one;
2. computes the fingerprint: ``sha256:`` + sha256 over the lines ``<relpath>\\t<sha256 hex>\\n``
   of every file under the corpus root, sorted by POSIX relative path, ``.git`` and ``.paqad`` (an index built in place) excluded
   (a symlink is hashed as ``symlink:<target>`` instead of its content);
3. turns the root into a git repository with exactly one commit (fixed author and dates, so the
   commit id is reproducible too), because paqad indexes git repositories;
4. compares name/version/source/fingerprint/file count with ``benchmarks/corpora.lock.json``
   and warns loudly (exit status 3) on any drift. Entries missing from the lock are added;
   ``--update-lock`` rewrites drifted entries on purpose.

A corpus already in the cache is kept when its fingerprint still matches the lock
(``--force`` re-fetches it).
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "corpora"
LOCK = HERE / "corpora.lock.json"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "paqad-bench",
    "GIT_AUTHOR_EMAIL": "bench@paqad.invalid",
    "GIT_COMMITTER_NAME": "paqad-bench",
    "GIT_COMMITTER_EMAIL": "bench@paqad.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
}


class CorpusError(RuntimeError):
    pass


def die(msg: str) -> None:
    bar = "!" * 78
    print(f"\n{bar}\nERROR: {msg}\n{bar}", file=sys.stderr)
    sys.exit(2)


def warn_loud(msg: str) -> None:
    bar = "#" * 78
    print(f"\n{bar}\nWARNING: {msg}\n{bar}", file=sys.stderr)


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> str:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CorpusError(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
            f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
        )
    return proc.stdout


# --------------------------------------------------------------------------- fingerprint


def iter_files(root: Path):
    """Yield (posix relpath, Path) for every file under root, skipping any `.git` directory."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".paqad")]
        # symlinks to directories show up in dirnames; treat them as files (not followed)
        for d in list(dirnames):
            p = Path(dirpath, d)
            if p.is_symlink():
                dirnames.remove(d)
                filenames.append(d)
        for name in filenames:
            p = Path(dirpath, name)
            yield p.relative_to(root).as_posix(), p


def file_digest(p: Path) -> str:
    if p.is_symlink():
        return hashlib.sha256(f"symlink:{os.readlink(p)}".encode()).hexdigest()
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fingerprint(root: Path) -> tuple[str, int]:
    entries = sorted((rel, file_digest(p)) for rel, p in iter_files(root))
    h = hashlib.sha256()
    for rel, digest in entries:
        h.update(f"{rel}\t{digest}\n".encode())
    return "sha256:" + h.hexdigest(), len(entries)


# --------------------------------------------------------------------------- helpers


def safe_untar(tar_path: Path, dest: Path) -> None:
    with tarfile.open(tar_path) as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, filter="data")
            return
        # Python without extraction filters (< 3.11.4): refuse unsafe members ourselves.
        for m in tf.getmembers():
            target = (dest / m.name).resolve()
            if not target.is_relative_to(dest.resolve()) or m.issym() or m.islnk() or m.isdev():
                raise CorpusError(f"unsafe member in {tar_path.name}: {m.name}")
        tf.extractall(dest)


def git_init_one_commit(root: Path, message: str) -> None:
    cfg = [
        "-c", "init.defaultBranch=main",
        "-c", "user.name=paqad-bench",
        "-c", "user.email=bench@paqad.invalid",
        "-c", "commit.gpgsign=false",
        "-c", "core.autocrlf=false",
    ]
    run(["git", *cfg, "init", "-q", "."], cwd=root, env=GIT_ENV)
    # -f: also add files an in-corpus .gitignore would hide, so git sees what we fingerprinted
    run(["git", *cfg, "add", "-A", "-f", "."], cwd=root, env=GIT_ENV)
    run(["git", *cfg, "commit", "-q", "--no-verify", "-m", message], cwd=root, env=GIT_ENV)
    tracked = run(["git", "ls-files", "-z"], cwd=root).split("\0")
    tracked = [t for t in tracked if t]
    _, n_files = fingerprint(root)
    if len(tracked) != n_files:
        raise CorpusError(f"git tracks {len(tracked)} files but corpus has {n_files} in {root}")


def read_pkg_info_version(pkg_info: Path) -> str:
    msg = email.parser.Parser().parsestr(pkg_info.read_text(encoding="utf-8"), headersonly=True)
    return (msg.get("Version") or "").strip()


def check_version(name: str, got: str, want: str, prefix: bool = False) -> None:
    ok = got.startswith(want) if prefix else got == want
    if not ok:
        raise CorpusError(f"{name}: expected version {want!r}, got {got!r} — refusing to continue")


# --------------------------------------------------------------------------- corpora


@dataclass
class Corpus:
    name: str
    version: str
    source: str
    root: str  # folder name under CACHE
    build: Callable[[Corpus, Path], Path]  # (corpus, tmpdir) -> prepared root dir inside tmpdir
    kind: str = "third-party"


def build_pypi_sdist(c: Corpus, tmp: Path) -> Path:
    dl = tmp / "dl"
    dl.mkdir()
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "--disable-pip-version-check", f"{c.name}=={c.version}", "-d", str(dl)])
    sdists = [p for p in dl.iterdir() if p.name.endswith((".tar.gz", ".tgz"))]
    if len(sdists) != 1:
        raise CorpusError(f"{c.name}: expected one sdist, found {[p.name for p in dl.iterdir()]}")
    out = tmp / "out"
    out.mkdir()
    safe_untar(sdists[0], out)
    root = out / f"{c.name}-{c.version}"
    if not root.is_dir():
        raise CorpusError(f"{c.name}: sdist did not unpack to {root.name}/: {os.listdir(out)}")
    check_version(c.name, read_pkg_info_version(root / "PKG-INFO"), c.version)
    return root


DEB_SUBDIR = "usr/share/gocode/src/github.com/spf13/cobra"


def build_cobra_deb(c: Corpus, tmp: Path) -> Path:
    pkg = "golang-github-spf13-cobra-dev"
    dl = tmp / "dl"
    dl.mkdir()
    os.chmod(dl, 0o777)  # apt's _apt sandbox user must be able to write here
    try:
        run(["apt-get", "download", f"{pkg}={c.source.split('=', 1)[1]}"], cwd=dl)
    except CorpusError as e:
        raise CorpusError(f"{e}\n(hint: run `apt-get update` first; Debian may have moved on "
                          f"from {c.version})") from None
    debs = list(dl.glob("*.deb"))
    if len(debs) != 1:
        raise CorpusError(f"cobra: expected one .deb, found {os.listdir(dl)}")
    deb_version = run(["dpkg-deb", "-f", str(debs[0]), "Version"]).strip()
    check_version(c.name, deb_version, c.version, prefix=True)
    x = tmp / "x"
    run(["dpkg-deb", "-x", str(debs[0]), str(x)])
    src = x / DEB_SUBDIR
    if not src.is_dir():
        raise CorpusError(f"cobra: {DEB_SUBDIR} missing from {debs[0].name}")
    root = tmp / c.root
    shutil.move(str(src), root)
    return root


def build_npm(c: Corpus, tmp: Path) -> Path:
    dl = tmp / "dl"
    dl.mkdir()
    run(["npm", "pack", f"{c.name}@{c.version}", "--pack-destination", str(dl), "--silent"],
        cwd=dl)
    tgzs = list(dl.glob("*.tgz"))
    if len(tgzs) != 1:
        raise CorpusError(f"{c.name}: expected one tarball, found {os.listdir(dl)}")
    out = tmp / "out"
    out.mkdir()
    safe_untar(tgzs[0], out)
    pkg = out / "package"
    got = json.loads((pkg / "package.json").read_text(encoding="utf-8")).get("version", "")
    check_version(c.name, got, c.version)
    root = tmp / c.root
    pkg.rename(root)
    return root


# ---- synthetic ---------------------------------------------------------------------------

VERBS = """load save parse render validate compute merge split fetch store build resolve
normalize encode decode compress expand filter collect register dispatch schedule cancel retry
refresh sync flush open close read write update delete create find match sort rank index scan
convert format apply reset emit publish subscribe notify authorize authenticate sign verify
encrypt hash cache evict prune archive restore migrate import export summarize aggregate""".split()
NOUNS = """user account session token order invoice payment customer product cart item
price discount coupon shipment address warehouse inventory report metric event message queue
channel topic record batch job task worker schedule config setting profile permission role group
tenant project document page template widget layout theme asset image thumbnail upload file
folder path route request response header cookie query result cursor snapshot checkpoint
ledger transaction balance currency rate forecast budget audit log trace span alert incident
ticket comment review rating tag category catalog vendor contract license subscription plan""".split()
QUALIFIERS = """pending active expired cached remote local batch daily hourly draft final
primary secondary default custom legacy partial full raw clean stale fresh""".split()
PARAMS = """value items limit offset key name data options timeout retries payload context
source target prefix suffix threshold mapping records entries flags""".split()
DOC_TEMPLATES = [
    "{Verb} the {noun} and return the result.",
    "{Verb} every {noun} that matches the given {param}.",
    "Helper that will {verb} the {qual} {noun}.",
    "{Verb} {noun} records, skipping {qual} ones.",
    "Return the {qual} {noun} after trying to {verb} it.",
]
SYNTH_SEED = 20240101
FUNCS_PER_FILE = 25
FILES_PER_PACKAGE = 50


def _synth_func(rng: random.Random, name: str, callees: list[str], module_idx: int) -> str:
    params = rng.sample(PARAMS, rng.randint(1, 3))
    lines = [f"def {name}({', '.join(params)}):"]
    if rng.random() < 0.6:
        verb, noun = name.split("_")[0], name.split("_")[-1]
        doc = rng.choice(DOC_TEMPLATES).format(
            Verb=verb.capitalize(), verb=verb, noun=noun, qual=rng.choice(QUALIFIERS),
            param=params[0])
        lines.append(f'    """{doc}"""')
    acc = rng.choice(["result", "out", "acc", "collected"])
    lines.append(f"    {acc} = []")
    p0 = params[0]
    lines.append(f"    for entry in ({p0} if isinstance({p0}, (list, tuple)) else [{p0}]):")
    cond = rng.choice(["entry is None", "not entry", f"entry == {module_idx % 7}",
                       "isinstance(entry, str) and not entry.strip()"])
    lines.append(f"        if {cond}:")
    lines.append("            continue")
    lines.append(f"        {acc}.append(entry)")
    for callee in callees:
        arg = rng.choice(params)
        lines.append(f"    {acc}.append({callee}({arg}))")
    if len(params) > 1 and rng.random() < 0.5:
        lines.append(f"    if {params[1]}:")
        lines.append(f"        {acc} = {acc}[: len({acc}) // 2 + 1]")
    lines.append(f"    return {acc}")
    return "\n".join(lines)


def generate_synthetic(root: Path, n_units: int, seed: int) -> None:
    rng = random.Random(seed)
    n_files = n_units // FUNCS_PER_FILE
    pkg_root = root / "synthapp"
    pkg_root.mkdir(parents=True)
    (pkg_root / "__init__.py").write_text('"""Synthetic benchmark package."""\n')
    prev_module: tuple[str, list[str]] | None = None
    for fi in range(n_files):
        pkg = f"pkg_{fi // FILES_PER_PACKAGE:03d}"
        pdir = pkg_root / pkg
        if fi % FILES_PER_PACKAGE == 0:
            pdir.mkdir()
            (pdir / "__init__.py").write_text("")
            prev_module = None
        domain = rng.choice(NOUNS)
        mod_name = f"{domain}_{fi:05d}"
        names: list[str] = []
        seen: set[str] = set()
        while len(names) < FUNCS_PER_FILE:
            parts = [rng.choice(VERBS)]
            if rng.random() < 0.4:
                parts.append(rng.choice(QUALIFIERS))
            parts.append(rng.choice(NOUNS))
            name = "_".join(parts)
            if name not in seen:
                seen.add(name)
                names.append(name)
        header = [f'"""{domain.capitalize()} helpers (synthetic module {fi})."""', ""]
        imported: list[str] = []
        if prev_module is not None and rng.random() < 0.7:
            pm, pnames = prev_module
            imported = sorted(rng.sample(pnames, 2))
            header.append(f"from synthapp.{pkg}.{pm} import {', '.join(imported)}")
            header.append("")
        funcs = []
        for i, name in enumerate(names):
            pool = names[:i] + imported
            k = min(len(pool), rng.choice([0, 0, 1, 1, 2]))
            callees = rng.sample(pool, k) if k else []
            funcs.append(_synth_func(rng, name, callees, fi))
        text = "\n".join(header) + "\n\n" + "\n\n\n".join(funcs) + "\n"
        (pdir / f"{mod_name}.py").write_text(text, encoding="utf-8")
        prev_module = (mod_name, names)
    (root / "README.md").write_text(
        f"# synthetic corpus\n\nGenerated by benchmarks/corpora.py: {n_files} files x "
        f"{FUNCS_PER_FILE} functions = {n_units} function units, seed {seed}.\n",
        encoding="utf-8")


def build_synthetic(c: Corpus, tmp: Path) -> Path:
    n_units = {"synthetic-10k": 10_000, "synthetic-100k": 100_000}[c.name]
    root = tmp / c.root
    root.mkdir()
    generate_synthetic(root, n_units, SYNTH_SEED)
    return root


CORPORA: dict[str, Corpus] = {
    c.name: c
    for c in [
        Corpus("flask", "3.1.3", "pypi-sdist:flask==3.1.3", "flask-3.1.3", build_pypi_sdist),
        Corpus("requests", "2.32.3", "pypi-sdist:requests==2.32.3", "requests-2.32.3",
               build_pypi_sdist),
        Corpus("cobra", "1.6.1", "debian:golang-github-spf13-cobra-dev=1.6.1-1", "cobra-1.6.1",
               build_cobra_deb),
        Corpus("rxjs", "7.8.1", "npm:rxjs@7.8.1", "rxjs-7.8.1", build_npm),
        Corpus("synthetic-10k", "gen-1",
               f"synthetic:seed={SYNTH_SEED},units=10000,funcs_per_file={FUNCS_PER_FILE}",
               "synthetic-10k", build_synthetic, kind="synthetic"),
        Corpus("synthetic-100k", "gen-1",
               f"synthetic:seed={SYNTH_SEED},units=100000,funcs_per_file={FUNCS_PER_FILE}",
               "synthetic-100k", build_synthetic, kind="synthetic"),
    ]
}


# --------------------------------------------------------------------------- lock


def load_lock() -> dict:
    if LOCK.exists():
        return json.loads(LOCK.read_text(encoding="utf-8"))
    return {}


def save_lock(lock: dict) -> None:
    ordered = {k: lock[k] for k in CORPORA if k in lock}
    ordered.update({k: v for k, v in lock.items() if k not in ordered})
    LOCK.write_text(json.dumps(ordered, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def lock_entry(c: Corpus, fp: str, n_files: int) -> dict:
    return {"version": c.version, "source": c.source, "root": c.root,
            "fingerprint": fp, "files": n_files}


def compare_lock(c: Corpus, entry: dict, lock: dict) -> list[str]:
    old = lock.get(c.name)
    if old is None:
        return []
    return [f"{c.name}.{k}: lock has {old.get(k)!r}, got {entry[k]!r}"
            for k in ("version", "source", "root", "fingerprint", "files")
            if old.get(k) != entry[k]]


# --------------------------------------------------------------------------- commands


def corpus_path(c: Corpus) -> Path:
    return CACHE / c.root


def private_copy(source: Path, dst: Path) -> Path:
    """``dst``: a copy of the fetched corpus at ``source`` without any index in it (``.paqad``), for a
    run to index and change; exits with the command that fetches it when it is not fetched."""
    if not (source / ".git").exists():
        die(f"{source}: not fetched; run python -m benchmarks corpora fetch")
    shutil.copytree(source, dst, symlinks=True, ignore=shutil.ignore_patterns(".paqad"))
    return dst


def fetch_one(c: Corpus, force: bool, lock: dict) -> dict:
    dest = corpus_path(c)
    if dest.is_dir() and (dest / ".git").is_dir() and not force:
        fp, n = fingerprint(dest)
        entry = lock_entry(c, fp, n)
        if not compare_lock(c, entry, lock):
            print(f"{c.name:15s} cached    {fp}  {n:6d} files  {dest}")
            return entry
        print(f"{c.name}: cached copy differs from lock, re-fetching", file=sys.stderr)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tmp-{c.name}-", dir=CACHE) as tmpname:
        tmp = Path(tmpname)
        root = c.build(c, tmp)
        fp, n = fingerprint(root)
        git_init_one_commit(root, f"{c.name} {c.version} ({c.source})")
        fp2, _ = fingerprint(root)
        if fp2 != fp:
            raise CorpusError(f"{c.name}: fingerprint changed while creating the git repo")
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(root), dest)
    print(f"{c.name:15s} fetched   {fp}  {n:6d} files  {dest}")
    return lock_entry(c, fp, n)


def select(names: list[str]) -> list[Corpus]:
    unknown = [n for n in names if n not in CORPORA]
    if unknown:
        die(f"unknown corpus {unknown}; known: {list(CORPORA)}")
    return [CORPORA[n] for n in names] if names else list(CORPORA.values())


def cmd_fetch(args) -> int:
    lock = load_lock()
    drift: list[str] = []
    failed: list[str] = []
    for c in select(args.names):
        try:
            entry = fetch_one(c, args.force, lock)
        except CorpusError as e:
            warn_loud(f"{c.name}: {e}")
            failed.append(c.name)
            continue
        diffs = compare_lock(c, entry, lock)
        if diffs and not args.update_lock:
            drift.extend(diffs)
        else:
            if c.name not in lock or diffs:
                lock[c.name] = entry
                save_lock(lock)
                print(f"{c.name}: lock entry {'updated' if diffs else 'recorded'}")
    if drift:
        warn_loud("corpus DRIFT against benchmarks/corpora.lock.json — rulers may be stale:\n  "
                  + "\n  ".join(drift)
                  + "\n(re-run with --update-lock only if the change is intended)")
    if failed:
        warn_loud(f"failed: {', '.join(failed)}")
        return 2
    return 3 if drift else 0


def cmd_fingerprint(args) -> int:
    lock = load_lock()
    status = 0
    for c in select(args.names):
        dest = corpus_path(c)
        if not dest.is_dir():
            print(f"{c.name:15s} MISSING   (run: python -m benchmarks corpora fetch {c.name})")
            status = max(status, 1)
            continue
        fp, n = fingerprint(dest)
        diffs = compare_lock(c, lock_entry(c, fp, n), lock)
        print(f"{c.name:15s} {c.version:8s} {fp}  {n:6d} files" + ("  DRIFT" if diffs else ""))
        if diffs:
            warn_loud("\n  ".join(diffs))
            status = 3
    return status


def cmd_path(args) -> int:
    c = select([args.name])[0]
    print(corpus_path(c))
    return 0 if corpus_path(c).is_dir() else 1


def cmd_list(args) -> int:
    lock = load_lock()
    for c in CORPORA.values():
        e = lock.get(c.name, {})
        print(f"{c.name:15s} {c.version:8s} {c.source:60s} {e.get('fingerprint', '-')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fetch/generate corpora into benchmarks/.cache/corpora")
    f.add_argument("names", nargs="*")
    f.add_argument("--force", action="store_true", help="re-fetch even if cached")
    f.add_argument("--update-lock", action="store_true",
                   help="overwrite drifted lock entries instead of failing")
    f.set_defaults(func=cmd_fetch)
    g = sub.add_parser("fingerprint", help="print fingerprints of cached corpora")
    g.add_argument("names", nargs="*")
    g.set_defaults(func=cmd_fingerprint)
    p = sub.add_parser("path", help="print the corpus root path")
    p.add_argument("name")
    p.set_defaults(func=cmd_path)
    sub.add_parser("list", help="list known corpora").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
