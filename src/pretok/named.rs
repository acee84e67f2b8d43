//! The named patterns: the exact regular expressions of tiktoken's
//! `gpt2`/`r50k_base`, `cl100k_base` and `o200k_base` encodings (defined only
//! here; Python reads them as `_core.NAMED_PATTERNS`), and [`Scanner`], the
//! handle that runs each one's hand-written scanner (module `scan`, and on a
//! CPU with AVX2 the block path, module `block`).
//!
//! Complexity: linear in the text (see [`Scanner::piece_end`]).

use super::scan::Scan;
use super::unicode::{self, Tables};
use super::{block, classes};
use crate::SpanSink;

/// tiktoken's `r50k_pat_str` (used by gpt2 / r50k_base / p50k_base).
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// tiktoken's cl100k_base pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// tiktoken's o200k_base pattern.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// Which named pattern a [`Scanner`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// [`GPT2_PATTERN`].
    Gpt2,
    /// [`CL100K_PATTERN`].
    Cl100k,
    /// [`O200K_PATTERN`].
    O200k,
}

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
        Scanner {
            named,
            tables: unicode::tables(),
        }
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
        let end = match self.named {
            Named::Gpt2 => s.gpt2(start),
            Named::Cl100k => s.cl100k(start),
            Named::O200k => s.o200k(start),
        };
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
            ($method:ident) => {
                while i < n {
                    let e = s.$method(i);
                    let e = if e > i {
                        e.min(n)
                    } else {
                        next_char_boundary(text, i)
                    };
                    f.span(i, e);
                    i = e;
                }
            };
        }
        match self.named {
            Named::Gpt2 => match classes::Classifier::detect() {
                Some(how) if classes::worth_blocks(s.b) => {
                    block::spans(Named::Gpt2, &s, text, how, &mut f)
                }
                _ => drive!(gpt2),
            },
            Named::Cl100k => match classes::Classifier::detect() {
                Some(how) if classes::worth_blocks(s.b) => {
                    block::spans(Named::Cl100k, &s, text, how, &mut f)
                }
                _ => drive!(cl100k),
            },
            Named::O200k => match classes::Classifier::detect() {
                Some(how) if classes::worth_blocks(s.b) => {
                    block::spans(Named::O200k, &s, text, how, &mut f)
                }
                _ => drive!(o200k),
            },
        }
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

pub(super) fn next_char_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j.min(text.len()).max(i.min(text.len()))
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
