"""Fuzzing the Python file readers with hypothesis: arbitrary bytes, and
arbitrary JSON / rank lines shaped like each format so the parsers' deep paths
run. ``bytepair.load`` (which detects the format) must return a tokenizer that
round-trips text, or raise a ``bytepair`` error that is a ``ValueError`` with a
message: never another exception type and never a Rust panic.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import BytepairError
from conftest import HYPOTHESIS_SCALE as SCALE

SETTINGS = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.text(max_size=8), st.sampled_from(["Ġ", "a", "ab", "<|endoftext|>", "", "ĊĊ"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)
byte_strings = [bytes([b]) for b in range(256)]


@st.composite
def native_like(draw):
    """A valid bytepair JSON file with 0-2 fields replaced by arbitrary values."""
    from bytepair.reference import bytes_to_unicode

    table = bytes_to_unicode()
    vocab = ["".join(table[b] for b in t) for t in byte_strings] + [table[ord("a")] + table[ord("b")]]
    d = {
        "format": "bytepair", "version": 1, "name": "fuzz", "pattern": "gpt2", "special_text": "raise",
        "special_tokens": {"<|endoftext|>": 257}, "vocab": vocab, "merges": [[97, 98]],
    }
    corrupt = {
        "version": st.sampled_from([2, "1", None, 1.0, True]),
        "name": json_value,
        "pattern": st.one_of(st.sampled_from([None, "o200k", r"\w+|\s+", "(", "a{99999999}"]), json_value),
        "special_text": st.one_of(st.sampled_from(["text", "x"]), json_value),
        "special_tokens": st.one_of(
            st.dictionaries(st.text(max_size=6), st.integers(-(2**40), 2**40), max_size=3), json_value),
        "vocab": st.one_of(st.just(vocab[:-1]), st.just(vocab[1:]), st.just(vocab + vocab[-1:]),
                           st.lists(st.text(max_size=3), max_size=300), json_value),
        "merges": st.one_of(st.lists(st.lists(st.integers(-(2**40), 2**40), max_size=3), max_size=3), json_value),
    }
    for key in draw(st.lists(st.sampled_from(sorted(corrupt)), max_size=2, unique=True)):
        if draw(st.integers(0, 5)) == 0:
            del d[key]
        else:
            d[key] = draw(corrupt[key])
    return json.dumps(d).encode()


@st.composite
def tiktoken_like(draw):
    """Rank lines: mostly the 256 bytes in order, with arbitrary damage."""
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(byte_strings)]
    lines.append(base64.b64encode(b"ab") + b" 256")
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = draw(st.one_of(
            st.binary(max_size=12),
            st.builds(lambda t, r: base64.b64encode(t) + b" " + str(r).encode(), st.binary(max_size=4), st.integers(-3, 400)),
            st.just(b""), st.just(lines[i] + b" extra"), st.just(b"!!!! 5"),
        ))
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\r\n", b"\n\n"]))


@st.composite
def hf_like(draw):
    """A tokenizer.json-shaped document with arbitrary parts."""
    from bytepair.reference import bytes_to_unicode

    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    model = {
        "type": draw(st.sampled_from(["BPE", "WordPiece", 5])),
        "vocab": draw(st.one_of(st.just(vocab), st.dictionaries(st.text(max_size=3), st.integers(-1, 300), max_size=5))),
        "merges": draw(st.one_of(st.just([]), st.lists(st.one_of(st.text(max_size=5), json_value), max_size=3))),
        "ignore_merges": draw(st.booleans()),
    }
    d = {
        "version": "1.0",
        "model": model,
        "pre_tokenizer": draw(st.one_of(st.none(), json_value)),
        "decoder": draw(st.one_of(st.none(), json_value)),
        "normalizer": draw(st.one_of(st.none(), json_value)),
        "added_tokens": draw(st.one_of(st.just([]), st.lists(json_value, max_size=2))),
    }
    return json.dumps(d).encode()


def _check_load(path):
    try:
        tok = bytepair.load(path)
    except BytepairError as e:
        assert isinstance(e, ValueError) and str(e), repr(e)
        return
    except BaseException as e:  # noqa: BLE001 - every other type is the failure looked for
        if type(e).__name__ == "PanicException" or type(e).__module__ == "pyo3_runtime":
            pytest.fail(f"Rust panic reached Python: {e!r}")
        pytest.fail(f"unclear error {type(e).__name__}: {e}")
    text = "hello world 토큰 ab"
    if isinstance(tok, bytepair.CharTokenizer):  # characters outside its vocabulary come back as U+FFFD
        known = set(tok.vocab[1:])
        assert tok.decode(tok.encode(text)) == "".join(c if c in known else "\ufffd" for c in text)
        return
    try:
        ids = tok.encode_ordinary(text)
    except BytepairError:
        return  # e.g. a custom pattern that fails on this text: a clear error
    assert tok.decode_bytes(ids) == text.encode()


@pytest.mark.parametrize("kind", ["bytes", "native", "tiktoken", "hf"])
def test_readers_on_fuzzed_files(tmp_path, kind):
    strategy = {
        "bytes": st.binary(max_size=200),
        "native": native_like(),
        "tiktoken": tiktoken_like(),
        "hf": hf_like(),
    }[kind]
    counter = iter(range(10**9))

    @settings(max_examples=100 * SCALE, **SETTINGS)
    @given(strategy)
    def check(blob):
        path = tmp_path / f"f{next(counter)}"
        path.write_bytes(blob)
        _check_load(path)

    check()
