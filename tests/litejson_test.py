"""The thin clients' JSON (paqad.channel.litejson) against the real json module as the oracle."""

from __future__ import annotations

import json
import random

import pytest

from paqad.channel import litejson

VALUES = [
    {"op": "hook", "stdin": '{"prompt": "caf\u00e9 \u2028 \\n"}', "budget": 1.5, "n": 12345678901234567890, "none": None, "ok": True, "no": False},
    [1, 2.5, -0.0, 1e300, 5e-324, "x\x00\x1f\"\\", ["nested", {"k": []}], {}],
    "\ud800 lone surrogate",
    float("inf"),
    -float("inf"),
    (1, "tuple"),
    {1: "an int key", None: "a None key", 2.5: "a float key", False: "a bool key"},  # left to json
    [],
    0,
]


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice([None, True, False, rng.randint(-(10**20), 10**20), rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300),
                           "".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(0, 8)))])
    if roll < 0.65:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {"".join(chr(rng.randint(0, 0x3000)) for _ in range(3)): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("separators", [None, (",", ":")])
def test_dumps_gives_json_dumps_text_and_loads_reads_it_back(ensure_ascii: bool, separators) -> None:
    rng = random.Random(12)
    for value in VALUES + [random_value(rng) for _ in range(500)]:
        text = json.dumps(value, ensure_ascii=ensure_ascii, separators=separators)
        assert litejson.dumps(value, ensure_ascii=ensure_ascii, separators=separators) == text
        assert repr(litejson.loads(text)) == repr(json.loads(text))
        if ensure_ascii:  # bytes off the socket (text with a lone surrogate has no UTF-8 form)
            assert repr(litejson.loads(text.encode("utf-8"))) == repr(json.loads(text))


def test_nan_and_surrounding_whitespace() -> None:
    assert litejson.dumps([float("nan")]) == "[NaN]"
    assert litejson.loads(" \n\t{\"a\": [1, 2]}\r\n ") == {"a": [1, 2]}


@pytest.mark.parametrize("bad", ["", "{", "[1,]", "{} trailing", "nul", '"\x01"', "\ufeff{}", b"\xff"])
def test_bad_input_raises_the_value_error_json_raises(bad) -> None:
    with pytest.raises(ValueError) as ours:
        litejson.loads(bad)
    try:
        json.loads(bad)
    except ValueError as theirs:
        assert type(ours.value) is type(theirs) or isinstance(ours.value, UnicodeDecodeError)
    else:
        pytest.fail(f"json accepted {bad!r}")


def test_bad_input_in_a_process_that_never_imported_json_raises_jsons_error() -> None:
    """``_json`` builds its error from ``json.decoder``: a hook process has not imported it."""
    import subprocess
    import sys

    code = (
        "import sys; from paqad.channel import litejson; assert 'json' not in sys.modules\n"
        "try:\n    litejson.loads('{\"prompt\": \"cut off')\nexcept ValueError as exc:\n    print(type(exc).__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "JSONDecodeError", "")


def test_what_json_refuses_is_refused_with_jsons_error() -> None:
    loop: list = []
    loop.append(loop)
    for value in (loop, {"x": object()}, {(1, 2): "tuple key"}):
        with pytest.raises((TypeError, ValueError)) as ours:
            litejson.dumps(value)
        with pytest.raises(type(ours.value)) as theirs:
            json.dumps(value)
        assert str(ours.value) == str(theirs.value)
