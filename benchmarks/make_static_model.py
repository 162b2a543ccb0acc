"""Build paqad's static token table (``paqad/embed/data/minilm-static/tokens-int8.npz``).

    python -m benchmarks make_static_model [--work DIR] [--out PATH] [--lam 0.01] [--iterations 150]

A static model embeds a text as the mean of one vector per WordPiece token, so it costs a lookup
instead of six transformer layers. This script makes the table from paqad's own MiniLM (the
teacher) with no hub, no labelled data and no code of any ruler:

1. **Start**: every vocabulary token run through MiniLM alone (``[CLS] token [SEP]``, mean of
   the three outputs, unit length). On its own this table reproduces MiniLM's vectors of code
   poorly (held-out cosine 0.17), because a token's meaning in context is not its meaning alone.
2. **Training texts**: code that no ruler or benchmark covers and that this machine already has:
   CPython's standard library, C headers under ``/usr/include``, npm's own JavaScript, ``java.base``
   from the JDK's ``src.zip``, Perl modules; a fixed sample (seeded), made into a git repository and
   indexed by paqad so the texts are exactly the ``unit_text`` paqad embeds (36,908), plus the first
   sentence of each of their docstrings (4 to 40 words; 10,063): questions are sentences, and
   without these the table reproduced MiniLM on sentences at a cosine of 0.77 (0.86 with them).
3. **Teacher**: MiniLM's vector of each text (``paqad.embed.local.MINILM``, the shipped file).
4. **Fit**: the table E minimising ||A E - T||^2 + lam ||E - E0||^2, where row i of A averages
   text i's tokens, T holds the teacher's vectors and E0 is step 1's table (tokens no text uses
   keep it). Solved by conjugate gradients on the normal equations, all 384 columns at once.
5. **Store**: int8 rows with one float32 scale each (row cosine to the float table >= 0.9994).

Held-out check (10 % of the texts, never fitted): cosine to the teacher 0.908 on unit texts and
0.862 on sentences, and each text's own teacher vector is its nearest for 96.5 % and 99.2 %. Needs NumPy and SciPy (``scipy`` is
only for this script); the teacher pass costs about 10 minutes of CPU on two cores.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_OUT = ROOT / "paqad" / "embed" / "data" / "minilm-static" / "tokens-int8.npz"
SEED = 7
#: (folder name in the training repository, files, how many to take).
SOURCES = (
    ("py", lambda: [p for p in Path(sys.base_prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}").rglob("*.py")
                    if not {"site-packages", "test", "tests", "idle_test"} & set(p.parts)], 500),
    ("c", lambda: list(Path("/usr/include").rglob("*.h")), 700),
    ("js", lambda: [p for p in Path("/usr/lib/node_modules/npm").rglob("*.js") if ".min." not in p.name], 700),
    ("perl", lambda: list(Path("/usr/share/perl5").rglob("*.pm")) + list(Path("/usr/lib/x86_64-linux-gnu").glob("perl*/**/*.pm")), 300),
)
JDK_SRC = Path("/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip")
MAX_FILE = 200_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/paqad-static", help="training repository and intermediate arrays")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--lam", type=float, default=0.01, help="pull toward the single-token table")
    ap.add_argument("--iterations", type=int, default=150)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    code = training_texts(work)
    sentences = docstring_sentences(work)
    print(f"{len(code)} unit texts, {len(sentences)} sentences", file=sys.stderr)
    start = single_token_table(work)
    teacher = np.concatenate([teacher_vectors(work, code, "teacher.npy"), teacher_vectors(work, sentences, "teacher-sentences.npy")])
    table, report = fit(code + sentences, len(code), teacher, start, args.lam, args.iterations)
    print(report, file=sys.stderr)
    save_int8(table, Path(args.out))
    return 0


def training_texts(work: Path) -> list[str]:
    """The unit texts of the training repository (built once, then read from ``texts.json``)."""
    cached = work / "texts.json"
    if cached.exists():
        return json.loads(cached.read_text())
    repo = work / "train"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    for folder, files, n in SOURCES:
        picked = sorted(files())
        random.Random(SEED).shuffle(picked)
        for f in picked[:n]:
            data = f.read_bytes()
            if len(data) < MAX_FILE:
                dest = repo / folder / str(f).lstrip("/").replace("/", "_")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
    if JDK_SRC.exists():
        with zipfile.ZipFile(JDK_SRC) as z:
            names = sorted(n for n in z.namelist() if n.startswith("java.base/") and n.endswith(".java"))
            random.Random(SEED).shuffle(names)
            for name in names[:500]:
                dest = repo / "java" / name.replace("/", "_")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(name))
    git = ["git", "-C", str(repo), "-c", "user.email=bench@paqad", "-c", "user.name=bench"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "training texts"], check=True)

    from paqad import config
    from paqad.index import store
    from paqad.index.embedding import vectors
    from paqad.index.writing import build

    build.build_full(repo, config.load(repo, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
    con = store.open_current(repo)
    uids = [r[0] for r in con.execute("SELECT uid FROM units ORDER BY uid")]
    texts = sorted({t for t in vectors.texts_of(con, uids) if t.strip()})
    cached.write_text(json.dumps(texts))
    return texts


def docstring_sentences(work: Path) -> list[str]:
    """The first sentence of each training unit's docstring (4-40 words), deduplicated."""
    import re

    from paqad.index import store

    con = store.open_current(work / "train")
    found = set()
    for (doc,) in con.execute("SELECT docstring FROM units WHERE docstring != ''"):
        first = re.split(r"(?<=[.!?])\s", " ".join(doc.split()[:60]))[0].strip()
        if 4 <= len(re.findall(r"[A-Za-z]+", first)) <= 40:
            found.add(first)
    out = sorted(found)
    random.Random(SEED).shuffle(out)
    return out[:15000]


def _minilm() -> tuple[object, object]:
    from tokenizers import Tokenizer

    from paqad.embed.local import MINILM

    tok = Tokenizer.from_file(str(MINILM.tokenizer.locate()))
    tok.no_truncation()
    tok.no_padding()
    return MINILM, tok


def single_token_table(work: Path) -> np.ndarray:
    """Step 1, with the weight-only file (float arithmetic, so a batch equals one by one)."""
    cached = work / "single.npy"
    if cached.exists():
        return np.load(cached)
    from paqad.embed.local import MINILM_WEIGHT_INT8
    from paqad.embed.onnx_session import cpu_session

    _, tok = _minilm()
    vocab = tok.get_vocab_size()  # type: ignore[attr-defined]
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")  # type: ignore[attr-defined]
    sess = cpu_session(MINILM_WEIGHT_INT8.onnx.locate())
    names = {i.name for i in sess.get_inputs()}
    out = np.zeros((vocab, 384), np.float32)  # unnormalised; ``fit`` normalises in float64
    for s in range(0, vocab, 1024):
        ids = np.array([[cls, t, sep] for t in range(s, min(vocab, s + 1024))], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        out[s : s + len(ids)] = sess.run(None, feeds)[0].mean(axis=1)
    np.save(cached, out)
    return out


def teacher_vectors(work: Path, texts: list[str], name: str) -> np.ndarray:
    """Step 3: MiniLM's vector of every training text (resumable: saved every 500)."""
    cached = work / name
    done = np.load(cached) if cached.exists() else np.zeros((0, 384), np.float32)
    if len(done) >= len(texts):
        return done[: len(texts)]
    from paqad.embed.local import MINILM, OnnxProvider

    provider = OnnxProvider(MINILM)
    parts = [done]
    t0 = time.time()
    for s in range(len(done), len(texts), 500):
        parts.append(provider.embed_documents(texts[s : s + 500]))
        np.save(cached, np.concatenate(parts))
        print(f"teacher {s + len(parts[-1])}/{len(texts)} ({time.time() - t0:.0f}s)", file=sys.stderr, flush=True)
    return np.concatenate(parts)


def fit(texts: list[str], n_code: int, teacher: np.ndarray, start: np.ndarray, lam: float, iterations: int) -> tuple[np.ndarray, str]:
    """Step 4; returns the table and a line on the held-out 10 % (unit texts are the first ``n_code``)."""
    import scipy.sparse as sp

    from paqad.embed.inputs import clean_text
    from paqad.embed.static import MAX_INPUT_CHARS

    _, tok = _minilm()
    # [UNK] and [MASK] too: no text's meaning is in them (the provider drops only [CLS], [SEP], [PAD];
    # their rows keep step 1's vectors, and [UNK] is rare in code)
    specials = {tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")}  # type: ignore[attr-defined]
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for i, text in enumerate(texts):
        ids = [x for x in tok.encode(clean_text(text, MAX_INPUT_CHARS)).ids if x not in specials]  # type: ignore[attr-defined]
        if ids:
            u, c = np.unique(ids, return_counts=True)
            rows += [i] * len(u)
            cols += u.tolist()
            vals += (c / len(ids)).tolist()
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), start.shape[0]), dtype=np.float64)
    held = np.random.default_rng(0).random(len(texts)) < 0.1
    train = sp.diags(np.ones(int((~held).sum()))) @ A[~held]
    target = teacher[~held].astype(np.float64)
    train_t = train.T.tocsr()
    e0 = start.astype(np.float64)
    e0 /= np.linalg.norm(e0, axis=1, keepdims=True)

    def normal(x: np.ndarray) -> np.ndarray:
        return train_t @ (train @ x) + lam * x

    # Conjugate gradients, one independent system per column, sharing each product.
    table = e0.copy()
    resid = train_t @ target + lam * e0 - normal(table)
    step = resid.copy()
    rs = (resid * resid).sum(0)
    for _ in range(iterations):
        moved = normal(step)
        alpha = rs / np.maximum((step * moved).sum(0), 1e-30)
        table += alpha * step
        resid -= alpha * moved
        rs_new = (resid * resid).sum(0)
        step = resid + (rs_new / np.maximum(rs, 1e-30)) * step
        rs = rs_new
    lines = []
    for kind, part in (("unit texts", held & (np.arange(len(texts)) < n_code)), ("sentences", held & (np.arange(len(texts)) >= n_code))):
        pred = A[part] @ table
        pred /= np.maximum(np.linalg.norm(pred, axis=1, keepdims=True), 1e-12)
        cos = (pred * teacher[part]).sum(1)
        own = ((pred @ teacher[part].T).argmax(1) == np.arange(int(part.sum()))).mean()
        lines.append(f"held-out {int(part.sum())} {kind}: cosine to the teacher {cos.mean():.3f}, own vector nearest {own:.3f}")
    return table.astype(np.float32), "\n".join(lines)


def save_int8(table: np.ndarray, out: Path) -> None:
    """Step 5: int8 rows, one float32 scale each."""
    scales = np.abs(table).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    rows = np.round(table / scales[:, None]).astype(np.int8)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as fh:
        np.savez(fh, vectors=rows, scales=scales.astype(np.float32))
    import hashlib

    print(f"{out}: sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
