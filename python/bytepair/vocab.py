"""Token lists: building a tokenizer's rank-ordered token bytes from ranks or a
sequence (gaps and empty tokens included), checking special-token ids, and
cutting a vocabulary at a size (:func:`truncate`).

Internally a token list holds ``b""`` both at a gap (an id without a token)
and at an *empty token* (an id listed with no bytes: Whisper's
``multilingual.tiktoken`` lists ``= 50256``, which tiktoken keeps as an id that
decodes to ``b""`` and that no text encodes to); the ranks of empty tokens go
along as a separate list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ArgumentError, VocabError

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer


def tokens_from_ranks(ranks: Mapping[bytes, int]) -> Tuple[List[bytes], List[int]]:
    """Token bytes by rank, ``b""`` at a gap, and the rank of the empty token
    if ``b""`` has one, as tiktoken allows (checked: ranks are ints, each
    rank and token given once; the core checks that every byte is a token).

    >>> tokens_from_ranks({b"b": 1, b"a": 0, b"": 3})
    ([b'a', b'b', b'', b''], [3])
    """
    by_rank: Dict[int, bytes] = {}
    for tok, r in ranks.items():
        if not isinstance(tok, (bytes, bytearray)):
            raise VocabError(f"token {tok!r} is a {type(tok).__name__}; mergeable tokens are bytes")
        if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < 2**32 - 1:
            raise VocabError(f"token {tok!r} has rank {r!r}; ranks are ints in 0..{2**32 - 2}")
        if r in by_rank:
            raise VocabError(f"rank {r} is given to both {by_rank[r]!r} and {tok!r}")
        by_rank[r] = bytes(tok)
    return tokens_by_rank(by_rank), [r for r, t in by_rank.items() if not t]


#: Ids a vocabulary may leave unused beyond one per token: gaps cost memory
#: like tokens (a table slot per id), so one huge rank would size the tables
#: by itself; real vocabularies leave a few (special tokens' ids).
GAP_SLACK = 65_536


def check_gaps(n_tokens: int, n_ids: int, top: int, what: str) -> None:
    """A VocabError when ``n_ids`` ids for ``n_tokens`` tokens leave more unused
    ids than :data:`GAP_SLACK` plus one per token (``top``, ``what``: the
    largest id and what holds it, for the message)."""
    gaps = n_ids - n_tokens
    if gaps > n_tokens + GAP_SLACK:
        raise VocabError(
            f"{what} has id {top:,}, leaving {gaps:,} unused ids below it among {n_tokens:,} tokens; "
            f"bytepair holds at most {GAP_SLACK:,} more unused ids than tokens: number the tokens densely"
        )


def tokens_by_rank(by_rank: Mapping[int, bytes]) -> List[bytes]:
    """Token bytes in rank order, ``b""`` at a gap, after :func:`check_gaps`."""
    if not by_rank:
        return []
    top = max(by_rank)
    check_gaps(len(by_rank), top + 1, top, f"token {by_rank[top]!r}")
    return [by_rank.get(r, b"") for r in range(top + 1)]


def tokens_from_list(tokens: Sequence[Optional[bytes]]) -> Tuple[List[bytes], List[int]]:
    """The sequence form: ``None`` marks a gap (a trailing gap is dropped),
    ``b""`` the empty token. Returns the token list and the empty tokens' ranks.

    >>> tokens_from_list([b"a", None, b"", None])
    ([b'a', b'', b''], [2])
    """
    out: List[bytes] = []
    empty: List[int] = []
    for i, t in enumerate(tokens):
        if t is None:
            out.append(b"")
            continue
        b = bytes(t)
        if not b:
            empty.append(i)
        out.append(b)
    while out and not out[-1] and (not empty or empty[-1] < len(out) - 1):
        out.pop()
    return out, empty


def as_gaps(tokens: Sequence[bytes], empty: Sequence[int] = ()) -> List[Optional[bytes]]:
    """Internal token bytes (``b""`` at gaps and empty tokens) in the sequence
    form: ``None`` at a gap, ``b""`` at the ranks in ``empty``."""
    keep = set(empty)
    return [t if t or i in keep else None for i, t in enumerate(tokens)]


def check_specials(special_tokens: Optional[Mapping[str, int]]) -> Dict[str, int]:
    if special_tokens is not None and not isinstance(special_tokens, Mapping):
        raise VocabError(f"special_tokens must be a dict of str to int, not {type(special_tokens).__name__}")
    specials = dict(special_tokens or {})
    for s, i in specials.items():
        if not isinstance(s, str):
            raise VocabError(f"special token {s!r} is not a str")
        if not isinstance(i, int) or isinstance(i, bool):
            raise VocabError(f"special token {s!r} has a non-integer id {i!r}")
        if not 0 <= i < 2**32:
            raise VocabError(f"special token {s!r} has id {i}; ids must be in 0..{2**32 - 1}")
    return specials


def check_id_table(tok: "Tokenizer", what: str) -> None:
    """For tools that build a table with a slot per id (``n_vocab`` long): the
    :func:`check_gaps` rule with special tokens counted. A special id far above
    the tokens (which encoding holds sparsely) is refused in one line, naming
    ``what`` needs the table, instead of allocating by the largest id."""
    specials = tok.special_tokens
    n_ids = tok.n_vocab
    tokens = tok.token_bytes_list
    if n_ids - len(tokens) <= len(tokens) + GAP_SLACK:
        return  # the tokens' own gaps are already bounded
    above = {i for i in specials.values() if i >= len(tokens)}
    top = n_ids - 1
    holder = next((f"special token {s!r}" for s, i in specials.items() if i == top), "the vocabulary")
    try:
        check_gaps(sum(1 for t in tokens if t) + len(above), n_ids, top, holder)
    except VocabError as e:
        raise VocabError(f"{what} needs a table with a slot per id: {e}") from None


def truncation(tok: "Tokenizer", vocab_size: int) -> Tuple[List[Optional[bytes]], Dict[str, int], Optional[List[Tuple[int, int]]], Dict[int, int]]:
    """What :meth:`bytepair.Tokenizer.truncate` keeps: ``(tokens, special_tokens,
    merges, id_map)`` of the tokenizer cut to ``n_vocab == vocab_size``.

    The cut is the largest id ``c`` with ``c + (specials at ids >= c) ==
    vocab_size``: mergeable tokens below ``c`` keep their ids, as do special
    tokens below ``c`` (in a gap); those at or above ``c`` are renumbered
    ``c, c+1, ...`` in their old order. ``id_map`` maps every old id that
    survives to its new id.
    """
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be a whole number (int), got {type(vocab_size).__name__} {vocab_size!r}")
    special_ids = sorted(tok.special_tokens.values())
    lo = 256 + len(special_ids)
    if not isinstance(vocab_size, int) or not lo <= vocab_size <= tok.n_vocab:
        raise ArgumentError(f"vocab_size must be between {lo} and {tok.n_vocab}, got {vocab_size}",
                            name="vocab_size", low=lo, high=tok.n_vocab)
    cut = vocab_size
    while cut + sum(1 for i in special_ids if i >= cut) > vocab_size:
        cut -= 1
    tokens = list(tok.token_bytes_list[:cut])
    empty = [r for r in tok._empty_ranks if r < cut]
    while tokens and not tokens[-1] and (not empty or empty[-1] < len(tokens) - 1):
        tokens.pop()
    id_map = {i: i for i, t in enumerate(tokens) if t or i in empty}
    specials: Dict[str, int] = {}
    moved = 0
    for s, old in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        new = old if old < cut else cut + moved
        moved += old >= cut
        specials[s] = new
        id_map[old] = new
    merges = None
    if tok._merges is not None:
        n_multi = sum(1 for t in tokens if len(t) > 1)
        merges = tok._merges[:n_multi]
    return as_gaps(tokens, empty), specials, merges, id_map


def check_merges(merges: Sequence[Tuple[int, int]], n_vocab: int) -> List[Tuple[int, int]]:
    """The merge list as tuples, each id an int in ``[0, n_vocab)``; else a VocabError naming the merge."""
    out = []
    for k, m in enumerate(merges):
        pair = tuple(m)
        if len(pair) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_vocab for i in pair):
            raise VocabError(f"merge {k} is {m!r}: a merge is a pair of ids between 0 and {n_vocab - 1}")
        out.append((pair[0], pair[1]))
    return out
