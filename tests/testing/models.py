"""A tiny real ONNX cross-encoder for the rerank tests (no real cross-encoder ships in a registry
package; see benchmarks/README.md, Reranking).

The graph has the real cross-encoder interface (``input_ids``, ``attention_mask``,
``token_type_ids`` int64 [batch, seq] -> ``logits`` float [batch, 1]) over a real ``tokenizers``
WordLevel tokenizer.json made from a test repository's words. Its logit is query-dependent and
computable by hand:

    logit = Σ over passage tokens j of weight[id_j] · (number of query tokens equal to id_j)

so a test can say exactly which order the model must produce.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from paqad.search import rerank

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def build_tokenizer(words: list[str]) -> Tokenizer:
    """A WordLevel tokenizer over ``words`` with BERT's pair template (segment 1 for the passage)."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS + sorted(set(words) - set(SPECIALS)))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    return tok


def build_model(weights: np.ndarray, shape: str = "ok") -> onnx.ModelProto:
    """The cross-encoder graph; ``shape="bad"`` answers per-token logits [batch, seq] instead."""
    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask", "token_type_ids")]
    dims: list[str | int | None] = ["batch", 1] if shape == "ok" else ["batch", "seq"]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, dims)
    inits = [
        helper.make_tensor("weight", TensorProto.FLOAT, [len(weights)], weights.astype(np.float32).tolist()),
        helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        helper.make_tensor("ax1", TensorProto.INT64, [1], [1]),
        helper.make_tensor("ax2", TensorProto.INT64, [1], [2]),
        helper.make_tensor("ax12", TensorProto.INT64, [2], [1, 2]),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["weight", "input_ids"], ["w_tok"]),
        n("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        n("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        n("Mul", ["mask_f", "type_f"], ["doc_f"]),
        n("Sub", ["one", "type_f"], ["not_type"]),
        n("Mul", ["mask_f", "not_type"], ["query_f"]),
        n("Mul", ["doc_f", "w_tok"], ["doc_w"]),
        n("Unsqueeze", ["input_ids", "ax2"], ["ids_a"]),
        n("Unsqueeze", ["input_ids", "ax1"], ["ids_b"]),
        n("Equal", ["ids_a", "ids_b"], ["same"]),
        n("Cast", ["same"], ["same_f"], to=TensorProto.FLOAT),
        n("Unsqueeze", ["query_f", "ax2"], ["q3"]),
        n("Unsqueeze", ["doc_w", "ax1"], ["d3"]),
        n("Mul", ["same_f", "q3"], ["sq"]),
        n("Mul", ["sq", "d3"], ["sqd"]),
        n("ReduceSum", ["sqd", "ax12"], ["total"], keepdims=0),
        n("Unsqueeze", ["total", "ax1"], ["logits"]) if shape == "ok" else n("Identity", ["w_tok"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "tiny-cross-encoder", ints, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="paqad-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@dataclass
class TinyModel:
    """A built model: where it is, and what it answers (``logit``), for exact order assertions."""

    folder: Path
    tokenizer: Tokenizer
    weights: np.ndarray

    def logit(self, query: str, doc: str) -> float:
        """The model's answer, computed by hand from the same tokenizer (truncated like paqad does)."""
        self.tokenizer.enable_truncation(max_length=rerank.MAX_PAIR_TOKENS, strategy="longest_first")
        enc = self.tokenizer.encode(query, doc)
        q = [i for i, t in zip(enc.ids, enc.type_ids) if t == 0]
        return float(sum(self.weights[i] * q.count(i) for i, t in zip(enc.ids, enc.type_ids) if t == 1))


def words_of(root: Path) -> list[str]:
    """Every word of ``root``'s files and paths (outside .git and .paqad), lowercased."""
    found: set[str] = set()
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts and ".paqad" not in path.parts:
            found.update(w.lower() for w in re.findall(r"\w+", path.read_text(encoding="utf-8", errors="replace")))
            found.update(w.lower() for w in re.findall(r"\w+", str(path.relative_to(root))))
    return sorted(found)


def make_model(folder: Path, root: Path, boost: dict[str, float] | None = None, shape: str = "ok", words: list[str] | None = None) -> TinyModel:
    """Write ``model.onnx`` + ``tokenizer.json`` to ``folder``: vocabulary from ``root``'s files (and
    ``words``), every token weighing 1 but the specials (0) and ``boost``'s."""
    tok = build_tokenizer(words_of(root) + (words or []))
    vocab = tok.get_vocab()
    weights = np.ones(len(vocab), dtype=np.float32)
    for special in SPECIALS:
        weights[vocab[special]] = 0.0
    for word, value in (boost or {}).items():
        weights[vocab[word]] = value
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    onnx.save(build_model(weights, shape), str(folder / "model.onnx"))
    return TinyModel(folder, Tokenizer.from_file(str(folder / "tokenizer.json")), weights)
