"""When to try a request again, and how long to wait first.

Retried: 408, 429, every 5xx, and failures with no status at all (connection refused, reset,
timed out); these are the ones a later try can fix. The wait is exponential backoff with jitter
(half the step fixed, half random, so many clients that failed together do not return together),
unless the server said how long to wait (``retry-after-ms``, then ``Retry-After`` in seconds or as
an HTTP date), which is honoured as given. :class:`RetryPolicy` bounds the attempts and the total
time, so a request can never hang a command or the prompt hook.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from email.message import Message

#: Statuses worth another try.
RETRY_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. ``timeout_s`` bounds each connect and each read; ``max_total_s`` bounds a
    request including its retries and waits; at most ``max_attempts`` tries."""

    max_attempts: int = 6
    max_total_s: float = 120.0
    timeout_s: float = 60.0
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 20.0
    #: A ``Retry-After`` longer than this is not waited for (the request fails at once).
    max_retry_after_s: float = 60.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Wait after failed try number ``attempt`` (1-based): half of the exponential step fixed, half random."""
        step = min(self.backoff_cap_s, self.backoff_base_s * (2 ** (attempt - 1)))
        return step / 2 + rng.uniform(0, step / 2)


def retry_after(headers: Message | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if
    absent or unreadable. ``headers``: a response's (``http.client.HTTPMessage``)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
