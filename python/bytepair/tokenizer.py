"""The ``Tokenizer``: one class for the bundled encodings and for trained tokenizers.

Its names follow tiktoken's ``Encoding`` so code can switch in one line. The
hot loops run in the Rust core (``bytepair._core.CoreBPE``) with the GIL
released; this module owns argument handling and policy, and the longer
algorithms (budgets, offsets, unstable endings) are functions of
:mod:`bytepair.budget` that the methods call.

Special tokens follow tiktoken (see :mod:`bytepair.special`), plus a
``special_text="text"`` default; lone surrogates in ``str`` input are repaired
as tiktoken repairs them (paired ones become their character, lone ones U+FFFD).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core, budget, errors, native_json
from . import patterns as _patterns
from . import special as _special
from .checks import call_on_ids, check_text, check_texts, check_threads, fix_surrogates
from .shards.pipeline import encode_files as _encode_files
from .special import ENDOFTEXT, NO_SPECIALS, PLAIN, AllowedSpecial, DisallowedSpecial, SpecialPolicy, SpecialText
from .stream import StreamDecoder
from .vocab import as_gaps, check_merges, check_specials, tokens_from_list, tokens_from_ranks, truncation

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: How the tokenizer of a bundled encoding is rebuilt when unpickled: the
#: registry's loader and the encoding's name (pickles stay a few bytes).
Bundled = Tuple[Callable[[str], "Tokenizer"], str]
PathLike = Union[str, "os.PathLike[str]"]


class Tokenizer:
    """A byte-level BPE tokenizer: mergeable tokens by rank, a pre-tokenization
    pattern and special tokens.

    Args:
        mergeable_ranks: token bytes to rank (id), or a sequence of token bytes in
            rank order. Every single byte must be a token. Ranks may leave gaps
            above 255 (ids that hold no mergeable token, e.g. where a special
            token sits below tokens added by :func:`bytepair.extend`); in the
            sequence form a gap is ``None``. The empty token ``b""`` may hold a
            rank, as in tiktoken (Whisper's rank file lists one): that id
            decodes to ``b""``, counts in ``n_vocab``, and no text encodes to it.
        pattern: a pattern name (``"gpt2"``, ``"cl100k"``, ``"o200k"``), a regex
            string, or ``None`` for no pre-tokenization.
        special_tokens: special-token text to id; an id is above the ranks or
            in one of their gaps.
        name: a label shown in ``repr`` and saved in files.
        merges: the ordered merge list ``[(left_id, right_id), ...]`` when known
            (training knows it; for other vocabularies it is derived on demand).
        special_text: default treatment of special-token text in ``encode``:
            ``"raise"`` like tiktoken, or ``"text"`` to encode it as plain text.

    >>> tok = Tokenizer([bytes([b]) for b in range(256)] + [b"ab"], pattern=None)
    >>> tok.encode("abc")
    [256, 99]
    """

    # ================================================================ Construction

    def __init__(
        self,
        mergeable_ranks: Union[Mapping[bytes, int], Sequence[Optional[bytes]]],
        pattern: Optional[str] = "o200k",
        special_tokens: Optional[Mapping[str, int]] = None,
        *,
        name: str = "bytepair",
        merges: Optional[Sequence[Tuple[int, int]]] = None,
        special_text: SpecialText = "raise",
    ) -> None:
        if isinstance(mergeable_ranks, Mapping):
            tokens, empty = tokens_from_ranks(mergeable_ranks)
        else:
            tokens, empty = tokens_from_list(mergeable_ranks)
        specials = check_specials(special_tokens)
        pat = _patterns.resolve(pattern)
        self._setup(_core.CoreBPE(tokens, specials, pat, empty), pat, specials, name, merges, special_text)
        self._tokens_cache: Optional[List[bytes]] = tokens

    @classmethod
    def _from_core(
        cls,
        core: "_core.CoreBPE",
        pattern: Optional[str],
        special_tokens: Mapping[str, int],
        *,
        name: str,
        bundled: Optional[Bundled] = None,
        special_text: SpecialText = "raise",
        merges: Optional[Sequence[Tuple[int, int]]] = None,
    ) -> "Tokenizer":
        """Wraps an already built ``_core.CoreBPE`` (bundled encodings and the
        trainer load this way). ``bundled``: ``(loader, name)`` for a bundled
        encoding, which then pickles by name; ``merges``: already checked."""
        self = cls.__new__(cls)
        self._setup(core, pattern, dict(special_tokens), name, None, special_text)
        self._tokens_cache, self._bundled = None, bundled
        self._merges = None if merges is None else list(merges)
        return self

    def _setup(self, core, pattern, specials, name, merges, special_text) -> None:
        if special_text not in ("raise", "text"):
            raise errors.ArgumentError(f"special_text must be 'raise' or 'text', not {special_text!r}", name="special_text")
        self.name = name
        self._pattern = pattern
        self._special_tokens: Dict[str, int] = specials
        self._special_ids = frozenset(specials.values())
        self._merges = check_merges(merges, core.n_vocab) if merges is not None else None
        self.special_text: SpecialText = special_text
        self._core = core
        self._ranks: Optional[Dict[bytes, int]] = None
        self._bundled: Optional[Bundled] = None
        self._default_policy = _special.resolve(specials, special_text, NO_SPECIALS, None)

    def with_special_text(self, special_text: SpecialText) -> "Tokenizer":
        """A tokenizer sharing this one's vocabulary (no copy) with another
        default special-token policy.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").with_special_text("text").encode("<|endoftext|>")
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        tok = Tokenizer._from_core(self._core, self._pattern, self._special_tokens, name=self.name,
                                   bundled=self._bundled, special_text=special_text, merges=self._merges)
        tok._tokens_cache = self._tokens_cache
        return tok

    def truncate(self, vocab_size: int) -> Tuple["Tokenizer", Dict[int, int]]:
        """``(tokenizer, id_map)``: the ids below a cut and every special token, so
        that ``n_vocab == vocab_size`` (see :func:`bytepair.vocab.truncation`);
        ``id_map`` maps every old id that survives to its new id."""
        tokens, specials, merges, id_map = truncation(self, vocab_size)
        tok = Tokenizer(tokens, self._pattern, specials, name=self.name, merges=merges, special_text=self.special_text)
        return tok, id_map

    # ================================================================ Properties

    @property
    def pattern(self) -> Optional[str]:
        """The pre-tokenization regex string, or None."""
        return self._pattern

    @property
    def pattern_name(self) -> Optional[str]:
        """``"gpt2"``, ``"cl100k"``, ``"o200k"`` or ``"superword"`` for the built-in patterns, else None."""
        return _patterns.name_of(self._pattern)

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (mergeable or special).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").n_vocab
        100277
        """
        return self._core.n_vocab

    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's name): ``n_vocab - 1``."""
        return self._core.n_vocab - 1

    @property
    def eot_token(self) -> Optional[int]:
        """The id of ``<|endoftext|>``, or None when it is not a special token."""
        return self._special_tokens.get(ENDOFTEXT)

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Special-token text to id (a copy)."""
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set:
        """The special-token strings."""
        return set(self._special_tokens)

    @property
    def mergeable_ranks(self) -> Dict[bytes, int]:
        """Token bytes to rank for every mergeable token (gaps are not listed)."""
        return dict(self._rank_map())

    @property
    def token_bytes_list(self) -> List[bytes]:
        """Mergeable token bytes in rank order (a copy); ``b""`` at a gap (see
        :attr:`gaps`) and at the empty token."""
        return list(self._tokens)

    @property
    def gaps(self) -> List[int]:
        """Ids below the last rank that hold no mergeable token (some may hold a
        special token); found in vocabularies grown by :func:`bytepair.extend`
        from a base whose special tokens sit above its ranks (gpt2, o200k_base).
        A rank listed with the empty token ``b""`` is a token, not a gap."""
        empty = set(self._empty_ranks)
        return [i for i, t in enumerate(self._tokens) if not t and i not in empty]

    @property
    def merges(self) -> List[Tuple[int, int]]:
        """The ordered merge list: ``merges[k]`` is the pair ``(left_id, right_id)``
        whose merge made the k-th multi-byte token."""
        if self._merges is None:
            self._merges = [(a, b) for a, b in self._core.derive_merges()]
        return list(self._merges)

    # ================================================================ Encoding
    # allowed_special / disallowed_special are tiktoken's, with one default for
    # every method (see bytepair.special); num_threads: None is one thread per
    # core, and ids never depend on it.

    def encode(self, text: str, *, allowed_special: AllowedSpecial = NO_SPECIALS,
               disallowed_special: DisallowedSpecial = None, num_threads: Optional[int] = None) -> List[int]:
        """Encodes text to ids. Special-token text becomes its id only when
        allowed (``allowed_special="all"`` or a set); otherwise it raises
        :class:`~bytepair.errors.DisallowedSpecialError` as in tiktoken, unless
        ``disallowed_special=()`` or the tokenizer's ``special_text="text"``.
        A text of 256 KB or more is cut where its ids cannot change and
        encoded on ``num_threads`` threads.

        >>> import bytepair
        >>> enc = bytepair.get_encoding("gpt2")
        >>> enc.encode("Hello"), enc.encode("<|endoftext|>", allowed_special="all")
        ([15496], [50256])
        """
        if num_threads is not None:
            num_threads = check_threads(num_threads)
        pol = self._policy(text, allowed_special, disallowed_special)
        if pol is PLAIN:
            return _run(self._core.encode_ordinary, text, num_threads)
        return _run(self._core.encode, text, *pol.core_args, num_threads)

    def encode_ordinary(self, text: str, *, num_threads: Optional[int] = None) -> List[int]:
        """Encodes text with special-token text treated as plain text."""
        if num_threads is not None:
            num_threads = check_threads(num_threads)
        return _run(self._core.encode_ordinary, check_text(text), num_threads)

    def encode_to_numpy(self, text: str, *, allowed_special: AllowedSpecial = NO_SPECIALS,
                        disallowed_special: DisallowedSpecial = None,
                        num_threads: Optional[int] = None) -> "np.ndarray":
        """Like :meth:`encode`, as a writable ``numpy.uint32`` array that owns the
        core's buffer (no Python list, no copy)."""
        if num_threads is not None:
            num_threads = check_threads(num_threads)
        pol = self._policy(text, allowed_special, disallowed_special)
        return _run(self._core.encode_to_array, text, *pol.core_args, num_threads)

    def encode_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None,
                     allowed_special: AllowedSpecial = NO_SPECIALS,
                     disallowed_special: DisallowedSpecial = None) -> List[List[int]]:
        """Encodes many texts in parallel on Rust threads with the GIL released;
        a batch uses at most one thread per 128 KB of text.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").encode_batch(["hello world", "goodbye world"])
        [[31373, 995], [11274, 16390, 995]]
        """
        return self._batch(self._core.encode_batch, texts, num_threads, allowed_special, disallowed_special)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None) -> List[List[int]]:
        """Like :meth:`encode_batch` with special-token text as plain text."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def encode_batch_to_numpy(self, texts: Sequence[str], *, num_threads: Optional[int] = None,
                              allowed_special: AllowedSpecial = NO_SPECIALS,
                              disallowed_special: DisallowedSpecial = None) -> Tuple["np.ndarray", "np.ndarray"]:
        """Like :meth:`encode_batch`, as one ``numpy.uint32`` array of every text's
        ids and ``len(texts) + 1`` ``int64`` offsets: text ``i`` is
        ``ids[offsets[i]:offsets[i + 1]]`` (no Python int built per id).

        >>> import bytepair
        >>> ids, offsets = bytepair.get_encoding("gpt2").encode_batch_to_numpy(["hello world", "goodbye world"])
        >>> ids.tolist(), offsets.tolist()
        ([31373, 995, 11274, 16390, 995], [0, 2, 5])
        """
        return self._batch(  # type: ignore[no-any-return]
            self._core.encode_batch_to_arrays, texts, num_threads, allowed_special, disallowed_special
        )

    def encode_files(self, paths: Union[PathLike, Sequence[PathLike]], *, text_column: str = "text",
                     format: Optional[str] = None, num_threads: Optional[int] = None,
                     allowed_special: AllowedSpecial = NO_SPECIALS,
                     disallowed_special: DisallowedSpecial = None) -> Tuple["np.ndarray", "np.ndarray"]:
        """The documents of whole files (text, JSONL, Parquet; ``.gz`` too) encoded
        in Rust, as :meth:`encode_batch_to_numpy` gives them (see
        :func:`bytepair.shards.pipeline.encode_files`)."""
        return _encode_files(self, paths, text_column=text_column, format=format, num_threads=num_threads,
                             allowed_special=allowed_special, disallowed_special=disallowed_special)

    def count(self, text: str, *, limit: Optional[int] = None, allowed_special: AllowedSpecial = NO_SPECIALS,
              disallowed_special: DisallowedSpecial = None) -> int:
        """The number of ids :meth:`encode` would return, without building them.
        With ``limit``, counting stops past it and the result is ``limit + 1``
        ("over"), the work proportional to the part read (see
        :func:`bytepair.budget.count`).

        >>> import bytepair
        >>> bytepair.get_encoding("o200k_base").count("hello world " * 1000, limit=10)
        11
        """
        if limit is not None:
            return budget.count(self, text, limit=limit, allowed_special=allowed_special,
                                disallowed_special=disallowed_special)
        pol = self._policy(text, allowed_special, disallowed_special)
        return _run(self._core.count, text, *pol.core_args)  # type: ignore[no-any-return]

    def count_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None,
                    allowed_special: AllowedSpecial = NO_SPECIALS,
                    disallowed_special: DisallowedSpecial = None) -> List[int]:
        """Token counts of many texts, in parallel (see :meth:`count`)."""
        return self._batch(self._core.count_batch, texts, num_threads, allowed_special, disallowed_special)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of text (or bytes) that is exactly one token, special tokens
        included; a ``KeyError`` when it is not one token."""
        if not isinstance(text_or_bytes, (str, bytes, bytearray, memoryview)):  # bytes(5): five zero bytes
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        b = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        r = self._core.single_token(b)
        if r is None:
            raise KeyError(text_or_bytes)
        return r

    # ================================================================ Budgets and offsets

    def truncate_text(self, text: str, max_tokens: int, *, side: "budget.Side" = "end",
                      allowed_special: AllowedSpecial = NO_SPECIALS,
                      disallowed_special: DisallowedSpecial = None) -> str:
        """The longest prefix (or suffix, ``side="start"``) of ``text`` whose
        encoding fits ``max_tokens``: :func:`bytepair.budget.truncate_text`."""
        return budget.truncate_text(self, text, max_tokens, side=side, allowed_special=allowed_special,
                                    disallowed_special=disallowed_special)

    def chunk_text(self, text: str, max_tokens: int, *, overlap: int = 0, boundary: "budget.Boundary" = "token",
                   allowed_special: AllowedSpecial = NO_SPECIALS,
                   disallowed_special: DisallowedSpecial = None) -> List[str]:
        """Chunks of at most ``max_tokens`` tokens that concatenate to ``text``:
        :func:`bytepair.budget.chunk_text`."""
        return budget.chunk_text(self, text, max_tokens, overlap=overlap, boundary=boundary,
                                 allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_with_offsets(self, text: str, *, unit: "budget.Unit" = "char",
                            allowed_special: AllowedSpecial = NO_SPECIALS,
                            disallowed_special: DisallowedSpecial = None
                            ) -> Tuple[List[int], Sequence[Tuple[int, int]]]:
        """``(ids, offsets)``: each id's ``(start, end)`` span in characters or
        bytes: :func:`bytepair.budget.encode_with_offsets`."""
        return budget.encode_with_offsets(self, text, unit=unit, allowed_special=allowed_special,
                                          disallowed_special=disallowed_special)

    def encode_with_unstable(self, text: str, *, allowed_special: AllowedSpecial = NO_SPECIALS,
                             disallowed_special: DisallowedSpecial = None) -> Tuple[List[int], List[List[int]]]:
        """tiktoken's ``(stable, completions)`` of a text whose end may change:
        :func:`bytepair.budget.encode_with_unstable`."""
        return budget.encode_with_unstable(self, text, allowed_special=allowed_special,
                                           disallowed_special=disallowed_special)

    # ================================================================ Decoding

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids to text; invalid UTF-8 is handled by ``errors`` (default: U+FFFD).

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode([47991, 250, 166, 113, 255])
        '한국'
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Concatenated bytes of the ids; an unknown id raises
        :class:`~bytepair.errors.UnknownTokenError` (a ``KeyError``) naming it."""
        return call_on_ids(self._core.decode_bytes, tokens, self._core.n_vocab)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: Optional[int] = None) -> List[str]:
        """Decodes many id lists (byte assembly runs on Rust threads)."""
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: Optional[int] = None) -> List[bytes]:
        """The bytes of many id lists."""
        threads = check_threads(num_threads)
        return call_on_ids(self._core.decode_batch_bytes, batch, self._core.n_vocab, threads, each=batch)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id."""
        return call_on_ids(self._core.token_bytes, token, self._core.n_vocab, each=[[token]])

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each id.

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        return call_on_ids(self._core.tokens_bytes, tokens, self._core.n_vocab)

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """tiktoken's ``(text, offsets)``, the character where each token starts:
        :func:`bytepair.budget.decode_with_offsets`."""
        return budget.decode_with_offsets(self, tokens)

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """An incremental decoder that returns only whole characters
        (:class:`bytepair.stream.StreamDecoder`)."""
        return StreamDecoder(self, errors=errors)

    def is_special_token(self, token: int) -> bool:
        """Whether an id is a special token's (tiktoken's name)."""
        if not isinstance(token, int):
            raise TypeError(f"token must be an int, not {type(token).__name__}")
        return token in self._special_ids

    def token_byte_values(self) -> List[bytes]:
        """Every mergeable token's bytes, sorted (tiktoken's name)."""
        return sorted(self._rank_map())

    # ================================================================ tiktoken's private names
    # tiktoken exposes these underscore names on Encoding; code written for it uses them.

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        """tiktoken's attribute: :attr:`mergeable_ranks` (a copy)."""
        return self.mergeable_ranks

    @property
    def _pat_str(self) -> Optional[str]:
        """tiktoken's attribute: the pre-tokenization regex (None for no splitting)."""
        return self._pattern

    def _encode_bytes(self, data: bytes) -> List[int]:
        """tiktoken's ``_encode_bytes``: :func:`bytepair.budget.encode_bytes`."""
        return budget.encode_bytes(self, data)

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> List[int]:
        """tiktoken's ``_encode_single_piece``: :func:`bytepair.budget.encode_single_piece`."""
        return budget.encode_single_piece(self, text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> List[int]:
        """tiktoken's ``_encode_only_native_bpe``: the pre-tokenizer's pieces each
        merged on its own, which is :meth:`encode_ordinary`."""
        return self.encode_ordinary(text)

    # ================================================================ Persistence

    def save(self, path: PathLike) -> None:
        """Writes the tokenizer in bytepair's JSON format (atomic; see
        :mod:`bytepair.native_json`)."""
        native_json.save(self, path)

    def __reduce__(self):
        # bundled encodings pickle by name (a few bytes); others by their tokens
        if self._bundled is not None:
            return (_rebuild_bundled, (*self._bundled, self.name, self.special_text))
        return (
            _rebuild,
            (self.name, self._tokens, self._pattern, self._special_tokens, self._merges, self.special_text,
             self._empty_ranks),
        )

    # ================================================================ Private

    @property
    def _tokens(self) -> List[bytes]:
        if self._tokens_cache is None:
            self._tokens_cache = self._core.token_bytes_list()
        return self._tokens_cache

    @property
    def _empty_ranks(self) -> List[int]:
        """The ranks that hold the empty token (ascending)."""
        return self._core.empty_ranks()

    def _rank_map(self) -> Dict[bytes, int]:
        """:attr:`mergeable_ranks` itself, built once (callers must not change it)."""
        if self._ranks is None:
            ranks = {t: i for i, t in enumerate(self._tokens) if t}  # b"" is a gap
            ranks.update((b"", r) for r in self._empty_ranks)  # or the empty token, as in tiktoken
            # a rank filled with its special token's own text (a core "filler",
            # see CoreBpe::from_vocab) is that special token, not a mergeable one
            for s, i in self._special_tokens.items():
                if i < len(self._tokens) and self._tokens[i] == s.encode("utf-8"):
                    del ranks[self._tokens[i]]
            self._ranks = ranks
        return self._ranks

    def _special_policy(self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> SpecialPolicy:
        """The :class:`~bytepair.special.SpecialPolicy` of tiktoken's arguments for
        this tokenizer (for bytepair's own tools that call the core directly)."""
        return _special.resolve(self._special_tokens, self.special_text, allowed_special, disallowed_special)

    def _policy(self, text: object, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> SpecialPolicy:
        """The policy of one call on ``text`` (checked: a str, and no disallowed
        string that is not a special token)."""
        if allowed_special is NO_SPECIALS and disallowed_special is None and type(text) is str:
            return self._default_policy  # the common call, without normalising the arguments
        check_text(text)
        if disallowed_special:
            _special.check_foreign_disallowed(text, disallowed_special, self._special_tokens)  # type: ignore[arg-type]
        return self._special_policy(allowed_special, disallowed_special)

    def _batch(self, run, texts, num_threads, allowed_special, disallowed_special):  # type: ignore[no-untyped-def]
        """Shared argument handling of the batch calls: checks, special-token
        policy, and tiktoken's lone-surrogate repair only when the fast path refuses."""
        texts = check_texts(texts)
        threads = check_threads(num_threads)
        pol = self._special_policy(allowed_special, disallowed_special)
        if disallowed_special:
            for t in texts:
                _special.check_foreign_disallowed(t, disallowed_special, self._special_tokens)
        try:
            return run(texts, *pol.core_args, threads)
        except UnicodeEncodeError:
            return run([fix_surrogates(t) for t in texts], *pol.core_args, threads)

    def __repr__(self) -> str:
        shown = self.pattern_name or ("custom" if self._pattern else None)
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={shown!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        if self._core is other._core:
            return True
        return (
            self._pattern == other._pattern
            and self._special_tokens == other._special_tokens
            and self._tokens == other._tokens
            and self._empty_ranks == other._empty_ranks
        )

    def __hash__(self) -> int:
        # consistent with __eq__: equal tokenizers have the same pattern, special
        # tokens and vocabulary size (cheap: no pass over the tokens)
        return hash((self._pattern, frozenset(self._special_tokens.items()), self._core.n_vocab))


def _run(fn: Callable[..., Any], text: str, *args: Any) -> Any:
    """``fn(text, *args)``; a text with lone surrogates (which the core cannot
    take as UTF-8) is repaired as tiktoken does and passed again."""
    try:
        return fn(text, *args)
    except UnicodeEncodeError:
        return fn(fix_surrogates(text), *args)


def _rebuild(name, tokens, pattern, specials, merges, special_text, empty=()):  # pickling helper
    return Tokenizer(as_gaps(tokens, empty), pattern, specials, name=name, merges=merges, special_text=special_text)


def _rebuild_bundled(loader, bundled, name, special_text):  # pickling helper
    tok = loader(bundled)
    if tok.special_text != special_text or tok.name != name:
        tok = tok.with_special_text(special_text)
        tok.name = name
    return tok
