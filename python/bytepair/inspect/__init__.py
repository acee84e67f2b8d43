"""Look inside tokenizers: merge traces, vocab sweeps, word ranks, token pieces,
cross-language comparisons, held-out evaluation, vocabulary audits, tokenizer
diffs and the parity report.

These are tools: they import the library (:mod:`bytepair`), never the reverse.
Every function returns plain data (dataclasses holding lists and numbers) with
``to_text()`` for a plain-text table, ``to_dict()`` for JSON, and ``__rich__``
so ``rich.print(result)`` draws a table when rich is installed (it is optional).

>>> t = trace("low lower lowest", 4)
>>> [s.num_tokens for s in t.steps]
[13, 10, 8, 6]
"""

from ..render.text import Plain, display_width, format_table, show_bytes, visible
from .audit import Audit, TokenAudit, audit
from .common import TokenizerLike, count_tokens, is_complete_utf8
from .compare import CompareRow, Comparison, Evaluation, compare, evaluate
from .diff import Diff, diff
from .parity import ParityReport, parity
from .pieces import Piece, Pieces, WordRank, WordRanks, pieces, word_ranks
from .trace import MergeStep, Sweep, SweepRow, Trace, sweep, trace

__all__ = [
    "Audit",
    "CompareRow",
    "Comparison",
    "Diff",
    "Evaluation",
    "MergeStep",
    "ParityReport",
    "Piece",
    "Pieces",
    "Plain",
    "Sweep",
    "SweepRow",
    "TokenAudit",
    "TokenizerLike",
    "Trace",
    "WordRank",
    "WordRanks",
    "audit",
    "compare",
    "count_tokens",
    "diff",
    "display_width",
    "evaluate",
    "format_table",
    "is_complete_utf8",
    "parity",
    "pieces",
    "show_bytes",
    "sweep",
    "trace",
    "visible",
    "word_ranks",
]
