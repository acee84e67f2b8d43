"""Type stubs for the Rust extension ``bytepair._core`` (hand-written).

Mirrors ``src/py/*.rs`` (PyO3). Checked with
``PYTHONPATH=python python3 -m mypy.stubtest bytepair._core``.

PyO3 notes: ``#[new]`` is ``__new__`` (the inherited ``__init__`` takes no
arguments); the classes cannot be subclassed (``@final``, which also covers
``@disjoint_base``); ``Vec<T>`` arguments accept any sequence
(but not ``str``), ``HashMap`` arguments need a ``dict``, ``&[u8]`` needs
``bytes``.
"""

import os
from typing import Callable, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, TypeAlias, Union, final, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "FAST_PATTERNS",
    "MAX_THREADS",
    "NAMED_PATTERNS",
    "SUPERWORD_PATTERN",
    "ChunkCounter",
    "ChunkTable",
    "CoreBPE",
    "FolderWalk",
    "Pipeline",
    "Spans",
    "SpilledRuns",
    "TokenizerModel",
    "__version__",
    "_pretokenize_spans_scalar",
    "_pretokenize_stages",
    "_unicode_case_folds",
    "_unicode_class",
    "_utf8_vector",
    "clear_piece_cache",
    "count_until",
    "encode_shards",
    "encode_with_spans",
    "extend_merges",
    "json_object_keys",
    "learn_merges",
    "parity_merges",
    "piece_cache_budget",
    "pretokenize",
    "pretokenize_count",
    "pretokenize_spans",
    "pretokenizer_path",
    "read_tokenizer_json",
    "set_piece_cache_budget",
    "truncate_at",
    "truncate_span",
]

__version__: str
# True where a non-ASCII str is converted to UTF-8 by bytepair (AVX-512 VBMI2), else by CPython
_utf8_vector: bool
# the most threads a call runs on: 4 per core (more are clamped)
MAX_THREADS: int

# Called every ~100 ms from the calling thread as progress(bytes_done, merges_done).
_Progress: TypeAlias = Callable[[int, int], object]

# ---------------------------------------------------------------- Encoding

# Pre-tokenizers: `pattern` is a pattern name or a custom regex; None = the
# whole text is one piece.
def pretokenize(pattern: Optional[str], text: str) -> List[str]: ...
# (start, end) byte offsets of each piece in the UTF-8 encoding of `text`.
def pretokenize_spans(pattern: Optional[str], text: str) -> List[Tuple[int, int]]: ...
def pretokenize_count(pattern: Optional[str], text: str) -> int: ...
# Which path splits text with `pattern`: "scanner:<family>" (e.g. "scanner:llama3"),
# "regex" (fancy-regex) or "whole" (None).
def pretokenizer_path(pattern: Optional[str]) -> str: ...

# Private (tests): pretokenize_spans of a named pattern on the scalar scanner
# alone, the reference of the block pre-tokenizer (src/pretok/block.rs).
def _pretokenize_spans_scalar(pattern: str, text: str) -> List[Tuple[int, int]]: ...

# Private: pieces of text after tokenizer.json pre-tokenizer stages (kind, text_a, text_b, flag_x,
# flag_y), chains fused as Pipeline fuses them or stage by stage; and each stage's path.
def _pretokenize_stages(
    stages: List[Tuple[str, str, str, bool, bool]], text: str, fused: bool
) -> Tuple[List[str], List[str]]: ...

# The regular expressions of the named pre-tokenizers ("gpt2", "cl100k", "o200k"),
# which the core runs on hand-written scanners.
NAMED_PATTERNS: Dict[str, str]
# Every pattern string that runs on a scanner, by a short name: tiktoken's three,
# Hugging Face ByteLevel's, Llama 3's, Qwen2's, Qwen3.5's, tekken's, ...
FAST_PATTERNS: Dict[str, str]
SUPERWORD_PATTERN: str

# Private (scripts/gen-unicode16.py, tests): a class's (first, last) code-point
# ranges as regex-syntax (Unicode 16.0) reads it, and its simple case folding.
def _unicode_class(expr: str) -> List[Tuple[int, int]]: ...
def _unicode_case_folds() -> List[Tuple[int, List[int]]]: ...

# Wipes every thread's piece caches back to the vocabulary seed (benchmarks: cold encodes).
def clear_piece_cache() -> None: ...
# The byte budget of each piece cache (one per thread and encoder); env BYTEPAIR_PIECE_CACHE_BYTES.
def piece_cache_budget() -> int: ...
def set_piece_cache_budget(n_bytes: int) -> None: ...

# ---------------------------------------------------------------- Dataset shards

# (path, format "text"|"jsonl"|"parquet", gzip, output "bin"|"npy"|"memory"|"collect", dest)
_ShardJob: TypeAlias = Tuple[str, str, bool, str, Optional[str]]
# on_done(index, documents, tokens, ids, offsets, error): ids/offsets for "memory" outputs
_ShardDone: TypeAlias = Callable[[int, int, int, Optional[bytes], Optional[bytes], Optional[str]], object]
# loader(path) -> iterable of (offsets, wide, data): Arrow string arrays of a Parquet shard, a batch of rows each;
# called only for a Parquet file the Rust reader refuses (a codec not built in, not a plain string column)
_Ids: TypeAlias = npt.NDArray[np.uint32]
_Offsets: TypeAlias = npt.NDArray[np.int64]
_ColumnLoader: TypeAlias = Callable[[str], Iterable[Tuple[bytes, bool, bytes]]]

# The native shard pipeline (src/dataset); returns the "collect" outputs'
# ids (uint32) and offsets (int64): numpy arrays that own the core's vectors (no copy).
def encode_shards(
    core: CoreBPE,
    shards: Sequence[_ShardJob],
    *,
    column: str,
    eot: Optional[int],
    uint16: bool,
    num_threads: Optional[int],
    allowed_special: Sequence[str],
    disallowed_special: Sequence[str],
    loader: Optional[_ColumnLoader],
    on_done: _ShardDone,
    chunk_bytes: Optional[int] = None,
    max_inflight_bytes: Optional[int] = None,
) -> Tuple[_Ids, _Offsets]: ...
# budgets and offsets (src/py/budget.rs)
@final
class Spans:
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int, /) -> Tuple[int, int]: ...
    @overload
    def __getitem__(self, key: slice, /) -> List[Tuple[int, int]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def tolist(self) -> List[Tuple[int, int]]: ...
    def starts(self) -> List[int]: ...
    def ends(self) -> List[int]: ...

def encode_with_spans(
    core: CoreBPE, text: str, unit: str,
    allowed_special: Optional[Sequence[str]] = None, disallowed_special: Optional[Sequence[str]] = None,
) -> Tuple[List[int], Spans]: ...
def count_until(
    core: CoreBPE, text: str, limit: int,
    allowed_special: Optional[Sequence[str]] = None, disallowed_special: Optional[Sequence[str]] = None,
) -> int: ...
def truncate_at(
    core: CoreBPE, text: str, max_tokens: int, from_start: bool,
    allowed_special: Optional[Sequence[str]] = None, disallowed_special: Optional[Sequence[str]] = None,
) -> int: ...
def truncate_span(
    core: CoreBPE, text: str, lo: int, hi: int, max_tokens: int, from_start: bool,
    allowed_special: Optional[Sequence[str]] = None, disallowed_special: Optional[Sequence[str]] = None,
) -> Tuple[int, int]: ...

@final
class TokenizerModel:
    # the model of a tokenizer.json (read_tokenizer_json): vocabulary and merges
    @property
    def n_tokens(self) -> int: ...
    @property
    def n_merges(self) -> int: ...
    def get(self, token: str) -> Optional[int]: ...
    def tokens(self) -> List[Tuple[str, int]]: ...
    def merges(self) -> List[Tuple[str, str]]: ...
    def byte_level(self) -> List[Tuple[int, bytes]]: ...
    def rank_ordered(self, skip: Sequence[int]) -> bool: ...

# a tokenizer.json's bytes: the file without model.vocab / model.merges as JSON text, and the model
def read_tokenizer_json(data: bytes) -> Tuple[str, Optional[TokenizerModel]]: ...
# the top-level keys of a JSON object file (None: not a JSON object)
def json_object_keys(data: bytes) -> Optional[List[str]]: ...

@final
class Pipeline:
    # a tokenizer.json (bytepair.formats.hf_pipeline): its model, added (content, id, normalized,
    # single_word, lstrip, rstrip, special), normalizers and stages (kind, text_a, text_b, flag_x,
    # flag_y), the post-processor's ids before / after
    def __new__(
        cls,
        model: TokenizerModel,
        ignore_merges: bool,
        added: Sequence[Tuple[str, int, bool, bool, bool, bool, bool]],
        normalizers: Sequence[Tuple[str, str, str, bool, bool]],
        stages: Sequence[Tuple[str, str, str, bool, bool]],
        prefix: Sequence[int],
        suffix: Sequence[int],
    ) -> Pipeline: ...
    @property
    def n_vocab(self) -> int: ...
    @property
    def paths(self) -> List[str]: ...
    def encode(self, text: str, add_special_tokens: bool = False, split_special: bool = True) -> List[int]: ...
    def encode_to_array(self, text: str, add_special_tokens: bool = False, split_special: bool = True) -> _Ids: ...
    def encode_batch(
        self, texts: Sequence[str], add_special_tokens: bool = False, split_special: bool = True,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]: ...
    def encode_batch_to_array(
        self, texts: Sequence[str], add_special_tokens: bool = False, split_special: bool = True,
        num_threads: Optional[int] = None,
    ) -> Tuple[_Ids, _Offsets]: ...
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...

@final
class CoreBPE:
    # tokens: mergeable token bytes in rank order (b"" at a gap); special_tokens: name -> id;
    # empty_ranks: the ranks of b"" entries that hold the empty token instead of a gap.
    def __new__(
        cls,
        tokens: Sequence[bytes],
        special_tokens: Dict[str, int],
        pattern: Optional[str],
        empty_ranks: Sequence[int] = ...,
    ) -> CoreBPE: ...
    # From an ordered merge list: merge k is token 256 + k (the trainer's output).
    @staticmethod
    def from_merges(
        merges: Sequence[Tuple[int, int]], special_tokens: Dict[str, int], pattern: Optional[str]
    ) -> CoreBPE: ...
    # From the bytes of a `.tiktoken` rank file.
    @staticmethod
    def from_tiktoken(data: bytes, special_tokens: Dict[str, int], pattern: Optional[str]) -> CoreBPE: ...
    @property
    def n_mergeable(self) -> int: ...
    @property
    def n_vocab(self) -> int: ...
    # Which path splits text: "scanner:<family>", "regex" or "whole".
    @property
    def pretokenizer_path(self) -> str: ...

    # allowed/disallowed_special: special-token names; both None = tiktoken's
    # default (every special token disallowed).
    # num_threads: 1 = this thread; k or None (one per core) = a long text cut
    # where the ids cannot change, parts encoded in parallel (same ids).
    def encode_ordinary(self, text: str, num_threads: Optional[int] = 1) -> List[int]: ...
    def encode(
        self,
        text: str,
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
        num_threads: Optional[int] = 1,
    ) -> List[int]: ...
    # The ids: a uint32 numpy array that owns the core's buffer (no copy).
    def encode_to_array(
        self,
        text: str,
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
        num_threads: Optional[int] = 1,
    ) -> _Ids: ...
    # This thread's piece cache for this encoder (bytes, budget, table_bytes,
    # entries, seed_entries, long_entries, wipes), None before its first use here.
    def piece_cache_stats(self) -> Optional[Dict[str, int]]: ...
    def count(
        self,
        text: str,
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
    ) -> int: ...
    # num_threads None = the default pool.
    def encode_batch(
        self,
        texts: Sequence[str],
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]: ...
    # All ids concatenated (uint32) and len(texts) + 1 offsets (int64): numpy
    # arrays that own the core's vectors (no copy).
    def encode_batch_to_arrays(
        self,
        texts: Sequence[str],
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
        num_threads: Optional[int] = None,
    ) -> Tuple[_Ids, _Offsets]: ...
    def count_batch(
        self,
        texts: Sequence[str],
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
        num_threads: Optional[int] = None,
    ) -> List[int]: ...
    # The id of one token: its bytes (mergeable) or its UTF-8 text (special).
    def single_token(self, token: bytes) -> Optional[int]: ...
    # tiktoken's encode_with_unstable: (stable ids, completions of the rest).
    def encode_with_unstable(
        self,
        text: str,
        allowed_special: Optional[Sequence[str]] = None,
        disallowed_special: Optional[Sequence[str]] = None,
    ) -> Tuple[List[int], List[List[int]]]: ...
    # tiktoken's _encode_bytes: bytes that need not be UTF-8.
    def encode_bytes(self, data: bytes) -> List[int]: ...
    # tiktoken's encode_single_piece: bytes merged as one piece (no pre-tokenizer, no specials).
    def encode_single_piece(self, piece: bytes) -> List[int]: ...
    # Testing hook: one piece through a chosen merge path (ValueError otherwise).
    def encode_piece_with(self, piece: bytes, path: Literal["auto", "scan", "heap", "queue", "split"] = "auto") -> List[int]: ...

    # ------------------------------------------------------------ Decoding

    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
    def decode_batch_bytes(self, batch: Sequence[Sequence[int]], num_threads: Optional[int] = None) -> List[bytes]: ...
    def token_bytes(self, id: int) -> bytes: ...
    def tokens_bytes(self, ids: Sequence[int]) -> List[bytes]: ...
    # The ranks that hold the empty token (ascending).
    def empty_ranks(self) -> List[int]: ...
    # Every mergeable token's bytes in rank order.
    def token_bytes_list(self) -> List[bytes]: ...
    # [(left, right), ...] for the multi-byte tokens in rank order.
    def derive_merges(self) -> List[Tuple[int, int]]: ...

# ---------------------------------------------------------------- Training

# Distinct chunks and counts in first-seen order.
@final
class ChunkTable:
    def __new__(cls) -> ChunkTable: ...
    def add(self, chunk: bytes, n: int) -> None: ...
    def add_items(self, items: Sequence[Tuple[bytes, int]]) -> None: ...
    def update(self, other: ChunkTable) -> None: ...
    def copy(self) -> ChunkTable: ...
    def items(self) -> List[Tuple[bytes, int]]: ...
    def count_of(self, chunk: bytes) -> int: ...  # 0 when absent
    @property
    def arena_len(self) -> int: ...  # bytes of the distinct chunks
    # The merge loop training num_merges merges from this table starts with: "compact" or
    # "positions" (the compact loop hands over to the position loop past its work budget).
    def merge_loop(self, num_merges: int) -> str: ...
    def total(self) -> int: ...
    def __len__(self) -> int: ...
    # NotImplemented (so False) for anything but a ChunkTable.
    def __eq__(self, value: object, /) -> bool: ...
    # As the body of a `.bpc` file, and back (`entries` chunks).
    def to_body(self) -> bytes: ...
    @staticmethod
    def from_body(body: bytes, entries: int) -> ChunkTable: ...

# Counts chunks of documents and files in parallel into a ChunkTable.
# The regular files under a folder in sorted path order: (path, inode).
@final
class FolderWalk:
    def __new__(cls, top: Union[str, os.PathLike[str]]) -> FolderWalk: ...
    def __iter__(self) -> FolderWalk: ...
    def __next__(self) -> Tuple[str, int]: ...
    @property
    def found(self) -> int: ...  # the files given so far

@final
class ChunkCounter:
    # num_threads None = all cores; block_size default 1 << 20 (train::DEFAULT_BLOCK).
    def __new__(
        cls,
        pattern: Optional[str],
        special_tokens: Sequence[str],
        separator: Optional[str] = None,
        num_threads: Optional[int] = None,
        block_size: int = ...,
        stream_block: Optional[int] = None,
        memory_limit: Optional[int] = None,
        spill_dir: Optional[Union[str, os.PathLike[str]]] = None,
        table_limit: Optional[int] = None,
    ) -> ChunkCounter: ...
    # Each str is one document; a file is one UTF-8 document read in blocks.
    def feed_texts(self, texts: Sequence[str], progress: Optional[_Progress] = None) -> None: ...
    def feed_file(self, path: Union[str, os.PathLike[str]], progress: Optional[_Progress] = None) -> None: ...
    # text files, each one document, each file once (by device and inode): the
    # counts of feed_file on each in turn; returns the bytes counted
    def feed_text_files(
        self, paths: Sequence[Union[str, os.PathLike[str]]], progress: Optional[_Progress] = None
    ) -> int: ...
    # the plain text files the walk gives next, at most limit, as feed_text_files:
    # (bytes counted, the shard that stopped the walk or None, whether the walk is over)
    def feed_walk(
        self, walk: FolderWalk, limit: int, progress: Optional[_Progress] = None
    ) -> Tuple[int, Optional[str], bool]: ...
    # False when this counter already read the file (by device and inode)
    def claim_file(self, path: Union[str, os.PathLike[str]]) -> bool: ...
    # format "text" | "jsonl" | "parquet"; column: the JSONL key / Parquet column
    def feed_shard(
        self,
        path: Union[str, os.PathLike[str]],
        format: str,
        column: str,
        gzip: bool = False,
        progress: Optional[_Progress] = None,
        loader: Optional[_ColumnLoader] = None,
    ) -> None: ...
    def __len__(self) -> int: ...  # distinct chunks so far
    @property
    def num_threads(self) -> int: ...  # the pool's size
    @property
    def spilled_runs(self) -> int: ...  # run files written under memory_limit
    # Ends counting (ValueError if fed or finished again).
    def finish(self) -> ChunkTable: ...
    # the table, or the counts spilled to disk (not merged) when some were spilled (for extend_merges)
    def finish_or_runs(self) -> Union[ChunkTable, SpilledRuns]: ...

# span counts spilled to disk by a ChunkCounter, not merged; used up by extend_merges
@final
class SpilledRuns: ...

def learn_merges(
    table: ChunkTable,
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    progress: Optional[_Progress] = None,
    consume: bool = False,
    # "auto" (compact, handing over to positions past its work budget),
    # "compact" to the end (short chunks only) or "positions"
    merge_loop: str = "auto",
) -> List[Tuple[int, int]]: ...
# table: a ChunkTable, or a counter's SpilledRuns (read by the lean loop, used up)
def extend_merges(
    base: CoreBPE,
    table: Union[ChunkTable, SpilledRuns],
    first_id: int,
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    progress: Optional[_Progress] = None,
    max_words: Optional[int] = None,
    num_threads: Optional[int] = None,
    memory_limit: Optional[int] = None,
    consume: bool = False,
) -> List[Tuple[int, int]]: ...
def parity_merges(
    tables: Sequence[ChunkTable],
    dev_tables: Sequence[ChunkTable],
    dev_sizes: Sequence[int],
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    progress: Optional[_Progress] = None,
    global_merges: int = 0,
) -> Tuple[List[Tuple[int, int]], List[int]]: ...
