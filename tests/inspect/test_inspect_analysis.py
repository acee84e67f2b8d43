"""bytepair.inspect on the worked examples (docs/worked-examples.md) and on real
text, checked against their published facts, tiktoken, and small oracles."""

from __future__ import annotations

import itertools
import json

import pytest

import bytepair
from bytepair import inspect as bi
from bytepair.inspect.trace import _join_tokens
from conftest import optional, tiktoken_encoding


def _tokens(step_or_trace) -> str:
    return step_or_trace.tokens_text()


# ---------------------------------------------------------------- trace


def test_trace_low_lower_lowest_matches_seed_a():
    t = bi.trace("low lower lowest", 4)
    assert _join_tokens(t.start_tokens) == "l|o|w| |l|o|w|e|r| |l|o|w|e|s|t"
    assert t.num_start_tokens == 16
    assert [(s.left, s.right) for s in t.steps] == [(b"l", b"o"), (b"lo", b"w"), (b" ", b"low"), (b" low", b"e")]
    assert [s.num_tokens for s in t.steps] == [13, 10, 8, 6]
    assert _tokens(t.steps[-1]) == "low| lowe|r| lowe|s|t"
    # oracle: a pair that does not overlap itself removes one token per occurrence
    before = [t.num_start_tokens] + [s.num_tokens for s in t.steps[:-1]]
    assert [s.count for s in t.steps] == [b - s.num_tokens for b, s in zip(before, t.steps)]


def test_trace_raw_byte_toy_matches_seed_d():
    t = bi.trace("luna saw a star. luna said hi to the star.", 8)
    assert t.num_bytes == 42
    first = [(s.left + s.right, s.count, s.num_tokens) for s in t.steps[:3]]
    assert first == [(b" s", 4, 38), (b"a s", 3, 35), (b"lu", 2, 33)]
    assert (t.steps[-1].left, t.steps[-1].right, t.steps[-1].num_tokens) == (b"ta", b"r", 23)


def test_trace_with_gpt2_pretokenization_follows_the_tie_break_rule():
    t = bi.trace("luna saw a star. luna said hi to the star.", 8, pattern="gpt2")
    assert [s.token for s in t.steps] == [b" s", b"lu", b"lun", b"luna", b" sa", b" st", b" sta", b" star"]
    assert t.steps[-1].num_tokens == 24


def test_trace_banana_bandana_matches_seed_d():
    t = bi.trace("banana bandana", 3)
    assert [(s.token, s.num_tokens) for s in t.steps] == [(b"an", 10), (b"ban", 8), (b"ana", 6)]


def test_trace_on_real_text_agrees_with_training_and_encoding(corpora):
    text = corpora["en_kjv.txt"][:3000]
    t = bi.trace(text, 25, pattern="gpt2")
    tok = bytepair.train(text, 256 + 25, pattern="gpt2")
    assert [(s.left, s.right) for s in t.steps] == [
        (tok.decode_single_token_bytes(a), tok.decode_single_token_bytes(b)) for a, b in tok.merges]
    assert t.steps[-1].num_tokens == len(tok.encode_ordinary(text))
    assert b"".join(t.steps[-1].tokens) == text.encode("utf-8")
    counts = [s.count for s in t.steps]
    assert counts == sorted(counts, reverse=True), "the chosen pair's count can never rise"
    sizes = [t.num_start_tokens] + [s.num_tokens for s in t.steps]
    assert all(a > b for a, b in itertools.pairwise(sizes))


def test_trace_stops_early_and_drops_token_lists_for_long_text(corpora):
    assert len(bi.trace("abab", 10).steps) == 2  # ab, then ab+ab: one token, no pair left
    long = corpora["en_austen.txt"][:6000]
    t = bi.trace(long, 2, pattern="gpt2")
    assert t.start_tokens is None and t.steps[0].tokens is None
    assert "text after the merge" not in t.to_text()


def test_trace_rejects_bad_merge_count():
    with pytest.raises(ValueError, match="num_merges must be between 0 and"):
        bi.trace("abc", -1)


# ---------------------------------------------------------------- sweep


def test_sweep_of_a_bundled_encoding_is_truncation(corpora):
    tiktoken = optional("tiktoken")
    text = corpora["ko_prose.txt"][:5000]
    enc = bytepair.get_encoding("gpt2")
    s = bi.sweep(enc, [1000, 10000, enc.n_vocab], text)
    tokens = [r.tokens for r in s.rows]
    assert tokens == sorted(tokens, reverse=True)
    full = tiktoken_encoding("gpt2")
    assert s.rows[-1].tokens == len(full.encode_ordinary(text))
    # oracle for the truncated sizes: tiktoken built from the first ranks only
    ranks = {bytes(full.decode_single_token_bytes(i)): i for i in range(10000 - 1)}
    small = tiktoken.Encoding(name="gpt2-prefix", pat_str=enc.pattern, mergeable_ranks=ranks, special_tokens={})
    assert s.rows[1].tokens == len(small.encode_ordinary(text))
    assert s.rows[1].merges == 10000 - 1 - 256
    assert s.rows[1].bytes_per_token == pytest.approx(len(text.encode()) / s.rows[1].tokens)


def test_sweep_of_training_text_equals_training_each_size(corpora):
    text = corpora["en_pydocs.txt"][:4000]
    s = bi.sweep(text, merges=[0, 10, 40], pattern="gpt2")
    assert [r.merges for r in s.rows] == [0, 10, 40]
    assert s.rows[0].tokens == len(text.encode("utf-8"))
    for r in s.rows[1:]:
        tok = bytepair.train(text, r.vocab_size, pattern="gpt2")  # prefix property (seed D)
        assert r.tokens == len(tok.encode_ordinary(text))


def test_sweep_clips_sizes_a_small_corpus_cannot_reach():
    with pytest.warns(UserWarning, match="training stopped at vocab size 258"):
        s = bi.sweep("abab", merges=[0, 1, 50], pattern=None)
    assert [r.merges for r in s.rows] == [0, 1, 2]
    assert s.rows[-1].tokens == 1


def test_sweep_bad_arguments():
    with pytest.raises(ValueError, match="either"):
        bi.sweep("abc", [256], merges=[1])
    with pytest.raises(ValueError, match="below 256"):
        bi.sweep("abc", [100])
    with pytest.raises(ValueError, match="eval_text"):
        bi.sweep(bytepair.get_encoding("gpt2"), [300])
    with pytest.raises(ValueError, match="vocab size 60,000 is above gpt2's n_vocab 50,257"):
        bi.sweep(bytepair.get_encoding("gpt2"), [300, 60000], "some text")


# ---------------------------------------------------------------- word ranks


def test_word_ranks_on_gpt2_against_tiktoken():
    tt = tiktoken_encoding("gpt2")
    r = bi.word_ranks("gpt2", [" the", " Luna", " Minjun", "a"])
    the, luna, minjun, a = r.rows
    assert the.id == tt.encode_ordinary(" the")[0] == 262
    assert the.merge == 262 - 255  # gpt2's first 256 ranks are the bytes
    assert luna.id == tt.encode_ordinary(" Luna")[0] and luna.merge == luna.id - 255
    assert minjun.id is None and minjun.merge is None
    assert minjun.piece_ids == tt.encode_ordinary(" Minjun") and b"".join(minjun.pieces) == b" Minjun"
    assert a.merge == 0
    json.dumps(r.to_dict())


def test_word_ranks_on_a_trained_tokenizer_counts_merges():
    tok = bytepair.train("low lower lowest " * 10, 256 + 6, pattern="gpt2")
    r = bi.word_ranks(tok, [" lowest", "low"])
    for row in r.rows:
        if row.id is not None:
            assert row.merge == row.id - 255
            assert tok.decode_single_token_bytes(row.id) == row.word.encode()


# ---------------------------------------------------------------- pieces


def test_pieces_of_korean_in_gpt2_are_partial_utf8():
    p = bi.pieces("gpt2", "토큰")
    assert p.ids == [169, 228, 254, 169, 223, 108]  # seed C
    assert [x.complete for x in p] == [False] * 6
    assert all(x.text == "\ufffd" for x in p)
    assert bi.pieces("gpt2", "한국어").ids == [47991, 250, 166, 113, 255, 168, 244, 112]  # seed B


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pieces_on_real_text(corpora, name):
    text = corpora["multi_unicode.txt"][:3000]
    p = bi.pieces(name, text)
    assert p.ids == tiktoken_encoding(name).encode_ordinary(text)
    assert b"".join(x.bytes for x in p) == text.encode("utf-8")
    for x in p:
        try:
            x.bytes.decode("utf-8")
            ok = True
        except UnicodeDecodeError:
            ok = False
        assert x.complete is ok
    starts = [x.start for x in p]
    assert starts == sorted(starts) and starts[0] == 0
    assert sum(not x.complete for x in p) > 0  # this text does split characters


def test_pieces_special_tokens():
    enc = bytepair.get_encoding("cl100k_base")
    plain = bi.pieces(enc, "a<|endoftext|>")
    assert not any(x.special for x in plain) and len(plain) > 2
    allowed = bi.pieces(enc, "a<|endoftext|>", allowed_special="all")
    assert allowed.ids[-1] == 100257 and allowed.pieces[-1].special


# ---------------------------------------------------------------- compare


def test_compare_three_generations_matches_seed_c():
    c = bi.compare({"ko": "안녕하세요, 토크나이저입니다.", "en": "Hello, this is a tokenizer."},
                   ["gpt2", "cl100k_base", "o200k_base"])
    ko = [c.row("ko", n) for n in ("gpt2", "cl100k_base", "o200k_base")]
    assert [r.tokens for r in ko] == [38, 17, 10]
    assert [r.n_vocab for r in ko] == [50257, 100277, 200019]
    for n in c.tokenizers:
        assert c.ratio("ko", "en", n) == pytest.approx(c.row("ko", n).tokens / c.row("en", n).tokens)
        assert c.row("en", n).tokens == len(tiktoken_encoding(n).encode_ordinary("Hello, this is a tokenizer."))
    text = c.to_text()
    assert "vs 1st text" in text and "38" in text
    json.dumps(c.to_dict())


def test_compare_korean_and_english_prose(corpora):
    texts = {"en": corpora["en_austen.txt"][:4000], "ko": corpora["ko_prose.txt"][:4000]}
    c = bi.compare(texts, {"gpt2": "gpt2", "o200k": bytepair.get_encoding("o200k_base")})
    for r in c.rows:
        assert r.bytes == len(texts[r.text].encode()) and r.chars == len(texts[r.text])
    # the newer vocabulary spends far fewer tokens on Korean
    assert c.row("ko", "o200k").tokens < c.row("ko", "gpt2").tokens / 2


def test_compare_bad_arguments():
    with pytest.raises(TypeError):
        bi.compare("one text", ["gpt2"])
    with pytest.raises(ValueError, match="available"):
        bi.compare(["x"], ["no-such-encoding"])


# ---------------------------------------------------------------- evaluate


def test_evaluate_against_tiktoken(corpora):
    text = corpora["ko_prose.txt"][:6000]
    e = bi.evaluate("gpt2", text)
    tt = tiktoken_encoding("gpt2")
    ids = tt.encode_ordinary(text)
    assert e.tokens == len(ids)
    partial = 0
    for i in ids:
        try:
            tt.decode_single_token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            partial += 1
    assert e.byte_fallback == partial
    assert e.bytes_per_token == pytest.approx(len(text.encode()) / len(ids))
    assert e.unknown == 0
    json.dumps(e.to_dict())


def test_evaluate_accepts_files(tmp_path, corpora):
    f = tmp_path / "held.txt"
    f.write_text(corpora["en_kjv.txt"][:2000], encoding="utf-8")
    e = bi.evaluate(bytepair.get_encoding("cl100k_base"), f)
    assert e.chars == 2000 and e.tokens == len(tiktoken_encoding("cl100k_base").encode_ordinary(f.read_text()))


def test_char_tokenizer_unknowns_are_counted():
    tok = bytepair.CharTokenizer.train("the cat sat on the mat\n", 4)
    e = bi.evaluate(tok, "Cat 안녕 😀")
    assert e.unknown == 4  # C, 안, 녕, 😀 are not in the training text


# ---------------------------------------------------------------- rendering


def test_rich_rendering():
    optional("rich")
    from rich.console import Console

    console = Console(record=True, width=120, color_system=None)
    console.print(bi.pieces("gpt2", "토큰 ok"))
    console.print(bi.trace("low lower lowest", 2))
    console.print(bi.pieces("gpt2", "[bold]x[/bold]"))
    out = console.export_text()
    assert "partial" in out and "12876" in out and "'l' + 'o'" in out
    assert "'[/'" in out  # token text is shown, not read as markup


def test_format_table_aligns_wide_characters():
    out = bi.format_table(["t", "n"], [["토큰", 1], ["ab", 22]]).splitlines()
    assert [bi.display_width(line) for line in out] == [8, 8, 8]
