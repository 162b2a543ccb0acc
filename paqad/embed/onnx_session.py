"""The one way paqad starts an onnxruntime session (MiniLM embeddings, the local cross-encoder).

Both models run on the CPU of a machine the user is also working on, so the settings are chosen
for sharing it rather than for a benchmark: one inter-op thread (these graphs are a single chain),
full graph optimisation, onnxruntime's warnings silenced (level 3: errors only; its warnings about
unused initialisers are noise to a paqad user), and idle intra-op threads that sleep instead of
spinning. Spinning burned more CPU per text and was slower on a machine shared with an editor, an
agent and builds (benchmarks/embed_speed.py: 2 threads on a busy 2-core machine, 80 vs 90 ms CPU
per 200-token text, query 6 vs 12 ms).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np


class NodeArg(Protocol):
    """One of a model's inputs, as onnxruntime describes it."""

    @property
    def name(self) -> str: ...


class Session(Protocol):
    """What paqad calls on an ``onnxruntime.InferenceSession``."""

    def get_inputs(self) -> Sequence[NodeArg]: ...

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, np.ndarray]) -> Sequence[np.ndarray]: ...


class Encoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


class Tokenizer(Protocol):
    """What paqad calls on a ``tokenizers.Tokenizer`` once it is set up."""

    def encode(self, sequence: str) -> Encoding: ...


def cpu_session(path: Path, threads: int | None = None) -> Session:
    """An ``onnxruntime.InferenceSession`` for the model file ``path`` on the CPU provider.

    ``threads`` caps the intra-op threads (``None``: onnxruntime's default, all cores). onnxruntime
    is imported here, not at module level, so importing paqad never loads it. Its exceptions pass
    through unchanged; each caller words its own error.
    """
    import onnxruntime as ort  # lazy: 0.1-0.2 s of imports that only an embedding or a rerank needs

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
