"""bytepair's own file: versioned, human-readable JSON (the layout, the writer,
and the validating parser; :mod:`bytepair.formats.native` builds the tokenizer).

Layout (version 1)::

    {
      "format": "bytepair",
      "version": 1,
      "name": "...",
      "pattern": "<regex>" | null,
      "special_text": "raise" | "text",
      "special_tokens": {"<|endoftext|>": 8191, ...},
      "vocab": ["!", "\\"", ..., "Ġthe", ...],      # index = id; GPT-2 byte-to-unicode strings
      "merges": [[left_id, right_id], ...],         # optional; k-th entry made the k-th multi-byte token
      "gaps": [50256, ...],                         # only when some ids hold no mergeable token
      "empty_tokens": [50256]                       # only when some ids hold the empty token
    }

A gap (an id below the last rank with no mergeable token, where a vocabulary
grown by :func:`bytepair.extend` keeps its base's special tokens) is written as
``""`` in ``vocab`` and listed in ``gaps``; the empty token (an id that decodes
to no bytes, as Whisper's rank file has) is ``""`` listed in ``empty_tokens``;
an empty string anywhere else is an error.

Token bytes are written with GPT-2's byte-to-unicode table so every token is a
readable JSON string (``Ġthe`` is `` the``).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Union

from .atomic import atomic_write_text
from .byte_table import bytes_to_unicode
from .errors import FormatError, json_error_text

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer

FORMAT = "bytepair"
VERSION = 1

_B2U = bytes_to_unicode()
_U2B = {c: b for b, c in _B2U.items()}
# str.translate tables: latin-1 char of a byte -> its byte-level char, and back.
# Raw characters that are not in the byte-level alphabet map to U+FFFF, which
# then fails the latin-1 encode, so a bad string is still rejected.
_TO_STR = {b: c for b, c in _B2U.items()}
_TO_LATIN1 = {ord(c): chr(b) for b, c in _B2U.items()}
for _b in range(256):
    _TO_LATIN1.setdefault(_b, "\uffff")


def token_to_str(token: bytes) -> str:
    """Token bytes as a GPT-2 byte-level string (`` the`` -> ``Ġthe``).

    >>> token_to_str(b" the")
    'Ġthe'
    """
    return token.decode("latin-1").translate(_TO_STR)


def str_to_token(s: str) -> bytes:
    """Inverse of :func:`token_to_str`; KeyError on a character outside the table.

    >>> str_to_token("Ġthe")
    b' the'
    """
    try:
        return s.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        bad = next(c for c in s if c not in _U2B)
        raise KeyError(bad) from None
    except AttributeError:
        raise TypeError(f"expected str, got {type(s).__name__}") from None


def to_dict(tok: "Tokenizer", *, include_merges: bool = True) -> Dict[str, Any]:
    """The JSON-ready dict of a tokenizer."""
    d: Dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "name": tok.name,
        "pattern": tok.pattern,
        "special_text": tok.special_text,
        "special_tokens": tok.special_tokens,
        "vocab": [token_to_str(t) for t in tok.token_bytes_list],
    }
    if include_merges:
        d["merges"] = [list(m) for m in tok.merges]
    if tok.gaps:
        d["gaps"] = tok.gaps
    if tok._empty_ranks:
        d["empty_tokens"] = tok._empty_ranks
    return d


def save(tok: "Tokenizer", path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes ``tok`` to ``path`` atomically."""
    text = json.dumps(to_dict(tok), ensure_ascii=False, indent=1)
    atomic_write_text(path, text + "\n")


def parse(d: Any, *, path: object = None) -> Dict[str, Any]:
    """The :class:`~bytepair.Tokenizer` arguments held by the dict of a bytepair
    file, validated (a :class:`~bytepair.errors.FormatError` naming the key)."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise FormatError("not a bytepair tokenizer file (missing \"format\": \"bytepair\")", path=path)
    version = d.get("version")
    if version != VERSION:
        raise FormatError(
            f"unknown bytepair file version {version!r}; this bytepair reads version {VERSION}",
            path=path, where="$.version",
        )
    for key in ("vocab", "special_tokens"):
        if key not in d:
            raise FormatError(f"missing key {key!r}", path=path, where=f"$.{key}")
    vocab = d["vocab"]
    if not isinstance(vocab, list):
        raise FormatError("vocab must be a list of strings", path=path, where="$.vocab")
    tokens: List[bytes] = []
    for i, s in enumerate(vocab):
        try:
            tokens.append(str_to_token(s))
        except (KeyError, TypeError):
            raise FormatError(f"token {s!r} is not a byte-level string", path=path, where=f"$.vocab[{i}]") from None
    gaps = d.get("gaps", [])
    if not isinstance(gaps, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in gaps):
        raise FormatError("gaps must be a list of ids", path=path, where="$.gaps")
    for g in gaps:
        if not 256 <= g < len(tokens) - 1 or tokens[g]:
            raise FormatError(f"gap {g} is not an empty vocab entry between 256 and the last token",
                              path=path, where="$.gaps")
    empty = d.get("empty_tokens", [])
    if not isinstance(empty, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in empty):
        raise FormatError("empty_tokens must be a list of ids", path=path, where="$.empty_tokens")
    bad = next((i for i in empty if not 0 <= i < len(tokens) or tokens[i]), None)
    if bad is not None:
        raise FormatError(f"empty token {bad} is not an empty vocab entry", path=path, where="$.empty_tokens")
    listed = set(gaps) | set(empty)
    bad = next((i for i, t in enumerate(tokens) if not t and i not in listed), None)
    if bad is not None:
        raise FormatError(f"vocab entry {bad} is empty but listed neither in gaps nor in empty_tokens",
                          path=path, where=f"$.vocab[{bad}]")
    merges = d.get("merges")
    if merges is not None:
        if not isinstance(merges, list):
            raise FormatError("merges must be a list of [left_id, right_id]", path=path, where="$.merges")
        multi = [i for i, t in enumerate(tokens) if len(t) > 1]
        if len(merges) != len(multi):
            raise FormatError(
                f"{len(merges)} merges for {len(multi)} multi-byte tokens", path=path, where="$.merges"
            )
        for k, (m, tid) in enumerate(zip(merges, multi)):
            ok = (
                isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) and 0 <= x < tid for x in m)
                and tokens[m[0]] + tokens[m[1]] == tokens[tid]
            )
            if not ok:
                raise FormatError(
                    f"merge {m!r} does not make token {tid} ({vocab[tid]!r}) from earlier tokens",
                    path=path, where=f"$.merges[{k}]",
                )
    pattern = d.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        raise FormatError("pattern must be a string or null", path=path, where="$.pattern")
    if pattern == "":
        raise FormatError(
            "the empty pattern matches no text (every text would encode to nothing); "
            "use null for no pre-tokenization", path=path, where="$.pattern",
        )
    name = d.get("name", "bytepair")
    if not isinstance(name, str):
        raise FormatError("name must be a string", path=path, where="$.name")
    specials = d["special_tokens"]
    if not isinstance(specials, dict):
        raise FormatError("special_tokens must be an object", path=path, where="$.special_tokens")
    for s_text, s_id in specials.items():
        if not isinstance(s_id, int) or isinstance(s_id, bool) or not 0 <= s_id < 2**32:
            raise FormatError(
                f"special token {s_text!r} has id {s_id!r}; ids are integers in 0..{2**32 - 1}",
                path=path, where="$.special_tokens",
            )
    gap_set = set(gaps)
    return {
        "mergeable_ranks": [None if i in gap_set else t for i, t in enumerate(tokens)],
        "pattern": pattern,
        "special_tokens": specials,
        "name": name,
        "merges": [tuple(m) for m in merges] if merges is not None else None,
        "special_text": d.get("special_text", "raise"),
    }


def read(path: Union[str, "os.PathLike[str]"]) -> Any:
    """The JSON document of a file (a FormatError when it is not JSON)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON: {json_error_text(e)}; the file may be truncated", path=path) from e
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 (byte {e.start}); the file may be damaged", path=path) from e
