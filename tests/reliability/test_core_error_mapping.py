"""Every core error variant reaches Python as its ``bytepair.errors`` class with
the core's facts as attributes (the table in src/py/errors.rs), and the Python
layers read those facts from the attributes, never from the messages."""

from __future__ import annotations

import base64

import pytest

import bytepair
from bytepair import _core, errors
from bytepair.counts import ChunkCounts
from bytepair.formats import tiktoken_ranks

BYTES = [bytes([b]) for b in range(256)]


def byte_core(specials=None, pattern=None):
    return _core.CoreBPE(BYTES, specials or {}, pattern)


def test_every_error_class_is_exported():
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.BytepairError), name
    for name in ("ConversionError", "UsageError", "UnknownEncodingError", "ThreadsError", "ReadError",
                 "CorruptCountsError"):
        assert name in errors.__all__
    # the modules that raise them use the same classes
    from bytepair.cli.common import UsageError
    from bytepair.conversion import ConversionError
    assert UsageError is errors.UsageError and ConversionError is errors.ConversionError
    assert bytepair.ConversionError is errors.ConversionError


@pytest.mark.parametrize("threads", [0])
def test_zero_threads_is_a_threads_error(threads):
    core = byte_core()
    calls = [
        lambda: core.decode_batch_bytes([[1]], threads),
        lambda: core.encode_batch(["a", "b"], None, None, threads),
        lambda: core.count_batch(["a", "b"], None, None, threads),
        lambda: _core.ChunkCounter(None, [], None, threads),
    ]
    for call in calls:
        with pytest.raises(errors.ThreadsError) as e:
            call()
        assert not isinstance(e.value, errors.TrainingError)
        assert isinstance(e.value, ValueError)
        assert e.value.threads == 0
        assert "at least 1" in e.value.reason


def test_pattern_error_carries_pattern_and_reason():
    with pytest.raises(errors.PatternError) as e:
        _core.pretokenize("(unclosed", "text")
    assert e.value.pattern == "(unclosed"
    assert e.value.reason and e.value.reason in str(e.value)


def test_regex_runtime_failure_is_a_pattern_error():
    pattern = r"(a|aa)+(?=c)"  # exponential backtracking: fancy-regex gives up
    with pytest.raises(errors.PatternError) as e:
        _core.pretokenize(pattern, "a" * 30)
    assert e.value.pattern == pattern and "backtrack" in e.value.reason
    assert str(e.value).startswith("the pre-tokenization pattern failed on the input")


def test_vocab_error_carries_the_rank():
    with pytest.raises(errors.VocabError) as e:
        _core.CoreBPE(BYTES + [b"ab", b"ab"], {}, None)
    assert e.value.rank == 257 and "257" in e.value.reason
    with pytest.raises(errors.VocabError) as e:
        byte_core({"<s>": 5})
    assert e.value.rank == 5
    with pytest.raises(errors.VocabError) as e:
        _core.CoreBPE(BYTES[1:], {}, None)
    assert e.value.rank is None and "0x00" in e.value.reason
    # a token that is not the merge of two lower-ranked ones: derive_merges names it
    with pytest.raises(errors.VocabError) as e:
        _core.CoreBPE(BYTES + [b"abc"], {}, None).derive_merges()
    assert e.value.rank == 256


def test_unknown_id_is_a_key_error_with_the_id():
    core = byte_core()
    with pytest.raises(errors.UnknownTokenError) as e:
        core.decode_bytes([104, 999])
    assert isinstance(e.value, KeyError) and e.value.id == 999
    assert "999" in str(e.value)


def test_disallowed_special_carries_the_token():
    core = byte_core({"<|eot|>": 300})
    with pytest.raises(errors.DisallowedSpecialError) as e:
        core.encode("a<|eot|>")
    assert e.value.token == "<|eot|>"


def test_not_utf8_file_is_a_read_error_with_path_and_offset(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"good text\n" * 10 + b"\xff rest")
    counter = _core.ChunkCounter("gpt2", [], None, 1)
    with pytest.raises(errors.ReadError) as e:
        counter.feed_file(p)
    assert isinstance(e.value, errors.TrainingError)  # training data that cannot work
    assert e.value.path == str(p) and e.value.offset == 100
    assert "offset 100" in str(e.value)


def test_read_failure_is_a_read_error(tmp_path):
    counter = _core.ChunkCounter(None, [], None, 1)
    with pytest.raises(errors.ReadError) as e:
        counter.feed_file(tmp_path)  # a directory opens but cannot be read
    assert e.value.path == str(tmp_path) and e.value.offset is None and e.value.reason


def test_damaged_counts_body_is_corrupt_counts(tmp_path):
    table = _core.ChunkTable()
    table.add(b"abc", 3)
    body = table.to_body()
    with pytest.raises(errors.CorruptCountsError) as e:
        _core.ChunkTable.from_body(body[:-1], 1)
    assert e.value.what == "is truncated or damaged" and isinstance(e.value, errors.FormatError)
    with pytest.raises(errors.CorruptCountsError) as e:
        _core.ChunkTable.from_body(body + b"x", 1)
    assert e.value.what == "has trailing bytes"
    # the file reader turns it into a FormatError naming the file, message unchanged
    counts = ChunkCounts({b"abc": 3}, pattern=None)
    path = tmp_path / "c.bpc"
    counts.save(path)
    path.write_bytes(path.read_bytes() + b"x")
    with pytest.raises(errors.FormatError) as e:
        ChunkCounts.load(path)
    assert str(e.value) == f"{path}: chunk-count data has trailing bytes"


def test_training_argument_error_carries_the_reason():
    with pytest.raises(errors.TrainingError) as e:
        _core.ChunkCounter(None, [], "", 1)
    assert type(e.value) is errors.TrainingError and e.value.reason == "the document separator is empty"


def test_rank_file_error_names_the_line(tmp_path):
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(BYTES)]
    path = tmp_path / "x.tiktoken"
    path.write_bytes(b"\n".join([*lines, base64.b64encode(b"ab") + b" 255"]) + b"\n")
    with pytest.raises(errors.FormatError) as e:
        tiktoken_ranks.load(path, pattern=None)
    assert e.value.where == 257  # the second rank 255 is on line 257
    assert "rank 255 is given twice (first at line 256)" in str(e.value)


def test_core_from_merges_spells_the_tokens_and_names_a_bad_merge():
    merges = [(104, 105), (256, 33), (32, 257)]
    core = _core.CoreBPE.from_merges(merges, {"<|end|>": 259}, None)
    expected = _core.CoreBPE([*BYTES, b"hi", b"hi!", b" hi!"], {"<|end|>": 259}, None)
    assert core.token_bytes_list() == expected.token_bytes_list()
    assert core.n_vocab == 260
    with pytest.raises(errors.VocabError, match=r"merge 1 is \(104, 300\)"):
        _core.CoreBPE.from_merges([(104, 105), (104, 300)], {}, None)
