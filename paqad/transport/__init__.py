"""paqad's HTTP transport: the one way the library talks to a remote service.

Providers (embeddings in :mod:`paqad.embed.remote`, Cohere reranking in
:mod:`paqad.search.rerank`) say what to send and check what comes back; everything about getting
it there safely lives here, once: the URL policy (:mod:`.urls`), the key (:mod:`.keys`), retries
(:mod:`.retry`) and the client itself (:mod:`.client`). Standard library only, so importing it
loads no third-party code.
"""

from __future__ import annotations

from paqad.errors import RemoteError
from paqad.transport.client import MAX_DETAIL_CHARS, MAX_RESPONSE_BYTES, JsonClient, error_detail
from paqad.transport.keys import ApiKey
from paqad.transport.retry import RETRY_STATUS, RetryPolicy, retry_after
from paqad.transport.urls import check_url, is_loopback

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_RESPONSE_BYTES",
    "RETRY_STATUS",
    "ApiKey",
    "JsonClient",
    "RemoteError",
    "RetryPolicy",
    "check_url",
    "error_detail",
    "is_loopback",
    "retry_after",
]
