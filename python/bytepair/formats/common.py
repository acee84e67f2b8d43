"""What the GPT-2 and Hugging Face formats share: byte-level token strings, a
vocabulary + merge list, and the checks that such a pair means exactly what a
bytepair :class:`~bytepair.Tokenizer` means.

The two semantics being matched:

- Hugging Face / GPT-2: merge the adjacent pair that comes first in the merge
  list; a pair that is not in the list never merges.
- tiktoken / bytepair: merge the adjacent pair whose concatenation is the token
  of lowest rank (= id).

They agree when merges are listed in the id order of the tokens they make and
every split a merge could meet is listed. Writers therefore list, for each
token in id order, every split of it into two tokens (the convention of
``transformers``' tiktoken converter, which made the Llama-3 and Qwen2 files);
``merges="minimal"`` lists one split per token (GPT-2's own size).
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Mapping, NoReturn, Optional, Sequence, Set, Tuple

from ..errors import ArgumentError, FormatError, UnsupportedComponentError, VocabError, json_error_text
from ..tokenizer import Tokenizer
from ..vocab import check_gaps
from .native import str_to_token, token_to_str

MERGE_MODES = ("all", "minimal")

#: Marks "argument not given" where ``None`` is a real value (no pre-tokenization).
UNSET: object = object()


# ---------------------------------------------------------------- writing


def merge_pairs(tok: Tokenizer, mode: str = "all") -> List[Tuple[int, int]]:
    """Merges as ``(left_id, right_id)`` in the order a BPE file lists them.

    ``"all"``: for each multi-byte token in id order, every split into two tokens,
    ordered by (left id, right id). ``"minimal"``: one split per token
    (:attr:`Tokenizer.merges`).

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer([bytes([b]) for b in range(256)] + [b"ab", b"bc", b"abc"], None)
    >>> merge_pairs(tok, "minimal")
    [(97, 98), (98, 99), (256, 99)]
    >>> merge_pairs(tok, "all")
    [(97, 98), (98, 99), (97, 257), (256, 99)]
    """
    if mode not in MERGE_MODES:
        raise ArgumentError(f"merges must be one of {MERGE_MODES}, not {mode!r}", name="merges")
    if mode == "minimal":
        return tok.merges
    tokens = tok.token_bytes_list
    ranks = tok.mergeable_ranks
    out: List[Tuple[int, int]] = []
    for t in tokens:
        if len(t) < 2:
            continue
        local = []
        for i in range(1, len(t)):
            a = ranks.get(t[:i])
            if a is not None:
                b = ranks.get(t[i:])
                if b is not None:
                    local.append((a, b))
        local.sort()
        out.extend(local)
    return out


def vocab_strings(tok: Tokenizer, fmt: str = "this format", *, gaps_ok: bool = False) -> List[str]:
    """Byte-level strings of the mergeable tokens, index = id (``""`` at a gap).

    Unless ``gaps_ok`` (``tokenizer.json``, whose vocab maps strings to any ids),
    raises :class:`~bytepair.errors.UnsupportedComponentError` for a tokenizer
    with gaps in its ids (grown by :func:`bytepair.extend` from a base whose
    special tokens sit above its ranks): GPT-2 vocab + merges files number
    mergeable tokens ``0..n-1`` and their readers renumber or reject anything
    else, so the file would not load as the same tokenizer.
    """
    gaps = tok.gaps
    if gaps and not gaps_ok:
        shown = ", ".join(map(str, gaps[:4])) + (", ..." if len(gaps) > 4 else "")
        raise UnsupportedComponentError(
            f"{fmt} cannot represent ids without a mergeable token ({len(gaps)} gap(s): {shown}; "
            "a vocabulary grown from a base whose special tokens sit above its ranks keeps them there); "
            "save as a bytepair JSON file, a .tiktoken rank file or a tokenizer.json instead"
        )
    empty = tok._empty_ranks
    if len(empty) > 1:
        raise UnsupportedComponentError(
            f"{fmt} keys its vocab by token string, so it holds at most one empty token; this tokenizer "
            f"has {len(empty)} (ids {', '.join(map(str, empty[:4]))}{', ...' if len(empty) > 4 else ''}); "
            "save as a bytepair JSON file or a .tiktoken rank file instead"
        )
    return [token_to_str(t) for t in tok.token_bytes_list]


# ---------------------------------------------------------------- reading


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: List[Tuple[str, object]]) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def read_json(path: object, data: bytes) -> object:
    """Parses JSON, rejecting duplicate object keys (a vocabulary listing a token
    twice would otherwise silently keep the last id)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 (byte {e.start}); a JSON tokenizer file is UTF-8 text", path=path) from e
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as e:
        raise FormatError(
            f"the key {e.args[0]!r} appears twice in one JSON object (a token listed twice?)", path=path
        ) from None
    except json.JSONDecodeError as e:
        raise FormatError(
            f"not valid JSON: {json_error_text(e)}; the file may be truncated", path=path,
        ) from e


def core_json_error(e: FormatError, path: object, data: bytes) -> FormatError:
    """A JSON reading error of the core, with the file's path. A file the
    core cannot parse at all (``where`` empty: not UTF-8, not JSON) is parsed
    again by :func:`read_json`, whose message (Python's ``json`` words, line and
    column) is the one every JSON reader of bytepair gives."""
    if not e.where:
        read_json(path, data)  # raises the same failure in Python's words
    return FormatError(e.reason or str(e), path=path, where=e.where or None)


def build(
    vocab: Mapping[str, object],
    merges: Sequence[Tuple[str, str]],
    specials: Mapping[str, int],
    pattern: Optional[str],
    *,
    name: str,
    path: object,
    vocab_where: Callable[[str], object],
    merge_where: Callable[[int], object],
    gaps_ok: bool = False,
) -> Tokenizer:
    """Builds and validates a tokenizer from a byte-level vocab and merge list.

    Args:
        vocab: byte-level token string to id; entries whose id is a special
            token's id are the special tokens' own entries and are skipped.
        merges: ``(left, right)`` byte-level strings in priority order.
        specials: special-token text to id.
        pattern: pre-tokenization regex (or None).
        name: tokenizer name.
        path: the file, for error messages.
        vocab_where, merge_where: the location of a vocab entry / merge in the file.

    Raises:
        FormatError: naming the file, the location and the problem.
    """
    mergeable = _mergeable_ids(vocab, specials, path, vocab_where)
    tokens = _token_table(mergeable, gaps_ok, path, vocab_where)
    _check_specials_and_bytes(tokens, specials, gaps_ok, path, vocab_where)
    listed = _listed_merges(merges, mergeable, tokens, path, vocab_where, merge_where)
    try:
        tok = Tokenizer(tokens, pattern, dict(specials), name=name)
        derived = tok.merges
    except VocabError as e:
        raise FormatError(f"{e} (the token does not re-encode to itself)", path=path) from e
    except ValueError as e:
        raise FormatError(str(e), path=path) from e
    _check_derived(derived, listed, tokens, path, vocab_where)
    return tok


def _mergeable_ids(
    vocab: Mapping[str, object], specials: Mapping[str, int], path: object, vocab_where: Callable[[str], object]
) -> Dict[str, int]:
    """The vocab's mergeable entries (string to id): ids are non-negative ints,
    each used once; the special tokens' own entries are left out."""
    special_ids = set(specials.values())
    mergeable: Dict[str, int] = {}
    seen_ids: Dict[int, str] = {}
    for s, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise FormatError(f"token {s!r} has id {i!r}; ids are non-negative integers", path=path,
                              where=vocab_where(s))
        if i in special_ids:
            if s not in specials:
                owner = next(t for t, j in specials.items() if j == i)
                raise FormatError(
                    f"token {s!r} has id {i}, which is the id of special token {owner!r}; bytepair "
                    "needs special tokens numbered after the mergeable tokens",
                    path=path, where=vocab_where(s),
                )
            continue
        if i in seen_ids:
            raise FormatError(f"tokens {seen_ids[i]!r} and {s!r} have the same id {i}", path=path,
                              where=vocab_where(s))
        seen_ids[i] = s
        mergeable[s] = i
    return mergeable


def _token_table(
    mergeable: Dict[str, int], gaps_ok: bool, path: object, vocab_where: Callable[[str], object]
) -> List[Optional[bytes]]:
    """The token bytes, index = id: ``None`` at a gap (only when ``gaps_ok``;
    mergeable ids must be ``0..n-1`` otherwise), ``b""`` for the entry ``""``
    (the empty token, as Whisper's ranks have: it decodes to nothing and no
    text encodes to it)."""
    n = len(mergeable)
    if gaps_ok and mergeable:
        # ids that no entry gives are gaps (a grown vocabulary keeps its base's
        # special tokens there); the 256 single bytes are still checked later
        n = max(mergeable.values()) + 1
        try:
            check_gaps(len(mergeable), n, n - 1, f"token {max(mergeable, key=mergeable.__getitem__)!r}")
        except VocabError as e:
            raise FormatError(str(e), path=path) from None
    tokens: List[Optional[bytes]] = [None] * n
    for s, i in mergeable.items():
        if i >= n:
            used = set(mergeable.values())
            missing = next(k for k in range(n) if k not in used)
            raise FormatError(
                f"token {s!r} has id {i} but there are only {n} mergeable tokens (id {missing} is "
                "missing); bytepair numbers mergeable tokens 0..n-1 and special tokens after them",
                path=path, where=vocab_where(s),
            )
        try:
            tokens[i] = str_to_token(s)
        except KeyError:
            bad = next(c for c in s if not _is_byte_char(c))
            raise FormatError(
                f"token {s!r} has the character {bad!r}, which is not in the byte-level alphabet "
                "(GPT-2 bytes_to_unicode); only byte-level BPE vocabularies can be read",
                path=path, where=vocab_where(s),
            ) from None
    return tokens


def _check_specials_and_bytes(
    tokens: List[Optional[bytes]], specials: Mapping[str, int], gaps_ok: bool, path: object,
    vocab_where: Callable[[str], object],
) -> None:
    """Special tokens sit after the mergeable ids (or on a gap); every one of
    the 256 bytes is a token."""
    n = len(tokens)
    for s, i in specials.items():
        if i < n and (not gaps_ok or tokens[i] is not None):
            raise FormatError(
                f"special token {s!r} has id {i}, inside the mergeable ids 0..{n - 1}; bytepair "
                "needs special tokens numbered after the mergeable tokens",
                path=path, where=vocab_where(s),
            )
    missing_bytes = sorted(set(range(256)) - {t[0] for t in tokens if t is not None and len(t) == 1})
    if missing_bytes:
        raise FormatError(
            f"{len(missing_bytes)} byte(s) have no token (first: 0x{missing_bytes[0]:02x}); such a model "
            "cannot encode every text, and bytepair needs all 256 single-byte tokens",
            path=path, where=vocab_where(token_to_str(bytes([missing_bytes[0]]))),
        )


def _listed_merges(
    merges: Sequence[Tuple[str, str]], mergeable: Dict[str, int], tokens: List[Optional[bytes]], path: object,
    vocab_where: Callable[[str], object], merge_where: Callable[[int], object],
) -> Set[Tuple[int, int]]:
    """The merges as id pairs, checked: both parts and the result are tokens,
    listed in the id order of what they make, and every multi-byte token is
    made by one of them."""
    listed: Set[Tuple[int, int]] = set()
    made: Set[int] = set()
    prev_id = -1
    get = mergeable.get
    for k, (a, b) in enumerate(merges):
        ia, ib, r = get(a), get(b), get(a + b)
        if ia is None or ib is None or r is None or r < prev_id:
            _bad_merge(k, a, b, ia, ib, r, prev_id, path, merge_where)
        prev_id = r
        listed.add((ia, ib))
        made.add(r)
    for i, t in enumerate(tokens):
        if t is not None and len(t) > 1 and i not in made:
            raise FormatError(f"token {mergeable_str(tokens, i)!r} (id {i}) is made by no merge "
                              "(vocab and merges disagree)", path=path, where=vocab_where(mergeable_str(tokens, i)))
    return listed


def _check_derived(
    derived: Sequence[Tuple[int, int]], listed: Set[Tuple[int, int]], tokens: List[Optional[bytes]], path: object,
    vocab_where: Callable[[str], object],
) -> None:
    """Each multi-byte token re-encodes through a split the file lists, so the
    file's merge order and bytepair's rank order tokenize alike."""
    for (left, right), tid in zip(derived, (k for k, t in enumerate(tokens) if t is not None and len(t) > 1)):
        if (left, right) not in listed:
            s = mergeable_str(tokens, tid)
            raise FormatError(
                f"token {s!r} (id {tid}) re-encodes through the split ({mergeable_str(tokens, left)!r}, "
                f"{mergeable_str(tokens, right)!r}), which is not a listed merge, so files and bytepair "
                "would tokenize it differently (vocab and merges disagree)",
                path=path, where=vocab_where(s),
            )


def _bad_merge(k, a, b, ia, ib, r, prev_id, path, merge_where) -> NoReturn:
    if ia is None or ib is None:
        part = a if ia is None else b
        raise FormatError(f"merge ({a!r}, {b!r}): {part!r} is not a token of the vocab", path=path,
                          where=merge_where(k))
    if r is None:
        raise FormatError(f"merge ({a!r}, {b!r}) makes {a + b!r}, which is not in the vocab "
                          "(vocab and merges disagree)", path=path, where=merge_where(k))
    raise FormatError(
        f"merge ({a!r}, {b!r}) makes id {r}, but an earlier merge made id {prev_id}; bytepair "
        "applies merges in the id order of the tokens they make, so the merges must be listed "
        "in that order",
        path=path, where=merge_where(k),
    )


def mergeable_str(tokens: Sequence[Optional[bytes]], i: int) -> str:
    return token_to_str(tokens[i] or b"")


def _is_byte_char(c: str) -> bool:
    try:
        str_to_token(c)
        return True
    except KeyError:
        return False
