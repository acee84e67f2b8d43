"""The reference implementation: byte-level BPE in plain Python, written to be read.

This module is the specification of bytepair. The Rust core must produce exactly
the same merges, ids and bytes; differential tests hold the two in lockstep. It is
deliberately slow and simple: no caching, no incremental updates, no printing.

It reads in the order of the lessons it grew from: **train**, then **encode**,
then **decode**, then the character-level "XSLM" tokenizer (ids are characters,
not bytes; :class:`bytepair.CharTokenizer` wraps it); the plumbing those steps
lean on (pre-tokenization, the Unicode 16.0 pinning, GPT-2's byte table) comes
last.

The pipeline::

    text --split at special tokens--> segments --pre-tokenize--> chunks (pieces)
         --UTF-8--> byte lists --merges, lowest rank first--> ids

Training repeatedly merges the most frequent adjacent pair of tokens, counted
inside chunks (never across a chunk boundary) and weighted by how often each
distinct chunk occurs. The k-th merge makes token ``256 + k``; special tokens come
after the last merge.

Tie-break rule (training): when several pairs share the highest count, the pair
met first wins, reading the distinct chunks in the order they first appear in the
training text and the pairs left to right inside each chunk. Without
pre-tokenization this is simply the pair that occurs first in the text.

English, end to end: three merges make `` low``, and `` lowest`` is that token
followed by single bytes.

>>> merges, vocab, _ = train("low lower lowest", 259, pattern="gpt2")
>>> [vocab[256 + k] for k in range(len(merges))]
[b'lo', b'low', b' low']
>>> ranks = {b: i for i, b in vocab.items()}
>>> ids = encode(" lowest", ranks, "gpt2")
>>> ids, decode(ids, vocab)
([258, 101, 115, 116], ' lowest')

Korean, end to end: a Hangul syllable is three UTF-8 bytes, so the first merges
join *pieces* of a character (``\\xed\\x86`` is two thirds of 토); five merges
make 토큰 and the sixth `` 토큰``. 화 was never merged, so it stays three byte
tokens, and decoding the ids still gives the text back exactly.

>>> merges, vocab, _ = train("토큰 토큰화 토큰들", 262, pattern="gpt2")
>>> [vocab[256 + k].decode("utf-8", "backslashreplace") for k in range(len(merges))]
['\\\\xed\\\\x86', '토', '토\\\\xed', '토\\\\xed\\\\x81', '토큰', ' 토큰']
>>> ranks = {b: i for i, b in vocab.items()}
>>> ids = encode(" 토큰화", ranks, "gpt2")
>>> ids, decode(ids, vocab)
([261, 237, 153, 148], ' 토큰화')

The special-token rule: special tokens get the ids after the last merge, and
their text is cut out of the training text, so no merge can produce it. When
encoding, special-token text is ordinary text (pre-tokenized and merged like
any other) unless the caller allows that token, by name or with ``"all"``; only
then does it become the special id. (:meth:`bytepair.Tokenizer.encode` adds
tiktoken's guard on top: by default it raises ``DisallowedSpecialError`` when
the text contains special-token text, so none slips in unnoticed.)

>>> specials = {"<|endoftext|>": 262}
>>> encode("<|endoftext|>", ranks, "gpt2", specials) == list(b"<|endoftext|>")  # no merge applies
True
>>> encode("<|endoftext|>", ranks, "gpt2", specials, allowed_special="all")
[262]
>>> encode(" 토큰<|endoftext|>", ranks, "gpt2", specials, allowed_special=["<|endoftext|>"])
[261, 262]
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import regex

from . import patterns as _patterns
from . import unicode16
from .byte_table import bytes_to_unicode  # noqa: F401 - part of the spec, re-exported
from .checks import DEFAULT_MAX_TOKEN_LENGTH

Pair = Tuple[int, int]


# ---------------------------------------------------------------- Training


def train(
    data: Union[str, Iterable[str]],
    vocab_size: int,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    *,
    min_frequency: int = 1,
    max_token_length: Optional[int] = DEFAULT_MAX_TOKEN_LENGTH,
) -> Tuple[List[Pair], Dict[int, bytes], Dict[str, int]]:
    """Trains byte-level BPE: ``vocab_size = 256 + merges + len(special_tokens)``.

    Args:
        data: one text, or an iterable of texts (documents; no merge crosses
            from one document into the next).
        vocab_size: the target size, counting the 256 bytes and the special tokens.
        pattern: ``"gpt2"``, ``"cl100k"``, ``"o200k"``, a regex, or None (each
            document is one chunk).
        special_tokens: their text is cut out before counting, so no merge can
            produce it; they get the ids after the last merge, in the order given.
        min_frequency: stop when the best pair occurs fewer times than this.
        max_token_length: never make a token longer than this many bytes
            (default 256; None: no limit).

    Returns ``(merges, vocab, special_ids)``. Fewer merges are learned when the
    corpus runs out of pairs (or of pairs seen ``min_frequency`` times).

    >>> merges, vocab, sp = train("banana bandana", 259, pattern=None)
    >>> [vocab[256 + k] for k in range(len(merges))]
    [b'an', b'ban', b'ana']
    """
    texts = [data] if isinstance(data, str) else list(data)
    specials = list(special_tokens)
    if not all(isinstance(s, str) and s for s in specials) or len(set(specials)) != len(specials):
        raise ValueError(f"special tokens must be distinct non-empty strings, got {special_tokens!r}")
    num_merges = vocab_size - 256 - len(special_tokens)
    if num_merges < 0:
        raise ValueError(f"vocab_size {vocab_size} is below 256 + {len(special_tokens)} special tokens")
    counts = count_chunks(texts, pattern, special_tokens)
    merges = train_from_counts(counts, num_merges, min_frequency=min_frequency, max_token_length=max_token_length)
    vocab = build_vocab(merges)
    special_ids = {s: len(vocab) + i for i, s in enumerate(special_tokens)}
    return merges, vocab, special_ids


def count_chunks(
    texts: Iterable[str], pattern: Optional[str], special_tokens: Sequence[str] = ()
) -> Dict[bytes, int]:
    """Counts the distinct chunks of a corpus. The dict keeps first-seen order,
    which the tie-break rule uses.

    >>> count_chunks(["a b a"], "gpt2")
    {b'a': 1, b' b': 1, b' a': 1}
    """
    compiled = compile_pattern(pattern)
    counts: Dict[bytes, int] = {}
    for text in texts:
        for segment in split_special(text, special_tokens):
            for chunk in pretokenize(segment, compiled):
                b = chunk.encode("utf-8")
                counts[b] = counts.get(b, 0) + 1
    return counts


def count_pairs(chunks: Dict[Tuple[int, ...], int]) -> Dict[Pair, int]:
    """Counts adjacent pairs, weighted by chunk frequency. The dict's order is the
    order in which pairs are first met (chunks in order, left to right).

    >>> count_pairs({(1, 2, 3): 2, (2, 3): 1})
    {(1, 2): 2, (2, 3): 3}
    """
    stats: Dict[Pair, int] = {}
    for ids, freq in chunks.items():
        for pair in itertools.pairwise(ids):
            stats[pair] = stats.get(pair, 0) + freq
    return stats


def merge_pair(ids: Sequence[int], pair: Pair, new_id: int) -> Tuple[int, ...]:
    """Replaces every occurrence of ``pair`` in ``ids``, left to right, without overlap.

    >>> merge_pair((97, 97, 97), (97, 97), 256)
    (256, 97)
    """
    out: List[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return tuple(out)


def best_pair(stats: Dict[Pair, int], vocab: Dict[int, bytes], max_token_length: Optional[int] = None) -> Optional[Pair]:
    """The most frequent pair; on ties the one met first (``stats`` is in that order).

    With ``max_token_length``, pairs whose joined token would be longer than that
    many bytes are passed over. Returns None when no pair qualifies.

    >>> best_pair({(1, 2): 3, (2, 3): 5, (3, 4): 5}, {})
    (2, 3)
    """
    best: Optional[Pair] = None
    for pair, n in stats.items():
        if max_token_length is not None and len(vocab[pair[0]]) + len(vocab[pair[1]]) > max_token_length:
            continue
        if best is None or n > stats[best]:
            best = pair
    return best


def train_from_counts(
    chunk_counts: Dict[bytes, int],
    num_merges: int,
    *,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
) -> List[Pair]:
    """Learns up to ``num_merges`` merges from chunk counts (in first-seen order).

    Each round counts the pairs of the current chunks (:func:`count_pairs`),
    merges the best one (:func:`best_pair`) everywhere, and repeats. Stops early
    when no pair is left or the best pair occurs fewer than ``min_frequency``
    times. The k-th merge creates id ``256 + k``.

    >>> train_from_counts({b"banana bandana": 1}, 3)
    [(97, 110), (98, 256), (256, 97)]
    """
    chunks: Dict[Tuple[int, ...], int] = {}
    for b, n in chunk_counts.items():
        key = tuple(b)
        chunks[key] = chunks.get(key, 0) + n
    vocab = {i: bytes([i]) for i in range(256)}
    merges: List[Pair] = []
    for k in range(num_merges):
        stats = count_pairs(chunks)
        pair = best_pair(stats, vocab, max_token_length)
        if pair is None or stats[pair] < min_frequency:
            break
        new_id = 256 + k
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        merged: Dict[Tuple[int, ...], int] = {}
        for ids, n in chunks.items():
            key = merge_pair(ids, pair, new_id)
            merged[key] = merged.get(key, 0) + n
        chunks = merged
    return merges


def build_vocab(merges: Sequence[Pair]) -> Dict[int, bytes]:
    """Token bytes by id: the 256 bytes, then one token per merge.

    >>> build_vocab([(97, 98)])[256]
    b'ab'
    """
    vocab = {i: bytes([i]) for i in range(256)}
    for k, (a, b) in enumerate(merges):
        vocab[256 + k] = vocab[a] + vocab[b]
    return vocab


# ---------------------------------------------------------------- Encoding


def encode_piece(piece: bytes, ranks: Dict[bytes, int]) -> List[int]:
    """Encodes one chunk: a chunk that is a token maps to its rank; otherwise
    start from single bytes and repeatedly merge the adjacent pair whose joined
    bytes have the lowest rank (leftmost on ties) until no pair is a token.

    >>> encode_piece(b"abc", {bytes([i]): i for i in range(256)} | {b"bc": 256, b"abc": 257})
    [257]
    """
    if piece in ranks:
        return [ranks[piece]]
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best_i, best_rank = -1, None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best_i, best_rank = i, r
        if best_rank is None:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return [ranks[p] for p in parts]


def encode(
    text: str,
    ranks: Dict[bytes, int],
    pattern: Optional[str],
    special_tokens: Optional[Dict[str, int]] = None,
    allowed_special: Union[str, Iterable[str]] = (),
) -> List[int]:
    """Encodes text: allowed special tokens (or ``"all"``) become their ids; the
    rest of the text, including special-token text that is not allowed, is
    pre-tokenized and each chunk encoded by :func:`encode_piece`.

    >>> r = {bytes([i]): i for i in range(256)} | {b"lo": 256}
    >>> encode("lol", r, None)
    [256, 108]
    """
    special_tokens = special_tokens or {}
    if allowed_special == "all":
        allowed_special = list(special_tokens)
    allowed = [s for s in special_tokens if s in set(allowed_special)]
    compiled = compile_pattern(pattern)
    out: List[int] = []
    if allowed:
        alternation = "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True))
        parts = regex.split(f"({alternation})", text)
    else:
        parts = [text]
    for i, part in enumerate(parts):
        if i % 2 == 1:
            out.append(special_tokens[part])
            continue
        for chunk in pretokenize(part, compiled):
            out.extend(encode_piece(chunk.encode("utf-8"), ranks))
    return out


# ---------------------------------------------------------------- Decoding


def decode_bytes(ids: Iterable[int], vocab: Dict[int, bytes]) -> bytes:
    """Concatenates the bytes of each id.

    >>> decode_bytes([104, 105], {104: b"h", 105: b"i"})
    b'hi'
    """
    return b"".join(vocab[i] for i in ids)


def decode(ids: Iterable[int], vocab: Dict[int, bytes]) -> str:
    """Decodes ids to text; bytes that are not valid UTF-8 become U+FFFD.

    >>> decode([0xED], {0xED: bytes([0xED])})
    '\\ufffd'
    """
    return decode_bytes(ids, vocab).decode("utf-8", errors="replace")


# ---------------------------------------------------------------- Character-level BPE (XSLM)
#
# A teaching tokenizer that works on characters instead of bytes and has no
# pre-tokenization: spaces merge like any other character. Id 0 stands for every
# character that was not in the training text; ids 1.. are the training text's
# distinct characters, sorted; then one id per merge. A newline is never merged
# (a model trained on its ids stops generating at a newline, so it must stay a
# token of its own).

UNKNOWN_CHAR = "\ufffd"

CharMerge = Tuple[Pair, int]


def char_alphabet(text: str) -> List[str]:
    """The starting vocabulary: U+FFFD at id 0, then the text's distinct characters, sorted.

    >>> char_alphabet("cab")
    ['\\ufffd', 'a', 'b', 'c']
    """
    return [UNKNOWN_CHAR] + sorted(set(text) - {UNKNOWN_CHAR})


def char_count_pairs(ids: Sequence[int], vocab: Sequence[str]) -> Dict[Pair, int]:
    """Counts adjacent pairs in first-occurrence order, leaving out every pair whose
    joined string contains a newline. Overlaps count: ``aaa`` holds ``(a, a)`` twice.

    >>> char_count_pairs([1, 2, 1, 2, 3, 1], ["\\ufffd", "a", "b", "\\n"])
    {(1, 2): 2, (2, 1): 1}
    """
    stats: Dict[Pair, int] = {}
    for pair in itertools.pairwise(ids):
        if "\n" not in vocab[pair[0]] + vocab[pair[1]]:
            stats[pair] = stats.get(pair, 0) + 1
    return stats


def char_train(text: str, num_merges: int) -> Tuple[List[str], List[CharMerge]]:
    """Learns up to ``num_merges`` merges; returns ``(vocab, merges)`` where each
    merge is ``((left_id, right_id), new_id)``.

    Each round merges the most frequent pair (ties: the one that occurs first in
    the current text), left to right. Stops early when no pair is left or the best
    pair occurs fewer than 2 times.

    >>> vocab, merges = char_train("low lower lowest", 4)
    >>> [vocab[new_id] for _, new_id in merges]
    ['lo', 'low', ' low', ' lowe']
    """
    vocab = char_alphabet(text)
    index = {c: i for i, c in enumerate(vocab)}
    ids: Sequence[int] = [index[c] for c in text]
    merges: List[CharMerge] = []
    for _ in range(num_merges):
        stats = char_count_pairs(ids, vocab)
        pair = best_pair(stats, {})
        if pair is None or stats[pair] < 2:
            break
        new_id = len(vocab)
        vocab.append(vocab[pair[0]] + vocab[pair[1]])
        merges.append((pair, new_id))
        ids = merge_pair(ids, pair, new_id)
    return vocab, merges


def char_encode(text: str, vocab: Sequence[str], merges: Sequence[CharMerge]) -> List[int]:
    """Each character to its id (unknown: 0), then every merge in learned order.

    >>> char_encode("aaab", ["\\ufffd", "a", "aa"], [((1, 1), 2)])
    [2, 1, 0]
    """
    index = {c: i for i, c in enumerate(vocab) if len(c) == 1}
    ids: Sequence[int] = [index.get(c, 0) for c in text]
    for pair, new_id in merges:
        ids = merge_pair(ids, pair, new_id)
    return list(ids)


def char_decode(ids: Iterable[int], vocab: Sequence[str]) -> str:
    """Joins the strings of the ids.

    >>> char_decode([2, 1, 0], ["\\ufffd", "a", "aa"])
    'aaa\\ufffd'
    """
    return "".join(vocab[i] for i in ids)


# ---------------------------------------------------------------- Plumbing: pre-tokenization


def split_special(text: str, special_tokens: Iterable[str]) -> List[str]:
    """Cuts text at every occurrence of a special token, dropping the tokens.

    >>> split_special("a<|e|>b", ["<|e|>"])
    ['a', 'b']
    """
    specials = sorted(set(special_tokens), key=len, reverse=True)
    if not specials:
        return [text]
    return regex.split("|".join(regex.escape(s) for s in specials), text)


def pretokenize(text: str, pattern: Optional[str]) -> List[str]:
    """Splits text into the chunks inside which merges happen.

    ``pattern`` is a pattern name, a regex string, ``None`` (no splitting) or a
    pattern already compiled by :func:`compile_pattern`.

    >>> pretokenize("I'm lowest 토큰", "gpt2")
    ['I', "'m", ' lowest', ' 토큰']
    >>> pretokenize("ab cd", None)
    ['ab cd']
    >>> pretokenize("the cat", "(?:the)")  # unmatched text is a chunk of its own
    ['the', ' cat']
    """
    compiled: Any = pattern if hasattr(pattern, "findall") else compile_pattern(pattern)
    if compiled is None:
        return [text] if text else []
    # Text the pattern does not match is never dropped: every unmatched span is a
    # chunk of its own (tiktoken skips it; the named patterns match everything).
    out: List[str] = []
    at = 0
    for m in compiled.finditer(text):
        start, end = m.span()
        if start > at:
            out.append(text[at:start])
        if end > start:
            out.append(text[start:end])
        at = max(at, end)
    if at < len(text):
        out.append(text[at:])
    return out


# The Python ``regex`` module and tiktoken's engine (Rust ``fancy-regex`` on
# ``regex-syntax`` 0.8) read the same pattern differently in two ways, and
# :func:`compile_pattern` undoes both, for the named patterns and custom ones, so
# that this reference splits exactly as the core and tiktoken do:
#
# * ``$``: in Python it also matches before a final newline; in Rust only at the
#   very end of the text. It is written ``\Z`` here.
# * Unicode version: ``regex`` follows the newest Unicode, the core and tiktoken
#   0.14 have Unicode 16.0. Every ``\p{..}``, ``\s``, ``\d``, ``\w`` and
#   bracketed class becomes explicit Unicode 16.0 code-point ranges, and ``(?i)``
#   uses Unicode 16.0 simple case folding, both from ``data/unicode16.json``, a
#   table generated from the core's own ``regex-syntax`` (see
#   ``bytepair.unicode16``); so no ``regex`` release changes how this splits.
#   tests/reference/test_unicode16.py checks every class on all code points.


def compile_pattern(pattern: Optional[str]):
    """Compiles a pattern (name or regex) for :func:`pretokenize`, with the core's
    semantics: ``$`` only at the end of the text, Unicode 16.0 character classes
    and case folding (see the note above).

    >>> compile_pattern("gpt2").findall("hi  there\\n")
    ['hi', ' ', ' there', '\\n']
    >>> compile_pattern(None) is None
    True
    """
    pat = _patterns.resolve(pattern)
    if pat is None:
        return None
    return regex.compile(unicode16.rewrite(pat))


# ---------------------------------------------------------------- Plumbing: GPT-2's byte table
#
# :func:`bytes_to_unicode` (defined in :mod:`bytepair.byte_table`, re-exported
# here) maps each byte to a printable character; the file formats use it to
# write token bytes as strings. It plays no part in training or encoding.


# ================================================================ Growing vocabularies
#
# Two trainers that differ from :func:`train_from_counts` in one respect each:
#
# * :func:`extend_from_counts` starts every chunk from its encoding by an
#   existing vocabulary instead of from bytes, and numbers its new tokens from
#   ``first_id``;
# * :func:`train_parity_from_counts` lets the language that currently costs
#   most (tokens per unit of its dev text) choose each merge, from its own
#   pair counts, and applies the merge to every language.
#
# Both pass over a pair whose joined bytes already are a token (an existing
# vocabulary holds tokens its encoder cannot reach in every context; making
# one again would give two ids the same bytes), and otherwise keep the rules
# of ``train_from_counts``: ties go to the pair met first, ``min_frequency``
# and ``max_token_length`` mean the same.


def _joinable(pair: Pair, vocab: Dict[int, bytes], known: set, max_token_length: Optional[int],
              max_words: Optional[int] = None) -> bool:
    joined = vocab[pair[0]] + vocab[pair[1]]
    return (joined not in known and (max_token_length is None or len(joined) <= max_token_length)
            and (max_words is None or word_count(joined) <= max_words))


def _merge_all(chunks: Dict[Tuple[int, ...], int], pair: Pair, new_id: int) -> Dict[Tuple[int, ...], int]:
    merged: Dict[Tuple[int, ...], int] = {}
    for ids, n in chunks.items():
        key = merge_pair(ids, pair, new_id)
        merged[key] = merged.get(key, 0) + n
    return merged


def extend_from_counts(
    chunk_counts: Dict[bytes, int],
    vocab: Dict[int, bytes],
    num_merges: int,
    first_id: int,
    *,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    max_words: Optional[int] = None,
) -> List[Pair]:
    """Continues BPE on top of ``vocab`` (id -> bytes, the base's mergeable tokens).

    Each distinct chunk starts as its encoding by the base (:func:`encode_piece`);
    then, as in :func:`train_from_counts`, the most frequent pair (ties: met
    first) is merged everywhere, and the k-th new token gets id ``first_id + k``.
    With ``max_words``, a pair whose joined bytes hold more words
    (:func:`word_count`) is passed over, like one that is too long.

    >>> base = build_vocab([(97, 110)])               # 256 = b"an"
    >>> extend_from_counts({b"banana": 1}, base, 2, 300)
    [(98, 256), (300, 256)]
    """
    ranks = {b: i for i, b in vocab.items()}
    chunks: Dict[Tuple[int, ...], int] = {}
    for b, n in chunk_counts.items():
        key = tuple(encode_piece(b, ranks))
        chunks[key] = chunks.get(key, 0) + n
    vocab = dict(vocab)
    known = set(ranks)
    merges: List[Pair] = []
    for k in range(num_merges):
        stats = {p: n for p, n in count_pairs(chunks).items()
                 if _joinable(p, vocab, known, max_token_length, max_words)}
        pair = best_pair(stats, vocab)
        if pair is None or stats[pair] < min_frequency:
            break
        new_id = first_id + k
        merges.append(pair)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        known.add(vocab[new_id])
        chunks = _merge_all(chunks, pair, new_id)
    return merges


# ================================================================ Superword tokenizers
#
# A superword tokenizer (SuperBPE, Liu et al. 2025) is trained in two stages.
# Stage 1 is :func:`train` up to the transition size. Stage 2 continues from
# those merges (:func:`extend_from_counts`, same tie-break) on *spans*, chunks
# cut by the coarser :data:`SPAN_PATTERN`:
#
# * no cut at spaces, so a token may bridge words (`` of the``, ``, and``);
# * digits are pieces of at most three (``\p{N}{1,3}``, as o200k);
# * a span ends after a run of newlines (``\r``, ``\n``): no token holds a
#   newline followed by anything but a newline;
# * a span ends between ``:`` and a following space (or newline, or digit),
#   so no token holds ``": "`` (prompt formats such as ``Answer: yes``);
#
# and one eligibility rule, checked when a merge is chosen: a token holds at
# most ``max_words`` words, a word being a maximal run of bytes other than the
# space (0x20). The rule only ever rejects more as tokens grow (a token holds
# at least the words of each of its parts), so a rejected pair stays rejected.
# The finished tokenizer pre-tokenizes with :data:`SPAN_PATTERN` too.

SPAN_PATTERN = _patterns.SUPERWORD  # \p{N}{1,3}|(?:[^\r\n\p{N}:]|:+[^ \r\n\p{N}:])+:*[\r\n]*|:+[\r\n]*|[\r\n]+


def word_count(token: bytes) -> int:
    """The words of a token: maximal runs of bytes other than the space (0x20).

    >>> word_count(b" of the"), word_count(b"   "), word_count(b"a\\tb c")
    (2, 0, 2)
    """
    return len([w for w in token.split(b" ") if w])


def train_superword(
    data: Union[str, Iterable[str]],
    vocab_size: int,
    transition: int,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    *,
    max_words: int = 4,
    span_pattern: Optional[str] = SPAN_PATTERN,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
) -> Tuple[List[Pair], Dict[int, bytes], Dict[str, int]]:
    """Trains a superword tokenizer: :func:`train` with ``pattern`` up to
    ``transition`` tokens (256 bytes + merges), then :func:`extend_from_counts`
    on the spans of ``span_pattern`` with ``max_words`` up to ``vocab_size``
    (special tokens included). Returns ``(merges, vocab, special_ids)`` like
    :func:`train`; encode with ``span_pattern``.

    >>> merges, vocab, _ = train_superword("of the cat, of the dog, of the cat", 267, 264, max_words=2)
    >>> [vocab[256 + k] for k in range(8, len(merges))]  # stage 2: tokens across spaces
    [b' the cat', b', of', b' the ']
    """
    texts = [data] if isinstance(data, str) else list(data)
    counts = count_chunks(texts, pattern, special_tokens)
    merges = train_from_counts(counts, transition - 256, min_frequency=min_frequency,
                               max_token_length=max_token_length)
    vocab = build_vocab(merges)
    spans = count_chunks(texts, span_pattern, special_tokens)
    more = vocab_size - len(vocab) - len(special_tokens)
    merges += extend_from_counts(spans, vocab, more, len(vocab), min_frequency=min_frequency,
                                 max_token_length=max_token_length, max_words=max_words)
    vocab = build_vocab(merges)
    return merges, vocab, {s: len(vocab) + i for i, s in enumerate(special_tokens)}


def train_parity_from_counts(
    counts: Dict[str, Dict[bytes, int]],
    dev_counts: Dict[str, Dict[bytes, int]],
    dev_sizes: Dict[str, int],
    num_merges: int,
    *,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    global_merges: int = 0,
) -> Tuple[List[Pair], List[str]]:
    """Parity-aware BPE (Foroutan et al., 2025): per language, training chunk
    counts, dev chunk counts and a dev size (bytes, characters, or 1 to compare
    raw token counts of parallel dev sets).

    Every step, the language whose dev text costs most tokens per unit of size
    (ties: the one listed first) chooses the merge: its own most frequent pair
    (ties: met first in its chunks). The merge is applied to every language's
    training and dev chunks and gets id ``256 + k``. A language with no pair
    left (or none seen ``min_frequency`` times) lets the next most expensive
    one choose. Returns the merges and the language that chose each.

    The hybrid variant (``global_merges=N``): the first N merges are standard
    BPE on all languages pooled (pairs met first in language order), reported
    as chosen by ``"*"``; the phase ends early if the pool has no qualifying pair.

    >>> merges, chosen_by = train_parity_from_counts(
    ...     {"en": {b"the the": 3}, "ko": {b"xyxy": 1}}, {"en": {b"the": 1}, "ko": {b"xy": 1}},
    ...     {"en": 3, "ko": 2}, 3)
    >>> chosen_by
    ['en', 'ko', 'en']
    """
    def as_ids(c: Dict[bytes, int]) -> Dict[Tuple[int, ...], int]:
        return {tuple(b): n for b, n in c.items()}

    langs = list(counts)
    train_chunks = {lang: as_ids(counts[lang]) for lang in langs}
    dev_chunks = {lang: as_ids(dev_counts[lang]) for lang in langs}
    vocab = build_vocab([])
    known = set(vocab.values())
    merges: List[Pair] = []
    chosen_by: List[str] = []
    pooled_phase = global_merges > 0
    for k in range(num_merges):
        choice = None
        if pooled_phase and k < global_merges:
            pooled: Dict[Pair, int] = {}
            for lang in langs:
                for p, n in count_pairs(train_chunks[lang]).items():
                    pooled[p] = pooled.get(p, 0) + n
            stats = {p: n for p, n in pooled.items() if _joinable(p, vocab, known, max_token_length)}
            pair = best_pair(stats, vocab)
            if pair is not None and stats[pair] >= min_frequency:
                choice = ("*", pair)
        pooled_phase = choice is not None
        cost = {lang: Fraction(sum(len(ids) * n for ids, n in dev_chunks[lang].items()), dev_sizes[lang])
                for lang in langs}
        by_cost = sorted(langs, key=cost.__getitem__, reverse=True)  # stable: ties keep the listed order
        for lang in by_cost if choice is None else []:
            stats = {p: n for p, n in count_pairs(train_chunks[lang]).items()
                     if _joinable(p, vocab, known, max_token_length)}
            pair = best_pair(stats, vocab)
            if pair is not None and stats[pair] >= min_frequency:
                choice = (lang, pair)
                break
        if choice is None:
            break
        lang, pair = choice
        new_id = 256 + k
        merges.append(pair)
        chosen_by.append(lang)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        known.add(vocab[new_id])
        train_chunks = {g: _merge_all(c, pair, new_id) for g, c in train_chunks.items()}
        dev_chunks = {g: _merge_all(c, pair, new_id) for g, c in dev_chunks.items()}
    return merges, chosen_by


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient: mean absolute difference over twice the mean
    (0 = all equal; the paper's inequality measure of per-language costs).

    >>> gini([1, 1, 1]), gini([0, 0, 1])
    (0.0, 0.6666666666666666)
    """
    n = len(values)
    mean = sum(values) / n if n else 0.0
    if not mean:
        return 0.0
    return sum(abs(a - b) for a in values for b in values) / (2 * n * n * mean)
