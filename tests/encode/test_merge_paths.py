"""The merge paths against each other and the reference: whole-token lookup,
short scan, queue, split and heap give the same ids on every piece (real text,
random bytes, long words); the piece cache stays exact at its size limits; long
hostile runs stay exact and far from quadratic."""

from __future__ import annotations

import random

import pytest

import bytepair
from bytepair import reference
from conftest import ENCODINGS, tiktoken_encoding


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_words_match_tiktoken(name, corpora):
    """Long pieces that are not repetitive are cut where no token can straddle
    and merged part by part: the ids must still be tiktoken's, and those of the
    uncut heap path. Random Hangul (the hostile case the cut is for), Korean
    prose with its spaces removed (real words running together) and random
    letters from the multilingual corpus."""
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    rng = random.Random(5)
    hangul = "".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(3000))
    joined = "".join(corpora["ko_prose.txt"].split())[:9000]
    letters = [c for c in corpora["multi_unicode.txt"] if c.isalpha()]
    mixed = "".join(rng.choice(letters) for _ in range(3000))
    for text in (hangul, joined, mixed):
        want = ref.encode_ordinary(text)
        assert ours.encode_ordinary(text) == want
        for piece in set(bytepair._core.pretokenize(ours.pattern, text)):
            if len(piece.encode()) > 128:
                b = piece.encode()
                assert ours._core.encode_piece_with(b, "split") == ours._core.encode_piece_with(b, "heap")


@pytest.mark.parametrize("name", ENCODINGS)
def test_remembered_long_pieces_stay_exact(name):
    """Pieces of up to 256 bytes are kept in the per-thread piece cache (table
    borders, separator lines): the first encode merges them, the repeats read
    the cache. Both must give tiktoken's ids, at and around the size limits."""
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    rng = random.Random(11)
    pieces = [
        "+" + "-" * 30 + "+" + "-" * 57 + "+",  # a table border, 90 bytes
        " " + "=" * 63,  # 64 bytes
        " " + "=" * 64,
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(255)),
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(256)),
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(257)),
        "가나다라" * 21,  # 252 bytes of Hangul
    ]
    text = "\n".join(pieces)
    want = ref.encode_ordinary(text)
    bytepair._core.clear_piece_cache()
    assert ours.encode_ordinary(text) == want  # merged, then remembered
    assert ours.encode_ordinary(text) == want  # from the cache
    assert ours.encode_batch([text] * 8, num_threads=2) == [want] * 8
    for p in pieces:
        assert ours.encode_ordinary(p) == ref.encode_ordinary(p)


@pytest.mark.parametrize("name", ENCODINGS)
def test_merge_paths_agree_with_reference(name, corpora):
    """Every internal path (auto, short scan, heap) against reference.encode_piece."""
    enc = bytepair.get_encoding(name)
    ranks = enc.mergeable_ranks
    rng = random.Random(1234)
    text = corpora["multi_unicode.txt"] + corpora["ko_prose.txt"]
    pieces = set(bytepair._core.pretokenize(enc.pattern, text))
    chosen = sorted(pieces)[:: max(1, len(pieces) // 400)]
    # plus longer byte strings that are not pieces at all
    for _ in range(40):
        start = rng.randrange(len(text) - 400)
        chosen.append(text[start:start + rng.randrange(1, 400)])
    for p in chosen:
        b = p.encode("utf-8")
        want = reference.encode_piece(b, ranks)
        for path in ("auto", "scan", "heap", "queue", "split"):
            assert enc._core.encode_piece_with(b, path) == want, (path, p)


@pytest.mark.parametrize("name", ENCODINGS)
def test_runs_of_one_byte_match_tiktoken(name):
    """Long runs of one byte ('x' * N, N spaces, a line of '='), alone or after
    a space or before a newline, take the run-length path: it must answer every
    ASCII one on the bundled vocabularies (the speed-up is real) and give
    tiktoken's ids, in whole texts and piece by piece against the queue."""
    enc, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    rng = random.Random(3)
    chars = [" ", "x", "=", "-", "*", "0", "\n", "\t", "a", "Z", "#", "\u00e9", "\uac00"]
    lengths = [129, 200, 255, 256, 257, 1000, 1023, 4097] + [rng.randrange(130, 3000) for _ in range(6)]
    answered = 0
    for ch in chars:
        for n in lengths:
            for text in (ch * n, " " + ch * n, ch * n + "\n", "a" + ch * n + "b"):
                assert enc.encode_ordinary(text) == ref.encode_ordinary(text), (ch, n, text[:3])
                for piece in set(bytepair._core.pretokenize(enc.pattern, text)):
                    b = piece.encode()
                    if len(b) <= 128 or not piece.isascii():
                        continue  # a repeated multi-byte character alternates bytes: too many runs (the queue takes it)
                    want = enc._core.encode_piece_with(b, "queue")
                    assert enc._core.encode_piece_with(b, "runs") == want, (ch, n)
                    answered += 1
    assert answered > 0


@pytest.mark.parametrize("name", ENCODINGS)
def test_periodic_pieces_flat_path_matches_queue(name):
    """Pieces that repeat a short unit ('aA', '\\r\\n', a syllable, an emoji)
    may take the flat path (a few greedy rounds over the flat sequence, then
    runs): forced on mid-sized pieces it must equal the queue wherever it
    answers, and a whole text past FLAT_MIN (where `encode` picks it) must give
    the queue's ids."""
    enc = bytepair.get_encoding(name)
    answered = 0
    for unit in ["aA", "\r\n", "\uac00", "\u00e9", "\U0001f600", "ab", "\uac00\ub098", "-=", "0a"]:
        for n in (300, 5000):
            b = (unit * (n // len(unit.encode()))).encode()
            want = enc._core.encode_piece_with(b, "queue")
            try:
                got = enc._core.encode_piece_with(b, "flat")
            except ValueError:
                continue
            assert got == want, (unit, n)
            answered += 1
    assert answered >= 6
    for unit in ["aA", "\r\n", "\uac00"]:
        text = unit * ((2 << 20) // len(unit.encode()) + 7)
        pieces = bytepair._core.pretokenize(enc.pattern, text)
        # o200k cuts 'aA' * N into a million short pieces: each distinct one goes through the queue once
        queued = {p: enc._core.encode_piece_with(p.encode(), "queue") for p in set(pieces)}
        want = [t for p in pieces for t in queued[p]]
        assert enc.encode_to_numpy(text, num_threads=1).tolist() == want, unit


def test_runs_path_declines_many_runs():
    enc = bytepair.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="runs path declined"):
        enc._core.encode_piece_with(b"ab" * 100, "runs")


def test_merge_paths_on_random_bytes():
    enc = bytepair.get_encoding("cl100k_base")
    ranks = enc.mergeable_ranks
    seed = 99
    rng = random.Random(seed)
    alphabet = b"aeinst \x00\xe1\xbc"
    for _ in range(200):
        b = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 200)))
        want = reference.encode_piece(b, ranks)
        for path in ("scan", "heap", "queue", "split"):
            assert enc._core.encode_piece_with(b, path) == want, (seed, path, b)


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_hostile_inputs_are_exact_and_not_quadratic(name):
    """Exact on long runs; 8x the input costs well under the 64x of a quadratic path.

    Timing is only a sanity bound (CPU time, generous factor), not a benchmark."""
    import time

    enc = bytepair.get_encoding(name)
    ranks = enc.mergeable_ranks
    rng = random.Random(7)
    b64 = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(80_000))
    for make in (lambda n: "x" * n, lambda n: " " * n + "x", lambda n: b64[:n], lambda n: "가나다라" * (n // 4)):
        small = make(300)
        assert enc.encode_ordinary(small) == [t for p in reference.pretokenize(small, enc.pattern)
                                                for t in reference.encode_piece(p.encode(), ranks)]
        times = []
        for n in (10_000, 80_000):
            text = make(n)
            runs = []
            for _ in range(3):  # the least of three, each from the seed alone: one noisy run cannot fail it
                bytepair._core.clear_piece_cache()
                enc.count("a")  # the wipe back to the seed happens here, untimed
                t = time.process_time()
                enc.count(text)
                runs.append(time.process_time() - t)
            times.append(max(min(runs), 1e-3))
        assert times[1] / times[0] < 8 * 4, times  # quadratic would be 64x
