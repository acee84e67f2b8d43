"""The encoder against tiktoken (ids token for token; the published ids of the
worked examples are in tests/reference/test_worked_examples.py), the
special-token rules, the batch / numpy / count / decode surface and bad input."""

from __future__ import annotations

import pickle
import random

import pytest

import bytepair
from bytepair import reference
from bytepair.errors import DisallowedSpecialError, UnknownTokenError
from conftest import CORPORA, ENCODINGS, tiktoken_encoding


def documents(text: str) -> list:
    return [d for d in text.split("\n\n") if d]


# ---------------------------------------------------------------- exactness vs tiktoken


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_whole_and_as_documents(name, corpora):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for cname in CORPORA:
        text = corpora[cname]
        want = ref.encode_ordinary(text)
        assert ours.encode_ordinary(text) == want, cname
        assert ours.encode(text) == ref.encode(text), cname
        assert ours.count(text) == len(want), cname
        assert ours.encode_to_numpy(text).tolist() == want, cname
        docs = documents(text)
        want_docs = ref.encode_ordinary_batch(docs)
        assert ours.encode_batch(docs) == want_docs, cname
        assert ours.encode_batch(docs, num_threads=1) == want_docs, cname
        assert ours.encode_batch(docs, num_threads=3) == want_docs, cname
        assert ours.count_batch(docs) == [len(d) for d in want_docs], cname
        assert ours.decode(want) == text


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
    """Pieces of up to 256 bytes are kept in the per-thread memo (table
    borders, separator lines): the first encode merges them, the repeats read
    the memo. Both must give tiktoken's ids, at and around the size limits."""
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    rng = random.Random(11)
    pieces = [
        "+" + "-" * 30 + "+" + "-" * 57 + "+",  # a table border, 90 bytes
        " " + "=" * 63,  # 64 bytes: the old limit
        " " + "=" * 64,
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(255)),
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(256)),
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(257)),
        "가나다라" * 21,  # 252 bytes of Hangul
    ]
    text = "\n".join(pieces)
    want = ref.encode_ordinary(text)
    bytepair._core.clear_piece_memo()
    assert ours.encode_ordinary(text) == want  # merged, then remembered
    assert ours.encode_ordinary(text) == want  # from the memo
    assert ours.encode_batch([text] * 8, num_threads=2) == [want] * 8
    for p in pieces:
        assert ours.encode_ordinary(p) == ref.encode_ordinary(p)


TRICKY = [
    "", " ", "  ", "\n", " \n\n ", "a" * 300, " " * 1000 + "x", "x" * 5000, "\t\t\r\n",
    "I'm lowest 토큰", "don't 'LL 'Ve", "😀" * 50, "한국어" * 100, "1234567890" * 20,
    "HelloWorld CamelCaseWORDS xmlHTTPRequest", "a\u0301e\u0301", "\x00\x01\x7f",
    "<|endoftext|>", "<|endoftext", "<|endoftext|><|endoftext|>", "  <|fim_prefix|>x",
    "٣٤٥ १२३ ⅷ", "ǅungla Ǆ", "x\u200dy", "a" + "\ufeff" * 3,
]


@pytest.mark.parametrize("name", ENCODINGS)
def test_tricky_strings(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for s in TRICKY:
        assert ours.encode_ordinary(s) == ref.encode_ordinary(s), repr(s)
        assert ours.encode(s, allowed_special="all") == ref.encode(s, allowed_special="all"), repr(s)


# ---------------------------------------------------------------- merge paths


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


# ---------------------------------------------------------------- special tokens


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_semantics_match_tiktoken(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    specials = sorted(ours.special_tokens_set)
    text = f"a{specials[0]}b {specials[-1]}c<|endoftext"
    with pytest.raises(ValueError):
        ref.encode(text)
    with pytest.raises(DisallowedSpecialError) as e:
        ours.encode(text)
    assert "allowed_special" in str(e.value) and "disallowed_special" in str(e.value)
    for kw in [
        {"allowed_special": "all"},
        {"disallowed_special": ()},
        {"allowed_special": {specials[0]}, "disallowed_special": ()},
        {"allowed_special": {specials[-1]}, "disallowed_special": ()},
        {"allowed_special": set(specials), "disallowed_special": "all"},
    ]:
        assert ours.encode(text, **kw) == ref.encode(text, **kw), kw
        assert ours.count(text, **kw) == len(ref.encode(text, **kw)), kw
        assert ours.encode_batch([text, "x"], **kw) == [ref.encode(text, **kw), ref.encode("x", **kw)], kw
    if len(specials) > 1:
        # allowing one still raises for the others (tiktoken's default)
        with pytest.raises(ValueError):
            ours.encode(text, allowed_special={specials[0]})


def test_special_text_policy_everywhere():
    enc = bytepair.get_encoding("gpt2").with_special_text("text")
    ref = tiktoken_encoding("gpt2")
    text = "hi <|endoftext|> there"
    want = ref.encode(text, disallowed_special=())
    assert enc.encode(text) == want
    assert enc.encode_batch([text]) == [want]
    assert enc.count(text) == len(want)
    assert enc.count_batch([text]) == [len(want)]
    assert enc.encode_to_numpy(text).tolist() == want
    # explicit arguments still win
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    with pytest.raises(DisallowedSpecialError):
        enc.encode(text, disallowed_special="all")
    # the shared bundled object keeps tiktoken's default
    with pytest.raises(DisallowedSpecialError):
        bytepair.get_encoding("gpt2").encode(text)


def test_special_text_policy_survives_pickle_and_save(tmp_path):
    enc = bytepair.get_encoding("gpt2").with_special_text("text")
    back = pickle.loads(pickle.dumps(enc))
    assert back.special_text == "text" and back.encode("<|endoftext|>") == enc.encode("<|endoftext|>")
    tok = bytepair.Tokenizer([bytes([b]) for b in range(256)], "gpt2", {"<s>": 256}, special_text="text")
    tok.save(tmp_path / "t.json")
    assert bytepair.load(tmp_path / "t.json").encode("<s>") == [60, 115, 62]


def test_disallowed_non_special_string_is_searched_like_tiktoken():
    ours, ref = bytepair.get_encoding("gpt2"), tiktoken_encoding("gpt2")
    with pytest.raises(ValueError):
        ref.encode("say foo", disallowed_special={"foo"})
    with pytest.raises(DisallowedSpecialError):
        ours.encode("say foo", disallowed_special={"foo"})
    assert ours.encode("say bar", disallowed_special={"foo"}) == ref.encode("say bar", disallowed_special={"foo"})


def test_encode_single_token():
    enc, ref = bytepair.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for t in ["hello", b" world", "<|endoftext|>", "<|fim_middle|>"]:
        assert enc.encode_single_token(t) == ref.encode_single_token(t)
    with pytest.raises(KeyError):
        enc.encode_single_token("hello world")


# ---------------------------------------------------------------- surrogates and bad input


@pytest.mark.parametrize("name", ENCODINGS)
def test_surrogates_like_tiktoken(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for s in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d", "ok \udc80\udc81 <|endoftext|>"]:
        assert ours.encode(s, disallowed_special=()) == ref.encode(s, disallowed_special=()), repr(s)
        assert ours.encode_ordinary(s) == ref.encode_ordinary(s), repr(s)
        assert ours.count(s, disallowed_special=()) == len(ref.encode_ordinary(s))
        assert ours.encode_batch([s, "z"], disallowed_special=()) == [ref.encode_ordinary(s), [ref.encode_ordinary("z")[0]]]
        assert ours.encode_to_numpy(s, disallowed_special=()).tolist() == ref.encode_ordinary(s)


def test_non_str_input_is_a_type_error():
    enc = bytepair.get_encoding("gpt2")
    for bad in [b"bytes", 3, None, ["a"]]:
        with pytest.raises(TypeError):
            enc.encode(bad)
        with pytest.raises(TypeError):
            enc.count(bad)
    with pytest.raises(TypeError):
        enc.encode_batch("a single string")
    with pytest.raises(TypeError):
        enc.encode_batch(["ok", b"bytes"])
    with pytest.raises(ValueError):
        enc.encode_batch(["ok"], num_threads=0)


@pytest.mark.parametrize("bad", [-1, 50_257, 2**31, 2**32, 2**40, 2**80, -(2**70)])
def test_unknown_ids_name_the_id(bad):
    enc = bytepair.get_encoding("gpt2")
    for call in (lambda: enc.decode([15496, bad]), lambda: enc.decode_bytes([bad]),
                 lambda: enc.decode_single_token_bytes(bad), lambda: enc.decode_tokens_bytes([bad]),
                 lambda: enc.decode_batch([[1], [bad]])):
        with pytest.raises(UnknownTokenError) as e:
            call()
        assert isinstance(e.value, KeyError)
        assert str(bad) in str(e.value)


def test_non_int_ids_are_type_errors():
    enc = bytepair.get_encoding("gpt2")
    for bad in (["1"], [1.5], "abc", [None]):
        with pytest.raises(TypeError):
            enc.decode(bad)


# ---------------------------------------------------------------- decode surface


def test_decode_surface_matches_tiktoken(corpora):
    ours, ref = bytepair.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    ids = ref.encode_ordinary(corpora["multi_unicode.txt"][:5000])
    assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
    assert ours.decode(ids) == ref.decode(ids)
    assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert [ours.decode_single_token_bytes(i) for i in ids[:50]] == [ref.decode_single_token_bytes(i) for i in ids[:50]]
    assert ours.decode(ids[:7], errors="ignore") == ref.decode(ids[:7], errors="ignore")
    assert ours.decode_single_token_bytes(199999) == b"<|endoftext|>"
    assert ours.decode_batch([ids[:10], ids[10:20]]) == [ref.decode(ids[:10]), ref.decode(ids[10:20])]
    # tuples and numpy arrays are sequences of ints too
    np = pytest.importorskip("numpy")
    assert ours.decode(tuple(ids[:30])) == ours.decode(np.array(ids[:30], dtype=np.uint32))


def test_numpy_is_uint32_and_equal():
    np = pytest.importorskip("numpy")
    enc = bytepair.get_encoding("cl100k_base")
    arr = enc.encode_to_numpy("hello world " * 100)
    assert arr.dtype == np.uint32 and arr.tolist() == enc.encode("hello world " * 100)
    assert enc.encode_to_numpy("").tolist() == []



@pytest.mark.parametrize("name", ENCODINGS)
def test_batch_to_numpy_is_encode_batch_flattened(name, corpora):
    np = pytest.importorskip("numpy")
    enc = bytepair.get_encoding(name)
    docs = documents(corpora["en_austen.txt"])[:40] + ["", "\ud800 lone", "안녕하세요 " * 50] + documents(
        corpora["ko_prose.txt"]
    )[:40]
    want = enc.encode_batch(docs)
    for threads in (1, 2, None):
        ids, offsets = enc.encode_batch_to_numpy(docs, num_threads=threads)
        assert ids.dtype == np.uint32 and offsets.dtype == np.int64
        assert offsets.tolist()[0] == 0 and len(offsets) == len(docs) + 1
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == want
    ids, offsets = enc.encode_batch_to_numpy([])
    assert ids.tolist() == [] and offsets.tolist() == [0]
    # the special-token policy is encode_batch's
    eot = next(iter(enc.special_tokens_set))
    with pytest.raises(DisallowedSpecialError):
        enc.encode_batch_to_numpy(["a", eot])
    ids, offsets = enc.encode_batch_to_numpy(["a", eot], allowed_special="all")
    assert ids.tolist() == [x for d in enc.encode_batch(["a", eot], allowed_special="all") for x in d]

# ---------------------------------------------------------------- pickling, registry-level identity


@pytest.mark.parametrize("name", ENCODINGS)
def test_pickle_bundled_by_name(name):
    enc = bytepair.get_encoding(name)
    data = pickle.dumps(enc)
    assert len(data) < 200
    back = pickle.loads(data)
    assert back is enc


def test_pickle_trained_by_tokens():
    tok = bytepair.train("low lower lowest newer newest " * 20, 270, pattern="gpt2", special_tokens=["<|e|>"])
    back = pickle.loads(pickle.dumps(tok))
    assert back == tok and back.merges == tok.merges
    assert back.encode(" lowest<|e|>", allowed_special="all") == tok.encode(" lowest<|e|>", allowed_special="all")


# ---------------------------------------------------------------- hostile inputs


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
            t = time.process_time()
            enc.count(text)
            times.append(max(time.process_time() - t, 1e-3))
        assert times[1] / times[0] < 8 * 4, times  # quadratic would be 64x


def _encode_in_child(q):
    enc = bytepair.get_encoding("cl100k_base")
    q.put(enc.encode_batch(["hello world", "fork safe"] * 4, num_threads=2))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12+ warns about fork with threads
def test_batch_after_fork_does_not_hang():
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    enc = bytepair.get_encoding("cl100k_base")
    want = enc.encode_batch(["hello world", "fork safe"] * 4, num_threads=2)  # pools exist in the parent
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_encode_in_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) == want
    finally:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
