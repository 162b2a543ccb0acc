"""Which URLs paqad may send an API key to, decided on the URL text alone.

Checked when a client is made, before anything is resolved or connected: ``https://`` anywhere,
plain ``http://`` only to loopback (127.0.0.0/8, ``::1``, ``localhost``), because over plain http
the key and the user's code would cross the network readable by anyone on the path. A URL that
carries credentials, a query string or a fragment is refused: keys belong in ``secrets.env``, and
a query string is where a key would end up in server logs.
"""

from __future__ import annotations

import ipaddress
import urllib.parse

from paqad.errors import ConfigError
from paqad.secrets import redact


def check_url(url: str, what: str = "Embedding endpoint") -> urllib.parse.SplitResult:
    """Parse ``url`` and refuse what paqad must not send a key to; nothing is resolved or connected.

    https anywhere; http only to 127.0.0.0/8, ::1 or ``localhost``. No credentials, query or
    fragment in the URL. ``what`` names the setting in messages. Raises ``ConfigError``.
    """
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"{what} {redact(url)!r} is not a valid URL.") from None
    if parts.scheme not in ("https", "http") or not host:
        raise ConfigError(f"{what} {redact(url)!r} must be an https:// URL (http:// only to this machine).")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(f"{what} must not carry credentials; put the key in the environment or in paqad's secrets.env.")
    if parts.query or parts.fragment:
        raise ConfigError(f"{what} {redact(url)!r} must not have a query string or fragment.")
    if parts.scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"{what} {redact(url)!r} uses plain http:// to another machine; the API key and your code would travel "
            "unencrypted. Use https://, or http:// only to localhost, 127.0.0.0/8 or [::1]."
        )
    return parts


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1`` written literally (no DNS lookup: a name that
    merely resolves to 127.0.0.1 could resolve elsewhere tomorrow)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback
