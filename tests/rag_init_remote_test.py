"""``paqad rag init --provider openai|voyageai`` end to end, through the installed CLI, against a
local stub of the embeddings API on 127.0.0.1 (base URL from ``rag_embedding_base_url``), with
the key in ``.paqad/secrets.env``: the index is built and embedded, ``rag search`` runs hybrid,
and the key appears nowhere in ``.paqad/`` but ``secrets.env``.

The stub answers the documented shape (``{"data": [{"embedding", "index"}]}``) with bag-of-words
vectors (each word hashed to a dimension), so cosine similarity means shared words.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from paqad import workspace
from paqad.secrets import set_secret
from testing.repos import Repo, make_shop
from testing.stubs import Reply, Request, json_reply, serve

# `rag init --provider X` must decide the provider, not the suite's lexical-only pin.
pytestmark = pytest.mark.usefixtures("default_provider")

DIMS = {"text-embedding-3-small": 1536, "voyage-code-3": 1024}
PROVIDERS = {"openai": ("OPENAI_API_KEY", "sk-test-remote-init-0123456789abcdef"), "voyageai": ("VOYAGE_API_KEY", "pa-test-remote-init-0123456789abcdef")}


def bag_of_words(text: str, dims: int) -> list[float]:
    vec = np.zeros(dims, dtype=np.float64)
    for word in re.findall(r"[a-z]+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    vec[0] += 1e-3  # never all zeros
    return (vec / np.linalg.norm(vec)).tolist()


@pytest.fixture
def stub():
    seen: list[dict[str, Any]] = []

    def handle(request: Request) -> Reply:
        body = request.body
        seen.append({"path": request.path, "auth": request.headers.get("authorization"), "body": body})
        dims = DIMS[body["model"]]
        return json_reply(200, {"data": [{"embedding": bag_of_words(t, dims), "index": i} for i, t in enumerate(body["input"])], "model": body["model"]})

    with serve(handle) as server:
        yield server.url, seen


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, _ in PROVIDERS.values():
        monkeypatch.delenv(name, raising=False)


def files_holding(folder: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes())


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_rag_init_with_a_remote_provider_then_hybrid_search(repo: Repo, stub, paqad_cli, provider: str) -> None:
    url, seen = stub
    key_name, key = PROVIDERS[provider]
    make_shop(repo)
    env = {"PAQAD_RAG_EMBEDDING_BASE_URL": url}

    missing = paqad_cli("rag", "init", "--provider", provider, cwd=repo.root, env=env)
    assert missing.returncode == 2 and key_name in missing.stderr and "secrets.env" in missing.stderr and seen == []

    set_secret(repo.root, key_name, key)
    init = paqad_cli("rag", "init", "--provider", provider, "--json", cwd=repo.root, env=env)
    assert init.returncode == 0, init.stderr
    assert seen and all(r["path"] == "/v1/embeddings" and r["auth"] == f"Bearer {key}" for r in seen)
    if provider == "voyageai":
        assert {r["body"]["input_type"] for r in seen} == {"document"}

    status = json.loads(paqad_cli("rag", "status", "--json", cwd=repo.root, env=env).stdout)["index"]
    assert status["embedding_provider"] == provider and status["vectors_pending"] == 0

    out = paqad_cli("rag", "search", "charge a card through the payment gateway", "--json", cwd=repo.root, env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "hybrid" and data["answered"]
    assert data["results"][0]["path"] == "shop/payments.py" and "cosine" in data["results"][0]["signals"]
    assert seen[-1]["body"]["input"] == ["charge a card through the payment gateway"]

    # From another folder, `--root` decides whose secrets.env holds the key (not the working directory).
    away = paqad_cli("--root", str(repo.root), "rag", "search", "refund an earlier card charge", "--json", cwd=repo.root.parent, env=env)
    assert away.returncode == 0, away.stderr
    assert json.loads(away.stdout)["mode"] == "hybrid" and seen[-1]["body"]["input"] == ["refund an earlier card charge"]

    local = workspace.local_dir(repo.root)
    assert files_holding(local, key) == ["secrets.env"] and files_holding(repo.root, key) == []
    assert key_name not in workspace.local_config_path(repo.root).read_text(encoding="utf-8")
    assert key not in init.stdout + init.stderr + out.stdout + out.stderr + missing.stderr + away.stdout + away.stderr


def test_rag_init_rejects_an_unknown_provider(repo: Repo, paqad_cli) -> None:
    make_shop(repo)
    out = paqad_cli("rag", "init", "--provider", "cohere", cwd=repo.root)
    assert out.returncode == 2 and "openai" in out.stderr and "voyageai" in out.stderr
    assert not (workspace.local_config_path(repo.root)).exists()


class _Terminal:
    """A stream that says it is a TTY and keeps what is written to it."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_rag_init_progress_bar_is_the_clis_and_draws_the_same_frames() -> None:
    """`rag init` draws embedding progress with paqad.cli.render.ProgressBar, fed by the library's
    plain ``progress(done, total)`` callback; the frame format is unchanged by the move."""
    from paqad.cli import render

    assert render.progress_line("embedding", 50, 200, 2.0) == "embedding [######------------------] 50/200 units  25.0/s  ETA 0m06s"
    term = _Terminal()
    bar = render.ProgressBar(stream=term)  # type: ignore[arg-type]
    bar(0, 0)  # nothing to do: nothing drawn
    assert term.written == []
    bar(3, 4)
    bar.close()
    assert term.written[0].startswith("\r\033[Kembedding [##################------] 3/4 units  ")
    assert term.written[-1] == "\n"
