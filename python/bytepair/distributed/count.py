"""``count_chunks``: the chunk-count table of many shards, counted in parallel.

Each task counts one shard with the same pre-tokenizer as
:meth:`bytepair.counts.ChunkCounts.from_texts` and returns its partial table.
The driver merges the partial tables **in input order**, whatever order the
tasks finish in: a chunk first appears in the earliest shard holding it, so the
merged table has exactly the counts and the first-seen order of counting all
documents one after the other on one machine, and
``bytepair.train(counts=...)`` gives the same merges (the tie-break rule
depends on that order).

Memory: the driver holds the merged table plus, with the local engine, the
partial tables that finished ahead of an unfinished earlier shard (with Ray
those wait in Ray's object store); the merged table is what training needs in
memory anyway.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ..counts import ChunkCounts
from ..patterns import resolve as _resolve_pattern
from ._driver import PathLike, Progress, Reader, check_input_format, normalize_paths
from .engines import Engine, get_engine, in_order
from .errors import ShardsFailedError
from .readers import iter_documents


def _count_shard(shared: Tuple[Any, ...], path: str) -> Tuple[Dict[bytes, int], int]:
    """Task body: the ordered chunk table of one shard and its document count."""
    pattern, specials, text_column, input_format, reader = shared
    docs = (
        reader(path)
        if reader is not None
        else iter_documents(path, text_column=text_column, input_format=input_format)
    )
    n_docs = 0

    def counted():
        nonlocal n_docs
        for d in docs:
            if not isinstance(d, str):
                raise TypeError(f"{path}: the reader yielded a {type(d).__name__}, not str")
            n_docs += 1
            yield d

    table = ChunkCounts.from_texts(counted(), pattern=pattern, special_tokens=specials)
    # A plain dict (insertion-ordered) travels between processes whatever the
    # in-memory representation of ChunkCounts.
    return dict(table.items()), n_docs


def count_chunks(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    text_column: str = "text",
    input_format: Optional[str] = None,
    reader: Optional[Reader] = None,
    engine: Union[str, Engine] = "local",
    workers: Optional[int] = None,
    address: Optional[str] = None,
    max_retries: int = 3,
    progress: Optional[bool] = None,
) -> ChunkCounts:
    """Counts the pre-token chunks of many shards in parallel.

    Args:
        paths: the shards (text, JSONL or Parquet; see
            :mod:`bytepair.distributed.readers`), in corpus order.
        pattern: pre-tokenization pattern (name, regex or None).
        special_tokens: special-token text cut out before counting (pass the
            same list to :func:`bytepair.train`).
        text_column: the JSONL key / Parquet column with the text.
        input_format: force ``"text"``, ``"jsonl"`` or ``"parquet"`` for every
            shard (default: from each file name).
        reader: instead of the built-in readers, a picklable function
            ``path -> iterable of str`` (one str per document).
        engine: ``"local"`` (process pool), ``"ray"``, or an Engine.
        workers: local processes (default: CPUs); for Ray, ``num_cpus`` of a
            Ray started here.
        address: Ray cluster address (default: ``RAY_ADDRESS`` or a local Ray).
        max_retries: reruns of a task whose worker process died.
        progress: show a progress bar over shards (default: if stderr is a tty).

    Returns:
        The merged :class:`~bytepair.counts.ChunkCounts`, equal to
        ``ChunkCounts.from_texts(all documents in order, ...)``.

    Raises:
        ShardsFailedError: some shards could not be read; every shard was
            tried and all failures are listed by path.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for i, text in enumerate(["a b a", "b c"]):
    ...     _ = (d / f"{i}.txt").write_text(text)
    >>> c = count_chunks([d / "0.txt", d / "1.txt"], pattern="gpt2", workers=2)
    >>> list(c.items())
    [(b'a', 1), (b' b', 1), (b' a', 1), (b'b', 1), (b' c', 1)]
    """
    shards = normalize_paths(paths)
    check_input_format(input_format)
    pat = _resolve_pattern(pattern)
    specials = list(special_tokens)
    eng = get_engine(engine, workers=workers, address=address, max_retries=max_retries)
    shared = (pat, specials, text_column, input_format, reader)

    total = ChunkCounts({}, pattern=pat, special_tokens=specials)
    failures: Dict[int, str] = {}
    bar = Progress(len(shards), "counting", progress)
    try:
        # Input order, whatever order the tasks finish in: the merged table's
        # first-seen order must be the corpus order.
        arglist = [(p,) for p in shards]
        for i, out in in_order(eng.run(_count_shard, arglist, shared=shared, ordered=True)):
            bar.update()
            if not out.ok:
                failures[i] = out.error
            elif not failures:  # after a failure the result is lost; still try every shard
                total.update(ChunkCounts(out.value[0], pattern=pat, special_tokens=specials))
    finally:
        bar.close()
    if failures:
        raise ShardsFailedError(
            {shards[i]: failures[i] for i in sorted(failures)}, what=f"{len(shards)} shards"
        )
    return total
