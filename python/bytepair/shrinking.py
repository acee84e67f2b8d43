"""``bytepair.shrink``: cut a vocabulary down to the tokens a domain uses.

A model fine-tuned or distilled for one language or domain needs a fraction of
a big vocabulary (o200k_base has 200,000 tokens; Korean prose uses a few
thousand of them). :func:`shrink` counts each token's use on a sample of the
domain, keeps the tokens the domain needs most within a budget, and returns the
small tokenizer with ``id_map`` (``id_map[new_id] == old_id``), so
``embedding[id_map]`` is the small model's embedding matrix.

**Which tokens stay.** Every single byte (so any text still encodes and
decodes losslessly), every special token, the tokens asked for
(``keep_tokens``), then the tokens chosen by ``strategy`` (see
:data:`STRATEGIES`) -- each with its **merge closure**: the two tokens it is
merged from (``tokenizer.merges``: the last merge when its bytes are encoded
with the lower-ranked tokens only), their parents, and so on down to the bytes.

**What is preserved.** Pre-tokenization is unchanged, and BPE merges a piece
by always joining the adjacent pair of lowest rank. When the kept set is
closed under the parents relation, every token the base tokenizer forms while
merging a piece whose final tokens are all kept is itself kept (a final token's
span is merged exactly as its bytes alone are, and those merges build it from
its parents), so the small tokenizer, whose tokens keep their relative order,
picks the same pair at every step. Hence:

* a text whose base encoding uses only kept tokens encodes to exactly those
  tokens mapped through ``id_map`` (piece by piece, so this holds for every
  piece whose base tokens are all kept, whatever the rest of the text);
* ``decode(encode(x)) == x`` for every text (the bytes are kept).

The naive cut -- drop the unused tokens and keep the others' ranks -- breaks
the first point: a kept token whose parent was dropped can no longer be built,
so its text falls apart into other tokens (see ``docs/shrink.md``).

>>> import bytepair
>>> base = bytepair.get_encoding("o200k_base")
>>> small, id_map = shrink(base, ["hello world, hello tokenizer"] * 3, keep=300)
>>> small.n_vocab, small.decode(small.encode("hello world"))
(300, 'hello world')
>>> [int(id_map[i]) for i in small.encode("hello world")] == base.encode("hello world")
True
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .checks import check_threads, fix_surrogates
from .documents import Data, Inputs, iter_documents
from .errors import MissingExtraError, ShrinkError
from .tokenizer import Tokenizer
from .vocab import check_id_table

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: How the budget is filled after the tokens the sample uses are ranked:
#:
#: * ``"prior"`` (default): a token seen ``c`` times scores ``c + p``, and an
#:   unseen token whose characters all occur in the sample (the domain's
#:   alphabet, digits, punctuation) scores ``p = 128 / max(rank, 256)``: a
#:   Zipf prior from the base, where a lower rank was a more frequent pair in
#:   the base's training text. ``p <= 1/2``, so the sample's counts rule; the
#:   prior orders equal counts and the unseen tokens of the domain's alphabet;
#:   unseen tokens of other alphabets come last, by rank. (Weighting the prior
#:   by each script's share of the sample was measured and is worse: the
#:   tokens a sample misses are mostly rare Latin words inside Korean text,
#:   not more Hangul.)
#: * ``"rank"``: the tokens seen, by count; then the unseen ones by base rank,
#:   whatever their script.
#: * ``"count"``: the tokens seen, by count, and nothing else (the vocabulary
#:   may end up smaller than ``keep``).
STRATEGIES = ("prior", "rank", "count")

#: Characters of text encoded per batch call when counting (about).
BATCH_CHARS = 8 << 20
#: A document this long is encoded on its own, cut across threads.
LONG_CHARS = 1 << 20

TokenSpec = Union[str, bytes, int]


def require_numpy() -> Any:
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is in every test environment
        raise MissingExtraError("shrink needs numpy: pip install 'bytepair[numpy]'") from e
    return numpy


def token_use(tokenizer: Tokenizer, data: Data, *, num_threads: Optional[int] = None,
              inputs: Optional[Inputs] = None, **options: Any) -> "np.ndarray":
    """How often each id occurs in the encoding of ``data`` (special-token text
    counts as plain text, as in any user document): an ``int64`` array of
    length ``tokenizer.n_vocab``.

    ``data`` is read as :func:`bytepair.train` reads it (a str, a path, or an
    iterable of str / paths). The encoding runs in the Rust core on
    ``num_threads`` threads (default: one per core) with the GIL released:
    short documents in batches, a long one cut where its ids cannot change;
    numpy's ``bincount`` adds the ids up. ``inputs`` (or its fields as
    keywords) says how paths are read, as for :func:`bytepair.train`:
    ``text_column``, ``text_field`` and ``documents`` apply; ``cache_dir`` and
    ``memory_limit`` are for counting chunks and are refused here.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("o200k_base")
    >>> use = token_use(enc, ["hello hello", "hello"])
    >>> int(use[enc.encode("hello")[0]]), int(use.sum())
    (2, 3)
    """
    np = require_numpy()
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a bytepair.Tokenizer, got {type(tokenizer).__name__}")
    check_id_table(tokenizer, "token_use")
    num_threads = check_threads(num_threads, ShrinkError)
    read = _reading(inputs, options, "token_use")
    core, n = tokenizer._core, tokenizer.n_vocab
    total = np.zeros(n, dtype=np.int64)

    def add(ids: Any) -> None:
        if len(ids):
            total[:] += np.bincount(ids, minlength=n)

    batch: List[str] = []
    size = 0
    for doc in iter_documents(data, read):
        doc = fix_surrogates(doc)
        if len(doc) >= LONG_CHARS:
            add(core.encode_to_array(doc, [], [], num_threads))
            continue
        batch.append(doc)
        size += len(doc)
        if size >= BATCH_CHARS:
            add(core.encode_batch_to_arrays(batch, [], [], num_threads)[0])
            batch, size = [], 0
    if batch:
        add(core.encode_batch_to_arrays(batch, [], [], num_threads)[0])
    return total


def _reading(inputs: Optional[Inputs], options: Dict[str, Any], func: str) -> Inputs:
    """The input options of a shrink call: those that apply to reading a sample."""
    read = Inputs.of(inputs, options, func)
    for unused in ("cache_dir", "memory_limit"):
        if getattr(read, unused) is not None:
            raise ShrinkError(f"{unused} is for counting chunks (train, extend); shrink encodes its sample: "
                              f"drop {unused}", argument=unused)
    return read


# ---------------------------------------------------------------- the merge closure


def merge_parents(tokenizer: Tokenizer) -> "np.ndarray":
    """``parents[id] = (left, right)``: the two tokens a mergeable token is merged
    from, ``(-1, -1)`` for single bytes, gaps and special tokens (an ``int64``
    array of shape ``(n_vocab, 2)``).

    >>> import bytepair
    >>> enc = bytepair.get_encoding("gpt2")
    >>> [enc.decode([int(i)]) for i in merge_parents(enc)[enc.encode("hello")[0]]]
    ['hell', 'o']
    """
    np = require_numpy()
    check_id_table(tokenizer, "merge_parents")
    parents = np.full((tokenizer.n_vocab, 2), -1, dtype=np.int64)
    tokens = tokenizer.token_bytes_list
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    is_multi = lengths > 1
    is_multi[[i for i in tokenizer.special_tokens.values() if i < len(tokens)]] = False
    multi = np.flatnonzero(is_multi)
    merges = tokenizer.merges
    if len(merges) != len(multi):
        raise ShrinkError(f"{tokenizer.name}: {len(merges)} merges for {len(multi)} multi-byte tokens")
    if len(multi):
        parents[multi] = np.asarray(merges, dtype=np.int64)
    return parents


def _closure(t: int, kept: List[bool], left: List[int], right: List[int]) -> List[int]:
    """``t`` and the tokens it is merged from, recursively, that are not kept yet."""
    out: List[int] = []
    seen = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if u < 0 or kept[u] or u in seen:
            continue
        seen.add(u)
        out.append(u)
        stack.append(left[u])
        stack.append(right[u])
    return out


# ---------------------------------------------------------------- selection


def _charset(tokens: Sequence[bytes], ids: Iterable[int]) -> Tuple[set, set]:
    """The characters (and bytes) of the tokens ``ids``: what the sample's text is made of."""
    chars: set = set()
    byts: set = set()
    for i in ids:
        b = tokens[i]
        chars.update(b.decode("utf-8", "ignore"))
        byts.update(b)
    return chars, byts


def _scores(counts: Any, tokens: Sequence[bytes], mergeable: Any, strategy: str = "prior") -> "np.ndarray":
    """The score of every id under ``strategy`` (see :data:`STRATEGIES`); tokens
    are taken by descending score, ties by ascending rank, and ``-inf`` never.

    >>> import numpy as np
    >>> toks = [bytes([b]) for b in range(256)] + [b"ab", b"ba", b"ac"]
    >>> s = _scores(np.array([0] * 256 + [5, 1, 0]), toks, np.array([True] * 259), "count")
    >>> s[256:].tolist()
    [5.0, 1.0, -inf]
    """
    np = require_numpy()
    counts = np.asarray(counts, dtype=np.float64)
    seen = (counts > 0) & mergeable
    if strategy == "count":
        return np.where(seen, counts, -np.inf)
    if strategy == "rank":
        # unseen tokens after every seen one, the lowest rank first
        ranks = np.arange(len(counts), dtype=np.float64)
        return np.where(seen, counts, np.where(mergeable, -1.0 - ranks / len(counts), -np.inf))
    if strategy != "prior":
        raise ShrinkError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    chars, byts = _charset(tokens, np.flatnonzero(seen).tolist())
    compatible = seen.copy()
    # unseen tokens whose characters all occur in the sample: every candidate's
    # text joined as code points, the ones outside the sample's counted per token
    cand = np.flatnonzero(mergeable & ~seen)
    texts = [tokens[i].decode("utf-8", "ignore") for i in cand.tolist()]
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    points = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    known = np.fromiter(map(ord, chars), dtype=np.uint32, count=len(chars))
    outside = np.concatenate([[0], np.cumsum(~np.isin(points, known))])
    ends = np.cumsum(lens)
    compatible[cand] = (outside[ends] - outside[ends - lens] == 0) & (lens > 0)
    for i in cand[lens == 0].tolist():  # parts of characters only: judged by their bytes
        compatible[i] = set(tokens[i]) <= byts
    ids = np.arange(len(counts), dtype=np.float64)
    prior = 0.5 * 256.0 / np.maximum(ids, 256.0)
    tail = -1.0 - ids / len(counts)  # the rest, by rank
    return np.where(compatible, counts + prior, np.where(mergeable, tail, -np.inf))


def _token_ids(tokenizer: Tokenizer, specs: Sequence[TokenSpec]) -> List[int]:
    """The ids of ``keep_tokens``: ids, token bytes, or token text (each must be one token)."""
    if isinstance(specs, (str, bytes)):
        raise TypeError("keep_tokens must be a list of tokens (str, bytes or int), not a single str/bytes")
    if not specs:
        return []
    ranks = tokenizer._rank_map()
    out = []
    for s in specs:
        if isinstance(s, bool) or not isinstance(s, (int, str, bytes)):
            raise TypeError(f"keep_tokens items are str, bytes or int ids, got {type(s).__name__}")
        if isinstance(s, int):
            if not 0 <= s < tokenizer.n_vocab or (s not in ranks.values() and not tokenizer.is_special_token(s)):
                raise ShrinkError(f"keep_tokens: id {s} is not a token of {tokenizer.name}", argument="keep_tokens")
            out.append(s)
            continue
        if isinstance(s, str) and s in tokenizer.special_tokens:
            out.append(tokenizer.special_tokens[s])
            continue
        b = s.encode("utf-8") if isinstance(s, str) else s
        if b not in ranks:
            raise ShrinkError(f"keep_tokens: {s!r} is not a single token of {tokenizer.name} "
                              f"(it encodes to {len(tokenizer._encode_single_piece(b))} tokens)",
                              argument="keep_tokens")
        out.append(ranks[b])
    return out


def _check_sizes(keep: Optional[int], min_count: Optional[int], floor: int, n: int, n_specials: int) -> None:
    """``keep`` within [``floor``, ``n``] and ``min_count`` at least 1, when given."""
    for what, v, lo, hi in (("keep", keep, floor, n), ("min_count", min_count, 1, 2**63 - 1)):
        if v is None:
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{what} must be an int, got {type(v).__name__}")
        if not lo <= v <= hi:
            extra = f" (256 bytes + {n_specials} special tokens)" if what == "keep" else ""
            raise ShrinkError(f"{what} must be between {lo}{extra} and {hi}, got {v}", argument=what)


def _domain_use(tokenizer: Tokenizer, data: Any, counts: Any, num_threads: Optional[int], read: Any) -> Any:
    """Each id's use in the domain: ``counts`` checked, or counted on ``data``."""
    np = require_numpy()
    n = tokenizer.n_vocab
    if counts is None:
        use = token_use(tokenizer, data, num_threads=num_threads, inputs=read)  # type: ignore[arg-type]
    else:
        use = np.asarray(counts)
        if use.shape != (n,) or not np.issubdtype(use.dtype, np.integer) or (use < 0).any():
            raise ShrinkError(f"counts must be {n} non-negative integers (one per id; see token_use), "
                              f"got shape {use.shape} of {use.dtype}")
    if not use.any():  # nothing tells which tokens the domain needs
        raise ShrinkError("the sample of the domain is empty (no token counted): give text of the domain to "
                          "choose the tokens from")
    return use


def _fill(candidates: List[int], kept: List[bool], left: List[int], right: List[int], n_kept: int,
          budget: int) -> None:
    """Keeps ``candidates`` in order, each with the tokens it is merged from,
    while they fit in ``budget`` (``kept`` is updated in place)."""
    for t in candidates:
        if n_kept >= budget:
            break
        if kept[t]:
            continue
        add = _closure(t, kept, left, right)
        if n_kept + len(add) <= budget:
            for u in add:
                kept[u] = True
            n_kept += len(add)


def shrink(
    tokenizer: Tokenizer,
    data: Optional[Data] = None,
    keep: Optional[int] = None,
    *,
    min_count: Optional[int] = None,
    keep_tokens: Sequence[TokenSpec] = (),
    counts: Any = None,
    strategy: str = "prior",
    num_threads: Optional[int] = None,
    name: Optional[str] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> Tuple[Tokenizer, "np.ndarray"]:
    """A smaller tokenizer for the domain of ``data``, and its ``id_map``.

    Args:
        tokenizer: the base :class:`~bytepair.Tokenizer`.
        data: a sample of the domain, read as :func:`bytepair.train` reads data
            (a str, a path, or an iterable of str / paths).
        keep: the small tokenizer's ``n_vocab``: 256 bytes + special tokens +
            the chosen tokens and their merge closures. Fewer only when the
            base holds fewer tokens, a closure does not fit in what is left,
            or the strategy (``"count"``, ``min_count``) runs out of tokens.
        min_count: keep every token the sample uses at least this often (with its
            closure). With ``keep`` too, the budget still caps the size.
        keep_tokens: tokens kept whatever the sample says: ids, token bytes, or
            token text (a special token's text names it).
        counts: instead of ``data``, per-id use counts (:func:`token_use`).
        strategy: how the budget is filled (:data:`STRATEGIES`).
        num_threads: encoding threads for the count (default: one per core).
        name: the small tokenizer's name (default: the base's + ``-shrunk``).
        inputs: how ``data`` is read, as for :func:`bytepair.train`
            (:class:`~bytepair.documents.Inputs` or its fields as keywords;
            ``cache_dir`` and ``memory_limit`` do not apply: see :func:`token_use`).

    Returns:
        ``(small, id_map)``: ids are dense, in the base's rank order, special
        tokens after the mergeable ones in their old order; ``id_map`` is an
        ``int64`` array with ``id_map[new_id] == old_id``.

    Raises:
        ShrinkError: neither ``keep`` nor ``min_count``, a budget too small for
            the bytes, special tokens and ``keep_tokens`` closures, an unknown
            token in ``keep_tokens``, or a vocabulary without a merge structure.
    """
    np = require_numpy()
    read = _reading(inputs, options, "shrink")
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a bytepair.Tokenizer, got {type(tokenizer).__name__}")
    if (data is None) == (counts is None):
        raise TypeError("give either data (a sample of the domain) or counts=, not both or neither")
    if keep is None and min_count is None:
        raise ShrinkError("give keep= (the new vocabulary size) or min_count= (the fewest uses a kept token has)")
    if strategy not in STRATEGIES:
        raise ShrinkError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    check_id_table(tokenizer, "shrink")
    n = tokenizer.n_vocab
    special_ids = sorted(set(tokenizer.special_tokens.values()))
    floor = 256 + len(special_ids)
    _check_sizes(keep, min_count, floor, n, len(special_ids))
    use = _domain_use(tokenizer, data, counts, num_threads, read)
    tokens = tokenizer.token_bytes_list
    tokens += [b""] * (n - len(tokens))
    parents = merge_parents(tokenizer)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
    mergeable = lengths > 0
    mergeable[special_ids] = False
    # the greedy loop below runs on Python lists: a numpy element access costs more
    kept = ((lengths == 1) & mergeable).tolist()
    left, right = parents[:, 0].tolist(), parents[:, 1].tolist()
    budget = (keep if keep is not None else n) - len(special_ids)
    n_kept = sum(kept)
    for t in _token_ids(tokenizer, keep_tokens):
        if t in special_ids:
            continue
        add = _closure(t, kept, left, right)
        for u in add:
            kept[u] = True
        n_kept += len(add)
    if n_kept > budget:
        raise ShrinkError(f"keep={keep} is too small: the bytes, special tokens and keep_tokens with the tokens "
                          f"they are merged from already need {n_kept + len(special_ids)}")
    score = _scores(use, tokens, mergeable, strategy)
    if min_count is not None:
        score = np.where(use >= min_count, score, -np.inf)
    order = np.lexsort((np.arange(n), -score))
    _fill(order[: int(np.isfinite(score).sum())].tolist(), kept, left, right, n_kept, budget)
    return _build(tokenizer, tokens, np.array(kept, dtype=bool), parents, special_ids, name)


def _build(tokenizer: Tokenizer, tokens: List[bytes], kept: Any, parents: Any, special_ids: List[int],
           name: Optional[str]) -> Tuple[Tokenizer, "np.ndarray"]:
    """The small tokenizer of the kept ids (dense, in rank order) and the id map."""
    np = require_numpy()
    kept_ids = np.flatnonzero(kept)
    new_of = np.full(len(tokens), -1, dtype=np.int64)
    new_of[kept_ids] = np.arange(len(kept_ids))
    multi = [i for i in kept_ids.tolist() if len(tokens[i]) > 1]
    merges = [(int(new_of[a]), int(new_of[b])) for a, b in parents[multi].tolist()] if multi else []
    by_id = sorted(tokenizer.special_tokens.items(), key=lambda kv: kv[1])
    specials = {s: len(kept_ids) + j for j, (s, _) in enumerate(by_id)}
    small = Tokenizer([tokens[i] for i in kept_ids.tolist()], tokenizer.pattern, specials,
                      name=name or f"{tokenizer.name}-shrunk", merges=merges, special_text=tokenizer.special_text)
    id_map = np.concatenate([kept_ids, np.asarray([i for _, i in by_id], dtype=np.int64)]).astype(np.int64)
    return small, id_map


# ---------------------------------------------------------------- reporting


def token_kind(b: bytes) -> str:
    """A coarse kind of token for reports: ``"whitespace"``, ``"digits"``,
    ``"punctuation"`` (punctuation and symbols, the stuff of code), ``"bytes"``
    (parts of characters), ``"mixed"``, or the script of its letters
    (``"LATIN"``, ``"HANGUL"``, ``"CJK"``, ...; a leading space is ignored).

    >>> [token_kind(t) for t in [b"  ", b" 2024", b"):", b" the", "한국".encode(), b"\\xe2\\x80"]]
    ['whitespace', 'digits', 'punctuation', 'LATIN', 'HANGUL', 'bytes']
    """
    if b.isascii():  # most tokens: bytes methods, no unicodedata
        if b.isspace():
            return "whitespace"
        head = b[1:] if b[:1] == b" " and len(b) > 1 else b
        if head.isdigit():
            return "digits"
        if head.isalpha():
            return "LATIN"
        if not any(c.isalnum() or c.isspace() for c in head.decode()):
            return "punctuation"
        return "mixed"
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes"
    if text.isspace():
        return "whitespace"
    body = text[1:] if text[0] == " " and len(text) > 1 else text
    if body.isdigit():
        return "digits"
    cats = {unicodedata.category(c)[0] for c in body}
    if cats <= {"P", "S", "Z"}:
        return "punctuation"
    scripts = {unicodedata.name(c, "UNKNOWN").split()[0] for c in body if unicodedata.category(c)[0] in "LM"}
    if len(scripts) == 1 and cats <= {"L", "M"}:
        return scripts.pop()
    return "mixed"


def dropped_kinds(tokenizer: Tokenizer, id_map: Any) -> Dict[str, int]:
    """How many mergeable tokens of each :func:`token_kind` the shrink dropped,
    most first."""
    np = require_numpy()
    tokens = tokenizer.token_bytes_list
    kept = np.zeros(len(tokens), dtype=bool)
    ids = np.asarray(id_map)
    kept[ids[ids < len(tokens)]] = True
    special_ids = set(tokenizer.special_tokens.values())
    kinds = Counter(token_kind(t) for i, t in enumerate(tokens) if t and not kept[i] and i not in special_ids)
    return dict(kinds.most_common())
