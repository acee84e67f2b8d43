"""Fuzzing the Python file readers with hypothesis: arbitrary bytes, and each
format's valid seed file (a bytepair JSON file, ``.tiktoken`` rank lines, a
``tokenizer.json``, each with the 256 bytes and the merge ``a b``) with some of
its parts damaged, so the parsers' deep paths run. The seeds themselves must
load and round-trip. On a damaged file ``bytepair.load`` (which detects the
format) must return a tokenizer that round-trips text, or raise ``FormatError``
(the class its docstring names) with a message: never another exception type
and never a Rust panic. Each shaped run must see both outcomes, so a reader that
rejected every file fails.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import BytepairError, FormatError
from bytepair.reference import bytes_to_unicode
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


TABLE = bytes_to_unicode()
#: Options `load` needs per format: a `.tiktoken` file stores no pattern.
LOAD_OPTIONS = {"bytes": {}, "native": {}, "tiktoken": {"pattern": "gpt2"}, "hf": {}}


def native_seed() -> dict:
    """A valid bytepair JSON file: the 256 bytes, the merge ``a b``, one special token."""
    vocab = ["".join(TABLE[b] for b in t) for t in byte_strings] + [TABLE[ord("a")] + TABLE[ord("b")]]
    return {
        "format": "bytepair", "version": 1, "name": "fuzz", "pattern": "gpt2", "special_text": "raise",
        "special_tokens": {"<|endoftext|>": 257}, "vocab": vocab, "merges": [[97, 98]],
    }


def tiktoken_seed() -> list[bytes]:
    """The rank lines of a valid ``.tiktoken`` file: the 256 bytes in order, then ``ab``."""
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(byte_strings)]
    return [*lines, base64.b64encode(b"ab") + b" 256"]


def hf_seed() -> dict:
    """A valid ``tokenizer.json`` (the shape bytepair writes): byte-level BPE, merge ``a b``."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    vocab = {TABLE[b]: b for b in range(256)} | {TABLE[ord("a")] + TABLE[ord("b")]: 256}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": byte_level, "post_processor": None, "decoder": dict(byte_level, add_prefix_space=True),
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": vocab, "merges": ["a b"]},
    }


SEEDS = {
    "native": lambda: json.dumps(native_seed()).encode(),
    "tiktoken": lambda: b"\n".join(tiktoken_seed()) + b"\n",
    "hf": lambda: json.dumps(hf_seed()).encode(),
}


@st.composite
def native_like(draw):
    """The bytepair JSON seed with 0-2 fields replaced by arbitrary values or removed."""
    d = native_seed()
    vocab = d["vocab"]
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
    """The rank lines of the seed, with 0-4 lines damaged."""
    lines = tiktoken_seed()
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
    """The ``tokenizer.json`` seed with 0-2 of its parts replaced by arbitrary values."""
    d = hf_seed()
    model = d["model"]
    parts = {
        ("model", "type"): st.sampled_from(["WordPiece", 5, None]),
        ("model", "vocab"): st.dictionaries(st.text(max_size=3), st.integers(-1, 300), max_size=5),
        ("model", "merges"): st.lists(st.one_of(st.text(max_size=5), json_value), max_size=3),
        ("model", "ignore_merges"): st.booleans(),
        ("", "pre_tokenizer"): st.one_of(st.none(), json_value),
        ("", "decoder"): st.one_of(st.none(), json_value),
        ("", "normalizer"): json_value,
        ("", "added_tokens"): st.lists(json_value, max_size=2),
    }
    for where, key in draw(st.lists(st.sampled_from(sorted(parts)), max_size=2, unique=True)):
        (model if where else d)[key] = draw(parts[(where, key)])
    return json.dumps(d).encode()


def _check_load(path, kind: str) -> bool:
    """Loads `path`: True when it loads and round-trips text, False when it is
    rejected with ``FormatError``; any other outcome fails the test."""
    try:
        tok = bytepair.load(path, **LOAD_OPTIONS[kind])
    except FormatError as e:
        assert str(e), repr(e)
        return False
    except BaseException as e:  # noqa: BLE001 - every other type is the failure looked for
        if type(e).__name__ == "PanicException" or type(e).__module__ == "pyo3_runtime":
            pytest.fail(f"Rust panic reached Python: {e!r}")
        pytest.fail(f"not the documented FormatError: {type(e).__name__}: {e}")
    text = "hello world 토큰 ab"
    if isinstance(tok, bytepair.CharTokenizer):  # characters outside its vocabulary come back as U+FFFD
        known = set(tok.vocab[1:])
        assert tok.decode(tok.encode(text)) == "".join(c if c in known else "\ufffd" for c in text)
        return True
    try:
        ids = tok.encode_ordinary(text)
    except BytepairError:
        return True  # e.g. a custom pattern that fails on this text: a clear error
    assert tok.decode_bytes(ids) == text.encode()
    return True


@pytest.mark.parametrize("kind", sorted(SEEDS))
def test_the_seeds_load_and_round_trip(tmp_path, kind):
    path = tmp_path / "seed"
    path.write_bytes(SEEDS[kind]())
    tok = bytepair.load(path, **LOAD_OPTIONS[kind])
    assert tok.merges == [(97, 98)]
    assert tok.encode_ordinary("ab") == [256]
    text = "hello world 토큰 ab"
    assert tok.decode_bytes(tok.encode_ordinary(text)) == text.encode()
    assert _check_load(path, kind)


@pytest.mark.parametrize("kind", ["bytes", "native", "tiktoken", "hf"])
def test_readers_on_fuzzed_files(tmp_path, kind):
    strategy = {
        "bytes": st.binary(max_size=200),
        "native": native_like(),
        "tiktoken": tiktoken_like(),
        "hf": hf_like(),
    }[kind]
    counter = iter(range(10**9))
    outcomes = []

    @settings(max_examples=100 * SCALE, **SETTINGS)
    @given(strategy)
    def check(blob):
        path = tmp_path / f"f{next(counter)}"
        path.write_bytes(blob)
        outcomes.append(_check_load(path, kind))

    check()
    assert False in outcomes, f"{kind}: no damaged file was rejected"
    if kind != "bytes":  # random bytes are rarely a tokenizer file
        assert True in outcomes, f"{kind}: every file was rejected, the seed's undamaged cases included"
