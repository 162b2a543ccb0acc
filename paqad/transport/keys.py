"""A service's API key: looked up on first use, checked before it goes into a header, never shown.

Read lazily so that making a client is offline and free (``rag init`` can build a provider, and
``repr`` it, before any key exists). Looked up through :mod:`paqad.secrets` (environment, then
``secrets.env`` in paqad's per-developer folder) under one or more variable names, the first that is set winning: Cohere's
SDK documents ``CO_API_KEY`` and accepts ``COHERE_API_KEY``, and paqad honours both.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from paqad.errors import ConfigError
from paqad.secrets import Secret, get_secret

#: What an HTTP header value can carry. Anything else would make http.client raise a ValueError
#: whose message holds the whole header, key included.
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")


class ApiKey:
    """The key for ``label`` (a service's name in messages), under the variables ``names``.

    ``given``: a key passed in code, used as is. ``required``: a missing key is a ``ConfigError``
    that says where to put it; otherwise (a local server that needs none) no header is sent.
    """

    def __init__(
        self,
        names: Sequence[str],
        *,
        label: str,
        required: bool = True,
        root: Path | None = None,
        environ: Mapping[str, str] | None = None,
        given: str | None = None,
    ) -> None:
        if not names:
            raise ValueError("an ApiKey needs at least one variable name")
        self.names = tuple(names)
        self.label = label
        self.required = required
        self.root = root
        self._environ = environ
        self._secret: Secret | None = Secret(given, "argument") if given else None
        self._loaded = bool(given)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The variable messages tell the user to set (the first, preferred, name)."""
        return self.names[0]

    @property
    def secret(self) -> Secret | None:
        """The key as loaded so far (None before the first ``get`` or when there is none); for redaction."""
        return self._secret

    def get(self) -> Secret | None:
        """The key, read now; ``ConfigError`` naming where to put it when it is required and missing."""
        with self._lock:
            if not self._loaded:
                found = (get_secret(name, self.root, self._environ) for name in self.names)
                self._secret = next((k for k in found if k is not None), None)
                self._loaded = True
        if self._secret is not None and not _HEADER_SAFE.fullmatch(self._secret.reveal()):
            raise ConfigError(f"The API key from {self._secret.source} has spaces or characters a header cannot carry; check {self.name}.")
        if self._secret is None and self.required:
            raise ConfigError(
                f"{self.label} needs an API key: set {self.name} in the environment, "
                f"or put {self.name}=... in paqad's secrets.env (outside the repository, mode 0600; `paqad doctor` shows the folder)."
            )
        return self._secret

    def __repr__(self) -> str:
        return f"ApiKey(names={self.names!r}, loaded={self._loaded})"
