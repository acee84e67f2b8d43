"""bytepair.extend: growing a tokenizer keeps every base id, equals the
reference, continues training exactly, and survives every file format."""

from __future__ import annotations

import itertools
import json
import pickle
import random
import warnings
from pathlib import Path

import pytest

import bytepair
from bytepair import _core, native_json
from bytepair import reference as R
from bytepair.cli import main
from bytepair.errors import TrainingError, UnsupportedComponentError
from bytepair.formats import gpt2 as gpt2_format
from bytepair.formats import hf_json, tiktoken_ranks
from conftest import optional

DATA = Path(__file__).parents[1] / "data"


def text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ko() -> str:
    return text("ko_prose")


@pytest.fixture(scope="module")
def en() -> str:
    return text("en_austen")


def _table(counts: dict) -> "_core.ChunkTable":
    t = _core.ChunkTable()
    t.add_items(list(counts.items()))
    return t


# ---------------------------------------------------------------- core == reference


@pytest.mark.parametrize("base_name", ["gpt2", "o200k_base", "trained"])
@pytest.mark.parametrize("corpus", ["ko_prose", "multi_unicode", "code_python"])
def test_core_equals_reference_on_real_text(base_name, corpus):
    data = text(corpus)
    if base_name == "trained":
        base = bytepair.train(text("en_kjv"), 600, pattern="o200k")
    else:
        base = bytepair.get_encoding(base_name)
    counts = R.count_chunks([data], base.pattern, list(base.special_tokens))
    counts = dict(list(counts.items())[:1500])  # the reference is slow; 1,500 distinct chunks
    vocab = {i: t for i, t in enumerate(base.token_bytes_list) if t}
    want = R.extend_from_counts(counts, vocab, 80, base.n_vocab)
    got = _core.extend_merges(base._core, _table(counts), base.n_vocab, 80)
    assert [tuple(m) for m in got] == want
    assert len(want) == 80


def test_core_equals_reference_with_limits(ko):
    base = bytepair.get_encoding("cl100k_base")
    counts = dict(list(R.count_chunks([ko], base.pattern).items())[:800])
    vocab = {i: t for i, t in enumerate(base.token_bytes_list) if t}
    for min_f, max_len in [(3, None), (1, 7), (20, 9)]:
        want = R.extend_from_counts(counts, vocab, 60, base.n_vocab, min_frequency=min_f, max_token_length=max_len)
        got = _core.extend_merges(base._core, _table(counts), base.n_vocab, 60, min_f, max_len)
        assert [tuple(m) for m in got] == want and want


def test_joined_bytes_that_already_are_a_token_are_passed_over():
    # "qr" merges before "pq", so in "pqrsx" the base leaves p|qr|s|x, and "pqrs" (pq + rs) is a token
    toks = [bytes([b]) for b in range(256)] + [b"qr", b"pq", b"rs", b"pqrs"]
    p, q, r, s, x = b"pqrsx"
    base = bytepair.Tokenizer(toks, None, merges=[(q, r), (p, q), (r, s), (257, 258)])
    assert base.encode("pqrsx") == [p, 256, s, x]
    want = R.extend_from_counts({b"pqrsx": 5}, dict(enumerate(toks)), 2, base.n_vocab)
    # (p, qr) makes "pqr"; then (pqr, s) would make "pqrs" again: passed over for (s, x)
    assert want == [(p, 256), (s, x)]
    got = _core.extend_merges(base._core, _table({b"pqrsx": 5}), base.n_vocab, 2)
    assert [tuple(m) for m in got] == want
    ext = bytepair.extend(base, ["pqrsx"] * 5, add=2)
    assert ext.token_bytes_list[260:] == [b"pqr", b"sx"]


# ---------------------------------------------------------------- continuing training


@pytest.mark.parametrize("corpus,pattern", [("en_austen", "o200k"), ("ko_prose", "cl100k"),
                                             ("multi_unicode", "gpt2"), ("code_python", None)])
def test_extend_trained_equals_training_longer(corpus, pattern):
    data = text(corpus)
    docs = data.split("\n\n") if pattern is None else data
    k, n = 400, 500
    base = bytepair.train(docs, 256 + k, pattern=pattern)
    longer = bytepair.train(docs, 256 + k + n, pattern=pattern)
    ext = bytepair.extend(base, docs, add=n)
    assert ext.merges == longer.merges
    assert ext == longer
    assert ext.token_bytes_list == longer.token_bytes_list


def test_extend_trained_with_specials_equals_training_longer_up_to_the_special(en):
    base = bytepair.train(en, 256 + 300 + 1, special_tokens=["<|endoftext|>"])
    longer = bytepair.train(en, 256 + 699, special_tokens=[])
    ext = bytepair.extend(base, en, add=399)
    assert ext.gaps == [556] and ext.special_tokens == {"<|endoftext|>": 556}
    # same tokens, the new ones one id later (the special keeps id 556)
    assert ext.token_bytes_list[:556] == longer.token_bytes_list[:556]
    assert ext.token_bytes_list[557:] == longer.token_bytes_list[556:]


# ---------------------------------------------------------------- base ids are kept


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_truncate_to_base_size_gives_the_base(name, ko, en):
    base = bytepair.get_encoding(name)
    ext = bytepair.extend(name, ko, add=400)
    assert ext.n_vocab == base.n_vocab + 400
    assert ext.special_tokens == base.special_tokens
    assert ext.token_bytes_list[: len(base.token_bytes_list)] == base.token_bytes_list
    back, id_map = ext.truncate(base.n_vocab)
    assert back == base and back.n_vocab == base.n_vocab and back.gaps == base.gaps == []
    assert all(id_map[i] == i for i in base.special_tokens.values())
    mixed = en[:5000] + ko[:5000] + "<|endoftext|>"
    assert back.encode(mixed, allowed_special="all") == base.encode(mixed, allowed_special="all")
    # the new ids follow the base's, specials included: gaps only where the base has no token
    n_mergeable = len(base.token_bytes_list)
    assert ext.gaps == list(range(n_mergeable, base.n_vocab))
    assert set(base.special_tokens.values()) <= set(ext.gaps)
    for i in ext.gaps:
        if i not in base.special_tokens.values():
            with pytest.raises(bytepair.UnknownTokenError):
                ext.decode([i])
    assert ext.decode([base.eot_token]) == "<|endoftext|>"


@pytest.mark.parametrize("name", ["gpt2", "o200k_base"])
def test_text_without_new_merges_encodes_identically(name, ko, en):
    base = bytepair.get_encoding(name)
    ext = bytepair.extend(name, ko, add=600)
    new = {ext.decode_single_token_bytes(i) for i in range(base.n_vocab, ext.n_vocab)}
    lines = [ln for t in (ko, en, text("multi_unicode"), text("code_python")) for ln in t.splitlines() if ln]
    same = differ = 0
    for line in lines[::3]:
        ids = base.encode_ordinary(line)
        parts = base.decode_tokens_bytes(ids)
        applies = any(a + b in new for a, b in itertools.pairwise(parts))
        got = ext.encode_ordinary(line)
        if not applies:
            assert got == ids, line
            same += 1
        else:
            differ += 1
            # every extended token is a run of consecutive base tokens
            assert len(got) < len(ids) and ext.decode_bytes(got) == line.encode()
    assert same > 500 and differ > 100
    assert ext.encode(en) == base.encode(en)


def test_extend_an_extended_tokenizer(ko):
    once = bytepair.extend("o200k_base", ko, add=100)
    twice = bytepair.extend(once, ko, add=100)
    straight = bytepair.extend("o200k_base", ko, add=200)
    assert twice == straight and twice.merges == straight.merges


def test_new_special_tokens_come_after_the_new_merges(ko):
    ext = bytepair.extend("gpt2", ko, vocab_size=50257 + 50 + 2, special_tokens=["<|ko|>", "<|pad|>"])
    assert ext.special_tokens == {"<|endoftext|>": 50256, "<|ko|>": 50307, "<|pad|>": 50308}
    assert ext.n_vocab == 50309
    assert ext.encode("안녕<|ko|>", allowed_special="all")[-1] == 50307
    back, _ = ext.truncate(50257 + 2)
    assert back.special_tokens == {"<|endoftext|>": 50256, "<|ko|>": 50257, "<|pad|>": 50258}
    assert back.token_bytes_list == bytepair.get_encoding("gpt2").token_bytes_list


# ---------------------------------------------------------------- files


@pytest.fixture(scope="module")
def grown_o200k(ko):
    return bytepair.extend("o200k_base", ko, add=300)


def test_native_file_round_trip_keeps_gaps(grown_o200k, tmp_path):
    p = tmp_path / "o200k-ko.json"
    grown_o200k.save(p)
    d = json.loads(p.read_text(encoding="utf-8"))
    assert d["gaps"] == grown_o200k.gaps and d["vocab"][199998] == ""
    back = bytepair.load(p)
    assert back == grown_o200k and back.merges == grown_o200k.merges and back.gaps == grown_o200k.gaps
    # an empty entry not listed as a gap, or a gap that holds a token, is an error
    bad = dict(d, gaps=d["gaps"][1:])
    p.write_text(json.dumps(bad))
    with pytest.raises(bytepair.FormatError, match="empty"):
        bytepair.load(p)
    bad = dict(d, gaps=d["gaps"] + [300])
    p.write_text(json.dumps(bad))
    with pytest.raises(bytepair.FormatError, match="gap 300"):
        bytepair.load(p)


def test_tiktoken_file_round_trip_keeps_gaps(grown_o200k, tmp_path, en, ko):
    p = tmp_path / "o200k-ko.tiktoken"
    tiktoken_ranks.save(grown_o200k, p)
    data = p.read_bytes()
    assert b" 199998\n" not in data and b" 199997\n" in data and b" 200019\n" in data
    back = bytepair.load(p, pattern="o200k", special_tokens=grown_o200k.special_tokens)
    assert back == grown_o200k
    tiktoken = optional("tiktoken")
    ranks = {t: i for i, t in enumerate(tiktoken_ranks.parse_ranks(data)) if t}
    enc = tiktoken.Encoding("x", pat_str=grown_o200k.pattern, mergeable_ranks=ranks,
                            special_tokens=grown_o200k.special_tokens)
    sample = ko[:20000] + en[:5000]
    assert enc.encode(sample) == grown_o200k.encode(sample)


def test_tokenizer_json_keeps_gaps_and_gpt2_files_refuse_them(grown_o200k, tmp_path, ko, en):
    p = tmp_path / "tokenizer.json"
    hf_json.save(grown_o200k, p)
    vocab = json.loads(p.read_text(encoding="utf-8"))["model"]["vocab"]
    assert 199998 not in vocab.values() and vocab["<|endoftext|>"] == 199999 and len(vocab) == 200019 - 19 + 300
    back = bytepair.load(p)
    assert back == grown_o200k and back.gaps == grown_o200k.gaps
    tokenizers = optional("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(p))
    sample = ko[:20000] + en[:5000] + "<|endoftext|>"
    assert hf.encode(sample, add_special_tokens=False).ids == grown_o200k.encode(sample, allowed_special="all")
    with pytest.raises(UnsupportedComponentError, match="cannot represent ids without a mergeable token"):
        gpt2_format.save(grown_o200k, tmp_path / "gpt2")
    assert not (tmp_path / "gpt2" / "vocab.json").exists()


def test_vocab_merges_formats_take_a_grown_tokenizer_without_gaps(tmp_path, ko):
    base = bytepair.train(ko, 500, pattern="gpt2")
    ext = bytepair.extend(base, ko, add=200)
    assert ext.gaps == []
    hf_json.save(ext, tmp_path / "tokenizer.json")
    assert bytepair.load(tmp_path / "tokenizer.json") == ext
    gpt2_format.save(ext, tmp_path / "g")
    assert bytepair.load(tmp_path / "g", pattern=ext.pattern) == ext


def test_pickle_and_truncate_with_gaps(grown_o200k):
    back = pickle.loads(pickle.dumps(grown_o200k))
    assert back == grown_o200k and back.gaps == grown_o200k.gaps
    small, _ = grown_o200k.truncate(200019 + 100)
    assert small.n_vocab == 200119 and small.gaps == grown_o200k.gaps
    assert small.token_bytes_list == grown_o200k.token_bytes_list[:200119]
    # cutting inside the base: specials above the cut are renumbered after it
    small, _id_map = grown_o200k.truncate(100000)
    assert small.special_tokens == {"<|endoftext|>": 99998, "<|endofprompt|>": 99999}
    assert small.gaps == []


# ---------------------------------------------------------------- bad input


def test_bad_input_is_refused_with_the_reason(ko, tmp_path):
    char = bytepair.CharTokenizer.train("abcabc", 3)
    with pytest.raises(TrainingError, match="character-level"):
        bytepair.extend(char, ko, add=10)
    char.save(tmp_path / "char.json")
    with pytest.raises(TrainingError, match="character-level"):
        bytepair.extend(tmp_path / "char.json", ko, add=10)
    with pytest.raises(TrainingError, match="leaves no room.*at least 50258"):
        bytepair.extend("gpt2", ko, vocab_size=50257)
    with pytest.raises(TrainingError, match="leaves no room"):
        bytepair.extend("gpt2", ko, vocab_size=100)
    with pytest.raises(TrainingError, match="add must be an int >= 1"):
        bytepair.extend("gpt2", ko, add=0)
    with pytest.raises(TrainingError, match="empty"):
        bytepair.extend("gpt2", "", add=10)
    with pytest.raises(TrainingError, match="empty"):
        bytepair.extend("gpt2", "<|endoftext|>", add=10)
    with pytest.raises(TrainingError, match="already a special token"):
        bytepair.extend("gpt2", ko, add=10, special_tokens=["<|endoftext|>"])
    with pytest.raises(TrainingError, match="base's pre-tokenization pattern"):
        bytepair.extend("gpt2", ko, add=10, pattern="o200k")
    with pytest.raises(TrainingError, match="neither a bundled encoding"):
        bytepair.extend("gpt3", ko, add=10)
    with pytest.raises(TypeError, match="vocab_size or add"):
        bytepair.extend("gpt2", ko, 50300, add=10)
    for err in (TrainingError,):
        assert issubclass(err, ValueError)


def test_a_small_corpus_stops_early_with_a_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ext = bytepair.extend("gpt2", "안녕 안녕", add=50)
    assert any("supports only" in str(x.message) for x in w)
    assert ext.n_vocab < 50257 + 50


def test_the_merge_loop_keeps_the_memory_limit(tmp_path, capsys):
    from bytepair.counts import count_chunks

    # no pre-tokenization: the whole text is one chunk of about a million ids (32 bytes each in the
    # loop), which counting holds easily and the loop does not within 16 MB
    rng = random.Random(5)
    text = "".join(rng.choice("abcdefgh ") for _ in range(1_200_000))
    base = bytepair.train(text[:20_000], 300, pattern=None)
    want = bytepair.extend(base, text, add=20)
    with pytest.raises(TrainingError, match=r"the merge loop over [\d,]+ tokens in 1 distinct chunks") as e:
        bytepair.extend(base, text, add=20, memory_limit="16MB")
    assert e.value.argument == "memory_limit" and e.value.limit == 16 * 10**6 < e.value.need
    assert bytepair.extend(base, text, add=20, memory_limit=e.value.need) == want
    assert bytepair.extend(base, text, add=20, num_threads=10**30) == want  # clamped
    # the caller's counts are theirs: the loop frees only a table it counted
    counts = count_chunks(text, pattern=None)
    assert bytepair.extend(base, counts=counts, add=20) == want
    assert len(counts) == 1 and bytepair.extend(base, counts=counts, add=20) == want
    base.save(tmp_path / "base.json")
    (tmp_path / "text.txt").write_text(text)
    args = ["extend", "-t", str(tmp_path / "base.json"), str(tmp_path / "text.txt"), "--add", "20", "-q"]
    assert main([*args, "--memory", "16MB", "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "the merge loop over" in err and "more than --memory (16 MB)" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


# ---------------------------------------------------------------- CLI


def test_cli_extend_end_to_end(tmp_path, capsys):
    out = tmp_path / "gpt2-ko.json"
    assert main(["extend", "-e", "gpt2", str(DATA / "ko_prose.txt"), "--add", "120", "-q", "-o", str(out)]) == 0
    msg = capsys.readouterr().out
    assert "50,257 base ids + 120 merges" in msg and "ids without a mergeable token: 50256" in msg
    assert "new ids 50257-50376" in msg and f"wrote {out}" in msg
    tok = bytepair.load(out)
    assert tok == bytepair.extend("gpt2", [text("ko_prose")], add=120)
    assert main(["extend", "-e", "gpt2", "--text", "안녕 " * 30, "--add", "2", "--json", "-o", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["new_ids"] == [50257, 50258] and info["gaps"] == [50256]
    assert main(["extend", "-e", "gpt2", "--text", "x", "-o", str(out)]) == 2
    assert "--add N" in capsys.readouterr().err
    assert bytepair.load(out).n_vocab == 50259  # the failed run left the last file alone


def test_native_format_docs_mention_gaps():
    assert "gaps" in native_json.__doc__


def test_diff_counts_no_gap_as_a_token(grown_o200k):
    d = bytepair.inspect.diff("o200k_base", grown_o200k)
    assert d.n_b == d.n_a + 300 and len(d.only_b) == 300 and not d.only_a
    assert all(t for t, _ in d.only_b)


def test_extend_from_counts_and_from_a_file(tmp_path, ko):
    from bytepair.counts import count_chunks

    base = bytepair.get_encoding("cl100k_base")
    counts = count_chunks(ko, pattern=base.pattern, special_tokens=list(base.special_tokens))
    assert bytepair.extend(base, counts=counts, add=80) == bytepair.extend(base, ko, add=80)
    with pytest.raises(TrainingError, match="another pattern"):
        bytepair.extend(base, counts=count_chunks(ko, pattern="gpt2"), add=80)
    trained = bytepair.train(ko, 400, pattern="gpt2")
    trained.save(tmp_path / "ko.json")
    assert bytepair.extend(tmp_path / "ko.json", ko, add=50) == bytepair.extend(trained, ko, add=50)
    assert bytepair.extend(str(tmp_path / "ko.json"), ko, add=50) == bytepair.extend(trained, ko, add=50)
