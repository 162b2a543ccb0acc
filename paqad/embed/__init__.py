"""Embedding providers behind one interface, and the bounded text embedded for each unit.

A provider turns texts into float32, L2-normalised vectors (so a dot product is a cosine). Providers
are looked up by name in ``PROVIDERS``; ``get_provider("local", "all-MiniLM-L6-v2")`` returns one.
Importing this package imports no model runtime: ``local`` loads onnxruntime on the first embed.

``unit_text`` decides what of a ``CodeUnit`` the model sees. ``TEXT_PREP_VERSION`` names that
decision; it is part of every provider (``text_prep_version``) so an index can tell that vectors
built with another preparation must be recomputed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from paqad.embed.base import TEXT_PREP_VERSION, Provider
from paqad.errors import ConfigError

if TYPE_CHECKING:
    from paqad.units import CodeUnit

__all__ = ["TEXT_PREP_VERSION", "Provider", "PROVIDERS", "get_provider", "unit_text"]

#: Default cap of ``unit_text``. all-MiniLM-L6-v2 reads at most 256 WordPiece tokens, and code with
#: whitespace collapsed runs at only 2.5-3 characters per token (punctuation and identifier pieces
#: are tokens of their own). Measured on paqad's own source, tests and benchmarks (926 units): with
#: a 600-character cap 4% of unit texts still reach 256 tokens, with 1,000 characters 23% do, and then
#: a long docstring plus description (85% of the budget) could push the body out of the window
#: entirely. 640 characters keep nearly every unit text inside the window, so the cut is ours
#: (whole words, known order), not the tokenizer's. Prose runs at about 4.5 characters per token
#: and gets a shorter window than it could; a caller can pass a larger ``max_chars`` for it.
UNIT_TEXT_MAX_CHARS = 640

# Shares of the budget. Unused share flows on to the next section; the body head takes the rest.
_HEADER_SHARE = 0.25
_DESCRIPTION_SHARE = 0.30
_DOCSTRING_SHARE = 0.30

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class ProviderOptions(TypedDict, total=False):
    """A remote provider's options: ``root`` (whose secrets.env holds the key), ``base_url``, ``dims``."""

    root: Path | None
    base_url: str
    dims: int | None


class ProviderFactory(Protocol):
    def __call__(self, model: str, **options: Unpack[ProviderOptions]) -> Provider: ...


def _local(model: str, **_options: Unpack[ProviderOptions]) -> Provider:
    from paqad.embed.local import local_provider  # lazy: numpy and the model files, only when embedding

    return local_provider(model)


def _remote(name: str) -> ProviderFactory:
    def factory(model: str, **options: Unpack[ProviderOptions]) -> Provider:
        from paqad.embed.remote import remote_provider  # lazy: the HTTP client, only for a remote provider

        return remote_provider(name, model, **options)

    return factory


#: Provider name -> factory taking the model name ("" for the provider's default model) and
#: options (``root`` for secrets.env, ``base_url``). Remote modules load only when chosen.
PROVIDERS: dict[str, ProviderFactory] = {
    "local": _local,
    "openai": _remote("openai"),
    "voyageai": _remote("voyageai"),
    "openai-compatible": _remote("openai-compatible"),
}


def get_provider(name: str, model: str = "", **options: Unpack[ProviderOptions]) -> Provider:
    """The provider ``name`` running ``model``; unknown names raise ``ConfigError`` with the choices."""
    factory = PROVIDERS.get(name)
    if factory is None:
        raise ConfigError(f"Unknown embedding provider {name!r}. Choose from {', '.join(sorted(PROVIDERS))}.")
    return factory(model, **options)


def unit_text(unit: CodeUnit, description: str = "", max_chars: int = UNIT_TEXT_MAX_CHARS) -> str:
    """The bounded text embedded for ``unit``: what it is, what it says it does, how it starts.

    In order: a header (kind, qualified name, the name split into words, path), the signature,
    the agent-written ``description``, the docstring, then the head of the body. Why this cut:
    a small model reads a few hundred tokens, and the part of a unit that says what it is for is
    its name, signature and docstring; the body's head adds the vocabulary of what it actually
    does. The tail of a long body mostly repeats that vocabulary, so it is what gets cut.

    Whitespace is collapsed to single spaces (the model's tokenizer ignores layout, so this only
    saves budget); the signature and docstring are not repeated in the body when found there.
    Each section is cut at a word boundary; header, description and docstring each get a share of
    ``max_chars`` (unused share flows on) and the body gets what is left. The result is never
    longer than ``max_chars``.
    """
    header = " ".join(p for p in (unit.kind, unit.qualified_name, _name_words(unit.qualified_name), unit.path) if p)
    signature = _collapse(unit.signature)
    doc = _collapse(unit.docstring)
    body = _strip_once(_strip_once(_collapse(unit.text), signature), doc)
    sections = [
        (_collapse(header + " " + signature), _HEADER_SHARE),
        (_collapse(description), _DESCRIPTION_SHARE),
        (doc, _DOCSTRING_SHARE),
        (body, 1.0),
    ]
    out: list[str] = []
    left = max_chars
    carry = 0
    for text, share in sections:
        room = left if share >= 1.0 else min(left, int(max_chars * share) + carry)
        piece = _cut(text, room - (1 if out else 0))
        if piece:
            out.append(piece)
            left -= len(piece) + (1 if len(out) > 1 else 0)
        carry = max(0, room - len(piece))
    return " ".join(out)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _strip_once(text: str, part: str) -> str:
    return _collapse(text.replace(part, " ", 1)) if part else text


def _cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, ending at a word boundary when one is near."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    # A cut of one or two characters can end on the space itself ("0 0" at 2): never end on one.
    return (head[:space] if space > limit // 2 else head).rstrip()


def _name_words(qualified_name: str) -> str:
    """``PaymentClient.retry_charge`` -> ``payment client retry charge`` ("" when nothing splits).

    The model's vocabulary is lower-case English words; ``retryCharge`` lower-cased is one unknown
    word, ``retry charge`` is two known ones.
    """
    words = [w.lower() for seg in re.split(r"[^0-9A-Za-z]+", qualified_name) for w in _CAMEL.findall(seg)]
    joined = " ".join(words)
    return joined if words and joined != qualified_name.lower() else ""
