"""tiktoken rank files: byte-identical export, tiktoken itself reads what we
write, and every kind of bad line is reported with its line number."""

from __future__ import annotations

import base64
import json

import pytest
from test_hf_tokenizer_json import FIXTURES, trained, with_specials

import bytepair
from bytepair import registry
from bytepair.errors import FormatError
from bytepair.formats import tiktoken_ranks as tt_format
from conftest import ENCODINGS, corpus, optional

tiktoken = optional("tiktoken")


@pytest.mark.parametrize("name", ENCODINGS)
def test_export_is_byte_identical_to_openai_files(name):
    # the bundled files are OpenAI's own (sha256 pinned by tiktoken)
    assert tt_format.dumps(bytepair.get_encoding(name)) == registry.read_bundled_ranks(name)


def test_export_matches_tiktokens_own_dump(tmp_path, monkeypatch):
    import sys
    import types

    from tiktoken.load import dump_tiktoken_bpe

    # tiktoken writes through blobfile; a local file needs nothing more than open()
    monkeypatch.setitem(sys.modules, "blobfile", types.SimpleNamespace(BlobFile=open))

    tok = trained()
    ours, theirs = tmp_path / "ours.tiktoken", tmp_path / "theirs.tiktoken"
    tt_format.save(tok, ours)
    dump_tiktoken_bpe(tok.mergeable_ranks, str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()


def test_trained_tokenizer_wrapped_in_tiktoken_gives_same_ids(tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    tok = trained()
    path = tmp_path / "mine.tiktoken"
    tt_format.save(tok, path)
    enc = tiktoken.Encoding(name="mine", pat_str=tok.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=tok.special_tokens)
    for name in FIXTURES:
        text = with_specials(corpus(name))
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all"), name
    back = bytepair.load(path, pattern=tok.pattern, special_tokens=tok.special_tokens)
    assert back == tok


@pytest.mark.parametrize("name", ENCODINGS)
def test_bundled_bytes_are_recognised_without_a_preset(tmp_path, name):
    path = tmp_path / "x.tiktoken"
    path.write_bytes(registry.read_bundled_ranks(name))
    tok = bytepair.load(path)
    assert tok == bytepair.get_encoding(name)


def test_preset_and_overrides(tmp_path):
    path = tmp_path / "ranks.tiktoken"
    tt_format.save(trained(), path)
    with pytest.raises(FormatError, match="pattern=.*preset="):
        bytepair.load(path)
    # cl100k_base's specials sit at 100257-100276, after its own 100,256 ranks: they do not fit this file
    with pytest.raises(FormatError, match=r"has \d+ ranks but preset 'cl100k_base' has 100,256.*ids 100257-100276"):
        bytepair.load(path, preset="cl100k_base")
    tok = bytepair.load(path, preset="cl100k_base", special_tokens={})
    assert tok.pattern == bytepair.patterns.CL100K and tok.special_tokens == {}
    tok = bytepair.load(path, preset="cl100k_base", pattern="gpt2", special_tokens={"<s>": 600})
    assert tok.pattern_name == "gpt2" and tok.special_tokens == {"<s>": 600}
    tok = bytepair.load(path, pattern=None)
    assert tok.pattern is None and tok.special_tokens == {}
    with pytest.raises(ValueError, match="unknown preset"):
        bytepair.load(path, preset="p50k")


def test_preset_specials_keep_their_ids_on_a_file_of_the_same_size(tmp_path):
    path = tmp_path / "variant.tiktoken"
    path.write_bytes(registry.read_bundled_ranks("cl100k_base") + b"\n")  # not byte for byte the bundled file
    tok = bytepair.load(path, preset="cl100k_base")
    assert tok.special_tokens == bytepair.get_encoding("cl100k_base").special_tokens
    assert tok == bytepair.get_encoding("cl100k_base")


def _line(token: bytes, rank: int) -> bytes:
    return base64.b64encode(token) + b" " + str(rank).encode() + b"\n"


BYTES = b"".join(_line(bytes([b]), b) for b in range(256))


@pytest.mark.parametrize(
    "data, line, what",
    [
        (BYTES + b"YWJ@ 256\n", 257, "not valid base64"),
        (BYTES + b"YWI 256\n", 257, "not valid base64"),
        (BYTES + _line(b"ab", 255), 257, "rank 255 is given twice (first at line 256)"),
        (BYTES + _line(b"a", 256), 257, "token b'a' is listed twice (first at line 98)"),
        (BYTES + b"YWI= x\n", 257, "not a non-negative integer"),
        (BYTES + b"YWI= -3\n", 257, "not a non-negative integer"),
        (BYTES + b"YWI= 256 extra\n", 257, "expected '<base64 token> <rank>'"),
    ],
)
def test_bad_lines_are_named(tmp_path, data, line, what):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(data)
    with pytest.raises(FormatError) as e:
        bytepair.load(path, pattern=None)
    assert f"{path}:{line}:" in str(e.value) and what in str(e.value), str(e.value)
    assert isinstance(e.value, ValueError)


def test_ranks_need_not_be_merge_closed(tmp_path):
    """As in tiktoken: a token no merge reaches is emitted when it is a whole
    piece, and an empty token (``=``) keeps its rank without being encoded."""
    path = tmp_path / "open.tiktoken"
    path.write_bytes(BYTES + _line(b"abc", 256) + b"= 257\n" + _line(b"xa", 258))
    tok = bytepair.load(path, pattern=r"\S+|\s+")
    assert tok.encode("abc abcd xabc") == [256, 32, 97, 98, 99, 100, 32, 258, 98, 99]
    assert tok.gaps == [] and tok.n_vocab == 259
    tiktoken = optional("tiktoken")
    enc = tiktoken.Encoding("t", pat_str=r"\S+|\s+", special_tokens={},
                            mergeable_ranks={bytes([b]): b for b in range(256)} | {b"abc": 256, b"": 257, b"xa": 258})
    assert tok.encode("abc abcd xabc") == enc.encode("abc abcd xabc")


def _tiktoken_of(ranks: dict) -> "tiktoken.Encoding":
    return tiktoken.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})


@pytest.mark.parametrize("tail", [b"", _line(b"ab", 259)])
def test_empty_token_is_an_id_as_in_tiktoken(tmp_path, tail):
    """A rank listed with the empty token (``=``, Whisper's ``= 50256``) is an id:
    it decodes to b"", counts in n_vocab when it is the last rank, is no gap,
    and no text encodes to it; a rank no line gives stays a gap. Every reading
    of it (file, ranks dict, sequence, pickle, bytepair JSON) keeps it."""
    import pickle

    data = BYTES + _line(b"xa", 256) + b"= 258\n" + tail
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(data)
    ours = bytepair.load(path, pattern=r"\S+|\s+")
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines())}
    ref = _tiktoken_of(ranks)
    assert ours.n_vocab == ref.n_vocab == (260 if tail else 259)
    assert ours.gaps == [257]
    assert ours.decode_single_token_bytes(258) == ref.decode_single_token_bytes(258) == b""
    ids = [120, 258, 256, 258]
    assert ours.decode_bytes(ids) == ref.decode_bytes(ids) and ours.decode(ids) == ref.decode(ids)
    with pytest.raises(bytepair.UnknownTokenError):
        ours.decode([257])
    for text in ["xa ab", "", " ", "x" * 50, corpus("en_kjv.txt")[:3000]]:
        assert ours.encode(text) == ref.encode(text)
    assert ours.mergeable_ranks == ranks
    assert tt_format.dumps(ours) == data
    tok_list = [bytes([b]) for b in range(256)] + [b"xa", None, b""] + ([b"ab"] if tail else [])
    again = [
        bytepair.Tokenizer(ranks, r"\S+|\s+"),
        bytepair.Tokenizer(tok_list, r"\S+|\s+"),
        bytepair.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={}),
        pickle.loads(pickle.dumps(ours)),
        bytepair.load(_saved(ours, tmp_path / "native.json")),
        tt_format.loads(data, pattern=r"\S+|\s+"),
    ]
    for t in again + [pickle.loads(pickle.dumps(again[2]))]:
        assert (t.n_vocab, t.gaps, t.decode_single_token_bytes(258)) == (ours.n_vocab, [257], b""), t
    grown = bytepair.extend(ours, ["xaxa xaxa xaxa"], add=1)
    assert grown.gaps == [257] and grown.decode_single_token_bytes(258) == b""
    assert grown.decode_single_token_bytes(ours.n_vocab) == b"xaxa"
    assert bytepair.Tokenizer(tok_list[:-1], None).n_vocab == (259 if tail else 257)


def _saved(tok, path):
    tok.save(path)
    return path


def test_gaps_and_missing_bytes_and_empty(tmp_path):
    path = tmp_path / "gap.tiktoken"
    path.write_bytes(BYTES + _line(b"ab", 257))
    # a rank no line gives is a gap (as tiktoken reads it): id 256 holds no token
    tok = bytepair.load(path, pattern=None)
    assert tok.gaps == [256] and tok.encode("ab") == [257] and tok.n_vocab == 258
    with pytest.raises(bytepair.UnknownTokenError):
        tok.decode([256])
    assert tt_format.dumps(tok) == BYTES + _line(b"ab", 257)
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"".join(_line(bytes([b]), b) for b in range(255)))
    with pytest.raises(FormatError, match=r"single byte 0xff is not a token"):
        bytepair.load(path, pattern=None)
    path.write_bytes(b"\n\n")
    with pytest.raises(FormatError, match="empty"):
        tt_format.load(path, pattern=None)


def test_lines_may_come_in_any_order(tmp_path):
    """tiktoken's loader takes the rank from each line, not from its position."""
    lines = BYTES.splitlines(keepends=True) + [_line(b"ab", 256)]
    path = tmp_path / "shuffled.tiktoken"
    path.write_bytes(b"".join(reversed(lines)))
    tok = bytepair.load(path, pattern=None)
    assert tok.encode("abab") == [256, 256]


def test_empty_token_survives_tokenizer_json_and_gpt2_files(tmp_path):
    """The empty token is the vocab entry ``""`` in ``tokenizer.json`` and in
    ``vocab.json``: HF tokenizers reads it as the same id (it decodes to
    nothing and no text encodes to it), and bytepair reads it back as the
    empty token, neither a gap nor a refused entry. Two empty tokens cannot
    share one string key: such a tokenizer is refused, not written lossily."""
    from bytepair.errors import UnsupportedComponentError
    from bytepair.formats import gpt2, hf_json

    hf = optional("tokenizers")
    ranks = {bytes([b]): b for b in range(256)} | {b"xa": 256, b"": 257, b"ab": 258}
    tok = bytepair.Tokenizer(ranks, "gpt2")
    text = corpus("en_kjv.txt")[:4000] + " xa ab xab"
    data = hf_json.dumps(tok)
    theirs = hf.Tokenizer.from_str(data)
    assert theirs.get_vocab_size() == tok.n_vocab == 259
    assert theirs.encode(text).ids == tok.encode(text)
    assert theirs.decode([120, 257, 256]) == tok.decode([120, 257, 256]) == "xxa"
    gpt2.save(tok, tmp_path / "files")
    for back in [hf_json.loads(data.encode()), gpt2.load(tmp_path / "files")]:
        assert (back.n_vocab, back.gaps, back._empty_ranks) == (259, [], [257])
        assert back.decode_single_token_bytes(257) == b"" and back.encode(text) == tok.encode(text)
    normalized = json.dumps(dict(json.loads(data), normalizer={"type": "NFC"}))  # the pipeline reader
    piped = hf_json.loads(normalized.encode())
    assert piped.n_vocab == 259 and piped.encode(text) == hf.Tokenizer.from_str(normalized).encode(text).ids
    assert piped.decode([120, 257, 256]) == "xxa"
    two = bytepair.Tokenizer([bytes([b]) for b in range(256)] + [b"xa", b"", b""], "gpt2")
    for write in (hf_json.dumps, gpt2.dumps):
        with pytest.raises(UnsupportedComponentError, match="at most one empty token"):
            write(two)
