"""``count_chunks``: the chunk-count table of many shards, counted in parallel.

Each task counts one shard with the same pre-tokenizer as
:meth:`bytepair.counts.ChunkCounts.from_texts` and returns its partial table.
The partial tables are merged **in input order**, whatever order the tasks
finish in: a chunk first appears in the earliest shard holding it, so the
merged table has exactly the counts and the first-seen order of counting all
documents one after the other on one machine, and
``bytepair.train(counts=...)`` gives the same merges (the tie-break rule
depends on that order).

Where the merge happens (``reduce=``):

* ``"driver"`` (the local engine): the driver folds the tables in as they
  arrive, holding the merged table plus the tables that finished ahead of an
  unfinished earlier shard.
* ``"tree"`` (Ray's default): Ray tasks merge ``TREE_FAN_IN`` adjacent tables
  at a time, level by level (the order-preserving merge is associative, so any
  grouping of *adjacent* tables gives the same result); the driver receives only
  the final table. This spreads the merge work over the cluster; the final
  table still has to fit in one process, as it must for training.

``memory_limit`` bounds each task's counting as ``train(memory_limit=...)``
bounds one machine's: past it the task spills its tables to sorted runs in
its temporary directory and merges them exactly, so the counts are the same.
The limit is per task (a worker runs one task at a time): a machine running
``w`` workers needs about ``w`` times the limit.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core
from ..counts import ChunkCounts
from ..counts import count_chunks as count_here
from ..documents import Inputs
from ..errors import ArgumentError
from ..memory import parse_size
from ..patterns import resolve as _resolve_pattern
from ..shards.readers import check_input_format, iter_documents, shard_files
from .driver import PathLike, Progress, Reader
from .engines import Engine, RayEngine, get_engine, in_order, task_threads
from .errors import ShardsFailedError

#: Partial tables merged per Ray task when ``reduce="tree"``.
TREE_FAN_IN = 8


def _count_shard(shared: Tuple[Any, ...], path: str) -> ChunkCounts:
    """Task body: the chunk table of one shard (it pickles compactly), counted
    on the threads the engine gives this task, under the memory limit when
    there is one (the tables' share of it, as in :func:`bytepair.train`)."""
    pattern, specials, text_column, input_format, reader, limit = shared
    if reader is not None:
        docs = reader(path)
    else:
        docs = iter_documents(path, text_column=text_column, input_format=input_format)

    def checked() -> Iterator[str]:
        for d in docs:
            if not isinstance(d, str):
                raise TypeError(f"{path}: the reader yielded a {type(d).__name__}, not str")
            yield d

    return count_here(checked(), pattern=pattern, special_tokens=specials, num_threads=task_threads(),
                      inputs=Inputs(memory_limit=limit))


def _merge_tables(*tables: ChunkCounts) -> ChunkCounts:
    """Order-preserving merge of consecutive shards' tables (associative, so a
    tree of merges equals merging left to right)."""
    total = tables[0]
    for t in tables[1:]:
        total.update(t)
    return total


def _use_tree(eng: Engine, reduce: str, n_shards: int) -> bool:
    """Whether Ray tasks merge the tables (``reduce=``, see the module docstring)."""
    if reduce not in ("auto", "driver", "tree"):
        raise ArgumentError(f'reduce must be "auto", "driver" or "tree", not {reduce!r}', name="reduce")
    if reduce == "tree" and not isinstance(eng, RayEngine):
        raise ArgumentError('reduce="tree" needs engine="ray"; the local engine merges on the driver', name="reduce")
    return isinstance(eng, RayEngine) and reduce != "driver" and n_shards > 1


def _reduce_on_tree(
    eng: RayEngine, arglist: List[Tuple[str]], shared: Tuple[Any, ...], bar: Progress, limit: Optional[int]
) -> Tuple[ChunkCounts, Dict[int, str]]:
    """Ray tasks count the shards and merge adjacent tables level by level;
    returns the final table (empty when a shard failed) and the failures."""
    table, failures = eng.tree_reduce(_count_shard, arglist, _merge_tables, shared=shared, fan_in=TREE_FAN_IN,
                                      on_done=bar.update, memory=limit)
    if failures:
        return ChunkCounts({}, pattern=shared[0], special_tokens=shared[1]), failures
    return table, failures


def _reduce_on_driver(
    eng: Engine, arglist: List[Tuple[str]], shared: Tuple[Any, ...], bar: Progress, limit: Optional[int]
) -> Tuple[ChunkCounts, Dict[int, str]]:
    """The tasks count the shards; the driver folds the tables in input order,
    whatever order the tasks finish in (the merged table's first-seen order
    must be the corpus order). Returns the table and the failures."""
    pat, specials = shared[0], shared[1]
    total = ChunkCounts({}, pattern=pat, special_tokens=specials)
    failures: Dict[int, str] = {}
    # Ray also reserves the limit per task; the local engine has nothing to reserve
    reserve = {"memory": limit} if isinstance(eng, RayEngine) else {}
    results = eng.run(_count_shard, arglist, shared=shared, ordered=True, **reserve)
    for i, out in in_order(results):
        bar.update()
        if not out.ok:
            failures[i] = out.error
        elif not failures:  # after a failure the result is lost; still try every shard
            total.update(out.value)
    return total, failures


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
    reduce: str = "auto",
    memory_limit: Union[int, str, None] = None,
) -> ChunkCounts:
    """Counts the pre-token chunks of many shards in parallel.

    Args:
        paths: the shards (text, JSONL or Parquet; see
            :mod:`bytepair.shards.readers`), in corpus order.
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
        progress: show a progress line over shards on stderr (default: if stderr is a terminal).
        reduce: where partial tables are merged: ``"driver"`` (in input order as
            they arrive) or ``"tree"`` (Ray only: by Ray tasks, ``TREE_FAN_IN``
            adjacent tables per task, so the driver receives only the final
            table). ``"auto"``: tree on Ray, driver otherwise.
        memory_limit: a size (``"2GB"``, ``"512MiB"``) or bytes bounding each
            task's counting, parsed as by :func:`bytepair.memory.parse_size`;
            a task spills to disk past it, with identical counts (default: no
            limit). On Ray each task also reserves it as Ray's ``memory``
            resource. Not the driver's: the merged table is held whole.

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
    shards = shard_files(paths)
    check_input_format(input_format)
    limit = None if memory_limit is None else parse_size(memory_limit)
    pat = _resolve_pattern(pattern)
    _core.pretokenize(pat, "")  # an invalid regex fails here, once, not as every shard's failure
    specials = list(special_tokens)
    eng = get_engine(engine, workers=workers, address=address, max_retries=max_retries)
    shared = (pat, specials, text_column, input_format, reader, limit)

    arglist = [(p,) for p in shards]
    tree = _use_tree(eng, reduce, len(shards))
    bar = Progress(len(shards), "counting", progress)
    try:
        if tree and isinstance(eng, RayEngine):
            total, failures = _reduce_on_tree(eng, arglist, shared, bar, limit)
        else:
            total, failures = _reduce_on_driver(eng, arglist, shared, bar, limit)
    finally:
        bar.close()
    if failures:
        raise ShardsFailedError(
            {shards[i]: failures[i] for i in sorted(failures)}, what=f"{len(shards)} shards", total=len(shards)
        )
    return total
