"""A shrunk tokenizer in every format bytepair writes loads back with the same
ids, and ``id_map`` slices an embedding matrix so that its rows follow the tokens."""

from __future__ import annotations

import numpy as np
import pytest

import bytepair
from bytepair.shrinking import shrink
from conftest import corpus

TEXTS = [
    corpus("ko_prose.txt")[:20_000],
    corpus("code_python.txt")[:20_000],
    corpus("multi_unicode.txt")[:5_000],
    "  leading spaces, 12345, tabs\t\tand 😀 emoji<|endoftext|>",
]


@pytest.fixture(scope="module")
def shrunk():
    base = bytepair.get_encoding("o200k_base")
    small, id_map = shrink(base, [corpus("ko_prose.txt"), corpus("code_python.txt")], keep=5000)
    return base, small, id_map


def _ids(tok, texts):
    return [tok.encode(t, allowed_special="all") for t in texts]


@pytest.mark.parametrize("to", ["bytepair", "tiktoken", "hf", "gpt2", "transformers"])
def test_every_format_loads_back_with_the_same_ids(shrunk, tmp_path, to):
    _, small, _ = shrunk
    out = tmp_path / f"small.{to}"
    report = bytepair.convert(small, out, to=to, check_text="\n".join(TEXTS))
    assert report.identical and report.n_vocab == small.n_vocab
    if to == "tiktoken":  # a rank file holds neither pattern nor special tokens
        back = bytepair.load(out, pattern=small.pattern, special_tokens=small.special_tokens)
    elif to == "gpt2":  # vocab.json + merges.txt hold no pattern (GPT-2's is the default)
        back = bytepair.load(out, pattern=small.pattern)
    else:
        back = bytepair.load(out / "tokenizer.json" if to == "transformers" else out)
    assert back.n_vocab == small.n_vocab
    assert back.special_tokens == small.special_tokens
    assert _ids(back, TEXTS) == _ids(small, TEXTS)


def test_bytepair_json_keeps_the_merges(shrunk, tmp_path):
    _, small, _ = shrunk
    small.save(tmp_path / "s.json")
    back = bytepair.load(tmp_path / "s.json")
    assert back.merges == small.merges and back == small


def test_transformers_folder_loads_in_transformers(shrunk, tmp_path):
    transformers = pytest.importorskip("transformers")
    _, small, _ = shrunk
    bytepair.convert(small, tmp_path / "tf", to="transformers", eos_token="<|endoftext|>")
    hf = transformers.PreTrainedTokenizerFast.from_pretrained(str(tmp_path / "tf"))
    for t in TEXTS[:3]:
        assert hf.encode(t, add_special_tokens=False) == small.encode(t)
    assert len(hf) == small.n_vocab


def test_id_map_slices_an_embedding_matrix(shrunk):
    base, small, id_map = shrunk
    rng = np.random.default_rng(0)
    d = 8
    emb = rng.standard_normal((base.n_vocab, d)).astype(np.float32)
    small_emb = emb[id_map]
    assert small_emb.shape == (small.n_vocab, d)
    for text in TEXTS:
        new = small.encode(text, allowed_special="all")
        old = base.encode(text, allowed_special="all")
        # each small token's row is the base row of the same token bytes
        for i in new:
            want = base.encode_single_token(small.decode_single_token_bytes(i)) if i < small.n_vocab - 2 else \
                base.special_tokens[next(s for s, j in small.special_tokens.items() if j == i)]
            assert np.array_equal(small_emb[i], emb[want])
        # where the text is made of kept tokens, the rows are the base's rows in order
        if set(old) <= set(id_map.tolist()):
            assert np.array_equal(small_emb[new], emb[old])
    # the tied output layer: logits over the small vocabulary are a column slice
    h = rng.standard_normal(d).astype(np.float32)
    assert np.allclose(small_emb @ h, (emb @ h)[id_map], rtol=1e-4, atol=1e-5)
