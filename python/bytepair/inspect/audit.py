"""Audit a vocabulary: tokens no text can produce, tokens a corpus never uses,
and tokens that spell the same word twice (``bytepair audit``).

How a byte-level BPE tokenizer (tiktoken's rules) encodes a text: the
pre-tokenizer cuts the text into pieces; a piece whose bytes are a token
becomes that token at once (the **whole-piece shortcut**); any other piece
starts as single bytes and repeatedly merges the adjacent pair whose joined
bytes have the lowest rank (leftmost on ties) until no adjacent pair is a token.

So a mergeable token ``t`` can appear in an encoding in exactly two ways:

1. **whole piece**: some text is cut so that one of its pieces is exactly
   ``t``'s bytes. Pieces are text, so ``t`` must be valid UTF-8, and the
   pre-tokenizer must emit that text as one piece.
2. **inside a longer piece**: ``t`` is one of the final parts of a piece that
   is not ``t`` itself. Merges inside ``t``'s span only ever join parts of that
   span, each time the lowest-ranked pair there, so the same merges run on
   ``t``'s bytes alone (without the shortcut) rebuild ``t``. Hence a
   **necessary condition**: merging ``t``'s bytes from single bytes, without
   the shortcut, ends in the one token ``t`` (:attr:`TokenAudit.rebuilt`).

:func:`audit` checks every token both ways and sorts it into one status:

* ``"whole-piece"``: a witness text encodes with ``t`` as one of its pieces;
* ``"merges"``: not a whole piece, but a witness text produces ``t`` inside a
  longer piece;
* ``"unreachable"``: no text can produce it, with the reason: its bytes never
  occur in UTF-8 text at all (e.g. ``\\xff``), or it is not a whole piece
  (not UTF-8, or the pre-tokenizer cuts its text) *and* merging its bytes
  builds something else;
* ``"undecided"``: merging its bytes rebuilds it, it is not a whole piece, and
  no witness was found among the candidate texts tried (it may still occur
  inside some longer piece).

Every "whole-piece" and "merges" verdict carries its witness text, checked by
encoding it. The candidate texts: the token's text alone, then followed or
preceded by one probe character (:data:`~bytepair.inspect.witnesses.PROBES`: space, letters, digits,
punctuation, newline, Hangul); for a token holding parts of characters, those
characters completed in many ways; and for the tokens still without a witness
(at most :data:`WIDE_MAX_TOKENS`), any printable ASCII character or one of a
few others (:data:`~bytepair.inspect.witnesses.WIDE_CONTEXT`) on each side. A piece depends on the text after it
only through greedy matching (which text alone never extends) and the
lookaheads ``(?!\\S)`` / ``$`` (which the probes satisfy and fail); the
bundled patterns have no lookbehind. Special tokens are not audited (they
come only from ``allowed_special``). Superwords, tokens across a space
(:mod:`bytepair.superword`), are listed.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer([bytes([i]) for i in range(256)] + [b"ab", b"xyz"], pattern="gpt2")
>>> a = audit(tok)
>>> [(show_bytes(u.bytes), u.status, u.rebuilt) for u in a.tokens if u.id >= 256]
[('ab', 'whole-piece', True), ('xyz', 'whole-piece', False)]

``xyz`` is made only by the shortcut: its bytes stay ``x|y|z`` when merged, so
inside a longer piece such as ``xyzzy`` it never appears.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from .. import _core
from ..render.text import TableResult, per, show_bytes, visible
from ..superword import superword_tokens
from ..tokenizer import Tokenizer
from .common import TextSource, TokenizerSpec, read_documents, resolve_tokenizer
from .witnesses import candidates, first_bad_byte, in_utf8_text, wide_candidates

Status = Literal["whole-piece", "merges", "unreachable", "undecided"]

#: Tokens the second round takes at most (each costs about 10,000 short encodes).
WIDE_MAX_TOKENS = 200

#: Examples kept per group in the duplicate-spelling summary.
EXAMPLES = 8


@dataclass
class TokenAudit:
    """How (and whether) one token can be produced.

    Attributes:
        id: the token id.
        bytes: its bytes.
        status: ``"whole-piece"``, ``"merges"``, ``"unreachable"`` or ``"undecided"``
            (see the module docstring).
        whole_piece: some text's piece is exactly this token.
        rebuilt: merging its bytes without the whole-piece shortcut gives this
            token (necessary for appearing inside a longer piece).
        witness: a text whose encoding contains the token (None when unreachable
            or undecided).
        reason: why it is unreachable or undecided ("" otherwise).
    """

    id: int
    bytes: bytes
    status: Status
    whole_piece: bool
    rebuilt: bool
    witness: Optional[str] = None
    reason: str = ""

    @property
    def text(self) -> str:
        return show_bytes(self.bytes)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "hex": self.bytes.hex(), "text": self.text, "status": self.status,
                "whole_piece": self.whole_piece, "rebuilt": self.rebuilt, "witness": self.witness,
                "reason": self.reason}


@dataclass
class DuplicateGroup:
    """Tokens that spell one word: the same text up to one leading space and case."""

    key: str
    ids: list[int]
    texts: list[str]


@dataclass
class Duplicates:
    """Tokens spelling the same text with and without a leading space, or in other case.

    Attributes:
        space_pairs: tokens ``s`` (not starting with a space) for which ``" " + s``
            is a token too.
        case_groups: groups of two or more tokens equal after ``str.casefold``
            (``"the"``, ``"The"``, ``"THE"``).
        case_tokens: tokens in those groups.
        groups: groups of two or more tokens equal after dropping one leading
            space and case folding (both kinds of variants at once).
        grouped_tokens: tokens in those groups.
        largest: the largest of those groups (examples).
    """

    space_pairs: int
    case_groups: int
    case_tokens: int
    groups: int
    grouped_tokens: int
    largest: list[DuplicateGroup] = field(default_factory=list)

    @property
    def redundant(self) -> int:
        """Tokens beyond the first in each group: what the variants cost in vocabulary."""
        return self.grouped_tokens - self.groups


@dataclass
class CorpusUse:
    """Which tokens a corpus uses.

    Attributes:
        bytes, tokens: size of the corpus in bytes and tokens.
        used: distinct mergeable tokens in its encoding.
        unused: ids of mergeable tokens it never uses.
        unused_reachable: unused tokens that some text could produce (the
            candidates for "glitch tokens": in the vocabulary, never seen in training-like text).
    """

    bytes: int
    tokens: int
    used: int
    unused: list[int]
    unused_reachable: int


@dataclass
class Audit(TableResult):
    """The result of :func:`audit`."""

    tokenizer: str
    n_mergeable: int
    tokens: list[TokenAudit]
    duplicates: Duplicates
    corpus: Optional[CorpusUse] = None
    #: ids of the tokens that bridge a space (superwords: `` of the``, ``, and``; see bytepair.superword)
    superwords: list[int] = field(default_factory=list)

    def token(self, i: int) -> TokenAudit:
        """The audit of token id ``i``."""
        return self.tokens[i]

    def _of(self, status: str) -> list[TokenAudit]:
        return [t for t in self.tokens if t.status == status]

    @property
    def unreachable(self) -> list[TokenAudit]:
        """Tokens no text can produce, with reasons."""
        return self._of("unreachable")

    @property
    def undecided(self) -> list[TokenAudit]:
        return self._of("undecided")

    def counts(self) -> dict[str, int]:
        """Tokens per status, and how many are whole-piece only (never rebuilt by merges)."""
        c = Counter(t.status for t in self.tokens)
        return {**{k: c[k] for k in ("whole-piece", "merges", "unreachable", "undecided")},
                "whole-piece only": sum(1 for t in self.tokens if t.whole_piece and not t.rebuilt)}

    def _table(self):
        n = self.n_mergeable
        c = self.counts()

        def share(k: int) -> str:
            return f"{100 * k / n:.2f}%" if n else "-"

        rows: list[list[Any]] = [
            ["mergeable tokens", n, ""],
            ["produced as a whole piece", c["whole-piece"], share(c["whole-piece"])],
            ["  of them only as a whole piece (merges build something else)", c["whole-piece only"],
             share(c["whole-piece only"])],
            ["produced only inside longer pieces", c["merges"], share(c["merges"])],
            ["unreachable (no text produces them)", c["unreachable"], share(c["unreachable"])],
            ["undecided (rebuilt by merges, no witness found)", c["undecided"], share(c["undecided"])],
        ]
        d = self.duplicates
        rows += [
            ["tokens with a leading-space twin (s and ' '+s)", d.space_pairs, share(d.space_pairs)],
            ["case-variant groups (casefold)", d.case_groups, ""],
            ["  tokens in them", d.case_tokens, share(d.case_tokens)],
            ["spelling groups (space and case)", d.groups, ""],
            ["  tokens beyond the first of each group", d.redundant, share(d.redundant)],
            ["superwords (tokens across a space)", len(self.superwords), share(len(self.superwords))],
        ]
        if self.corpus is not None:
            u = self.corpus
            rows += [
                ["corpus tokens", u.tokens, ""],
                ["tokens the corpus never uses", len(u.unused), share(len(u.unused))],
                ["  of them reachable", u.unused_reachable, share(u.unused_reachable)],
            ]
        body = [[k, v, s] for k, v, s in rows]
        return f"{self.tokenizer}: audit of {n:,} mergeable tokens", ["", "tokens", "share"], body

    def to_text(self, limit: int = 20) -> str:
        """The summary table, then up to ``limit`` unreachable tokens with reasons and
        the largest spelling groups."""
        out = [super().to_text()]
        for title, items in (("unreachable", self.unreachable), ("undecided", self.undecided)):
            if items:
                out += ["", f"{title} tokens ({len(items):,}; first {min(limit, len(items))}):"]
                out += [f"  {t.id:>7}  {_quoted(t.text):<24} {t.reason}" for t in items[:limit]]
        if self.duplicates.largest:
            out.append("")
            out.append("largest spelling groups:")
            for g in self.duplicates.largest:
                out.append("  " + "  ".join(_quoted(s) for s in g.texts))
        if self.superwords:
            out += ["", f"superwords ({len(self.superwords):,}; first {min(limit, len(self.superwords))}):"]
            out += [f"  {i:>7}  {_quoted(self.tokens[i].text)}" for i in self.superwords[:limit]]
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: the counts, unreachable and undecided tokens in full,
        the duplicate summary and corpus use."""
        d = self.duplicates
        out: dict[str, Any] = {
            "tokenizer": self.tokenizer,
            "n_mergeable": self.n_mergeable,
            "counts": self.counts(),
            "unreachable": [t.to_dict() for t in self.unreachable],
            "undecided": [t.to_dict() for t in self.undecided],
            "duplicates": {"space_pairs": d.space_pairs, "case_groups": d.case_groups,
                           "case_tokens": d.case_tokens, "groups": d.groups, "grouped_tokens": d.grouped_tokens,
                           "redundant": d.redundant,
                           "largest": [{"key": g.key, "ids": g.ids, "texts": g.texts} for g in d.largest]},
            "corpus": None,
            "superwords": self.superwords,
        }
        if self.corpus is not None:
            u = self.corpus
            out["corpus"] = {"bytes": u.bytes, "tokens": u.tokens, "used": u.used, "unused": len(u.unused),
                             "unused_share": per(len(u.unused), self.n_mergeable),
                             "unused_reachable": u.unused_reachable, "unused_ids": u.unused}
        return out


# ---------------------------------------------------------------- the audit


def merge_without_shortcut(tok: Tokenizer, b: bytes) -> list[int]:
    """The ids of ``b`` merged from single bytes, lowest rank first, without the
    whole-piece shortcut (what happens to ``b``'s span inside a longer piece).

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer([bytes([i]) for i in range(256)] + [b"bc", b"abcd"], pattern=None)
    >>> merge_without_shortcut(tok, b"abcd"), tok.encode("abcd"), tok.encode("abcde")
    ([97, 256, 100], [257], [97, 256, 100, 101])
    """
    return list(tok._core.encode_piece_with(bytes(b), "scan"))


def _spans(tok: Tokenizer, text: str) -> list[tuple[int, int]]:
    return [tuple(x) for x in _core.pretokenize_spans(tok.pattern, text)]  # type: ignore[misc]


def _is_whole_piece(tok: Tokenizer, text: str, b: bytes) -> bool:
    """Whether one piece of ``text`` is exactly ``b``."""
    raw = text.encode("utf-8")
    return any(raw[s:e] == b for s, e in _spans(tok, text))


def _cut_text(tok: Tokenizer, text: str) -> str:
    raw = text.encode("utf-8")
    return _quoted("|".join(visible(show_bytes(raw[s:e])) for s, e in _spans(tok, text)))


def _tokens_text(tok: Tokenizer, ids: Sequence[int]) -> str:
    return _quoted("|".join(visible(show_bytes(tok.decode_single_token_bytes(i))) for i in ids))


def audit(tokenizer: TokenizerSpec, text: TextSource | None = None, *, num_threads: int | None = None) -> Audit:
    """Audits every mergeable token of a byte-level BPE tokenizer (see the module
    docstring for the exact definitions), with optional corpus use.

    ``text`` (a str, a path, or a list of them) adds which tokens that corpus
    never uses and their share of the vocabulary.

    >>> from bytepair import Tokenizer
    >>> # gpt2's pattern cuts "a b" as "a| b", and its bytes merge to nothing: unreachable
    >>> tok = Tokenizer([bytes([i]) for i in range(256)] + [b"ab", b"a b"], pattern="gpt2")
    >>> for u in audit(tok).tokens[256:]:
    ...     print(u.status, u.reason or "-")
    whole-piece -
    unreachable not a whole piece (the pre-tokenizer cuts it as 'a| b'); merging its bytes gives 'a| |b'
    """
    tok = resolve_tokenizer(tokenizer)
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"audit takes a byte-level Tokenizer, got {type(tok).__name__}")
    tokens: list[bytes] = tok.token_bytes_list
    n = len(tokens)
    rebuilt = [merge_without_shortcut(tok, b) == [i] for i, b in enumerate(tokens)]
    texts, result = _whole_alone(tok, tokens, rebuilt, num_threads)
    pending = _proved_unreachable(tok, tokens, texts, rebuilt, result)
    found_whole: dict[int, str] = {}
    found_inside: dict[int, str] = {}
    _look(tok, tokens, texts, {i: candidates(tokens[i]) for i in pending}, found_whole, found_inside,
          num_threads)
    left = [i for i in pending if i not in found_whole and i not in found_inside]
    wide = set(left[:WIDE_MAX_TOKENS])
    _look(tok, tokens, texts, {i: wide_candidates(tokens[i]) for i in left[:WIDE_MAX_TOKENS]}, found_whole,
          found_inside, num_threads)
    for i in pending:
        result[i] = _verdict(tok, i, tokens[i], texts, rebuilt[i], found_whole, found_inside,
                             searched_wide=i in wide)
    done: list[TokenAudit] = [r for r in result if r is not None]
    assert len(done) == n
    corpus = None if text is None else _corpus_use(tok, text, done, num_threads)
    return Audit(tok.name, n, done, duplicates(tokens), corpus, sorted(superword_tokens(tok)))


def _whole_alone(tok: Tokenizer, tokens: list[bytes], rebuilt: list[bool],
                 num_threads: int | None) -> tuple[dict[int, str], list[Optional[TokenAudit]]]:
    """Step 1: each token's text encoded alone; one piece that is the token is
    the whole-piece shortcut. Returns the tokens' texts (the UTF-8 ones) and
    the verdicts found so far (None: not decided)."""
    texts: dict[int, str] = {}
    for i, b in enumerate(tokens):
        try:
            texts[i] = b.decode("utf-8")
        except UnicodeDecodeError:
            pass
    order = list(texts)
    alone = tok.encode_ordinary_batch([texts[i] for i in order], num_threads=num_threads)
    result: list[Optional[TokenAudit]] = [None] * len(tokens)
    for i, ids in zip(order, alone):
        if ids == [i]:
            result[i] = TokenAudit(i, tokens[i], "whole-piece", True, rebuilt[i], texts[i])
    return texts, result


def _proved_unreachable(tok: Tokenizer, tokens: list[bytes], texts: dict[int, str], rebuilt: list[bool],
                        result: list[Optional[TokenAudit]]) -> list[int]:
    """Step 2: the undecided tokens that are provably unreachable get their
    verdict in ``result``; the others are returned, for the witness search."""
    pending: list[int] = []
    for i, b in enumerate(tokens):
        if result[i] is not None:
            continue
        if not in_utf8_text(b):
            bad = first_bad_byte(b)
            why = f"its bytes never occur in UTF-8 text ({bad} is never used)" if bad else \
                "its bytes never occur in UTF-8 text (not a possible run of UTF-8 bytes)"
            result[i] = TokenAudit(i, b, "unreachable", False, rebuilt[i], None, why)
        elif i not in texts and not rebuilt[i]:
            result[i] = TokenAudit(i, b, "unreachable", False, False, None,
                                   "part of a character, so never a whole piece; merging its bytes gives "
                                   f"{_tokens_text(tok, merge_without_shortcut(tok, b))}")
        else:
            pending.append(i)
    return pending


def _look(tok: Tokenizer, tokens: list[bytes], texts: dict[int, str], cands: dict[int, list[str]], found_whole: dict[int, str],
          found_inside: dict[int, str], num_threads: int | None) -> None:
    """Encodes each candidate text of each token; records the first text where
    the token is a whole piece (``found_whole``) or appears inside a longer
    piece (``found_inside``)."""
    flat = [(i, c) for i, cs in cands.items() for c in cs]
    encoded = tok.encode_ordinary_batch([c for _, c in flat], num_threads=num_threads) if flat else []
    for (i, c), ids in zip(flat, encoded):
        if i in found_whole or i not in ids:
            continue
        if i in texts and _is_whole_piece(tok, c, tokens[i]):
            found_whole[i] = c
        else:
            found_inside.setdefault(i, c)


def _verdict(tok: Tokenizer, i: int, b: bytes, texts: dict[int, str], rebuilt: bool, found_whole: dict[int, str],
             found_inside: dict[int, str], *, searched_wide: bool) -> TokenAudit:
    """Step 3: a pending token's verdict (token ``i``, bytes ``b``) from the
    witness search."""
    if i in found_whole:
        return TokenAudit(i, b, "whole-piece", True, rebuilt, found_whole[i])
    if i in found_inside:
        return TokenAudit(i, b, "merges", False, rebuilt, found_inside[i])
    whole_why = (f"the pre-tokenizer cuts it as {_cut_text(tok, texts[i])}" if i in texts
                 else "part of a character")
    if rebuilt:
        return TokenAudit(i, b, "undecided", False, True, None,
                          f"not a whole piece ({whole_why}); merging its bytes rebuilds it, but no "
                          "text tried produces it inside a longer piece"
                          + ("" if searched_wide else " (the second round was skipped: "
                             f"over {WIDE_MAX_TOKENS} tokens were left)"))
    merged = _tokens_text(tok, merge_without_shortcut(tok, b))
    return TokenAudit(i, b, "unreachable", False, False, None,
                      f"not a whole piece ({whole_why}); merging its bytes gives {merged}")


def _corpus_use(tok: Tokenizer, text: TextSource, done: list[TokenAudit], num_threads: int | None) -> CorpusUse:
    """Which tokens the corpus ``text`` uses, and how many it never does."""
    docs = read_documents(text)
    seen: Counter[int] = Counter()
    n_tokens = 0
    for ids in tok.encode_ordinary_batch(docs, num_threads=num_threads):
        seen.update(ids)
        n_tokens += len(ids)
    n = len(done)
    unused = [i for i in range(n) if not seen[i]]
    return CorpusUse(sum(len(d.encode("utf-8")) for d in docs), n_tokens,
                     sum(1 for i in range(n) if seen[i]), unused,
                     sum(1 for i in unused if done[i].status in ("whole-piece", "merges")))


def duplicates(tokens: Iterable[bytes], examples: int = EXAMPLES) -> Duplicates:
    """The duplicate-spelling summary of a vocabulary (see :class:`Duplicates`);
    only tokens that are whole UTF-8 text with a letter or digit are grouped.

    >>> d = duplicates([b"the", b" the", b"The", b" THE", b"x"])
    >>> d.space_pairs, d.case_groups, d.groups, d.redundant
    (1, 2, 1, 3)
    """
    texts: dict[str, int] = {}
    for i, b in enumerate(tokens):
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if any(ch.isalnum() for ch in s):
            texts[s] = i
    space_pairs = sum(1 for s in texts if not s.startswith(" ") and " " + s in texts)
    by_case: dict[str, list[str]] = {}
    by_both: dict[str, list[str]] = {}
    for s in texts:
        by_case.setdefault(s.casefold(), []).append(s)
        by_both.setdefault((s.removeprefix(" ")).casefold(), []).append(s)
    case = [g for g in by_case.values() if len(g) > 1]
    both = {k: g for k, g in by_both.items() if len(g) > 1}
    largest = sorted(both.items(), key=lambda kv: (-len(kv[1]), texts[kv[1][0]]))[:examples]
    return Duplicates(
        space_pairs=space_pairs,
        case_groups=len(case),
        case_tokens=sum(len(g) for g in case),
        groups=len(both),
        grouped_tokens=sum(len(g) for g in both.values()),
        largest=[DuplicateGroup(k, [texts[s] for s in g], g) for k, g in largest],
    )


__all__ = ["Audit", "CorpusUse", "DuplicateGroup", "Duplicates", "TokenAudit", "audit", "duplicates",
           "merge_without_shortcut"]


def _quoted(s: str) -> str:
    return "'" + visible(s) + "'"
