"""GPT-2 style ``vocab.json`` + ``merges.txt``.

``vocab.json`` maps byte-level token strings (GPT-2's byte-to-unicode table:
`` the`` is ``Ġthe``) to ids; ``merges.txt`` starts with a ``#version: 0.2``
line and lists one merge per line, ``left right``, highest priority first.
Special tokens (``<|endoftext|>``) sit in ``vocab.json`` under their own text,
numbered after the mergeable tokens, and no merge makes them.

The files hold no pre-tokenization pattern: the reader uses GPT-2's unless told
otherwise.

>>> import tempfile, os, pathlib
>>> from bytepair import get_encoding
>>> folder = tempfile.mkdtemp()
>>> save(get_encoding("gpt2"), folder, merges="minimal")
>>> sorted(os.listdir(folder))
['merges.txt', 'vocab.json']
>>> pathlib.Path(folder, "merges.txt").read_text(encoding="utf-8").splitlines()[:3]
['#version: 0.2', 'Ġ t', 'Ġ a']
>>> load(folder) == get_encoding("gpt2")
True
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Mapping, Optional, Tuple, Union

from ..atomic import atomic_write_bytes
from ..errors import FormatError
from ..patterns import GPT2 as GPT2_PATTERN
from ..tokenizer import Tokenizer
from . import common as _common
from .common import UNSET
from .native import str_to_token

PathLike = Union[str, "os.PathLike[str]"]

VOCAB_FILE = "vocab.json"
MERGES_FILE = "merges.txt"
HEADER = "#version: 0.2"



def dumps(tok: Tokenizer, *, merges: str = "all") -> Tuple[bytes, bytes]:
    """The bytes of ``vocab.json`` and ``merges.txt`` for ``tok``.

    Args:
        merges: ``"all"`` lists every split of every token (exact under the
            merge-list semantics; see :mod:`bytepair.formats.common`), ``"minimal"``
            one split per token (GPT-2's original size).
    """
    strs = _common.vocab_strings(tok, "GPT-2 vocab.json + merges.txt")
    vocab: Dict[str, int] = {s: i for i, s in enumerate(strs)}
    for s, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        if s in vocab:
            raise FormatError(
                f"special token {s!r} has the same vocab.json key as mergeable token {vocab[s]}; "
                "the GPT-2 format cannot hold both"
            )
        vocab[s] = i
    lines = [HEADER] + [f"{strs[a]} {strs[b]}" for a, b in _common.merge_pairs(tok, merges)]
    vocab_bytes = json.dumps(vocab, ensure_ascii=False).encode("utf-8") + b"\n"
    return vocab_bytes, ("\n".join(lines) + "\n").encode("utf-8")


def save(tok: Tokenizer, folder: PathLike, *, merges: str = "all") -> None:
    """Writes ``folder/vocab.json`` and ``folder/merges.txt`` (each atomically;
    the folder is created if needed)."""
    vocab_bytes, merges_bytes = dumps(tok, merges=merges)
    os.makedirs(folder, exist_ok=True)
    atomic_write_bytes(os.path.join(folder, VOCAB_FILE), vocab_bytes)
    atomic_write_bytes(os.path.join(folder, MERGES_FILE), merges_bytes)


def find_pair(path: PathLike) -> Tuple[str, str]:
    """The ``(vocab.json, merges.txt)`` paths for a folder or for either file."""
    p = os.fspath(path)
    if os.path.isdir(p):
        folder = p
        vocab, merges = os.path.join(folder, VOCAB_FILE), os.path.join(folder, MERGES_FILE)
    elif p.endswith(".txt"):
        vocab, merges = os.path.join(os.path.dirname(p), VOCAB_FILE), p
    else:
        vocab, merges = p, os.path.join(os.path.dirname(p), MERGES_FILE)
    for f in (vocab, merges):
        if not os.path.isfile(f):
            raise FormatError(
                f"GPT-2 format needs {VOCAB_FILE} and {MERGES_FILE} side by side; {f} does not exist",
                path=p,
            )
    return vocab, merges


def parse_merges(data: bytes, *, path: object = None) -> Tuple[List[Tuple[str, str]], List[int]]:
    """Merges of a ``merges.txt`` and the line number of each.

    >>> parse_merges("#version: 0.2\\nĠ t\\nh e\\n".encode())
    ([('Ġ', 't'), ('h', 'e')], [2, 3])
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 (byte {e.start})", path=path) from e
    merges: List[Tuple[str, str]] = []
    lines: List[int] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FormatError(f"expected 'left right', got {line[:60]!r}", path=path, where=lineno)
        merges.append((parts[0], parts[1]))
        lines.append(lineno)
    return merges, lines


def loads(
    vocab_data: bytes,
    merges_data: bytes,
    *,
    pattern: object = UNSET,
    special_tokens: Optional[Mapping[str, int]] = None,
    name: str = "gpt2-files",
    vocab_path: object = None,
    merges_path: object = None,
) -> Tokenizer:
    """Builds a tokenizer from the bytes of ``vocab.json`` and ``merges.txt``.

    Args:
        pattern: pre-tokenization pattern; default GPT-2's.
        special_tokens: special tokens (text to id) in addition to those found in
            ``vocab.json`` (multi-byte entries after the mergeable ids that no
            merge makes).
    """
    vocab = _common.read_json(vocab_path, vocab_data)
    if not isinstance(vocab, dict):
        raise FormatError("vocab.json must be a JSON object of token -> id", path=vocab_path)
    merges, lines = parse_merges(merges_data, path=merges_path)
    made = {a + b for a, b in merges}
    specials: Dict[str, int] = dict(special_tokens or {})
    candidates = {}
    for s, i in vocab.items():
        if s in specials or s in made:
            continue
        try:
            single = len(str_to_token(s)) == 1
        except KeyError:
            single = False
        if s and not single:  # "" is the empty token (Whisper's), never a special token
            candidates[s] = i
    ordinary = [i for s, i in vocab.items() if s not in candidates and s not in specials and isinstance(i, int)]
    top = max(ordinary, default=-1)
    for s, i in candidates.items():
        if isinstance(i, int) and i > top:
            specials[s] = i
    return _common.build(
        vocab, merges, specials, GPT2_PATTERN if pattern is UNSET else pattern,  # type: ignore[arg-type]
        name=name, path=os.path.dirname(str(vocab_path)) or "." if vocab_path is not None else None,
        vocab_where=lambda s: f"{VOCAB_FILE} key {s!r}",
        merge_where=lambda k: f"{MERGES_FILE} line {lines[k]}",
    )


def load(
    path: PathLike,
    *,
    pattern: object = UNSET,
    special_tokens: Optional[Mapping[str, int]] = None,
    name: Optional[str] = None,
) -> Tokenizer:
    """Reads a GPT-2 ``vocab.json`` + ``merges.txt`` pair, given the folder or either file."""
    vocab_path, merges_path = find_pair(path)
    with open(vocab_path, "rb") as f:
        vocab_data = f.read()
    with open(merges_path, "rb") as f:
        merges_data = f.read()
    folder = os.path.basename(os.path.dirname(os.path.abspath(vocab_path)))
    return loads(vocab_data, merges_data, pattern=pattern, special_tokens=special_tokens,
                 name=name or folder or "gpt2-files", vocab_path=vocab_path, merges_path=merges_path)

