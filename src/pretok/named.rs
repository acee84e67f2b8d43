//! [`Scanner`], the handle that runs a scanner family's hand-written scanner
//! (module `scan`, and on a CPU with AVX2 the block path, module `block`), and
//! [`Pieces`], its iterator. The patterns themselves are in `patterns`.
//!
//! Complexity: linear in the text (see [`Scanner::piece_end`]).

use super::patterns::{next_char_boundary, Named};
use super::scan::Scan;
use super::unicode::{self, Tables};
use super::{block, classes};
use crate::{Rank, SpanSink};

/// A hand-written scanner for one named pattern: cheap to copy, shareable across
/// threads, infallible.
#[derive(Debug, Clone, Copy)]
pub struct Scanner {
    named: Named,
    tables: &'static Tables,
}

impl Scanner {
    /// The scanner of a named pattern (the first call builds the shared character
    /// tables, a few ms).
    pub fn new(named: Named) -> Scanner {
        let tables = if named == Named::DeepSeekV3 {
            unicode::deepseek_tables()
        } else {
            unicode::tables()
        };
        Scanner { named, tables }
    }

    /// Which pattern this scanner runs.
    pub fn named(&self) -> Named {
        self.named
    }

    /// The byte offset where the piece starting at byte `start` ends: the end of
    /// the regex match that `find_iter` would return there.
    ///
    /// Preconditions: `start < text.len()` and `start` is a piece boundary (0, or
    /// the end of a previous piece); then the result is a char boundary in
    /// `start + 1 ..= text.len()`. For other `start` values the result is still
    /// in `start + 1 ..= text.len()` (or `text.len()` when `start` is past the end).
    ///
    /// Complexity: O(length of the piece + look-ahead), where the look-ahead is
    /// at most the rest of a whitespace run or, for o200k, of a run of letters, so
    /// scanning a whole text with this is linear.
    #[inline]
    pub fn piece_end(&self, text: &str, start: usize) -> usize {
        let s = Scan {
            b: text.as_bytes(),
            t: self.tables,
        };
        let end = s.end(self.named, start);
        // Defensive: the scanners always advance; never loop or overrun.
        if end > start {
            end.min(text.len())
        } else {
            next_char_boundary(text, start)
        }
    }

    /// The pieces of `text`, left to right. They are non-empty, contiguous and
    /// cover `text` exactly.
    ///
    /// Complexity: linear in `text`.
    pub fn pieces<'a>(&self, text: &'a str) -> Pieces<'a> {
        Pieces {
            scanner: *self,
            text,
            pos: 0,
        }
    }

    /// Calls `f(start, end)` for every piece (byte offsets), left to right.
    ///
    /// Complexity: linear in `text`.
    #[inline]
    pub fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) {
        // One monomorphised loop per pattern keeps the dispatch out of the loop.
        let s = Scan {
            b: text.as_bytes(),
            t: self.tables,
        };
        let n = text.len();
        let mut i = 0;
        macro_rules! drive {
            ($named:expr) => {{
                let named = $named;
                match classes::Classifier::detect() {
                    Some(how) if named.has_block_path() && classes::worth_blocks(s.b) => {
                        block::spans(named, &s, text, how, &mut f)
                    }
                    _ => {
                        while i < n {
                            let e = s.end(named, i);
                            let e = if e > i {
                                e.min(n)
                            } else {
                                next_char_boundary(text, i)
                            };
                            f.span(i, e);
                            i = e;
                        }
                    }
                }
            }};
        }
        match self.named {
            Named::Gpt2 => drive!(Named::Gpt2),
            Named::Cl100k => drive!(Named::Cl100k),
            Named::O200k => drive!(Named::O200k),
            Named::Llama3 => drive!(Named::Llama3),
            Named::Qwen2 => drive!(Named::Qwen2),
            Named::Qwen35 => drive!(Named::Qwen35),
            Named::Nemo => drive!(Named::Nemo),
            Named::DeepSeekV3 => drive!(Named::DeepSeekV3),
            Named::Superword => drive!(Named::Superword),
        }
    }

    /// GPT-2's pieces of `text` cut first at the added tokens that are runs
    /// of spaces (GPT-NeoX's): `f.fixed` gets each token, `ids[k - 2]` the
    /// id of `k` spaces for every `k` in `2..=ids.len() + 1` (`ids` holds 1 to
    /// [`block::cut::MAX_RUN`]` - 1` ids); `f.span` each piece of the text
    /// between them, pre-tokenized alone. `None` when this scanner is not
    /// GPT-2's or `ids` is out of that range.
    ///
    /// Complexity: linear in `text`.
    pub fn for_each_span_cut<F: SpanSink>(&self, text: &str, ids: &[Rank], mut f: F) -> Option<()> {
        if self.named != Named::Gpt2 || ids.is_empty() || ids.len() >= block::cut::MAX_RUN {
            return None;
        }
        let s = Scan {
            b: text.as_bytes(),
            t: self.tables,
        };
        block::cut::spans(&s, text, ids, &mut f);
        Some(())
    }

    /// [`Self::for_each_span`] on the scalar scanner alone, whatever the CPU:
    /// the reference the block path (module `block`) is tested against.
    pub fn for_each_span_scalar<F: SpanSink>(&self, text: &str, mut f: F) {
        let mut i = 0;
        while i < text.len() {
            let e = self.piece_end(text, i);
            f.span(i, e);
            i = e;
        }
    }
}

/// Iterator over the pieces of a text (see [`Scanner::pieces`]).
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    scanner: Scanner,
    text: &'a str,
    pos: usize,
}

impl<'a> Pieces<'a> {
    /// Byte offset of the next piece's start (the text's length when done).
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let end = self.scanner.piece_end(self.text, start);
        self.pos = end;
        self.text.get(start..end)
    }
}
