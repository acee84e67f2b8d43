"""Budgets and offsets against brute-force oracles and tiktoken: count(limit=),
truncate_text (the longest prefix/suffix whose own encoding fits, checked by
encoding every prefix), chunk_text, encode_with_offsets; bad input."""

from __future__ import annotations

import itertools
import random
import time

import pytest

import bytepair
from bytepair import Tokenizer, budget
from conftest import CORPORA, corpus, tiktoken_encoding

ENCS = ["gpt2", "cl100k_base", "o200k_base"]


def longest_prefix(enc, text, n, **kw):
    """The oracle: every character boundary, longest first."""
    return max(k for k in range(len(text) + 1) if enc.count(text[:k], **kw) <= n)


def longest_suffix(enc, text, n, **kw):
    return min(k for k in range(len(text) + 1) if enc.count(text[k:], **kw) <= n)


def _samples(seed, n):
    rnd = random.Random(seed)
    texts = [corpus(c) for c in CORPORA]
    alphabet = list("aaabbbeeinostTHE  \n\t'',.0123456789한국어가나다é\u0301中文😀_-")
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            t = rnd.choice(texts)
            a = rnd.randrange(len(t))
            s = t[a:a + rnd.randrange(1, 90)]
        elif kind == 1:  # no spaces: long stretches with few restart points
            t = rnd.choice(texts)
            a = rnd.randrange(len(t))
            s = t[a:a + rnd.randrange(1, 120)].replace(" ", "").replace("\n", "")
        elif kind == 2:
            s = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 50)))
        else:  # one long letter run (the inner restart points of gpt2/cl100k)
            s = "".join(rnd.choice("abcdefghijk") for _ in range(rnd.randrange(1, 150)))
        out.append((s, rnd.randrange(0, 30)))
    return out


@pytest.mark.parametrize("name", ENCS)
def test_truncate_matches_brute_force(name):
    enc = bytepair.get_encoding(name)
    nonmonotone = 0
    for s, n in _samples(hash(name) % 1000, 150):
        counts = [enc.count(s[:k]) for k in range(len(s) + 1)]
        nonmonotone += any(counts[k] > counts[k + 1] for k in range(len(s)))
        n = max(n, 1)
        assert enc.truncate_text(s, n) == s[:longest_prefix(enc, s, n)], (s, n)
        assert enc.truncate_text(s, n, side="start") == s[longest_suffix(enc, s, n):], (s, n)
    # the samples do reach texts whose prefix counts are not monotone
    assert nonmonotone > 0


def test_not_monotone_example_takes_the_true_longest():
    # "ab" is two tokens, "abc" one: with a budget of 1 the answer is "abc", not "a"
    tok = Tokenizer([bytes([b]) for b in range(256)] + [b"bc", b"abc"], pattern=None)
    assert tok.count("ab") == 2 and tok.count("abc") == 1
    assert tok.truncate_text("abc", 1) == "abc"
    assert tok.truncate_text("abcab", 2) == "abca"
    for s in ["abcabc", "aabcbc", "xabcabcx", "abcbcabc"]:
        for n in range(1, 7):
            assert tok.truncate_text(s, n) == s[:longest_prefix(tok, s, n)]
            assert tok.truncate_text(s, n, side="start") == s[longest_suffix(tok, s, n):]


def test_not_decode_of_encode_prefix():
    # cutting the ids inside a character gives text that is not a prefix, and
    # re-encoding a decoded id prefix can need more tokens
    enc = bytepair.get_encoding("gpt2")
    text = "한국어 텍스트"
    for n in range(1, len(enc.encode(text))):
        cut = enc.truncate_text(text, n)
        assert text.startswith(cut) and enc.count(cut) <= n
        assert enc.count(text[:len(cut) + 1]) > n or len(cut) == len(text)
    assert "\ufffd" in enc.decode(enc.encode(text)[:1])


@pytest.mark.parametrize("name", ENCS)
def test_truncate_real_text_long(name):
    enc = bytepair.get_encoding(name)
    text = corpus("en_austen.txt")
    for n in [1, 7, 100, 5000]:
        cut = enc.truncate_text(text, n)
        assert text.startswith(cut) and enc.count(cut) <= n
        # the next few longer prefixes do not fit (no dip reaches far in real text)
        assert all(enc.count(text[:len(cut) + d]) > n for d in range(1, 20))
        cut = enc.truncate_text(text, n, side="start")
        assert text.endswith(cut) and enc.count(cut) <= n
        assert all(enc.count(text[len(text) - len(cut) - d:]) > n for d in range(1, 20))
    assert enc.truncate_text(text, 10**9) == text


def test_truncate_specials_policy():
    enc = bytepair.get_encoding("cl100k_base")
    text = "hello <|endoftext|> world and more words"
    with pytest.raises(bytepair.DisallowedSpecialError):
        enc.truncate_text(text, 3)
    for n in range(1, 10):
        for kw in ({"allowed_special": "all"}, {"disallowed_special": ()}):
            assert enc.truncate_text(text, n, **kw) == text[:longest_prefix(enc, text, n, **kw)]
            assert enc.truncate_text(text, n, side="start", **kw) == text[longest_suffix(enc, text, n, **kw):]


def test_truncate_lone_surrogates_follow_encode():
    enc = bytepair.get_encoding("cl100k_base")
    text = "ab\ud800cd \ud83d\ude00 ef"
    for n in range(1, 8):
        cut = enc.truncate_text(text, n)
        assert text.startswith(cut) and enc.count(cut) <= n
        cut = enc.truncate_text(text, n, side="start")
        assert text.endswith(cut) and enc.count(cut) <= n


def test_custom_pattern_and_no_pattern():
    base = bytepair.get_encoding("gpt2")
    for pattern in [None, r"\w+|\s+|[^\w\s]+"]:
        tok = Tokenizer(base.token_bytes_list[:2000], pattern=pattern)
        for s, n in _samples(5, 40):
            n = max(n, 1)
            assert tok.truncate_text(s, n) == s[:longest_prefix(tok, s, n)], (pattern, s, n)
            assert tok.truncate_text(s, n, side="start") == s[longest_suffix(tok, s, n):], (pattern, s, n)


# ---------------------------------------------------------------- count(limit=)


@pytest.mark.parametrize("name", ENCS)
def test_count_limit(name):
    enc = bytepair.get_encoding(name)
    text = corpus("en_kjv.txt")
    total = enc.count(text)
    for limit in [0, 1, 5, 100, total - 1, total, total + 1]:
        assert enc.count(text, limit=limit) == min(total, limit + 1)
    assert enc.count("", limit=0) == 0
    with pytest.raises(ValueError):
        enc.count(text, limit=-1)
    with pytest.raises(TypeError):
        enc.count(text, limit=1.5)
    with pytest.raises(bytepair.DisallowedSpecialError):
        enc.count("x <|endoftext|>", limit=100)
    assert enc.count("x <|endoftext|>", limit=100, allowed_special="all") == enc.count(
        "x <|endoftext|>", allowed_special="all")


@pytest.mark.slow
def test_count_limit_encodes_only_a_prefix():
    """``count(text, limit=50)`` stops encoding after 51 tokens: on 1.1 MB it costs
    well under a fifth of ``count(text)`` (about a hundredth when measured; the
    text's own checks still read all of it). CPU time, best of three each."""
    enc = bytepair.get_encoding("o200k_base")
    big = corpus("multi_unicode.txt") * 40
    enc.count(big[:1000])
    assert enc.count(big, limit=50) == 51
    full = min(_cpu_time(lambda: enc.count(big)) for _ in range(3))
    limited = min(_cpu_time(lambda: enc.count(big, limit=50)) for _ in range(3))
    assert limited < full / 5, (limited, full)


def _cpu_time(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


# ---------------------------------------------------------------- chunk_text


@pytest.mark.parametrize("name", ENCS)
@pytest.mark.parametrize("boundary", ["token", "line", "paragraph"])
@pytest.mark.parametrize("overlap", [0, 8])
def test_chunks_tile_the_text(name, boundary, overlap):
    enc = bytepair.get_encoding(name)
    text = corpus("en_pydocs.txt")[:12000] + corpus("ko_prose.txt")[:3000]
    spans = budget.chunk_spans(enc, text, 64, overlap=overlap, boundary=boundary)
    chunks = enc.chunk_text(text, 64, overlap=overlap, boundary=boundary)
    assert chunks == [text[a:b] for a, b in spans]
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, d) in itertools.pairwise(spans):
        assert a < c <= b < d  # progress; overlap is the shared part [c, b)
        if overlap == 0:
            assert c == b
        else:
            assert enc.count(text[c:b]) <= overlap
    # minus the overlaps, the chunks concatenate to the text
    rebuilt = chunks[0] + "".join(ch[spans[i][1] - spans[i + 1][0]:] for i, ch in enumerate(chunks[1:]))
    assert rebuilt == text
    assert all(enc.count(c) <= 64 for c in chunks)
    if boundary == "token":
        # each chunk is the longest that fits from its start
        for a, b in spans[:-1]:
            assert len(enc.truncate_text(text[a:], 64)) == b - a
    else:
        ends_at_break = sum(text[b - 1] == "\n" for _, b in spans[:-1])
        assert ends_at_break >= len(spans) // 2


@pytest.mark.parametrize("max_tokens", [1, 3, 16])
def test_chunks_with_allowed_specials_are_the_longest(max_tokens):
    # the core reads a window of max_tokens x the longest token per chunk;
    # each chunk must still be the longest prefix that fits from its start
    enc = bytepair.get_encoding("cl100k_base")
    eot, fim = "<|endoftext|>", "<|fim_prefix|>"
    text = f"ab{eot}{eot} cd ef{fim}gh {eot}\n\nij" * 5
    spans = budget.chunk_spans(enc, text, max_tokens, allowed_special="all")
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, _) in itertools.pairwise(spans):
        assert b == c
        assert b - a == longest_prefix(enc, text[a:], max_tokens, allowed_special="all")


def test_chunk_finds_a_disallowed_special_anywhere():
    # the first call checks the whole text; later calls disallow nothing
    enc = bytepair.get_encoding("o200k_base")
    text = "word " * 5000 + "<|endoftext|>" + " word" * 10
    with pytest.raises(bytepair.errors.DisallowedSpecialError):
        enc.chunk_text(text, 10)
    assert enc.chunk_text(text, 10, overlap=2, disallowed_special=())[-1].endswith(" word")
    assert enc.chunk_text(text, 10, allowed_special={"<|endoftext|>"})


def test_chunk_paragraphs_preferred():
    enc = bytepair.get_encoding("cl100k_base")
    paras = [f"Paragraph {i} has some words in it." for i in range(6)]
    text = "\n\n".join(paras)
    chunks = enc.chunk_text(text, 25, boundary="paragraph")
    assert all(c.endswith("\n\n") for c in chunks[:-1])
    assert "".join(chunks) == text


def test_chunk_bad_input():
    enc = bytepair.get_encoding("o200k_base")
    with pytest.raises(ValueError, match="max_tokens"):
        enc.chunk_text("abc", 0)
    with pytest.raises(ValueError, match="overlap"):
        enc.chunk_text("abc", 5, overlap=-1)
    with pytest.raises(ValueError, match="smaller than max_tokens"):
        enc.chunk_text("abc", 5, overlap=5)
    with pytest.raises(ValueError, match="boundary"):
        enc.chunk_text("abc", 5, boundary="sentence")
    with pytest.raises(ValueError, match="max_tokens"):
        enc.truncate_text("abc", 0)
    with pytest.raises(ValueError, match="side"):
        enc.truncate_text("abc", 3, side="middle")
    # a character that needs more tokens than the budget
    gpt2 = bytepair.get_encoding("gpt2")
    assert gpt2.count("😀") > 1
    with pytest.raises(ValueError, match="smaller than the .* tokens that the character"):
        gpt2.chunk_text("ab 😀 cd", 1)
    assert gpt2.truncate_text("😀 cd", 1) == ""
    assert enc.chunk_text("", 5) == []


# ---------------------------------------------------------------- offsets


@pytest.mark.parametrize("name", ENCS + ["p50k_base", "o200k_harmony"])
@pytest.mark.parametrize("corpus_name", CORPORA)
def test_offsets_agree_with_tiktoken(name, corpus_name):
    enc, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    text = corpus(corpus_name)[:6000]
    ids, offs = enc.encode_with_offsets(text)
    assert ids == enc.encode(text)
    _, ref_starts = ref.decode_with_offsets(ids)
    assert offs.starts() == ref_starts == [a for a, _ in offs]
    b_ids, b_offs = enc.encode_with_offsets(text, unit="byte")
    assert b_ids == ids
    raw = text.encode("utf-8")
    pos = 0
    for i, (a, b) in zip(ids, b_offs):
        assert a == pos and raw[a:b] == enc.decode_single_token_bytes(i)
        pos = b
    assert pos == len(raw)
    # the character rule: a token covers every character it has a byte of
    char_starts = [0]  # char_starts[k]: characters starting in raw[:k]
    for byte in raw:
        char_starts.append(char_starts[-1] + (not 0x80 <= byte < 0xC0))
    for (ca, cb), (ba, bb) in zip(offs, b_offs):
        assert ca == char_starts[ba + 1] - 1  # the character holding the first byte
        assert cb == char_starts[bb]  # one past the character holding the last byte
        assert raw[ba:bb] in text[ca:cb].encode("utf-8")


@pytest.mark.parametrize("name", ["cl100k_base", "gpt2", "p50k_base"])  # p50k: the special token fills a gap in the ranks
def test_offsets_of_special_tokens(name):
    enc = bytepair.get_encoding(name)
    text = "hi <|endoftext|> yo 안녕"
    for unit, s, eot in (("char", text, "<|endoftext|>"), ("byte", text.encode(), b"<|endoftext|>")):
        ids, offs = enc.encode_with_offsets(text, allowed_special="all", unit=unit)
        assert ids == enc.encode(text, allowed_special="all")
        k = ids.index(enc.eot_token)
        assert s[offs[k][0]:offs[k][1]] == eot, unit
        assert offs[k + 1][0] == offs[k][1] and offs[-1][1] == len(s), unit


def test_korean_syllable_split_over_three_tokens():
    enc = bytepair.get_encoding("gpt2")
    ids, offs = enc.encode_with_offsets("뷁")
    assert len(ids) == 3 and offs == [(0, 1)] * 3
    # b" \xeb" covers the space and the syllable it has the first byte of
    ids, offs = enc.encode_with_offsets("a 뷁")
    assert [enc.decode_single_token_bytes(i) for i in ids] == [b"a", b" \xeb", b"\xb7", b"\x81"]
    assert offs == [(0, 1), (1, 3), (2, 3), (2, 3)]
    assert enc.decode_with_offsets(ids)[1] == [0, 1, 2, 2] == offs.starts()


def test_offsets_specials_surrogates_and_errors():
    enc = bytepair.get_encoding("cl100k_base")
    text = "hi <|endoftext|> yo"
    with pytest.raises(bytepair.DisallowedSpecialError):
        enc.encode_with_offsets(text)
    ids, offs = enc.encode_with_offsets(text, allowed_special="all")
    assert ids == enc.encode(text, allowed_special="all")
    k = ids.index(100257)
    assert text[offs[k][0]:offs[k][1]] == "<|endoftext|>"
    # surrogate pairs and lone surrogates: spans index the text as passed
    s = "a\ud83d\ude00b\ud800c"
    ids, offs = enc.encode_with_offsets(s)
    assert ids == enc.encode(s)
    assert offs[0] == (0, 1) and offs[-1][1] == len(s)
    with pytest.raises(ValueError, match="unit"):
        enc.encode_with_offsets("x", unit="word")
    ids, offs = enc.encode_with_offsets("")
    assert ids == [] and len(offs) == 0 and offs == []
    ids, offs = enc.encode_with_offsets("hello world")
    assert offs == [(0, 5), (5, 11)] and offs[-1] == (5, 11) and offs[::-1] == [(5, 11), (0, 5)]
    with pytest.raises(IndexError):
        offs[2]
    assert "Spans" in repr(offs)


def test_pieces_and_html_use_offsets():
    from bytepair.inspect import pieces
    from bytepair.render.html import pieces_html

    p = pieces(bytepair.get_encoding("gpt2"), "x 한")
    assert [x.chars for x in p.pieces] == [(0, 1), (1, 2), (2, 3), (2, 3)]
    page = pieces_html(p)
    assert "characters 2-3" in page and "(한)" in page


@pytest.mark.parametrize("name", ENCS)
def test_long_runs_without_restart_points(name):
    enc = bytepair.get_encoding(name)
    # exhaustive on small instances of the hard shapes ...
    for unit in ["x", "한", "ab", "12", " "]:
        s = unit * 150
        for n in (1, 7, 30):
            assert enc.truncate_text(s, n) == s[:longest_prefix(enc, s, n)], (unit, n)
            assert enc.truncate_text(s, n, side="start") == s[longest_suffix(enc, s, n):], (unit, n)
    # random CJK with no restart point: past 512 bytes (the first block), the
    # tiling floor rules the far end out without encoding it
    rnd = random.Random(7)
    for length in (100, 400):
        s = "".join(chr(rnd.choice([rnd.randint(0x4E00, 0x4FFF), rnd.randint(0x9F00, 0x9FFF)])) for _ in range(length))
        for n in (1, 7, 30, 100):
            assert enc.truncate_text(s, n) == s[:longest_prefix(enc, s, n)], (length, n)
            assert enc.truncate_text(s, n, side="start") == s[longest_suffix(enc, s, n):], (length, n)
    # ... and right on large ones
    for s in ["x" * 50_000, "뷁" * 10_000, "7" * 30_000]:
        head = enc.truncate_text(s, 100)
        tail = enc.truncate_text(s, 100, side="start")
        assert enc.count(head) <= 100 < enc.count(s[:len(head) + 1])
        assert enc.count(tail) <= 100 < enc.count(s[len(s) - len(tail) - 1:])


@pytest.mark.parametrize("name", ENCS)
def test_one_long_piece_counted_in_one_pass(name):
    # a run of letters longer than 256 bytes is one piece whose every prefix
    # and suffix is one piece: its cuts' counts come from one pass over it
    enc = bytepair.get_encoding(name)
    rnd = random.Random(11)
    for alphabet in ["abcdefghijklmnopqrstuvwxyz", "aAbBtThHeE", "ab", "한국어가나다", "中文字人大"]:
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(300, 500)))
        if name != "gpt2":
            s = "(" + s  # one leading character joins the piece
        for n in (1, 9, 40, 150):
            assert enc.truncate_text(s, n) == s[:longest_prefix(enc, s, n)], (alphabet, n)
            assert enc.truncate_text(s, n, side="start") == s[longest_suffix(enc, s, n):], (alphabet, n)


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCS)
def test_random_letters_truncate_in_linear_time(name):
    """Random letters have no restart point and need far more tokens than the
    fewest possible: cutting a fixed share of a text 4 times longer costs well
    under 16 times as much (linear gives about 4; counting each cut on its own
    is quadratic, about 30 here)."""
    enc = bytepair.get_encoding(name)
    rnd = random.Random(3)
    big = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(400_000))
    small = big[:100_000]

    def both_sides(s):
        head = enc.truncate_text(s, len(s) // 25)
        tail = enc.truncate_text(s, len(s) // 25, side="start")
        assert enc.count(head) <= len(s) // 25 < enc.count(s[:len(head) + 1])
        assert enc.count(tail) <= len(s) // 25 < enc.count(s[len(s) - len(tail) - 1:])

    t1 = max(min(_cpu_time(lambda: both_sides(small)) for _ in range(2)), 1e-3)
    t4 = min(_cpu_time(lambda: both_sides(big)) for _ in range(2))
    assert t4 / t1 < 16, f"{t1 * 1e3:.1f} ms at 100,000 letters, {t4 * 1e3:.1f} ms at 400,000"


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["x", "뷁", "7"])
def test_long_runs_truncate_in_linear_time(unit):
    """A run of one character 8 times longer costs well under 32 times as much to
    truncate from either side (linear gives about 8, quadratic 64: the tiling
    floor skips the cuts that cannot fit). CPU time, best of two."""
    enc = bytepair.get_encoding("o200k_base")
    n = 10_000 if unit == "뷁" else 50_000

    def both_sides(s):
        enc.truncate_text(s, 100)
        enc.truncate_text(s, 100, side="start")

    small, big = unit * n, unit * (8 * n)
    t1 = max(min(_cpu_time(lambda: both_sides(small)) for _ in range(2)), 1e-3)
    t8 = min(_cpu_time(lambda: both_sides(big)) for _ in range(2))
    assert t8 / t1 < 32, f"{unit!r}: {t1 * 1e3:.1f} ms at {n}, {t8 * 1e3:.1f} ms at {8 * n}"


def _word_ends(text):
    """The word-end restart points of src/core_bpe/budget.rs, restated with
    unicodedata (the test alphabet has no characters newer than Python's tables)."""
    import unicodedata

    out = []
    for q in range(1, len(text)):
        prev, here = unicodedata.category(text[q - 1]), unicodedata.category(text[q])
        after_letter = prev[0] == "L" and here[0] not in "LNM" and text[q] != "'"
        after_number = prev[0] == "N" and here[0] != "N"
        if after_letter or after_number:
            out.append(q)
    return out


@pytest.mark.parametrize("name", ENCS)
def test_word_ends_are_restart_points(name):
    """The claim the exact search rests on: at a word end q, for every k > q,
    encode(text[:k]) == encode(text[:q]) + encode(text[q:k]), and for every
    k < q, encode(text[k:]) == encode(text[k:q]) + encode(text[q:])."""
    enc = bytepair.get_encoding(name)
    rnd = random.Random(11)
    alphabet = list("ab'sTt  \n\t.,!?-_09१٣한글中é\u0301\u0300Ωω$%")
    checked = 0
    for i in range(120):
        if i % 2:
            t = corpus(CORPORA[i % len(CORPORA)])
            a = rnd.randrange(len(t) - 40)
            s = t[a:a + rnd.randrange(5, 40)]
        else:
            s = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(2, 30)))
        for q in _word_ends(s):
            left, right = enc.encode(s[:q], disallowed_special=()), enc.encode(s[q:], disallowed_special=())
            assert enc.encode(s, disallowed_special=()) == left + right
            for k in range(q + 1, len(s)):
                assert enc.encode(s[:k], disallowed_special=()) == left + enc.encode(s[q:k], disallowed_special=())
            for k in range(q):
                assert enc.encode(s[k:], disallowed_special=()) == enc.encode(s[k:q], disallowed_special=()) + right
            checked += 1
    assert checked > 200
