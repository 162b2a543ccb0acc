"""``unit_text``: the bounded text embedded per unit (no model needed)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from paqad.embed import UNIT_TEXT_MAX_CHARS, unit_text
from paqad.units import CodeUnit


def _unit(text: str, docstring: str = "", signature: str = "", name: str = "PaymentClient.retryCharge") -> CodeUnit:
    return CodeUnit(
        path="billing/client.py",
        language="python",
        kind="method",
        name=name.rsplit(".", 1)[-1],
        qualified_name=name,
        start_line=1,
        end_line=text.count("\n") + 1,
        text=text,
        signature=signature,
        docstring=docstring,
    )


SOURCE = '''def retryCharge(self, payment):
    """Charge again after a temporary failure.

    Waits between attempts."""
    for attempt in range(3):
        try:
            return self.processor.charge(payment)
        except TransientError:
            sleep(2 ** attempt)
'''
UNIT = _unit(SOURCE, docstring="Charge again after a temporary failure.\n\nWaits between attempts.", signature="def retryCharge(self, payment):")


def test_order_header_signature_description_docstring_body() -> None:
    text = unit_text(UNIT, description="Retries a card charge with backoff.")
    assert text.startswith("method PaymentClient.retryCharge payment client retry charge billing/client.py def retryCharge(self, payment):")
    order = [text.index(s) for s in ("def retryCharge", "Retries a card", "Charge again", "for attempt in range(3)")]
    assert order == sorted(order)


def test_signature_and_docstring_are_not_repeated_from_the_body() -> None:
    text = unit_text(UNIT)
    assert text.count("def retryCharge(self, payment):") == 1
    assert text.count("Charge again after a temporary failure.") == 1
    assert "  " not in text and "\n" not in text


def test_long_body_is_cut_at_a_word_and_bounded() -> None:
    body = "def f():\n" + "\n".join(f"    step_{i} = compute(step_{i - 1})" for i in range(1, 500))
    text = unit_text(_unit(body, signature="def f():", name="f"))
    assert len(text) <= UNIT_TEXT_MAX_CHARS
    assert text.startswith("method f billing/client.py def f(): step_1 = compute(step_0)")
    assert text.endswith(")") or text.split()[-1] in body


def test_long_docstring_and_description_leave_room_for_the_body() -> None:
    unit = _unit(SOURCE, docstring="word " * 2000, signature="def retryCharge(self, payment):")
    text = unit_text(unit, description="desc " * 2000, max_chars=1000)
    assert len(text) <= 1000
    assert "for attempt in range(3)" in text
    # The header's unused share flows on to the description; each stays within its share.
    header = len("method PaymentClient.retryCharge payment client retry charge billing/client.py def retryCharge(self, payment):")
    assert 250 <= text.count("desc") * 5 <= 300 + (250 - header) + 5
    assert 250 <= text.count("word") * 5 <= 305


def test_short_sections_pass_their_budget_to_the_body() -> None:
    body = "x = 1\n" * 400
    text = unit_text(_unit(body, name="m"), max_chars=500)
    assert len(text) > 480


def test_name_words_only_when_the_name_splits() -> None:
    assert unit_text(_unit("pass", name="main")).startswith("method main billing/client.py")
    assert "http server error" in unit_text(_unit("pass", name="HTTPServerError"))


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=3000),
    doc=st.text(max_size=500),
    sig=st.text(max_size=200),
    desc=st.text(max_size=500),
    name=st.text(min_size=1, max_size=80),
    max_chars=st.integers(min_value=0, max_value=2000),
)
@example(text="0\r0", doc="", sig="", desc="", name="0", max_chars=2)  # a two-character cut once ended on the space
def test_never_longer_than_max_chars(text: str, doc: str, sig: str, desc: str, name: str, max_chars: int) -> None:
    out = unit_text(_unit(text, docstring=doc, signature=sig, name=name), description=desc, max_chars=max_chars)
    assert len(out) <= max_chars
    assert out == " ".join(out.split())
