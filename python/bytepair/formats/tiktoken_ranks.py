"""tiktoken rank files (``.tiktoken``): one ``<base64 token> <rank>`` line per token.

A rank file holds only the mergeable tokens. The pre-tokenization pattern and
the special tokens live in code (tiktoken's ``Encoding(pat_str=...,
special_tokens=...)``), so the reader takes them from the caller, from a named
preset (``preset="cl100k_base"``) or, when the file is byte for byte one of the
bundled encodings, from that encoding.

:func:`dumps` writes exactly what ``tiktoken.load.dump_tiktoken_bpe`` writes:
tokens sorted by rank, ``base64(token) + b" " + str(rank).encode() + b"\\n"``;
the empty token is written ``=``, as in Whisper's ``multilingual.tiktoken``.

>>> from bytepair import get_encoding
>>> data = dumps(get_encoding("gpt2"))
>>> data[:12]
b'IQ== 0\\nIg== '
>>> loads(data, preset="gpt2") == get_encoding("gpt2")
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from typing import Dict, List, Mapping, Optional, Union

from ..atomic import atomic_write_bytes
from ..errors import ArgumentError, FormatError, VocabError
from ..registry import bundled_name_for_sha256, get_encoding, list_encoding_names
from ..tokenizer import Tokenizer
from ..vocab import tokens_by_rank
from .common import UNSET

PathLike = Union[str, "os.PathLike[str]"]



def dumps(tok: Tokenizer) -> bytes:
    """The ``.tiktoken`` bytes of a tokenizer's mergeable tokens (specials are not stored).

    >>> from bytepair import Tokenizer
    >>> dumps(Tokenizer([bytes([b]) for b in range(256)] + [b"ab"], None)).splitlines()[-1]
    b'YWI= 256'
    """
    empty = set(tok._empty_ranks)
    return b"".join(
        (base64.b64encode(t) if t else b"=") + b" " + str(r).encode("ascii") + b"\n"
        for r, t in enumerate(tok.token_bytes_list)
        if t or r in empty  # a gap has no line (tiktoken reads ranks from the lines, gaps included)
    )


def save(tok: Tokenizer, path: PathLike) -> None:
    """Writes ``tok``'s ranks to ``path`` atomically (see :func:`dumps`)."""
    atomic_write_bytes(path, dumps(tok))


def parse_ranks(data: bytes, *, path: object = None) -> List[Optional[bytes]]:
    """Parses and validates rank-file bytes into token bytes indexed by rank
    (the sequence form of :class:`~bytepair.Tokenizer`).

    Errors name the line: bad base64, a rank that is not an integer, a rank or
    token given twice. A rank that no line gives (a gap: a vocabulary grown by
    :func:`bytepair.extend` keeps its base's special tokens there; tiktoken
    reads such files too) is ``None`` in the returned list. A line whose token
    is empty (``= 50256`` in Whisper's ``multilingual.tiktoken``) gives ``b""``:
    tiktoken keeps that rank as an id that decodes to ``b""`` and counts in
    ``n_vocab``, and that no text encodes to.

    >>> parse_ranks(b"YQ== 1\\nYg== 0\\n= 3\\n")
    [b'b', b'a', None, b'']
    >>> parse_ranks(b"YQ== 0\\nYQ== 1\\n", path="x.tiktoken")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: x.tiktoken:2: token b'a' is listed twice (first at line 1)
    """
    by_rank: Dict[int, bytes] = {}
    line_of_rank: Dict[int, int] = {}
    line_of_token: Dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise FormatError(
                f"expected '<base64 token> <rank>', got {line[:60]!r}", path=path, where=lineno
            )
        b64, rank_s = fields
        try:
            token = base64.b64decode(b64, validate=True) if b64.strip(b"=") else b""
        except (binascii.Error, ValueError):
            raise FormatError(f"{b64[:60]!r} is not valid base64", path=path, where=lineno) from None
        if not rank_s.isdigit():
            raise FormatError(f"rank {rank_s[:30]!r} is not a non-negative integer", path=path, where=lineno)
        rank = int(rank_s)
        if rank in by_rank:
            raise FormatError(
                f"rank {rank} is given twice (first at line {line_of_rank[rank]})", path=path, where=lineno
            )
        if token in line_of_token:
            raise FormatError(
                f"token {token!r} is listed twice (first at line {line_of_token[token]})",
                path=path, where=lineno,
            )
        by_rank[rank] = token
        line_of_rank[rank] = lineno
        line_of_token[token] = lineno
    if not by_rank:
        raise FormatError("no tokens: the file is empty", path=path)
    try:
        tokens = tokens_by_rank(by_rank)
    except VocabError as e:
        raise FormatError(str(e), path=path, where=line_of_rank[max(by_rank)]) from None
    return [t if t or r in by_rank else None for r, t in enumerate(tokens)]


def _preset(preset: str):
    if preset not in list_encoding_names():
        raise ArgumentError(f"unknown preset {preset!r}; use one of {list_encoding_names()}", name="preset")
    return get_encoding(preset)


def _check_preset_fits(preset: str, base: Tokenizer, n_ranks: int, path: object) -> None:
    """Refuses a preset whose special-token ids do not sit after this file's ranks
    as they sit after the preset's own (they would collide or leave ids empty)."""
    base_ranks = len(base.token_bytes_list)
    if n_ranks == base_ranks:
        return
    ids = sorted(base.special_tokens.values())
    where = f"id {ids[0]}" if len(ids) == 1 else f"ids {ids[0]}-{ids[-1]}"
    raise FormatError(
        f"the file has {n_ranks:,} ranks but preset {preset!r} has {base_ranks:,}: its special tokens "
        f"(at {where}) do not fit this file; pass pattern= (e.g. {base.pattern_name or 'a regex'!r}) "
        f"and special_tokens= (ids from {n_ranks})",
        path=path,
    )


def _bundled_name(data: bytes) -> Optional[str]:
    return bundled_name_for_sha256(hashlib.sha256(data).hexdigest())


def loads(
    data: bytes,
    *,
    pattern: object = UNSET,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    name: Optional[str] = None,
    path: object = None,
) -> Tokenizer:
    """Builds a tokenizer from rank-file bytes.

    Args:
        data: the file's bytes.
        pattern: pre-tokenization pattern (name or regex; ``None`` for none).
        special_tokens: special-token text to id (ids above the ranks).
        preset: a bundled encoding name whose pattern and specials to use.
            Explicit ``pattern`` / ``special_tokens`` override the preset's.
            The preset's special tokens keep their ids, so they are taken only
            when the file has as many ranks as the preset (a variant of that
            encoding); otherwise :class:`~bytepair.errors.FormatError` is
            raised rather than leaving ids empty or moving the specials (pass
            ``special_tokens=`` to place them yourself).
        name: the tokenizer's name (default: the preset or file name).
        path: the file, for error messages.

    Without ``pattern`` or ``preset``, a file that is byte for byte a bundled
    encoding gets that encoding's pattern and specials; any other file raises
    :class:`~bytepair.errors.FormatError` asking for them.

    The ranks need not be merge-closed: as in tiktoken, ranks order byte
    strings, two adjacent parts merge whenever their concatenation has a rank,
    and a piece that is a token is that token. A token that no merge reaches
    (678 of Llama 3's) is still emitted when it is a whole piece.
    """
    tokens = parse_ranks(data, path=path)
    if preset is None and pattern is UNSET:
        preset = _bundled_name(data)
        if preset is None:
            raise FormatError(
                "a .tiktoken file stores only the ranks: pass pattern= (e.g. 'cl100k' or a regex) "
                "and special_tokens=, or preset= (one of gpt2, cl100k_base, o200k_base) for a file with "
                "that encoding's number of ranks",
                path=path,
            )
    if preset is not None:
        base = _preset(preset)
        if pattern is UNSET:
            pattern = base.pattern
        if special_tokens is None:
            _check_preset_fits(preset, base, len(tokens), path)
            special_tokens = base.special_tokens
    if name is None:
        name = preset or (os.path.basename(str(path)).split(".")[0] if path is not None else "tiktoken")
    try:
        tok = Tokenizer(tokens, pattern, special_tokens or {}, name=name)  # type: ignore[arg-type]
    except ValueError as e:
        raise FormatError(str(e), path=path) from e
    return tok


def load(
    path: PathLike,
    *,
    pattern: object = UNSET,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    name: Optional[str] = None,
) -> Tokenizer:
    """Reads a ``.tiktoken`` file; see :func:`loads` for the arguments."""
    with open(path, "rb") as f:
        data = f.read()
    return loads(data, pattern=pattern, special_tokens=special_tokens, preset=preset, name=name,
                 path=os.fspath(path))
