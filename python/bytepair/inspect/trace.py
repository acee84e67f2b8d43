"""Merge traces and vocabulary sweeps: how a tokenizer is learned, step by step,
and how token counts fall as the vocabulary grows.

>>> t = trace("low lower lowest", 4)
>>> [s.num_tokens for s in t.steps]
[13, 10, 8, 6]
>>> print(t.steps[-1].tokens_text())
low| lowe|r| lowe|s|t
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import patterns as _patterns
from .. import reference
from ..checks import MAX_VOCAB, check_range
from ..errors import ArgumentError
from ..registry import list_encoding_names
from ..render.text import PerToken as _PerToken
from ..render.text import Plain, TableResult, bytes_json, show_bytes, show_token, visible
from ..tokenizer import Tokenizer
from ..training import train
from .common import (
    SpecialIds,
    TextSource,
    count_tokens,
    read_documents,
    resolve_tokenizer,
    tokenizer_name,
)

#: Texts up to this many UTF-8 bytes keep their full token list at every trace step.
TRACE_TOKENS_LIMIT = 4096


# ---------------------------------------------------------------- trace


@dataclass
class MergeStep:
    """One merge of a training run.

    Attributes:
        merge: the merge number, from 1.
        id: the id of the new token (``255 + merge`` for byte-level BPE).
        left, right: the bytes of the merged pair.
        count: how often the pair occurred when it was chosen (weighted by chunk frequency).
        num_tokens: tokens of the training text after this merge.
        tokens: the training text's tokens after this merge (None for long texts).
    """

    merge: int
    id: int
    left: bytes
    right: bytes
    count: int
    num_tokens: int
    tokens: list[bytes] | None = None

    @property
    def token(self) -> bytes:
        """The bytes of the new token."""
        return self.left + self.right

    def tokens_text(self, sep: str = "|") -> str:
        """The tokens joined by ``sep`` (``""`` when they were not kept)."""
        return _join_tokens(self.tokens, sep)


def _join_tokens(tokens: Sequence[bytes] | None, sep: str = "|") -> str:
    if tokens is None:
        return ""
    return sep.join(visible(show_bytes(t)) for t in tokens)


@dataclass
class Trace(TableResult):
    """Every merge step of training on a text (see :func:`trace`)."""

    pattern: str | None
    num_bytes: int
    start_tokens: list[bytes] | None
    steps: list[MergeStep] = field(default_factory=list)

    @property
    def num_start_tokens(self) -> int:
        """Tokens before any merge (one per byte)."""
        return self.num_bytes

    def _table(self):
        rows: list[list[Any]] = [["start", "", "", "", self.num_bytes, _join_tokens(self.start_tokens)]]
        for s in self.steps:
            rows.append([Plain(s.merge), Plain(s.id), f"{show_token(s.left)} + {show_token(s.right)}", s.count,
                         s.num_tokens, s.tokens_text()])
        headers = ["merge", "id", "pair", "count", "tokens", "text after the merge"]
        if self.start_tokens is None:
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (bytes as ``{"hex", "text"}``)."""
        return {
            "pattern": _patterns.name_of(self.pattern) or self.pattern,
            "num_bytes": self.num_bytes,
            "start_tokens": None if self.start_tokens is None else [show_bytes(t) for t in self.start_tokens],
            "steps": [
                {"merge": s.merge, "id": s.id, "left": bytes_json(s.left), "right": bytes_json(s.right),
                 "token": bytes_json(s.token), "count": s.count, "num_tokens": s.num_tokens,
                 "tokens": None if s.tokens is None else [show_bytes(t) for t in s.tokens]}
                for s in self.steps
            ],
        }


def trace(text: TextSource, num_merges: int, pattern: str | None = None) -> Trace:
    """Trains ``num_merges`` merges on ``text`` and records every step.

    The merges come from :func:`bytepair.train` (same rules, same tie-break); each
    is then replayed on the training text to report the pair's count and the
    token count after it. ``pattern`` defaults to ``None`` (no pre-tokenization:
    merges may cross spaces), as in the toy traces of docs/worked-examples.md; pass ``"gpt2"`` etc.
    to merge inside pre-token chunks only. Training stops early when no pair is
    left, so there may be fewer steps than asked for.

    >>> t = trace("banana bandana", 3)
    >>> [(show_bytes(s.token), s.count, s.num_tokens) for s in t.steps]
    [('an', 4, 10), ('ban', 2, 8), ('ana', 2, 6)]
    """
    check_range("num_merges", num_merges, 0, MAX_VOCAB - 256)
    docs = read_documents(text)
    pat = _patterns.resolve(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the corpus supports only N merges": the trace shows it
        tok = train(docs, 256 + num_merges, pattern=pat)
    merges = tok.merges
    total = sum(len(d.encode("utf-8")) for d in docs)
    compiled = reference.compile_pattern(pat)
    keep = total <= TRACE_TOKENS_LIMIT
    sequence: list[bytes] = []
    counts: dict[bytes, int] = {}
    for d in docs:
        for chunk in reference.pretokenize(d, compiled):
            b = chunk.encode("utf-8")
            counts[b] = counts.get(b, 0) + 1
            if keep:
                sequence.append(b)
    # state: chunk bytes -> its current ids (all chunks advance together, as in training)
    state: dict[bytes, tuple[int, ...]] = {b: tuple(b) for b in counts}
    vocab = {i: bytes([i]) for i in range(256)}

    def tokens_now() -> list[bytes] | None:
        if not keep:
            return None
        return [vocab[i] for b in sequence for i in state[b]]

    start = tokens_now()
    # token id -> chunks that may contain it (a superset: entries are never removed),
    # so each merge only revisits the chunks that can hold its pair
    where: dict[int, set[bytes]] = {}
    for b in counts:
        for i in set(b):
            where.setdefault(i, set()).add(b)
    num_tokens = total
    steps: list[MergeStep] = []
    for k, pair in enumerate(merges):
        new_id = 256 + k
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        seen = 0
        candidates = where.get(pair[0], set()) & where.get(pair[1], set())
        for b in candidates:
            ids = state[b]
            n = sum(1 for x, y in itertools.pairwise(ids) if (x, y) == pair)
            if not n:
                continue
            seen += n * counts[b]
            merged = reference.merge_pair(ids, pair, new_id)
            num_tokens -= (len(ids) - len(merged)) * counts[b]
            state[b] = merged
            where.setdefault(new_id, set()).add(b)
        steps.append(MergeStep(k + 1, new_id, vocab[pair[0]], vocab[pair[1]], seen, num_tokens, tokens_now()))
    return Trace(pattern=pat, num_bytes=total, start_tokens=start, steps=steps)


# ---------------------------------------------------------------- sweep


@dataclass
class SweepRow(_PerToken):
    """Token count of the evaluation text at one vocab size."""

    vocab_size: int
    merges: int
    tokens: int
    bytes: int
    chars: int


@dataclass
class Sweep(TableResult):
    """Token counts against vocab size for one merge list (see :func:`sweep`)."""

    tokenizer: str
    rows: list[SweepRow]

    def _table(self):
        headers = ["vocab", "merges", "tokens", "bytes/token", "chars/token"]
        rows = [[r.vocab_size, r.merges, r.tokens, r.bytes_per_token, r.chars_per_token] for r in self.rows]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"tokenizer": self.tokenizer, "rows": [
            {"vocab_size": r.vocab_size, "merges": r.merges, "tokens": r.tokens, "bytes": r.bytes,
             "chars": r.chars, "bytes_per_token": r.bytes_per_token, "chars_per_token": r.chars_per_token}
            for r in self.rows]}


def sweep(
    source: Tokenizer | TextSource,
    sizes: Sequence[int] | None = None,
    eval_text: TextSource | None = None,
    *,
    merges: Sequence[int] | None = None,
    pattern: str | None = "o200k",
    special_tokens: Sequence[str] = (),
    allowed_special: SpecialIds = (),
) -> Sweep:
    """Token count of ``eval_text`` at several vocab sizes of one merge list.

    ``source`` is a :class:`~bytepair.Tokenizer` (or an encoding name) to truncate, or
    training text (str, paths, or a list of them) trained once to the largest size.
    Each smaller size is a truncation of that one merge list (training to a smaller
    size would give exactly the same prefix), never a retraining. Give the sizes as
    vocab sizes (``sizes``) or as merge counts (``merges``). ``eval_text``
    defaults to the training text. Sizes the corpus cannot reach are clipped.
    Special-token text in ``eval_text`` is counted as plain text unless listed in
    ``allowed_special``.

    >>> s = sweep("low lower lowest " * 3, merges=[0, 2, 4], pattern=None)
    >>> [(r.merges, r.tokens) for r in s.rows]
    [(0, 51), (2, 33), (4, 19)]
    """
    if isinstance(source, str) and eval_text is not None and not _looks_like_text(source):
        resolved = resolve_tokenizer(source)
        if not isinstance(resolved, Tokenizer):
            raise TypeError(f"sweep truncates a byte-level Tokenizer; {source} is a {type(resolved).__name__}")
        source = resolved
    tok_given = isinstance(source, Tokenizer)
    n_special = len(source.special_tokens) if isinstance(source, Tokenizer) else len(special_tokens)
    if (sizes is None) == (merges is None):
        raise ArgumentError("give the sizes either as vocab sizes (sizes=) or as merge counts (merges=)", name="sizes")
    for what, given in (("sizes", sizes), ("merges", merges)):
        if given is None:
            continue
        if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
            hint = " (the order is sweep(source, sizes, eval_text))" if isinstance(given, str) else ""
            raise TypeError(f"{what} must be a list of int, got {type(given).__name__} {given!r:.40}{hint}")
        for v in given:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{what} must be whole numbers (int), got {type(v).__name__} {v!r}")
    if eval_text is not None and not isinstance(eval_text, (str, os.PathLike, list, tuple)):
        raise TypeError(f"eval_text must be a str, a path or a list of them, got {type(eval_text).__name__}")
    given_as = "sizes" if sizes is not None else "merges"
    for m in merges or ():
        if m < 0:
            raise ArgumentError(f"merges must be counts of at least 0, got {m}", name="merges")
    wanted = list(sizes) if sizes is not None else [256 + m + n_special for m in merges or ()]
    if not wanted:
        raise ArgumentError("no sizes to sweep", name="sizes")
    for v in wanted:
        if v < 256 + n_special:
            raise ArgumentError(f"sizes: vocab size {v!r} is below 256 + {n_special} special "
                                f"token{'' if n_special == 1 else 's'}", name="sizes")
    if tok_given:
        base: Any = source
        if eval_text is None:
            raise ArgumentError("sweeping a tokenizer needs eval_text (the text to count tokens of)", name="eval_text")
        over = [v for v in wanted if v > base.n_vocab]
        if over:
            raise ArgumentError(f"{given_as}: vocab size {over[0]:,} is above {tokenizer_name(base)}'s n_vocab "
                                f"{base.n_vocab:,}: a tokenizer can only be truncated", name=given_as)
    else:
        docs = read_documents(source)  # type: ignore[arg-type]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a small corpus stops early; sizes are clipped below
            # sizes past the corpus are clipped below, as are those past 32-bit ids
            base = train(docs, min(max(wanted), MAX_VOCAB), pattern=pattern, special_tokens=special_tokens)
        if eval_text is None:
            eval_text = docs
    texts = read_documents(eval_text)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_chars = sum(len(t) for t in texts)
    if not tok_given and max(wanted) > base.n_vocab:
        warnings.warn(f"training stopped at vocab size {base.n_vocab:,} (no pair left to merge); the sizes above "
                      f"it are counted at {base.n_vocab:,}", stacklevel=2)
    rows: list[SweepRow] = []
    for v in sorted({min(v, base.n_vocab) for v in wanted}):
        small = base if v == base.n_vocab else base.truncate(v)[0]
        tokens = sum(count_tokens(small, t, allowed_special) for t in texts)
        n_merges = sum(len(t) > 1 for t in small.token_bytes_list)
        rows.append(SweepRow(v, n_merges, tokens, n_bytes, n_chars))
    return Sweep(tokenizer_name(base) if tok_given else "trained on the input", rows)


def _looks_like_text(s: str) -> bool:
    return s not in list_encoding_names() and not os.path.exists(s)


