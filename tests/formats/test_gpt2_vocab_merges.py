"""GPT-2 vocab.json + merges.txt: layout, round trips, the tokenizers library
reading the pair, and errors naming the file and line."""

from __future__ import annotations

import json

import pytest
from test_hf_tokenizer_json import FIXTURES, trained, with_specials

import bytepair
from bytepair.errors import FormatError
from bytepair.formats import gpt2
from bytepair.reference import bytes_to_unicode
from conftest import corpus, optional, tiktoken_encoding


def test_gpt2_minimal_layout(tmp_path):
    gpt2.save(bytepair.get_encoding("gpt2"), tmp_path, merges="minimal")
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    # GPT-2 has 50,000 merges (docs/worked-examples.md B) after the '#version: 0.2' header
    assert lines[0] == "#version: 0.2" and lines[-1] == "" and len(lines) == 50_002
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert len(vocab) == 50_257 and vocab["<|endoftext|>"] == 50256
    b2u = bytes_to_unicode()
    assert vocab[b2u[0x20] + "the"] == 262  # ' the' in GPT-2 (docs/worked-examples.md B: `Ġ` is U+0120)
    assert vocab["Hello"] == 15496
    # every merge makes the next token: merge k makes id 256 + k in GPT-2
    for k, line in enumerate(lines[1:1000]):
        left, right = line.split(" ")
        assert vocab[left + right] == 256 + k


@pytest.mark.parametrize("merges", ["all", "minimal"])
def test_round_trip_and_tokenizers_library(tmp_path, merges):
    tokenizers = optional("tokenizers")
    tok = trained()
    gpt2.save(tok, tmp_path, merges=merges)
    back = bytepair.load(tmp_path, pattern=tok.pattern)
    assert back == tok and back.special_tokens == tok.special_tokens
    assert bytepair.load(tmp_path / "merges.txt", pattern=tok.pattern) == tok
    assert bytepair.load(tmp_path / "vocab.json", pattern=tok.pattern) == tok
    # the tokenizers library's own reader of the pair
    from tokenizers import Regex, models, pre_tokenizers

    model = models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(tok.pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    hf.add_special_tokens(sorted(tok.special_tokens, key=tok.special_tokens.get))
    for name in FIXTURES:
        text = with_specials(corpus(name))
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allowed_special="all"), name


def test_bundled_gpt2_via_gpt2_files_matches_tiktoken(tmp_path):
    tokenizers = optional("tokenizers")
    from tokenizers import models, pre_tokenizers

    gpt2.save(bytepair.get_encoding("gpt2"), tmp_path, merges="minimal")
    hf = tokenizers.Tokenizer(models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt")))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tt = tiktoken_encoding("gpt2")
    for name in FIXTURES:
        text = corpus(name)
        assert hf.encode(text, add_special_tokens=False).ids == tt.encode_ordinary(text), name
    assert bytepair.load(tmp_path) == bytepair.get_encoding("gpt2")  # pattern defaults to GPT-2's


def _write(tmp_path, vocab_edit=None, merges_edit=None):
    gpt2.save(trained(), tmp_path, merges="minimal")
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    if vocab_edit:
        vocab_edit(vocab)
    if merges_edit:
        merges_edit(lines)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    "vocab_edit, merges_edit, where, what",
    [
        (None, lambda ls: ls.__setitem__(5, "Ġ zzz"), "merges.txt line 6", "'zzz' is not a token"),
        (None, lambda ls: ls.__setitem__(5, "a b c"), "merges.txt:6", "expected 'left right'"),
        (None, lambda ls: ls.__setitem__(5, "q j"), "merges.txt line 6", "'qj', which is not in the vocab"),
        (None, lambda ls: ls.insert(3, ls.pop(40)), "merges.txt line 5", "id order"),
        (None, lambda ls: ls.pop(10), "vocab.json key", "made by no merge"),
        (lambda v: v.pop("e"), None, "vocab.json key", "missing"),
        (lambda v: v.update({"e": 300}), None, "vocab.json key", "have the same id 300"),
    ],
)
def test_bad_pairs_name_file_and_line(tmp_path, vocab_edit, merges_edit, where, what):
    _write(tmp_path, vocab_edit, merges_edit)
    with pytest.raises(FormatError) as e:
        bytepair.load(tmp_path, pattern="o200k")
    msg = str(e.value)
    assert str(tmp_path) in msg and where in msg and what in msg, msg


def test_vocab_that_disagrees_with_merge_order(tmp_path):
    """Swap the ids of two merged tokens: merges then come out of id order."""
    def swap(v):
        a = next(s for s, i in v.items() if i == 300)
        b = next(s for s, i in v.items() if i == 301)
        v[a], v[b] = 301, 300

    _write(tmp_path, swap)
    with pytest.raises(FormatError, match="id order|re-encodes|made by no merge"):
        bytepair.load(tmp_path, pattern="o200k")


def test_missing_partner_file(tmp_path):
    gpt2.save(trained(), tmp_path)
    (tmp_path / "merges.txt").unlink()
    with pytest.raises(FormatError, match="needs vocab.json and merges.txt side by side"):
        gpt2.load(tmp_path / "vocab.json")
