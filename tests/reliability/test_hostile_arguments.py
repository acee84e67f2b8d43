"""Arguments a hostile user gives the library: each one gets a one-line
exception from bytepair.errors (or a TypeError for a value of the wrong type)
instead of an abort, an OverflowError, a Python-internal message or a wrong
answer. Cases that could abort the interpreter run in a child process."""

from __future__ import annotations

import subprocess
import sys

import pytest

import bytepair
from bytepair import counts
from bytepair.errors import ArgumentError, TrainingError, VocabError

BYTES = {bytes([b]): b for b in range(256)}


def _child(code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter with a 2 GB address-space limit, so
    a table sized by the largest id fails there instead of taking the machine."""
    pre = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
    return subprocess.run([sys.executable, "-c", pre + code], capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------- one huge id


@pytest.mark.parametrize("rank", [2**31, 4_000_000_000, 50_000_000])
def test_one_huge_rank_is_refused_in_one_line(rank):
    r = _child(
        "import bytepair\n"
        "from bytepair.errors import VocabError\n"
        f"ranks = {{bytes([b]): b for b in range(256)}}; ranks[b'ab'] = {rank}\n"
        "try:\n"
        "    bytepair.Tokenizer(ranks, 'gpt2')\n"
        "except VocabError as e:\n"
        "    print('refused:', e)\n"
        "try:\n"
        "    bytepair.Encoding('x', pat_str='a', mergeable_ranks=ranks, special_tokens={})\n"
        "except VocabError as e:\n"
        "    print('refused:', e)\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("refused:") and str(rank) in line.replace(",", "") for line in lines), r.stdout


def test_a_gap_of_special_tokens_still_builds():
    """Gaps a real vocabulary has (specials far past the tokens) still load."""
    tok = bytepair.Tokenizer({**BYTES, b"ab": 300}, "gpt2", {"<|x|>": 1_000_000})
    assert tok.encode("ab") == [300]
    assert tok.decode([1_000_000]) == "<|x|>"


def test_special_id_past_2_31_builds_small():
    r = _child(
        "import bytepair\n"
        "ranks = {bytes([b]): b for b in range(256)}\n"
        "tok = bytepair.Tokenizer(ranks, 'gpt2', {'<|x|>': 2**32 - 2})\n"
        "print(tok.decode([2**32 - 2]), tok.encode('<|x|>', allowed_special='all'))\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["<|x|>", f"[{2**32 - 2}]"]


_HF_JSON = """
import json, bytepair
from bytepair.errors import FormatError, VocabError
from bytepair.byte_table import bytes_to_unicode
from bytepair import _core
m = bytes_to_unicode()
vocab = {{m[b]: b for b in range(256)}}
vocab[m[ord("a")] + m[ord("b")]] = {rank}
d = {{"version": "1.0", "added_tokens": [], "normalizer": {normalizer},
     "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}},
     "post_processor": None, "decoder": {{"type": "ByteLevel"}},
     "model": {{"type": "BPE", "vocab": vocab, "merges": [[m[ord("a")], m[ord("b")]]]}}}}
open({path!r}, "w").write(json.dumps(d))
try:
    bytepair.load({path!r})
except FormatError as e:
    print("refused:", e)
try:  # the core's own check, before the decode table is allocated
    model = _core.read_tokenizer_json(open({path!r}, "rb").read())[1]
    _core.Pipeline(model, False, [], [], [], [], [])
except (FormatError, VocabError) as e:
    print("refused:", e)
"""


@pytest.mark.parametrize("normalizer", [None, {"type": "NFC"}])
@pytest.mark.parametrize("rank", [2**31 - 1, 50_000_000, 200_000])
def test_tokenizer_json_with_one_huge_id_is_refused_in_one_line(tmp_path, rank, normalizer):
    """The pipeline's decode table has a slot per id: a tokenizer.json whose
    vocab holds one huge id is refused (the vocabulary rule), never an abort
    or a table sized by that id."""
    r = _child(_HF_JSON.format(rank=rank, normalizer=normalizer, path=str(tmp_path / "tokenizer.json")))
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(ln.startswith("refused:") for ln in lines), r.stdout
    assert str(rank) in lines[0].replace(",", "") and "$.model.vocab" in lines[0], lines[0]


def test_tools_with_a_table_per_id_refuse_a_huge_special_id():
    """A special id far above the tokens encodes (held sparsely), but shrink,
    token_use and merge_parents build an array with a slot per id: refused in
    one line before any allocation; extend refuses before training."""
    r = _child(
        "import bytepair\n"
        "from bytepair import shrinking\n"
        "from bytepair.errors import VocabError, TrainingError\n"
        "ranks = {bytes([b]): b for b in range(256)}; ranks[b'ab'] = 256; ranks[b'cd'] = 257\n"
        "tok = bytepair.Tokenizer(ranks, 'gpt2', {'<|x|>': 4_000_000_000})\n"
        "for f in (lambda: bytepair.shrink(tok, 'ab cd ' * 50, 258), lambda: shrinking.token_use(tok, 'ab cd'),\n"
        "          lambda: shrinking.merge_parents(tok), lambda: bytepair.extend(tok, 'ab cd ab cd ' * 50, add=2)):\n"
        "    try:\n"
        "        f()\n"
        "    except (VocabError, TrainingError) as e:\n"
        "        print('refused:', e)\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and all(ln.startswith("refused:") and "4,000,000,000" in ln for ln in lines), r.stdout


# --------------------------------------------------------------------------- empty special token


def test_empty_special_token_is_refused_by_counting():
    with pytest.raises(TrainingError, match="empty"):
        counts.count("hello world", special_tokens=[""])
    with pytest.raises(TrainingError, match="empty"):
        counts.count_chunks("héllo wörld", special_tokens=[""])


def test_empty_special_token_is_refused_by_the_core():
    from bytepair import _core

    with pytest.raises(TrainingError, match="empty"):
        _core.ChunkCounter("o200k", [""], None, None)


# --------------------------------------------------------------------------- special ids


def test_two_special_tokens_on_one_id_are_refused():
    with pytest.raises(VocabError, match="60000"):
        bytepair.Encoding("x", pat_str="a", mergeable_ranks=BYTES, special_tokens={"<|a|>": 60000, "<|b|>": 60000})
    # tiktoken's own shared id (o200k_harmony) still builds, decoding as tiktoken does
    harmony = bytepair.get_encoding("o200k_harmony")
    enc = bytepair.Encoding("h", pat_str=harmony._pat_str, mergeable_ranks=harmony._mergeable_ranks,
                            special_tokens=harmony._special_tokens)
    assert enc.decode([200018]) == "<|endofprompt|>"


# --------------------------------------------------------------------------- huge numbers


def test_huge_memory_limit_is_an_error_not_overflow():
    with pytest.raises(TrainingError, match="memory_limit"):
        bytepair.train("hello world " * 10, 260, memory_limit="9" * 400 + "GB")


def test_encode_single_token_of_a_huge_int_is_a_type_error():
    enc = bytepair.get_encoding("gpt2")
    for bad in (2**70, 5, 1.5, None):
        with pytest.raises(TypeError, match="str or bytes"):
            enc.encode_single_token(bad)  # type: ignore[arg-type]
    assert enc.encode_single_token(bytearray(b"hello")) == enc.encode_single_token("hello")


# --------------------------------------------------------------------------- Encoding's argument types


@pytest.mark.parametrize("kwargs, match", [
    ({"explicit_n_vocab": "abc"}, "explicit_n_vocab"),
    ({"explicit_n_vocab": 2**70}, "explicit_n_vocab"),
    ({"mergeable_ranks": {"a": 0}}, "bytes"),
    ({"mergeable_ranks": [b"a", b"b"]}, "mergeable_ranks"),
    ({"special_tokens": ["<|a|>"]}, "special_tokens"),
    ({"name": 123}, "name"),
])
def test_encoding_argument_types_are_named(kwargs, match):
    args = dict(name="x", pat_str="a", mergeable_ranks=BYTES, special_tokens={})
    args.update(kwargs)
    with pytest.raises((ArgumentError, VocabError, TypeError), match=match) as info:
        bytepair.Encoding(**args)
    assert "\n" not in str(info.value)
    assert not isinstance(info.value, (AttributeError, OverflowError))
