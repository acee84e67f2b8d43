"""``bytepair encode``, ``decode`` and ``count``: text to ids, ids to text, token counts."""

from __future__ import annotations

import argparse
import codecs
import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import json_error_text
from ..inspect import TokenizerLike, count_tokens
from ..progress import ProgressLine, enabled
from ..render import Plain, format_table
from ..tokenizer import Tokenizer
from .common import (
    UsageError,
    add_command,
    add_input_options,
    add_special_option,
    add_tokenizer_options,
    allowed_special,
    emit,
    emit_json,
    int_list,
    load_tokenizers,
    nonnegative_int,
    one_tokenizer,
    read_inputs,
    read_stdin_bytes,
    read_texts,
    unique_labels,
)


def _byte_ids(tok: Tokenizer) -> list[int]:
    ranks = tok.mergeable_ranks
    return [ranks[bytes([b])] for b in range(256)]


def _encode_raw(tok: Tokenizer, data: bytes, allow_special: bool) -> list[int]:
    """Encodes arbitrary bytes: valid UTF-8 runs as text, each invalid byte as its
    single-byte token, so ``decode_bytes`` gives ``data`` back exactly."""
    s = data.decode("utf-8", "surrogateescape")
    byte_ids: list[int] | None = None
    ids: list[int] = []
    pos = 0
    for m in re.finditer("[\udc80-\udcff]+", s):
        ids += _encode_text(tok, s[pos:m.start()], allow_special)
        if byte_ids is None:
            byte_ids = _byte_ids(tok)
        ids += [byte_ids[ord(c) - 0xDC00] for c in m.group()]
        pos = m.end()
    ids += _encode_text(tok, s[pos:], allow_special)
    return ids


def _encode_text(tok: TokenizerLike, text: str, allow_special: bool, args: argparse.Namespace | None = None) -> list[int]:
    if not text:
        return []
    if not isinstance(tok, Tokenizer):  # the character-level tokenizer: no special tokens, no pre-tokenizer
        if allow_special:
            raise UsageError("--allow-special: a character-level tokenizer has no special tokens")
        return tok.encode(text)
    blocks = _blocks_with_progress(tok, text, args)
    if blocks is not None:
        ids: list[int] = []
        for block in blocks:
            ids += _encode_text(tok, block, allow_special)
        return ids
    if allow_special:
        return tok.encode(text, allowed_special="all")
    return tok.encode_ordinary(text)


#: Inputs longer than this many characters get a progress line in a terminal.
BLOCK_CHARS = 1 << 20
_SPLITTABLE = ("gpt2", "cl100k", "o200k")


def split_blocks(text: str, size: int) -> list[str]:
    """Cuts ``text`` into blocks of about ``size`` characters, only where the bundled
    pre-tokenization patterns (gpt2, cl100k, o200k) always end a chunk: right after
    a newline that follows a non-space character and precedes a letter or digit.
    Encoding the blocks one after the other then gives exactly the ids of the whole
    text (tests check this against tiktoken on real corpora).

    >>> split_blocks("ab\\ncd\\n ef\\ngh", 2)
    ['ab\\n', 'cd\\n ef\\n', 'gh']
    """
    out: list[str] = []
    start, n = 0, len(text)
    pos = size
    while pos < n:
        i = text.find("\n", pos)
        while i != -1 and not (0 < i < n - 1 and not text[i - 1].isspace() and text[i + 1].isalnum()):
            i = text.find("\n", i + 1)
        if i == -1:
            break
        out.append(text[start : i + 1])
        start = i + 1
        pos = start + size
    out.append(text[start:])
    return out


def _blocks_with_progress(tok: Tokenizer, text: str, args: argparse.Namespace | None) -> Iterable[str] | None:
    """Blocks of a long text with a progress line on a terminal's stderr
    (cleared at the end), when one would be shown; None otherwise (the text is
    then encoded whole)."""
    if args is None or len(text) <= BLOCK_CHARS or tok.pattern_name not in _SPLITTABLE:
        return None
    if getattr(args, "json", False) or not enabled(None):
        return None
    blocks = split_blocks(text, BLOCK_CHARS)

    def gen() -> Iterable[str]:
        line = ProgressLine("encoding", len(text), "chars")
        done = 0
        try:
            for b in blocks:
                yield b
                done += len(b)
                line.update(done)
        finally:
            line.clear()

    return gen()


def cmd_encode(args: argparse.Namespace) -> int:
    _, tok = one_tokenizer(args)
    results = []
    for label, data in read_inputs(args, allow_bytes=args.bytes):
        if isinstance(data, bytes):
            ids = _encode_raw(tok, data, args.allow_special)
        else:
            ids = _encode_text(tok, data, args.allow_special, args)
        results.append((label, ids))
    if args.json:
        emit_json(results[0][1] if len(results) == 1 else dict(zip(unique_labels([lb for lb, _ in results]),
                                                                    [ids for _, ids in results])))
        return 0
    for _, ids in results:
        emit(" ".join(map(str, ids)))
    return 0


def _read_ids(args: argparse.Namespace) -> list[int]:
    raw: str
    if args.ids:
        raw = " ".join(args.ids)
    else:
        if getattr(sys.stdin, "isatty", lambda: False)():
            raise UsageError("no ids: give them as arguments or pipe them on stdin")
        raw = read_stdin_bytes().decode("utf-8", "replace")
    raw = raw.strip()
    if raw.startswith("["):
        try:
            ids = json.loads(raw)
        except json.JSONDecodeError as e:
            raise UsageError(f"ids look like JSON but do not parse: {json_error_text(e)}") from None
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise UsageError("the JSON ids must be a list of whole numbers")
        return ids
    return int_list(raw, "token ids")


def cmd_decode(args: argparse.Namespace) -> int:
    if args.bytes and (args.stream or args.json):
        raise UsageError(f"--bytes writes the raw bytes; it does not go with {'--stream' if args.stream else '--json'}")
    _, tok = one_tokenizer(args)
    ids = _read_ids(args)
    if args.stream:
        return _decode_stream(tok, ids, args)
    data = tok.decode_bytes(ids) if isinstance(tok, Tokenizer) else tok.decode(ids).encode("utf-8")
    to_terminal = bool(getattr(sys.stdout, "isatty", lambda: False)())
    if args.bytes or (not args.json and not to_terminal):
        # into a pipe or file: exactly the decoded bytes, nothing added, so
        # `bytepair encode f | bytepair decode > g` gives g == f byte for byte
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        else:
            sys.stdout.flush()
            out.write(data)
            out.flush()
        return 0
    text = data.decode("utf-8", errors="replace")
    if args.json:
        emit_json({"text": text, "complete_utf8": data == text.encode("utf-8")})
    else:  # a terminal: end the line so the prompt starts on its own
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _stream_steps(tok: TokenizerLike, ids: Sequence[int]) -> tuple[list[str], str]:
    """What an incremental decoder emits after each id, and what ``flush`` adds at
    the end: a byte-level tokenizer's own ``stream_decoder()``, else UTF-8
    decoding of each token's bytes."""
    if isinstance(tok, Tokenizer):
        dec = tok.stream_decoder()
        steps = [dec.feed(i) for i in ids]
        return steps, dec.flush()

    inc = codecs.getincrementaldecoder("utf-8")(errors="replace")
    steps = [inc.decode(tok.decode_single_token_bytes(i)) for i in ids]
    return steps, inc.decode(b"", final=True)


def _decode_stream(tok: TokenizerLike, ids: Sequence[int], args: argparse.Namespace) -> int:
    steps, tail = _stream_steps(tok, ids)
    alone = [tok.decode_single_token_bytes(i) for i in ids]
    if args.json:
        emit_json({"steps": [{"id": i, "hex": b.hex(), "alone": b.decode("utf-8", "replace"), "emitted": s}
                             for i, b, s in zip(ids, alone, steps)], "flush": tail, "text": "".join(steps) + tail})
        return 0
    rows = [[Plain(i), b.hex(" "), repr(b.decode("utf-8", "replace")), repr(s)] for i, b, s in zip(ids, alone, steps)]
    emit(format_table(["id", "bytes", "decoded alone", "stream emits"], rows, align="rlll"))
    if tail:
        emit(f"flush emits {tail!r}")
    emit(f"text: {''.join(steps) + tail}")
    return 0


def _count_json(counts: list[tuple[str, int]], limit: int | None) -> dict[str, dict[str, Any]]:
    """``count --json``: one object per tokenizer, the same keys with or without
    ``--limit`` (over the limit, ``tokens`` is ``limit + 1``: counting stopped there)."""
    return {name: {"tokens": n, "limit": limit, "over_limit": limit is not None and n > limit}
            for name, n in counts}


def _count_limited(tok: Any, texts: list[str], limit: int, allowed: Any) -> int:
    """The tokens of every document, counting stopped once past ``limit`` (then ``limit + 1``)."""
    n = 0
    for text in texts:
        n += tok.count(text, limit=limit - n, allowed_special=allowed or set(), disallowed_special=())
        if n > limit:
            break
    return n


def cmd_count(args: argparse.Namespace) -> int:
    # each document counted on its own (a file, a JSONL line, a --text), as training reads them
    texts = [t for _, t in read_texts(args)]
    toks = load_tokenizers(args)
    counts = []
    allowed = allowed_special(args)
    if args.limit is not None:
        # stops reading as soon as the count exceeds the limit; prints LIMIT+1 then
        counts = [(name, _count_limited(tok, texts, args.limit, allowed)) for name, tok in toks]
        over = {name: n > args.limit for name, n in counts}
        if args.json:
            emit_json(_count_json(counts, args.limit))
            return 1 if any(over.values()) else 0
        for name, n in counts:
            shown = f">{args.limit}" if over[name] else str(n)
            emit(shown if len(counts) == 1 else f"{shown}\t{name}")
        return 1 if any(over.values()) else 0
    for name, tok in toks:
        n = 0
        for text in texts:
            blocks = _blocks_with_progress(tok, text, args)
            n += count_tokens(tok, text, allowed) if blocks is None else sum(count_tokens(tok, b, allowed)
                                                                               for b in blocks)
        counts.append((name, n))
    if args.json:
        emit_json(_count_json(counts, None))
    elif len(counts) == 1:
        emit(str(counts[0][1]))
    else:
        emit(format_table(["tokens", "tokenizer"], [[n, name] for name, n in counts], align="rl"))
    return 0


def add_parsers(subparsers: Any) -> None:
    e = add_command(subparsers, "encode", cmd_encode, "text to token ids",
            "Encode text to token ids, printed space-separated (one line per input: each file and each "
            "--text). Special-token text is plain text unless --allow-special is given.")
    add_tokenizer_options(e)
    add_input_options(e, what="text to encode")
    e.add_argument("--bytes", action="store_true", help="accept binary (non-UTF-8) input and encode its raw bytes")
    add_special_option(e)

    d = add_command(subparsers, "decode", cmd_decode, "token ids to text",
            "Decode token ids (arguments, or whitespace/comma-separated or a JSON list on stdin). Into a "
            "pipe or file the decoded bytes are written exactly (nothing added), so encode | decode "
            "round-trips byte for byte; in a terminal the text ends with a newline.")
    add_tokenizer_options(d)
    d.add_argument("ids", nargs="*", metavar="ID", help="token ids")
    d.add_argument("--stream", action="store_true",
                   help="show what an incremental decoder emits after each id (never half a character)")
    d.add_argument("--bytes", action="store_true", help="write the raw bytes instead of text")

    c = add_command(subparsers, "count", cmd_count, "count tokens of text",
                    "Count the tokens of the input under one or more tokenizers (no ids are kept). --json "
                    "prints {NAME: {\"tokens\": N, \"limit\": L or null, \"over_limit\": true/false}}.")
    add_tokenizer_options(c, many=True)
    add_input_options(c, what="text to count")
    c.add_argument("--limit", type=nonnegative_int("--limit"), metavar="N",
                   help="stop once the count exceeds N: prints the count, or >N (exit status 1) when over")
    add_special_option(c)
