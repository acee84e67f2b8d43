"""Scale-out: count chunks and encode datasets over many shards, on this
machine's cores (``engine="local"``, the default) or on a Ray cluster
(``engine="ray"``, ``pip install bytepair[ray]``), with the same results.

* :func:`count_chunks` -> a :class:`~bytepair.counts.ChunkCounts` equal to
  counting all documents in order on one machine; train on it with
  ``bytepair.train(counts=..., vocab_size=...)``.
* :func:`encode_dataset` -> one token file per shard plus ``manifest.json``,
  the same ids as ``Tokenizer.encode_batch``; resumable.

Shards are plain text (one file = one document), JSONL or Parquet (one record
= one document); see :mod:`bytepair.shards.readers`.

>>> import tempfile, pathlib, bytepair
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> docs = ["low lower lowest " * 10, "newer newest " * 12, "wider widest low " * 9]
>>> for i, doc in enumerate(docs):
...     _ = (d / f"{i}.txt").write_text(doc)
>>> counts = count_chunks(sorted(d.glob("*.txt")), pattern="gpt2", workers=2)
>>> one_machine = bytepair.train(docs, vocab_size=270, pattern="gpt2")
>>> bytepair.train(counts=counts, vocab_size=270) == one_machine
True
"""

from ..shards.readers import iter_documents, output_stem, shard_format
from .count import count_chunks
from .encode import encode_dataset
from .engines import Engine, LocalEngine, RayEngine, get_engine
from .errors import (
    EngineError,
    EngineUnavailableError,
    OutputDirError,
    ShardError,
    ShardsFailedError,
)
from .manifest import read_manifest, tokenizer_fingerprint

__all__ = [
    "Engine",
    "EngineError",
    "EngineUnavailableError",
    "LocalEngine",
    "OutputDirError",
    "RayEngine",
    "ShardError",
    "ShardsFailedError",
    "count_chunks",
    "encode_dataset",
    "get_engine",
    "iter_documents",
    "output_stem",
    "read_manifest",
    "shard_format",
    "tokenizer_fingerprint",
]
