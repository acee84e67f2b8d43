"""``PipelineTokenizer``: a :class:`~bytepair.Tokenizer` that encodes and decodes
exactly as Hugging Face ``tokenizers`` does with a ``tokenizer.json`` (see
:mod:`bytepair.formats.hf_pipeline` for the components it runs).

Differences from a rank-based :class:`~bytepair.Tokenizer`, all ``tokenizers``'
own semantics:

- added tokens (special or not) found in the text are their ids, always; in
  :meth:`~PipelineTokenizer.encode_ordinary` the special ones are plain text
  (``tokenizers``' ``encode_special_tokens``); ``allowed_special`` /
  ``disallowed_special`` do not apply;
- ``encode(text, add_special_tokens=True)`` adds the post-processor's ids (the
  BOS/EOS the model expects); the default adds none, as tiktoken;
- decoding is the ``ByteLevel`` decoder: a token of byte-alphabet characters is
  those bytes, any other token its UTF-8 text.

The methods that need merge ranks (offsets, budgets, truncation, shard
pipelines, ``save``) raise :class:`~bytepair.errors.UnsupportedComponentError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Sequence, Tuple

from .. import _core as _corelib
from ..checks import check_text, check_texts, check_threads
from ..errors import UnknownTokenError, UnsupportedComponentError
from ..tokenizer import Tokenizer
from . import hf_pipeline

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np



class PipelineTokenizer(Tokenizer):
    """A tokenizer read from a ``tokenizer.json``, run with its own pipeline.

    Args:
        data: the file's bytes.
        path: the file, for error messages.
        name: a label shown in ``repr``.
        parsed: the file as :func:`~bytepair.formats.hf_pipeline.read` gives
            it, when already read.
        override: the file's JSON (without vocab and merges) to run instead of
            its own (a ``transformers`` folder's, see :mod:`.hf_folder`).
    """

    def __init__(self, data: bytes, *, path: object = None, name: str = "tokenizer.json",
                 parsed: Optional[hf_pipeline.Read] = None, override: Optional[Dict[str, Any]] = None) -> None:
        file = hf_pipeline.read(data, path) if parsed is None else parsed
        if override is not None:
            file = (override, file[1])
        self._override = override
        pipe, added = hf_pipeline.build(file, path=path)
        specials = hf_pipeline.special_ids(added, file[0])
        self._data = data
        self._pipeline = pipe
        self._model = file[1]
        self._added = added
        self._lazy_core: Optional[_corelib.CoreBPE] = None
        self._setup(None, None, specials, name, None, "text")
        self._tokens_cache = None

    # The core (rank-based) is built on first use: only the properties that
    # list tokens read it; encoding and decoding run on the pipeline.
    @property  # type: ignore[override]
    def _core(self) -> "_corelib.CoreBPE":
        if self._lazy_core is None:
            self._lazy_core = self._build_core()
        return self._lazy_core

    @_core.setter
    def _core(self, core: Optional["_corelib.CoreBPE"]) -> None:
        self._lazy_core = core

    def _build_core(self) -> "_corelib.CoreBPE":
        by_id: Dict[int, bytes] = {}
        seen = set()
        assert self._model is not None  # a built pipeline has its model
        for i, b in sorted(self._model.byte_level()):
            if b and b not in seen:
                by_id[i] = b
                seen.add(b)
        specials: Dict[str, int] = {}
        for content, i, *_ in self._added:
            if i not in by_id or by_id[i] == content.encode("utf-8"):
                specials[content] = i
        n = max(by_id) + 1
        tokens: List[Optional[bytes]] = [by_id.get(i) for i in range(n)]
        # bytes the vocabulary lacks (never in UTF-8 text) go after every id
        top = max([n - 1, *specials.values()])
        tokens += [None] * (top + 1 - n)
        tokens += [bytes([b]) for b in range(256) if bytes([b]) not in seen]
        return Tokenizer(tokens, None, specials)._core

    # ------------------------------------------------------------ properties

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (model vocabulary and added tokens)."""
        return int(self._pipeline.n_vocab)

    @property
    def max_token_value(self) -> int:
        return self.n_vocab - 1

    @property
    def pretokenizer_paths(self) -> List[str]:
        """Which engine runs each pre-tokenizer stage (a hand-written scanner or
        ``fancy-regex``)."""
        return list(self._pipeline.paths)

    @property
    def pattern_name(self) -> Optional[str]:
        return None

    # ------------------------------------------------------------ encoding

    def encode(  # type: ignore[override]
        self,
        text: str,
        *,
        add_special_tokens: bool = False,
        allowed_special: object = None,
        num_threads: Optional[int] = None,
    ) -> List[int]:
        """The ids ``tokenizers``' ``encode(text, add_special_tokens=...)`` gives.

        Added tokens in the text are always their ids, so ``allowed_special``
        may only be ``"all"`` (what happens anyway); ``num_threads`` is accepted
        for the common signature (one text runs on one thread).
        """
        if allowed_special not in (None, "all"):
            self._unsupported(f"allowed_special={allowed_special!r} (added tokens are always read)")
        if num_threads is not None:
            check_threads(num_threads)
        return self._pipeline.encode(check_text(text), add_special_tokens)

    def encode_ordinary(self, text: str, *, num_threads: Optional[int] = None) -> List[int]:
        """:meth:`encode` with special added tokens read as text."""
        if num_threads is not None:
            check_threads(num_threads)
        return self._pipeline.encode(check_text(text), False, False)

    def encode_batch(  # type: ignore[override]
        self,
        texts: Sequence[str],
        *,
        add_special_tokens: bool = False,
        allowed_special: object = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        if allowed_special not in (None, "all"):
            self._unsupported(f"allowed_special={allowed_special!r} (added tokens are always read)")
        texts = check_texts(texts)
        threads = None if num_threads is None else check_threads(num_threads)
        return self._pipeline.encode_batch(texts, add_special_tokens, True, threads)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None) -> List[List[int]]:
        texts = check_texts(texts)
        threads = None if num_threads is None else check_threads(num_threads)
        return self._pipeline.encode_batch(texts, False, False, threads)

    def count(self, text: str, **kwargs: Any) -> int:  # type: ignore[override]
        if kwargs:
            self._unsupported(f"count({', '.join(kwargs)}=...)")
        return len(self._pipeline.encode(check_text(text), False))

    def count_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None,  # type: ignore[override]
                    **kwargs: Any) -> List[int]:
        if kwargs:
            self._unsupported(f"count_batch({', '.join(kwargs)}=...)")
        return [len(x) for x in self.encode_batch(texts, num_threads=num_threads)]

    def encode_to_numpy(  # type: ignore[override]
        self,
        text: str,
        *,
        add_special_tokens: bool = False,
        allowed_special: object = None,
        num_threads: Optional[int] = None,
    ) -> "np.ndarray":
        """:meth:`encode` as a ``numpy.uint32`` array that owns the pipeline's
        buffer (no Python list)."""
        if allowed_special not in (None, "all"):
            self._unsupported(f"allowed_special={allowed_special!r} (added tokens are always read)")
        if num_threads is not None:
            check_threads(num_threads)
        return self._pipeline.encode_to_array(check_text(text), add_special_tokens)

    def encode_batch_to_numpy(  # type: ignore[override]
        self,
        texts: Sequence[str],
        *,
        add_special_tokens: bool = False,
        allowed_special: object = None,
        num_threads: Optional[int] = None,
    ) -> Tuple["np.ndarray", "np.ndarray"]:
        """:meth:`encode_batch` as one ``numpy.uint32`` array of every id and
        ``len(texts) + 1`` ``int64`` offsets."""
        if allowed_special not in (None, "all"):
            self._unsupported(f"allowed_special={allowed_special!r} (added tokens are always read)")
        texts = check_texts(texts)
        threads = None if num_threads is None else check_threads(num_threads)
        return self._pipeline.encode_batch_to_array(texts, add_special_tokens, True, threads)

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        try:
            return bytes(self._pipeline.decode_bytes([int(t) for t in tokens]))
        except OverflowError:
            bad = next(t for t in tokens if not 0 <= int(t) < 1 << 32)
            raise UnknownTokenError(f"token id {bad} is not in the vocabulary") from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        return [self.decode_bytes([t]) for t in tokens]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: Optional[int] = None) -> List[bytes]:
        return [self.decode_bytes(ids) for ids in batch]

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: Optional[int] = None) -> List[str]:
        return [self.decode(ids, errors) for ids in batch]

    # ------------------------------------------------------------ not available

    def _unsupported(self, what: str) -> NoReturn:
        raise UnsupportedComponentError(
            f"{what} is not available for a tokenizer read with its tokenizer.json pipeline "
            "(it needs tiktoken-style merge ranks); encode, count and decode are"
        )

    def truncate_text(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("truncate_text")

    def chunk_text(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("chunk_text")

    def encode_with_offsets(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("encode_with_offsets")

    def encode_files(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("encode_files")

    def encode_with_unstable(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("encode_with_unstable")

    def decode_with_offsets(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("decode_with_offsets")

    def truncate(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("truncate")

    def save(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("save (copy the tokenizer.json file instead)")

    def with_special_text(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        self._unsupported("with_special_text")

    # ------------------------------------------------------------ Python protocol

    def __repr__(self) -> str:
        return f"<PipelineTokenizer {self.name!r} n_vocab={self.n_vocab}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PipelineTokenizer):
            return NotImplemented
        return self is other or (self._data == other._data and self._override == other._override)

    def __hash__(self) -> int:
        return hash(self._data)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_rebuild, (self._data, self.name, self._override))


def _rebuild(data: bytes, name: str, override: Optional[Dict[str, Any]] = None) -> PipelineTokenizer:
    return PipelineTokenizer(data, name=name, override=override)
