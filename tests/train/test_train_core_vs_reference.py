"""The Rust trainer against the reference (bytepair.reference), the worked
examples, options, determinism and bad input."""

from __future__ import annotations

import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.counts import ChunkCounts, count_chunks
from bytepair.errors import PatternError, TrainingError
from conftest import CORPORA

PATTERNS = ["gpt2", "cl100k", "o200k", None, r" ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|\s+"]


def ref_merges(texts, num_merges, pattern, specials=(), **kw):
    table = reference.count_chunks(texts, bytepair.patterns.resolve(pattern), specials)
    return [tuple(m) for m in reference.train_from_counts(table, num_merges, **kw)]


def core_merges(texts, num_merges, pattern, specials=(), **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(texts, 256 + num_merges + len(specials), pattern=pattern,
                             special_tokens=list(specials), progress=False, **kw)
    return [tuple(m) for m in tok.merges]


# ---------------------------------------------------------------- worked examples (docs/worked-examples.md)


def test_banana_bandana():
    tok = bytepair.train("banana bandana", 259, pattern=None)
    assert [tok.decode_single_token_bytes(i) for i in (256, 257, 258)] == [b"an", b"ban", b"ana"]
    assert len(tok.encode("banana bandana")) == 6


LUNA = "luna saw a star. luna said hi to the star."


def test_luna_raw_bytes():
    tok = bytepair.train(LUNA, 264, pattern=None)
    assert tok.merges[:3] == [(32, 115), (97, 256), (108, 117)]
    assert tok.decode_single_token_bytes(263) == b"tar"
    assert len(tok.encode(LUNA)) == 23
    assert len(tok.encode("a star saw luna.")) == 9


def test_luna_gpt2_pretokenized():
    tok = bytepair.train(LUNA, 264, pattern="gpt2")
    got = [tok.decode_single_token_bytes(256 + k) for k in range(8)]
    assert got == [b" s", b"lu", b"lun", b"luna", b" sa", b" st", b" sta", b" star"]
    assert len(tok.encode(LUNA)) == 24
    assert len(tok.encode("a star saw luna.")) == 7


def test_seeds_c_twenty_merges():
    corpus = "low lower lowest newer newest wider widest " * 50 + "토큰 토큰화 토크나이저 토큰을 토큰이 " * 30
    pat = r" ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|\s+"
    tok = bytepair.train(corpus, 276, pattern=pat)
    want = [b"we", b"lo", b"st", b" \xed", b" \xed\x86", b" \xed\x86\xa0", b" \xed\x86\xa0\xed",
            b" \xed\x86\xa0\xed\x81", b" lo", b" \xed\x86\xa0\xed\x81\xb0"]
    assert [tok.decode_single_token_bytes(256 + k) for k in range(10)] == want
    assert tok.encode("lowest") == [257, 256, 258]
    assert tok.encode(" lowest") == [266, 258]
    assert tok.encode(" 토큰화") == [265, 237, 153, 148]


def test_low_lower_lowest_ties():
    # Worked example A (char level, docs/worked-examples.md) has the same first merges at byte level for ASCII text.
    tok = bytepair.train("low lower lowest", 260, pattern=None)
    assert [tok.decode_single_token_bytes(256 + k) for k in range(4)] == [b"lo", b"low", b" low", b" lowe"]


# ---------------------------------------------------------------- reference vs core


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: str(p)[:10])
@pytest.mark.parametrize("name", CORPORA)
def test_corpora_match_reference(corpora, name, pattern):
    text = corpora[name][:6000]
    k = 60
    assert core_merges([text], k, pattern) == ref_merges([text], k, pattern)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_full_fixture_corpora_match_reference(corpora, pattern):
    texts = [corpora[n] for n in CORPORA]
    table = reference.count_chunks(texts, bytepair.patterns.resolve(pattern))
    want = [tuple(m) for m in reference.train_from_counts(table, 120)]
    assert core_merges(texts, 120, pattern) == want


TIE_ALPHABET = st.text(alphabet="ab \n.", max_size=60)
SMALL_TEXT = st.text(max_size=40)
BYTES_TEXT = st.binary(max_size=40).map(lambda b: b.decode("latin-1"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(TIE_ALPHABET, SMALL_TEXT, BYTES_TEXT), min_size=1, max_size=4),
       pattern=st.sampled_from(PATTERNS), k=st.integers(1, 30))
def test_hypothesis_matches_reference(texts, pattern, k):
    if not any(texts):
        return
    assert core_merges(texts, k, pattern) == ref_merges(texts, k, pattern)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TIE_ALPHABET, min_size=1, max_size=3), k=st.integers(1, 20),
       min_frequency=st.integers(1, 4), max_len=st.one_of(st.none(), st.integers(1, 4)))
def test_hypothesis_options_match_reference(texts, k, min_frequency, max_len):
    if not any(texts):
        return
    kw = {"min_frequency": min_frequency, "max_token_length": max_len}
    assert core_merges(texts, k, None, **kw) == ref_merges(texts, k, None, **kw)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet="ab<|>x \n", max_size=40), min_size=1, max_size=3), k=st.integers(1, 15))
def test_hypothesis_special_tokens_match_reference(texts, k):
    specials = ["<|x|>", "<|"]
    if not any(t for text in texts for t in reference.split_special(text, specials)):
        return
    assert core_merges(texts, k, "gpt2", specials) == ref_merges(texts, k, "gpt2", specials)


def test_counting_is_independent_of_threads_and_blocks(corpora):
    text = "".join(corpora[n][:20000] for n in CORPORA)
    for pattern in ["gpt2", "cl100k", "o200k"]:
        want = count_chunks([text], pattern=pattern, num_threads=1)
        assert list(want.items()) == list(reference.count_chunks([text], bytepair.patterns.resolve(pattern)).items())
        for threads, block in [(2, 64), (2, 997), (1, 4096), (2, 1 << 20)]:
            got = count_chunks([text], pattern=pattern, num_threads=threads, block_size=block)
            assert got == want, (pattern, threads, block)


def test_file_streaming_equals_text(tmp_path, corpora):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    text = "".join(corpora[n][:15000] for n in CORPORA)
    # Special tokens (one containing "a\nb", a safe-cut look-alike) at random places.
    parts = text.split(" ")
    for _ in range(300):
        parts.insert(rng.randrange(len(parts)), rng.choice(["<|endoftext|>", "x<|a\nb|>", "<|a\nb|>"]))
    text = " ".join(parts)
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    for pattern in ["gpt2", "cl100k", "o200k", None]:
        specials = ["<|endoftext|>", "<|a\nb|>"]
        want = count_chunks([text], pattern=pattern, special_tokens=specials)
        assert list(want.items()) == list(reference.count_chunks([text], bytepair.patterns.resolve(pattern),
                                                                 specials).items())
        got = count_chunks(path, pattern=pattern, special_tokens=specials,
                    stream_block=rng.randrange(17, 5000), block_size=rng.randrange(64, 3000))
        assert got == want, f"seed {seed} pattern {pattern}"


def test_documents_separator_matches_reference():
    texts = ["aa bb\n\naa cc\n\n", "bb aa\n\nbb"]
    docs = [d for t in texts for d in t.split("\n\n")]
    assert core_merges(texts, 5, None, documents="\n\n") == ref_merges(docs, 5, None)
    tok = bytepair.train(texts, 258, pattern=None, documents="\n\n")
    assert tok.decode_single_token_bytes(256) == b"aa"


def test_iterables_paths_and_str_mix(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("hello world\n", encoding="utf-8")
    mixed = bytepair.train(["abc abc", p, "world hello"], 262, pattern="gpt2")
    want = ref_merges(["abc abc", "hello world\n", "world hello"], 6, "gpt2")
    assert mixed.merges == want
    gen = bytepair.train((s for s in ["abc abc", "hello world\n", "world hello"]), 262, pattern="gpt2")
    assert gen.merges == want


def test_train_from_counts_equals_training(corpora):
    texts = [corpora["en_austen.txt"][:5000], corpora["code_python.txt"][:5000]]
    parts = [ChunkCounts.from_texts([t], pattern="cl100k") for t in texts]
    merged = ChunkCounts(pattern="cl100k")
    for p in parts:
        merged.update(p)
    assert bytepair.train(counts=merged, vocab_size=400).merges == bytepair.train(texts, 400, pattern="cl100k").merges


def test_truncate_equals_smaller_training(corpora):
    text = corpora["en_kjv.txt"][:8000]
    big = bytepair.train(text, 600, pattern="o200k", special_tokens=["<|endoftext|>"])
    small = bytepair.train(text, 400, pattern="o200k", special_tokens=["<|endoftext|>"])
    cut, id_map = big.truncate(400)
    assert cut == small and cut.merges == small.merges
    assert id_map[599] == 399 and cut.special_tokens == {"<|endoftext|>": 399}


def test_special_tokens_get_last_ids_and_are_never_merged():
    text = "ab<|e|>ab<|e|>ab" * 3
    tok = bytepair.train(text, 260, pattern=None, special_tokens=["<|e|>", "<|p|>"])
    assert tok.special_tokens == {"<|e|>": 258, "<|p|>": 259}
    assert all(b"<" not in tok.decode_single_token_bytes(i) for i in range(256, 258))


def test_early_stop_warns_with_reached_size():
    # "abab": (a,b) then (ab,ab), then no pair is left.
    with pytest.warns(UserWarning, match=r"only 2 merges.*vocab size is 258 instead of 1000"):
        tok = bytepair.train("abab", 1000, pattern=None)
    assert tok.n_vocab == 258
    with pytest.warns(UserWarning, match="min_frequency=3"):
        bytepair.train("abab", 300, pattern=None, min_frequency=3)


def test_large_counts_are_exact():
    # Counts beyond 32 bits: a 32-bit counter (HF's) would wrap.
    c = ChunkCounts({b"ab": 3_000_000_000, b"cd": 2_999_999_999, b"cdcd": 1}, pattern=None)
    tok = bytepair.train(counts=c, vocab_size=258)
    assert tok.merges == [(99, 100), (97, 98)]  # cd: 2_999_999_999 + 2 beats ab


# ---------------------------------------------------------------- bad input


def test_bad_arguments():
    with pytest.raises(TrainingError, match="too small"):
        bytepair.train("abc", 255)
    with pytest.raises(TrainingError, match="too small"):
        bytepair.train("abc", 256, special_tokens=["<s>"])
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train("", 300)
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train([], 300)
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train("<s><s>", 300, special_tokens=["<s>"])
    with pytest.raises(PatternError):
        bytepair.train("abc", 300, pattern="(")
    with pytest.raises(TrainingError, match="twice"):
        bytepair.train("abc", 300, special_tokens=["<s>", "<s>"])
    with pytest.raises(TrainingError, match="not a str"):
        bytepair.train("abc", 300, special_tokens=[b"<s>"])
    with pytest.raises(TrainingError, match="min_frequency"):
        bytepair.train("abc", 300, min_frequency=-1)
    with pytest.raises(TrainingError, match="num_threads"):
        bytepair.train("abc", 300, num_threads=0)
    with pytest.raises(TypeError):
        bytepair.train(b"abc", 300)
    with pytest.raises(TypeError):
        bytepair.train(["abc", 3], 300)
    with pytest.raises(TypeError):
        bytepair.train("abc", 300, counts=ChunkCounts())


def test_non_utf8_file_names_the_path(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"good text\n" * 100 + b"\xff\xfe bad")
    with pytest.raises(TrainingError, match=r"bad\.txt.*not UTF-8.*offset 1000"):
        bytepair.train(p, 300)
    with pytest.raises(FileNotFoundError):
        bytepair.train(tmp_path / "missing.txt", 300)


def test_iterator_error_propagates(tmp_path):
    class Boom(RuntimeError):
        pass

    def gen():
        yield "some text " * 100
        raise Boom("disk on fire")

    with pytest.raises(Boom, match="disk on fire"):
        bytepair.train(gen(), 300)
    assert list(tmp_path.iterdir()) == []
    # The process is still usable.
    assert bytepair.train("abab", 257, pattern=None).merges == [(97, 98)]


@pytest.mark.slow
@pytest.mark.parametrize("phase,at", [("count", 1 / 3), ("merge", 1 / 2)], ids=["count", "merge"])
def test_keyboard_interrupt_stops_training_early(phase, at):
    """SIGINT sent at ``at`` of a training's uninterrupted time stops it with
    KeyboardInterrupt before ``at + 0.3`` of that time: the core checks for
    signals while it counts (``count``: a 40 MB corpus, few merges) and while it
    merges (``merge``: one 3 MB chunk, about 50,000 merges, which take the
    second half of the run). Both times are wall time of the same training in
    this process, so a loaded machine slows both."""
    import os
    import signal
    import threading
    import time

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread only")
    rng = random.Random(1234)
    if phase == "count":
        data = ["".join(rng.choice("abcd efgh") for _ in range(4000)) * 10_000]
        kw = {"pattern": r"\w+|\s+", "vocab_size": 300}
    else:
        data = "".join(rng.choice("abcdefghijklmnop") for _ in range(3_000_000))
        kw = {"pattern": None, "vocab_size": 50_000}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        bytepair.train(data, progress=False, **kw)
        full = time.perf_counter() - t0
        timer = threading.Timer(at * full, lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.perf_counter()
        timer.start()
        try:
            try:
                bytepair.train(data, progress=False, **kw)
            finally:
                timer.cancel()
                timer.join()
        except KeyboardInterrupt:
            elapsed = time.perf_counter() - t0
        else:
            pytest.fail(f"training ended ({time.perf_counter() - t0:.2f} s) without the interrupt sent at "
                        f"{at * full:.2f} s (uninterrupted: {full:.2f} s)")
    assert elapsed < (at + 0.3) * full, (
        f"stopped at {elapsed:.2f} s; interrupt at {at * full:.2f} s, full run {full:.2f} s")
    assert bytepair.train("abab", 257, pattern=None).merges == [(97, 98)]
