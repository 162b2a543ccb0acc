"""Input hygiene shared by the local models (MiniLM in ``local.py``, multilingual-e5 in
``multilingual.py``): kept apart so that neither model's module imports the other."""

from __future__ import annotations


def clean_text(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters as valid UTF-8: a lone surrogate (from a file decoded with
    ``surrogateescape``) becomes ``?`` instead of an error in the tokenizer."""
    head = text[:max_chars]
    try:
        head.encode("utf-8")
    except UnicodeEncodeError:
        head = head.encode("utf-8", "replace").decode("utf-8")
    return head
