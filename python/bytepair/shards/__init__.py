"""Reading documents from shards (text, JSONL, Parquet; gzip too) and the
core's shard pipeline that reads, encodes and writes them in Rust.

Part of the library: :meth:`bytepair.Tokenizer.encode_files` and training on
shards use it on one machine; :mod:`bytepair.distributed` spreads the same work
over processes or a Ray cluster.
"""

from .readers import INPUT_FORMATS, check_input_format, iter_documents, normalize_paths, output_stem, shard_format

__all__ = ["INPUT_FORMATS", "check_input_format", "iter_documents", "normalize_paths", "output_stem", "shard_format"]
