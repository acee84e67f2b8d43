"""The ``Tokenizer``: one class for the bundled encodings and for trained tokenizers.

Its method names follow tiktoken's ``Encoding`` so code can switch in one line.
The hot loops (pre-tokenization, merging, batch work) run in the Rust core
(``bytepair._core.CoreBPE``) with the GIL released; this module owns argument
handling and policy.

Special tokens follow tiktoken exactly: text of a special token becomes its id
only when listed in ``allowed_special``; by default any other occurrence raises
:class:`~bytepair.errors.DisallowedSpecialError` (a ``ValueError``) with a fix-it
message. One more policy, ``special_text="text"``, makes every special-token text
plain text by default (for counting user documents); it applies to every method
(``encode``, ``encode_batch``, ``count``, ``encode_to_numpy``) and is saved with
the tokenizer.

Lone surrogates in ``str`` input are handled as tiktoken does: the text goes
through a UTF-16 ``surrogatepass`` round trip, so paired surrogates become their
character and lone ones become U+FFFD.
"""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Collection,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _core
from . import patterns as _patterns
from .errors import DisallowedSpecialError, UnknownTokenError, VocabError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from . import budget
    from .stream import StreamDecoder

ENDOFTEXT = "<|endoftext|>"

#: What ``encode`` does by default with special-token text that is not allowed:
#: ``"raise"`` (tiktoken's behaviour) or ``"text"`` (encode it as ordinary text).
SpecialText = Literal["raise", "text"]

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str], None]

_NO_SPECIALS: AbstractSet[str] = frozenset()


class Tokenizer:
    """A byte-level BPE tokenizer: mergeable tokens by rank, a pre-tokenization
    pattern and special tokens.

    Args:
        mergeable_ranks: token bytes to rank (id), or a sequence of token bytes in
            rank order. Every single byte must be a token. Ranks may leave gaps
            above 255 (ids that hold no mergeable token, e.g. where a special
            token sits below tokens added by :func:`bytepair.extend`); in the
            sequence form a gap is ``None``.
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
            tokens = _tokens_from_ranks(mergeable_ranks)
        else:
            tokens = _tokens_from_list(mergeable_ranks)
        specials = _check_specials(special_tokens)
        pat = _patterns.resolve(pattern)
        self._setup(_core.CoreBPE(tokens, specials, pat), pat, specials, name, merges, special_text)
        self._tokens_cache: Optional[List[bytes]] = tokens

    @classmethod
    def from_core(
        cls,
        core: "_core.CoreBPE",
        pattern: Optional[str],
        special_tokens: Mapping[str, int],
        *,
        name: str,
        bundled: Optional[str] = None,
        special_text: SpecialText = "raise",
    ) -> "Tokenizer":
        """Wraps an already built ``bytepair._core.CoreBPE`` (the bundled encodings
        and the trainer build theirs in Rust and load this way)."""
        self = cls.__new__(cls)
        self._setup(core, pattern, dict(special_tokens), name, None, special_text)
        self._tokens_cache = None
        self._bundled = bundled
        return self

    def _setup(self, core, pattern, specials, name, merges, special_text) -> None:
        if special_text not in ("raise", "text"):
            raise ValueError(f"special_text must be 'raise' or 'text', not {special_text!r}")
        self.name = name
        self._pattern = pattern
        self._special_tokens: Dict[str, int] = specials
        self._merges = [tuple(m) for m in merges] if merges is not None else None
        self.special_text: SpecialText = special_text
        self._core = core
        self._ranks: Optional[Dict[bytes, int]] = None
        self._bundled: Optional[str] = None

    # ------------------------------------------------------------ properties

    @property
    def core(self) -> "_core.CoreBPE":
        """The Rust encoder behind this tokenizer, for bytepair's own tools that
        call the core directly (audit, budgets, the shard pipeline, the merge-path
        tests). Its methods take the core's arguments, not tiktoken's: see
        :meth:`special_policy`."""
        return self._core

    @property
    def _tokens(self) -> List[bytes]:
        if self._tokens_cache is None:
            self._tokens_cache = self._core.token_bytes_list()
        return self._tokens_cache

    @property
    def pattern(self) -> Optional[str]:
        """The pre-tokenization regex string, or None."""
        return self._pattern

    @property
    def pattern_name(self) -> Optional[str]:
        """``"gpt2"``, ``"cl100k"`` or ``"o200k"`` for the built-in patterns, else None."""
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

    def _rank_map(self) -> Dict[bytes, int]:
        """:attr:`mergeable_ranks` itself, built once (callers must not change it)."""
        if self._ranks is None:
            ranks = {t: i for i, t in enumerate(self._tokens) if t}  # b"" is a gap
            # a rank filled with its special token's own text (a core "filler",
            # see CoreBpe::from_vocab) is that special token, not a mergeable one
            for s, i in self._special_tokens.items():
                if i < len(self._tokens) and self._tokens[i] == s.encode("utf-8"):
                    del ranks[self._tokens[i]]
            self._ranks = ranks
        return self._ranks

    @property
    def token_bytes_list(self) -> List[bytes]:
        """Mergeable token bytes in rank order (a copy); ``b""`` at a gap (an id
        below the last rank that holds no mergeable token, see :attr:`gaps`)."""
        return list(self._tokens)

    @property
    def gaps(self) -> List[int]:
        """Ids below the last rank that hold no mergeable token (some may hold a
        special token). Empty except for vocabularies grown by
        :func:`bytepair.extend` from a base whose special tokens sit above its
        ranks, such as gpt2 (50256) or o200k_base (199998-200018)."""
        return [i for i, t in enumerate(self._tokens) if not t]

    @property
    def merges(self) -> List[Tuple[int, int]]:
        """The ordered merge list: ``merges[k]`` is the pair ``(left_id, right_id)``
        whose merge made the k-th multi-byte token."""
        if self._merges is None:
            self._merges = [tuple(m) for m in self._core.derive_merges()]
        return list(self._merges)

    # ------------------------------------------------------------ encoding

    def special_policy(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> Optional[Tuple[Optional[List[str]], Optional[List[str]]]]:
        """Normalises tiktoken's arguments to the core's ``(allowed, disallowed)``
        name lists. ``None`` means "plain text" (no special handling at all);
        ``(None, None)`` means tiktoken's default (all disallowed, none allowed)."""
        if allowed_special is _NO_SPECIALS and disallowed_special is None:
            if self.special_text == "text" or not self._special_tokens:
                return None
            return (None, None)
        if allowed_special == "all":
            allowed = set(self._special_tokens)
        else:
            if isinstance(allowed_special, str):
                raise TypeError("allowed_special must be 'all' or a set of str, not a str")
            allowed = set(allowed_special)
        if disallowed_special is None:
            disallowed_special = "all" if self.special_text == "raise" else ()
        if disallowed_special == "all":
            disallowed = set(self._special_tokens) - allowed
        else:
            if isinstance(disallowed_special, str):
                raise TypeError("disallowed_special must be 'all' or a collection of str, not a str")
            disallowed = set(disallowed_special)
        allowed &= self._special_tokens.keys()
        if not allowed and not (disallowed & self._special_tokens.keys()):
            return None
        return (sorted(allowed), sorted(disallowed & self._special_tokens.keys()))

    def _check_foreign_disallowed(self, text: str, disallowed_special: DisallowedSpecial) -> None:
        # tiktoken searches the text for every disallowed string, special or not
        if disallowed_special is None or disallowed_special == "all":
            return
        for s in disallowed_special:
            if s not in self._special_tokens and s and s in text:
                raise DisallowedSpecialError(
                    f"Encountered text corresponding to disallowed special token {s!r}.\n"
                    "Remove it from `disallowed_special` to encode it as normal text."
                )

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
        num_threads: Optional[int] = None,
    ) -> List[int]:
        """Encodes text to ids.

        ``num_threads``: a text of 256 KB or more is cut where its ids cannot
        change and encoded on this many threads (``None``: one per CPU core,
        ``1``: this thread only); the ids are always those of a one-thread
        encode. Shorter texts run on the calling thread.

        Special-token text becomes its id only when listed in ``allowed_special``
        (or ``"all"``). Otherwise, by default (``special_text="raise"``) it raises
        :class:`~bytepair.errors.DisallowedSpecialError` like tiktoken; pass
        ``disallowed_special=()`` (or build the tokenizer with
        ``special_text="text"``) to encode it as plain text.

        >>> import bytepair
        >>> enc = bytepair.get_encoding("gpt2")
        >>> enc.encode("Hello")
        [15496]
        >>> enc.encode("<|endoftext|>", allowed_special="all")
        [50256]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        if num_threads is not None:
            num_threads = _check_threads(num_threads)
        if allowed_special is _NO_SPECIALS and disallowed_special is None and type(text) is str:
            # the common call, without the argument normalisation below
            try:
                if self.special_text == "text" or not self._special_tokens:
                    return self._core.encode_ordinary(text, num_threads)
                return self._core.encode(text, None, None, num_threads)
            except UnicodeEncodeError:
                pass  # lone surrogates: the general path repairs them
        text = check_text(text)
        pol = self.special_policy(allowed_special, disallowed_special)
        if disallowed_special:
            self._check_foreign_disallowed(text, disallowed_special)
        try:
            if pol is None:
                return self._core.encode_ordinary(text, num_threads)
            return self._core.encode(text, *pol, num_threads)
        except UnicodeEncodeError:
            text = fix_surrogates(text)
            if pol is None:
                return self._core.encode_ordinary(text, num_threads)
            return self._core.encode(text, *pol, num_threads)

    def encode_ordinary(self, text: str, *, num_threads: Optional[int] = None) -> List[int]:
        """Encodes text with special-token text treated as plain text
        (``num_threads`` as in :meth:`encode`).

        >>> import bytepair
        >>> bytepair.get_encoding("o200k_base").encode_ordinary("strawberry")
        [302, 1618, 19772]
        """
        if num_threads is not None:
            num_threads = _check_threads(num_threads)
        text = check_text(text)
        try:
            return self._core.encode_ordinary(text, num_threads)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(fix_surrogates(text), num_threads)

    def count(
        self,
        text: str,
        *,
        limit: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> int:
        """The number of ids :meth:`encode` would return, computed without
        building the list (memory stays small for huge texts).

        With ``limit``, counting stops as soon as the count exceeds it and the
        result is ``limit + 1`` (read it as "over the limit"); the work is then
        proportional to the part of the text read (see :mod:`bytepair.budget`).

        >>> import bytepair
        >>> enc = bytepair.get_encoding("o200k_base")
        >>> enc.count("안녕하세요, 토크나이저입니다.")
        10
        >>> enc.count("안녕하세요, 토크나이저입니다.", limit=3)
        4
        """
        if limit is not None:
            from . import budget

            return budget.count(self, text, limit=limit, allowed_special=allowed_special,
                                disallowed_special=disallowed_special)
        text = check_text(text)
        pol = self.special_policy(allowed_special, disallowed_special) or ([], [])
        if disallowed_special:
            self._check_foreign_disallowed(text, disallowed_special)
        try:
            return self._core.count(text, *pol)
        except UnicodeEncodeError:
            return self._core.count(fix_surrogates(text), *pol)

    def truncate_text(
        self,
        text: str,
        max_tokens: int,
        *,
        side: "budget.Side" = "end",
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> str:
        """The longest prefix (``side="end"``) or suffix (``side="start"``) of
        ``text``, cut at a character boundary, whose encoding has at most
        ``max_tokens`` tokens; exact (see :func:`bytepair.budget.truncate_text`:
        why this is not ``decode(encode(text)[:n])``).

        >>> import bytepair
        >>> bytepair.get_encoding("o200k_base").truncate_text("Tokenizers count, cut and chunk.", 3)
        'Tokenizers count'
        """
        from . import budget

        return budget.truncate_text(self, text, max_tokens, side=side, allowed_special=allowed_special,
                                    disallowed_special=disallowed_special)

    def chunk_text(
        self,
        text: str,
        max_tokens: int,
        *,
        overlap: int = 0,
        boundary: "budget.Boundary" = "token",
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> List[str]:
        """Chunks of at most ``max_tokens`` tokens that concatenate (minus the
        ``overlap``-token overlaps) to ``text``, cut at the last line or paragraph
        break inside the budget when ``boundary`` asks for it (see
        :func:`bytepair.budget.chunk_text`).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").chunk_text("a b c d e", 2)
        ['a b', ' c d', ' e']
        """
        from . import budget

        return budget.chunk_text(self, text, max_tokens, overlap=overlap, boundary=boundary,
                                 allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_with_offsets(
        self,
        text: str,
        *,
        unit: "budget.Unit" = "char",
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> Tuple[List[int], Sequence[Tuple[int, int]]]:
        """``(ids, offsets)``: :meth:`encode`'s ids and the ``(start, end)`` span of
        each, in characters (``unit="char"``; a token inside a multi-byte
        character covers that whole character) or bytes (see
        :func:`bytepair.budget.encode_with_offsets`).

        >>> import bytepair
        >>> ids, offsets = bytepair.get_encoding("o200k_base").encode_with_offsets("hello world")
        >>> offsets.tolist()
        [(0, 5), (5, 11)]
        """
        from . import budget

        return budget.encode_with_offsets(self, text, unit=unit, allowed_special=allowed_special,
                                          disallowed_special=disallowed_special)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
        num_threads: Optional[int] = None,
    ) -> "np.ndarray":
        """Like :meth:`encode`, returning a ``numpy.uint32`` array that owns the
        core's buffer (no Python list in between, no copy; writable). A text of
        256 KB or more is encoded on ``num_threads`` threads (``None``: one per
        core), with exactly the one-thread ids.

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").encode_to_numpy("hello world").tolist()
        [15339, 1917]
        """
        if num_threads is not None:
            num_threads = _check_threads(num_threads)
        if allowed_special is _NO_SPECIALS and disallowed_special is None and type(text) is str:
            # the common call, without the argument normalisation below
            try:
                if self.special_text == "text" or not self._special_tokens:
                    return self._core.encode_to_array(text, [], [], num_threads)
                return self._core.encode_to_array(text, None, None, num_threads)
            except UnicodeEncodeError:
                pass  # lone surrogates: the general path repairs them
        text = check_text(text)
        pol = self.special_policy(allowed_special, disallowed_special) or ([], [])
        if disallowed_special:
            self._check_foreign_disallowed(text, disallowed_special)
        try:
            return self._core.encode_to_array(text, *pol, num_threads)
        except UnicodeEncodeError:
            return self._core.encode_to_array(fix_surrogates(text), *pol, num_threads)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> List[List[int]]:
        """Encodes many texts in parallel on Rust threads with the GIL released.

        Args:
            texts: a list (or any sequence) of str.
            num_threads: worker threads, at most; ``None`` uses one per CPU core, ``1``
                runs on the calling thread. A batch uses one thread per 128 KB of text
                at most (a shorter batch costs less on one thread than waking
                another); the ids never depend on the thread count. Pools are kept
                per thread count.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").encode_batch(["hello world", "goodbye world"])
        [[31373, 995], [11274, 16390, 995]]
        """
        return self._batch(self._core.encode_batch, texts, num_threads, allowed_special, disallowed_special)

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> Tuple["np.ndarray", "np.ndarray"]:
        """Like :meth:`encode_batch`, returning every text's ids in one
        ``numpy.uint32`` array and ``len(texts) + 1`` ``int64`` offsets: text
        ``i`` is ``ids[offsets[i]:offsets[i + 1]]``. No Python int or list is
        built per id, so it scales with the threads where ``encode_batch`` is
        held back by building lists on one thread (see benches/RESULTS.md).

        >>> import bytepair
        >>> ids, offsets = bytepair.get_encoding("gpt2").encode_batch_to_numpy(["hello world", "goodbye world"])
        >>> ids.tolist(), offsets.tolist()
        ([31373, 995, 11274, 16390, 995], [0, 2, 5])
        """
        return self._batch(  # type: ignore[no-any-return]
            self._core.encode_batch_to_arrays, texts, num_threads, allowed_special, disallowed_special
        )

    def encode_files(
        self,
        paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
        *,
        text_column: str = "text",
        format: Optional[str] = None,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = (),
    ) -> Tuple["np.ndarray", "np.ndarray"]:
        """Encodes the documents of whole files: one flat ``numpy.uint32`` array
        of every document's ids, in file order, plus ``n_documents + 1``
        ``int64`` offsets (document ``i`` is ``ids[offsets[i]:offsets[i + 1]]``),
        exactly what :meth:`encode_batch_to_numpy` gives on the documents.

        Files are read as by :func:`bytepair.distributed.encode_dataset`: a text
        file is one document, a JSONL line or a Parquet row is one
        (``text_column``), ``.gz`` text and JSONL are decompressed, ``format``
        (``"text"``, ``"jsonl"`` or ``"parquet"``) overrides the file name.
        Reading, encoding and collecting run in Rust on ``num_threads`` threads
        (``None``: one per core) with the GIL released. Special-token text is
        plain text unless listed in ``allowed_special`` (as in
        ``encode_dataset``). A file that cannot be read raises
        :class:`~bytepair.distributed.ShardError` naming it and the line or row.

        >>> import bytepair, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp(), "a.jsonl")
        >>> _ = p.write_text('{"text": "hello world"}\\n{"text": "goodbye world"}\\n')
        >>> ids, offsets = bytepair.get_encoding("gpt2").encode_files(p)
        >>> ids.tolist(), offsets.tolist()
        ([31373, 995, 11274, 16390, 995], [0, 2, 5])
        """
        from .distributed.native import encode_files

        return encode_files(
            self,
            paths,
            text_column=text_column,
            format=format,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, num_threads: Optional[int] = None
    ) -> List[List[int]]:
        """Like :meth:`encode_batch` with special-token text as plain text."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    def count_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = None,
    ) -> List[int]:
        """Token counts of many texts, in parallel (see :meth:`count`)."""
        return self._batch(self._core.count_batch, texts, num_threads, allowed_special, disallowed_special)

    def _batch(self, run, texts, num_threads, allowed_special, disallowed_special):  # type: ignore[no-untyped-def]
        """Shared argument handling of the batch calls: checks, special-token
        policy, and tiktoken's lone-surrogate repair only when the fast path refuses."""
        texts = _check_texts(texts)
        threads = _check_threads(num_threads)
        pol = self.special_policy(allowed_special, disallowed_special) or ([], [])
        if disallowed_special:
            for t in texts:
                self._check_foreign_disallowed(t, disallowed_special)
        try:
            return run(texts, *pol, threads)
        except UnicodeEncodeError:
            return run([fix_surrogates(t) for t in texts], *pol, threads)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of text (or bytes) that is exactly one token, special tokens included.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").encode_single_token("<|endoftext|>")
        50256

        Raises:
            KeyError: when it is not one token.
        """
        b = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        r = self._core.single_token(b)
        if r is None:
            raise KeyError(text_or_bytes)
        return r

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Concatenated bytes of the ids.

        Raises:
            UnknownTokenError: (a ``KeyError``) naming the first id that is not in
                the vocabulary (negative and huge ids included).
            TypeError: for ids that are not integers.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode_bytes([47991, 250])
        b'\\xed\\x95\\x9c'
        """
        try:
            return self._core.decode_bytes(tokens)
        except (OverflowError, TypeError):
            _raise_bad_ids(tokens, self._core.n_vocab)
            raise

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids to text; invalid UTF-8 is handled by ``errors`` (default: U+FFFD).

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode([47991, 250, 166, 113, 255])
        '한국'
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: Optional[int] = None
    ) -> List[str]:
        """Decodes many id lists (byte assembly runs on Rust threads)."""
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: Optional[int] = None
    ) -> List[bytes]:
        """The bytes of many id lists."""
        threads = _check_threads(num_threads)
        try:
            return self._core.decode_batch_bytes(batch, threads)
        except (OverflowError, TypeError):
            for ids in batch:
                _raise_bad_ids(ids, self._core.n_vocab)
            raise

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode_single_token_bytes(15496)
        b'Hello'
        """
        try:
            return self._core.token_bytes(token)
        except (OverflowError, TypeError):
            _raise_bad_ids([token], self._core.n_vocab)
            raise

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each id.

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        try:
            return self._core.tokens_bytes(tokens)
        except (OverflowError, TypeError):
            _raise_bad_ids(tokens, self._core.n_vocab)
            raise

    def stream_decoder(self, errors: str = "replace") -> "StreamDecoder":
        """An incremental decoder: ``feed(id | ids)`` returns only whole characters
        and ``flush()`` the rest (see :class:`bytepair.stream.StreamDecoder`).

        >>> import bytepair
        >>> d = bytepair.get_encoding("gpt2").stream_decoder()
        >>> [d.feed(i) for i in [47991, 250, 166, 113, 255]]
        ['', '한', '', '', '국']
        """
        from .stream import StreamDecoder

        return StreamDecoder(self, errors=errors)

    # ------------------------------------------------------------ truncation

    def truncate(self, vocab_size: int) -> Tuple["Tokenizer", Dict[int, int]]:
        """Keeps the ids below a cut and every special token, so that
        ``n_vocab == vocab_size`` (any prefix of a merge list is a valid tokenizer).

        The cut is the largest id ``c`` with ``c + (specials at ids >= c) ==
        vocab_size``: mergeable tokens below ``c`` keep their ids, as do special
        tokens below ``c`` (in a gap); those at or above ``c`` are renumbered
        ``c, c+1, ...`` in their old order. For a tokenizer grown by
        :func:`bytepair.extend` without new special tokens,
        ``truncate(base.n_vocab)`` is the base again, gaps and specials included.

        Returns ``(tokenizer, id_map)`` where ``id_map`` maps every old id that
        survives to its new id.

        >>> tok = Tokenizer([bytes([b]) for b in range(256)] + [b"ab", b"abc"], None, {"<s>": 258})
        >>> small, ids = tok.truncate(258)
        >>> small.n_vocab, ids[258]
        (258, 257)
        """
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
            raise TypeError(f"vocab_size must be a whole number (int), got {type(vocab_size).__name__} {vocab_size!r}")
        special_ids = sorted(self._special_tokens.values())
        lo = 256 + len(special_ids)
        if not isinstance(vocab_size, int) or not lo <= vocab_size <= self.n_vocab:
            raise ValueError(f"vocab_size must be between {lo} and {self.n_vocab}, got {vocab_size}")
        cut = vocab_size
        while cut + sum(1 for i in special_ids if i >= cut) > vocab_size:
            cut -= 1
        tokens = list(self._tokens[:cut])
        while tokens and not tokens[-1]:
            tokens.pop()
        id_map = {i: i for i, t in enumerate(tokens) if t}
        specials: Dict[str, int] = {}
        moved = 0
        for s, old in sorted(self._special_tokens.items(), key=lambda kv: kv[1]):
            new = old if old < cut else cut + moved
            moved += old >= cut
            specials[s] = new
            id_map[old] = new
        merges = None
        if self._merges is not None:
            n_multi = sum(1 for t in tokens if len(t) > 1)
            merges = self._merges[:n_multi]
        tok = Tokenizer(_as_gaps(tokens), self._pattern, specials, name=self.name, merges=merges,
                        special_text=self.special_text)
        return tok, id_map

    # ------------------------------------------------------------ files

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the tokenizer in bytepair's JSON format (atomic)."""
        from .formats import native

        native.save(self, path)

    def with_special_text(self, special_text: SpecialText) -> "Tokenizer":
        """A tokenizer sharing this one's vocabulary (no copy) with another
        default special-token policy.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").with_special_text("text").encode("<|endoftext|>")
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        tok = Tokenizer.from_core(self._core, self._pattern, self._special_tokens, name=self.name,
                                   bundled=self._bundled, special_text=special_text)
        tok._tokens_cache = self._tokens_cache
        tok._merges = self._merges
        return tok

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={self.pattern_name or ('custom' if self._pattern else None)!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        if self._core is other._core:
            return True
        return (
            self._pattern == other._pattern
            and self._special_tokens == other._special_tokens
            and self._tokens == other._tokens
        )

    def __hash__(self) -> int:
        # consistent with __eq__: equal tokenizers have the same pattern, special
        # tokens and vocabulary size (cheap: no pass over the tokens)
        return hash((self._pattern, frozenset(self._special_tokens.items()), self._core.n_vocab))

    # ------------------------------------------------------------ tiktoken's names

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        """tiktoken's attribute: mergeable token bytes to rank (a copy); gaps
        (p50k_base's 50256, which is ``<|endoftext|>``) are not in it."""
        return self.mergeable_ranks

    @property
    def _pat_str(self) -> Optional[str]:
        """tiktoken's attribute: the pre-tokenization regex (None for no splitting)."""
        return self._pattern

    def is_special_token(self, token: int) -> bool:
        """Whether an id is a special token's (tiktoken's name).

        >>> import bytepair
        >>> enc = bytepair.get_encoding("cl100k_base")
        >>> enc.is_special_token(100257), enc.is_special_token(15339)
        (True, False)
        """
        if not isinstance(token, int):
            raise TypeError(f"token must be an int, not {type(token).__name__}")
        return token in self._special_ids

    @property
    def _special_ids(self) -> AbstractSet[int]:
        ids = self.__dict__.get("_special_id_set")
        if ids is None or len(ids) > len(self._special_tokens):
            ids = frozenset(self._special_tokens.values())
            self.__dict__["_special_id_set"] = ids
        return ids

    def token_byte_values(self) -> List[bytes]:
        """Every mergeable token's bytes, sorted (tiktoken's ``token_byte_values``).

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").token_byte_values()[-1]
        b'\\xff'
        >>> len(bytepair.get_encoding("gpt2").token_byte_values())
        50256
        """
        return sorted(self._rank_map())

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """``(text, offsets)``: the decoded text and, per token, the index of the
        character holding its first byte (tiktoken's semantics; invalid UTF-8
        raises ``UnicodeDecodeError`` as there).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").decode_with_offsets([15339, 1917])
        ('hello world', [0, 5])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0
        for b in parts:
            offsets.append(max(0, chars - (1 if b and 0x80 <= b[0] < 0xC0 else 0)))
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def _encode_bytes(self, data: bytes) -> List[int]:
        """tiktoken's ``_encode_bytes``: encodes bytes that need not be UTF-8 (see
        :func:`bytepair.budget.encode_bytes`).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base")._encode_bytes(b" \\xec\\x8b\\xa4\\xed")
        [62085]
        """
        from . import budget

        return budget.encode_bytes(self, data)

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> List[int]:
        """tiktoken's ``_encode_single_piece``: text (or bytes) merged as one piece,
        without the pre-tokenizer; special-token text is plain text.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2")._encode_single_piece("helloqqqq")
        [31373, 38227, 38227]
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = fix_surrogates(check_text(text_or_bytes)).encode("utf-8")
        elif not isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        return self._core.encode_single_piece(bytes(text_or_bytes))

    def _encode_only_native_bpe(self, text: str) -> List[int]:
        """tiktoken's ``_encode_only_native_bpe`` (there: the pattern applied with
        the ``regex`` module, each piece merged on its own). The pieces are the
        pre-tokenizer's, so this is :meth:`encode_ordinary`.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2")._encode_only_native_bpe("hello world")
        [31373, 995]
        """
        return self.encode_ordinary(text)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = "all",
    ) -> Tuple[List[int], List[List[int]]]:
        """tiktoken's ``encode_with_unstable``: the tokens that no continuation of
        ``text`` can change, and the possible token sequences for the rest (see
        :func:`bytepair.budget.encode_with_unstable`).

        >>> import bytepair
        >>> stable, completions = bytepair.get_encoding("gpt2").encode_with_unstable("hello fanta")
        >>> stable, [31373, 277, 4910] in [stable + c for c in completions]
        ([31373], True)
        """
        if allowed_special is _NO_SPECIALS and disallowed_special == "all" and type(text) is str:
            # the default call, without the argument normalisation
            try:
                return self._core.encode_with_unstable(text)
            except UnicodeEncodeError:
                pass  # lone surrogates: the general path repairs them
        from . import budget

        return budget.encode_with_unstable(self, text, allowed_special=allowed_special,
                                           disallowed_special=disallowed_special)

    def __reduce__(self):
        # bundled encodings pickle by name (a few bytes); others by their tokens
        if self._bundled is not None:
            return (_rebuild_bundled, (self._bundled, self.name, self.special_text))
        return (
            _rebuild,
            (self.name, self._tokens, self._pattern, self._special_tokens, self._merges, self.special_text),
        )


def _rebuild(name, tokens, pattern, specials, merges, special_text):  # pickling helper
    return Tokenizer(_as_gaps(tokens), pattern, specials, name=name, merges=merges, special_text=special_text)


def _rebuild_bundled(bundled, name, special_text):  # pickling helper
    from .registry import get_encoding

    tok = get_encoding(bundled)
    if tok.special_text != special_text or tok.name != name:
        tok = tok.with_special_text(special_text)
        tok.name = name
    return tok


def _tokens_from_ranks(ranks: Mapping[bytes, int]) -> List[bytes]:
    """Token bytes by rank, ``b""`` at a gap (checked: ranks are ints, each
    rank and token given once; the core checks that every byte is a token)."""
    by_rank: Dict[int, bytes] = {}
    for tok, r in ranks.items():
        if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < 2**32 - 1:
            raise VocabError(f"token {tok!r} has rank {r!r}; ranks are ints in 0..{2**32 - 2}")
        if r in by_rank:
            raise VocabError(f"rank {r} is given to both {by_rank[r]!r} and {tok!r}")
        if not tok:
            raise VocabError(f"rank {r} is the empty token")
        by_rank[r] = bytes(tok)
    n = max(by_rank) + 1 if by_rank else 0
    return [by_rank.get(r, b"") for r in range(n)]


def _tokens_from_list(tokens: Sequence[Optional[bytes]]) -> List[bytes]:
    """The sequence form: ``None`` marks a gap; a trailing gap is dropped."""
    out: List[bytes] = []
    for i, t in enumerate(tokens):
        if t is None:
            out.append(b"")
            continue
        b = bytes(t)
        if not b:
            raise VocabError(f"token {i} is empty (a gap in the ranks is written None)")
        out.append(b)
    while out and not out[-1]:
        out.pop()
    return out


def _as_gaps(tokens: Sequence[bytes]) -> List[Optional[bytes]]:
    """Internal token bytes (``b""`` at gaps) in the sequence form (``None``)."""
    return [t if t else None for t in tokens]


def _check_specials(special_tokens: Optional[Mapping[str, int]]) -> Dict[str, int]:
    specials = dict(special_tokens or {})
    for s, i in specials.items():
        if not isinstance(s, str):
            raise VocabError(f"special token {s!r} is not a str")
        if not isinstance(i, int) or isinstance(i, bool):
            raise VocabError(f"special token {s!r} has a non-integer id {i!r}")
        if not 0 <= i < 2**32:
            raise VocabError(f"special token {s!r} has id {i}; ids must be in 0..{2**32 - 1}")
    return specials


def check_text(text: object) -> str:
    """``text`` itself when it is a str; a TypeError saying so otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}; decode bytes first")
    return text


def _check_texts(texts: object) -> List[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError("expected a list of str; for one text use encode()")
    out = list(texts)  # type: ignore[call-overload]
    for t in out:
        check_text(t)
    return out


def _check_threads(num_threads: object) -> Optional[int]:
    if num_threads is None:
        return None
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive int or None, not {num_threads!r}")
    return num_threads


def fix_surrogates(text: str) -> str:
    """Replaces lone surrogates with U+FFFD and joins surrogate pairs, as tiktoken does.

    >>> fix_surrogates("a" + chr(0xD800) + "b" + chr(0xD83D) + chr(0xDE00)) == "a\ufffdb\U0001f600"
    True
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _raise_bad_ids(ids: Iterable[object], n_vocab: int) -> None:
    """Raises the precise error for the first id the core could not convert."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"token ids must be a sequence of int, not {type(ids).__name__}")
    for i in ids:
        if not hasattr(i, "__index__") or isinstance(i, float):
            raise TypeError(f"token ids are int, got {type(i).__name__} ({i!r})")
        v = i.__index__()  # type: ignore[attr-defined]
        if v < 0 or v >= n_vocab:
            raise UnknownTokenError(f"token id {v} is not in the vocabulary (ids are 0..{n_vocab - 1})")
