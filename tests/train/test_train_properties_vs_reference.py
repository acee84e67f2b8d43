"""Property tests of training (hypothesis, derandomized): ``bytepair.train``
(the Rust trainer) equals ``bytepair.reference.train`` on small corpora built to
have ties, with and without pre-tokenization, special tokens and the training
options, and on arbitrary bytes decoded as a user would."""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from conftest import HYPOTHESIS_SCALE as SCALE
from conftest import no_panic

SETTINGS = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


PATTERNS = [None, "gpt2", "cl100k", "o200k"]
# few distinct characters so that pair counts tie often
tie_text = st.text(alphabet=st.sampled_from("ab c\n가😀1'"), max_size=40)
corpus_st = st.lists(st.one_of(tie_text, st.text(max_size=20)), min_size=1, max_size=6)


def _train_both(docs, vocab_size, pattern, specials, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ours = no_panic(bytepair.train, docs, vocab_size, pattern=pattern, special_tokens=specials, **kw)
        except bytepair.TrainingError:
            ours = None
    merges, vocab, special_ids = reference.train(docs, vocab_size, pattern, specials, **kw)
    return ours, (merges, vocab, special_ids)


@settings(max_examples=120 * SCALE, **SETTINGS)
@given(
    corpus_st,
    st.integers(256, 300),
    st.sampled_from(PATTERNS),
    st.sampled_from([[], ["<|endoftext|>"], ["<|endoftext|>", "<pad>"]]),
    st.sampled_from([{}, {"min_frequency": 2}, {"max_token_length": 3}]),
)
def test_train_equals_reference(docs, vocab_size, pattern, specials, kw):
    vocab_size = max(vocab_size, 256 + len(specials))
    ours, (merges, vocab, special_ids) = _train_both(docs, vocab_size, pattern, specials, **kw)
    if ours is None:
        # the only refusal allowed for valid arguments: nothing to learn from
        assert not reference.count_chunks(docs, pattern, specials)
        return
    assert ours.merges == [tuple(m) for m in merges]
    assert ours.token_bytes_list == [vocab[i] for i in range(len(vocab))]
    assert ours.special_tokens == special_ids
    for d in docs:
        assert ours.encode(d, allowed_special="all") == reference.encode(
            d, {vocab[i]: i for i in vocab}, ours.pattern, special_ids, allowed_special=specials
        )


@settings(max_examples=40 * SCALE, **SETTINGS)
@given(st.lists(st.binary(max_size=30), min_size=1, max_size=4), st.integers(256, 290))
def test_train_equals_reference_on_decoded_bytes(blobs, vocab_size):
    # arbitrary bytes, decoded the way a user would (invalid UTF-8 -> U+FFFD)
    docs = [b.decode("utf-8", "replace") for b in blobs]
    ours, (merges, _, _) = _train_both(docs, vocab_size, None, [])
    if ours is not None:
        assert ours.merges == [tuple(m) for m in merges]
