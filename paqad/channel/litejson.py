"""JSON for the thin clients without ``import json``: the same text, a third of a hook's imports less.

``import json`` imports ``re`` (and with it ``enum``, ``functools``, ``collections``): 8 ms of CPU
in a hook process whose whole budget is 30 (benchmarks/README.md, "The hook shim"). The work itself is done
by CPython's ``_json`` accelerator, which ``json`` uses too: ``make_scanner`` parses,
``make_encoder`` encodes and ``encode_basestring(_ascii)`` quotes strings, so :func:`loads` and :func:`dumps` give exactly what
``json.loads`` and ``json.dumps`` give for the values a request or reply holds (dicts with string
keys, lists, strings, numbers, booleans, None). Anything else (another key type, an object
``json`` could refuse with its own message) goes to the real ``json``, imported then; so does
everything on an interpreter without ``_json``.
"""

try:
    from _json import encode_basestring, encode_basestring_ascii, make_scanner
except ImportError:  # not CPython: the real json, always
    make_scanner = None  # type: ignore[assignment,misc]
try:  # the C encoder ``json.dumps`` itself uses (no indent): the service's replies, at C speed
    from _json import make_encoder
except ImportError:
    make_encoder = None  # type: ignore[assignment,misc]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads from ``json.JSONDecoder`` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity: float() reads them as json does
    memo: dict = {}


_scan = make_scanner(_Context()) if make_scanner is not None else None  # type: ignore[arg-type]


def loads(text: "str | bytes") -> "Any":
    """``json.loads(text)``; raises ValueError (``json.JSONDecodeError`` where json would) on bad input."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")  # json.loads detects UTF-16/32 too; the wire and hosts send UTF-8
    if _scan is None or (text[:1] == "\ufeff"):
        return _json().loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - StopIteration, or a SystemError: ``_json`` builds its error from
        return _json().loads(text)  # ``json.decoder``, which it expects imported; json raises its own
    if text[end:].strip(_WHITESPACE):
        return _json().loads(text)  # "Extra data", as json says it
    return obj


def dumps(obj: "Any", *, ensure_ascii: bool = True, separators: "tuple[str, str] | None" = None) -> str:
    """``json.dumps(obj, ensure_ascii=..., separators=...)`` (the other options at their defaults)."""
    item, key = separators or (", ", ": ")
    if make_scanner is None:
        return _json().dumps(obj, ensure_ascii=ensure_ascii, separators=(item, key))
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    if make_encoder is not None and not isinstance(obj, str):
        try:  # as json.JSONEncoder.encode calls it (markers for the circular check, allow_nan)
            return "".join(make_encoder({}, _unsupported, quote, None, key, item, False, False, True)(obj, 0))
        except (_Unsupported, ValueError):  # json says why (circular), or encodes it (a non-string key)
            return _json().dumps(obj, ensure_ascii=ensure_ascii, separators=(item, key))
    parts: list[str] = []
    try:
        _encode(obj, parts, quote, item, key, set())
    except _Unsupported:
        return _json().dumps(obj, ensure_ascii=ensure_ascii, separators=(item, key))
    return "".join(parts)


class _Unsupported(Exception):
    """A value :func:`dumps` leaves to the real json (which encodes it or says why not)."""


def _unsupported(obj: "Any") -> "Any":
    raise _Unsupported  # the C encoder's ``default``: json's own ``default`` raises TypeError here


def _encode(obj: "Any", out: list, quote: "Any", item: str, key: str, seen: set) -> None:
    if isinstance(obj, str):
        out.append(quote(obj))
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(int.__repr__(obj))
    elif isinstance(obj, float):
        out.append(_float(obj))
    elif isinstance(obj, (list, tuple, dict)):
        if id(obj) in seen:
            raise _Unsupported  # json raises "Circular reference detected"
        seen.add(id(obj))
        if isinstance(obj, dict):
            out.append("{")
            for i, (k, v) in enumerate(obj.items()):
                if not isinstance(k, str):
                    raise _Unsupported  # json turns int, float, bool and None keys into strings
                if i:
                    out.append(item)
                out.append(quote(k))
                out.append(key)
                _encode(v, out, quote, item, key, seen)
            out.append("}")
        else:
            out.append("[")
            for i, v in enumerate(obj):
                if i:
                    out.append(item)
                _encode(v, out, quote, item, key, seen)
            out.append("]")
        seen.discard(id(obj))
    else:
        raise _Unsupported


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _json() -> "Any":
    import json  # lazy: json loads re, which the hook's thin client avoids (see the module's docstring)

    return json
