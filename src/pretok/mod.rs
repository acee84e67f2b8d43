//! Pre-tokenization: splitting text into the pieces ("chunks") inside which BPE
//! merges happen. Merges never cross a piece boundary.
//!
//! Patterns with a hand-written scanner (module `patterns`, [`SPELLINGS`]):
//! tiktoken's `gpt2`/`r50k_base`, `cl100k_base` and `o200k_base`, and the
//! open models' patterns (Hugging Face `ByteLevel`'s regex, Llama 3 / GLM-4 /
//! OLMo 2, Qwen2, Qwen3.5, tekken, DeepSeek V3's chain of three `Split`s,
//! [`Pretokenizer::from_splits`]) and the spans of superword tokenizers
//! ([`SUPERWORD_PATTERN`]), each recognised by its exact string and run
//! by the scanner of its family ([`Named`]). The scanners (module `scan`) are
//! proven equal to the regexes by differential tests (here against
//! `fancy-regex`, the engine tiktoken uses; in `tests/pretokenize/` against
//! tiktoken and Hugging Face `tokenizers`' Oniguruma), with character classes
//! read from `regex-syntax` ([`unicode`]). Any other pattern goes through
//! `fancy-regex` (it needs look-ahead and possessive quantifiers).
//! [`Pretokenizer::Whole`] does no splitting at all. A chain of `Split` and
//! `Digits` stages of simple shapes (DeepSeek LLM's and Coder's) runs on one
//! scanner of its own ([`SplitChain`], module `splits`, built by
//! [`Pretokenizer::from_chain`]). [`Pretokenizer::path`] says which path a
//! pre-tokenizer takes.
//!
//! Three ways to consume pieces, fastest first:
//! * [`Scanner`] (from [`Pretokenizer::scanner`], scanned patterns only): a `Copy`
//!   handle with [`Scanner::piece_end`] and an infallible iterator
//!   [`Scanner::pieces`]; the encoder and trainer hot loops use this.
//! * [`Pretokenizer::for_each_piece`] / [`Pretokenizer::for_each_span`]: a
//!   callback per piece (as `&str` or as byte offsets) for every variant,
//!   including custom regexes, whose engine can fail at run time.
//! * [`Pretokenizer::split`]: a `Vec` of pieces.
//!
//! For splitting a large text into blocks that can be pre-tokenized separately
//! (streaming, threads), [`Pretokenizer::safe_cut_before`] and
//! [`Pretokenizer::next_safe_cut`] find positions where cutting does not change
//! the pieces.
//!
//! Performance notes. `benches/bench_pretok.py --mb 4 --repeat 2` (CPU time,
//! on the shared 2-core machine at load ~10, so absolute figures are low): the
//! scanners split 135–275 MB/s on every corpus and pattern, 8–47x fancy-regex
//! running the same pattern and 20–95x Python `regex`. Deterministic measure
//! (callgrind, 1 MB each): per byte and pattern ~17.5 instructions on Austen,
//! ~24 on Python code and on Korean.
//! * What carries it: a 256-entry flag table for ASCII (no decoding); fast paths
//!   that decide the commonest pieces (a letter, or a space or punctuation and a
//!   letter) from the first two characters before
//!   the general alternatives; letter runs compared eight bytes at a time;
//!   non-ASCII characters decoded once and looked up in a two-level table of
//!   128-code-point blocks, deduplicated (Hangul and CJK blocks collapse to one).
//! * The fast paths and the eight-byte runs cut instructions by 20% on English
//!   (66.2 M -> 52.6 M for the three patterns on 1 MB; Korean 85 M -> 75 M).
//! * The scanners are `#[inline(always)]` into one loop per pattern
//!   ([`Scanner::for_each_span`]); the rarer general paths stay out of line.
//! * On a CPU with AVX2, [`Scanner::for_each_span`] runs the block path
//!   (module `block`) for every family: text 64 bytes at a time, piece
//!   starts from class bit masks (characters of several bytes classed too),
//!   the scalar scanner for the rare uncertain positions. `Scanner::pieces` / [`Scanner::piece_end`] stay scalar;
//!   [`Scanner::for_each_span_scalar`] is the reference it is tested against.

mod block;
mod classes;
mod deepseek;
mod lanes;
mod named;
mod patterns;
mod scan;
mod splits;
pub mod unicode;
mod wide;

use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::SpanSink;

pub(crate) use block::cut::MAX_RUN as MAX_SPACE_RUN;
pub use named::{Pieces, Scanner};
pub use patterns::{
    Known, Named, BYTELEVEL_PATTERN, CHAIN_SEPARATOR, CL100K_HF_PATTERN, CL100K_PATTERN,
    DEEPSEEK_V3_CHAIN, DEEPSEEK_V3_SPLITS, GPT2_PATTERN, LLAMA3_PATTERN, NEMO_PATTERN,
    O200K_PATTERN, QWEN2_PATTERN, QWEN35_PATTERN, SPELLINGS, SUPERWORD_PATTERN,
};
pub use splits::{ChainStage, SplitChain};

/// How text is cut into pieces before merging.
#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// A pattern with a hand-written scanner (one of [`SPELLINGS`]).
    Scan(Known),
    /// Any other regular expression (the source string and the compiled form).
    Custom(String, Box<fancy_regex::Regex>),
    /// No pre-tokenization: the whole text is one piece.
    Whole,
    /// A chain of `Split` and `Digits` stages run by one scanner
    /// ([`SplitChain`], from [`Pretokenizer::from_chain`]).
    Chain(Arc<SplitChain>),
}

fn compiled(slot: &'static OnceLock<fancy_regex::Regex>, pat: &str) -> &'static fancy_regex::Regex {
    // The scanned patterns are constants known to compile (checked by a unit test).
    slot.get_or_init(|| {
        compile(pat).unwrap_or_else(|e| panic!("built-in pattern must compile: {e}"))
    })
}

fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })
}

impl Pretokenizer {
    /// Builds a pre-tokenizer from a pattern: `None` means no splitting; the
    /// names `gpt2`/`r50k_base`/`p50k_base`, `cl100k`/`cl100k_base`,
    /// `o200k`/`o200k_base` select tiktoken's patterns; a pattern string equal
    /// to one of [`SPELLINGS`] (tiktoken's, Hugging Face `ByteLevel`'s, Llama 3's,
    /// Qwen's, tekken's, ...) runs on its scanner; anything else is compiled as
    /// a regular expression (an error names the pattern and the parser's
    /// complaint).
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        if let Some(k) = pattern.and_then(Known::find) {
            return Ok(Pretokenizer::Scan(k));
        }
        let scan = |named| Pretokenizer::Scan(Known::of(named));
        Ok(match pattern {
            None => Pretokenizer::Whole,
            Some("gpt2") | Some("r50k_base") | Some("p50k_base") => scan(Named::Gpt2),
            Some("cl100k") | Some("cl100k_base") => scan(Named::Cl100k),
            Some("o200k") | Some("o200k_base") => scan(Named::O200k),
            Some(p) if p.contains(CHAIN_SEPARATOR) => {
                return Err(Error::InvalidPattern {
                    pattern: p.to_string(),
                    reason: "a chain of Split patterns runs only where it has a scanner \
                             (DeepSeek V3's); run the stages one after another"
                        .to_string(),
                })
            }
            Some("") => {
                return Err(Error::InvalidPattern {
                    pattern: String::new(),
                    reason: "the empty pattern matches no text; use no pattern (None) for no \
                             pre-tokenization"
                        .to_string(),
                })
            }
            Some(p) => Pretokenizer::Custom(p.to_string(), Box::new(compile(p)?)),
        })
    }

    /// The regex source string, or `None` for [`Pretokenizer::Whole`].
    pub fn pattern(&self) -> Option<&str> {
        match self {
            Pretokenizer::Scan(k) => Some(k.pattern()),
            Pretokenizer::Custom(p, _) => Some(p),
            Pretokenizer::Whole | Pretokenizer::Chain(_) => None,
        }
    }

    /// Which path splits text: `scanner:<family>` (e.g. `scanner:llama3`) for a
    /// pattern with a hand-written scanner, `regex` for `fancy-regex`, `whole`
    /// for no splitting, `scanner:split_chain` for a [`SplitChain`].
    pub fn path(&self) -> &'static str {
        match self {
            Pretokenizer::Scan(k) => k.path(),
            Pretokenizer::Custom(..) => "regex",
            Pretokenizer::Whole => "whole",
            Pretokenizer::Chain(_) => "scanner:split_chain",
        }
    }

    /// The chain scanner of a [`Pretokenizer::Chain`].
    pub fn chain(&self) -> Option<&SplitChain> {
        match self {
            Pretokenizer::Chain(c) => Some(c),
            _ => None,
        }
    }

    /// The scanner family of a pattern with a scanner; `None` otherwise.
    pub fn named(&self) -> Option<Named> {
        match self {
            Pretokenizer::Scan(k) => Some(k.named()),
            Pretokenizer::Custom(..) | Pretokenizer::Whole | Pretokenizer::Chain(_) => None,
        }
    }

    /// The hand-written scanner of a pattern that has one; `None` for custom
    /// regexes and for [`Pretokenizer::Whole`].
    pub fn scanner(&self) -> Option<Scanner> {
        self.named().map(Scanner::new)
    }

    /// A chain of `Split` stages (every match and gap kept, each stage
    /// re-splitting the pieces of the one before) as one pre-tokenizer: one
    /// stage is [`Self::new`]; a longer chain only where it has a scanner
    /// ([`DEEPSEEK_V3_SPLITS`]), else `None` (run the stages one by one).
    pub fn from_splits(patterns: &[&str]) -> Result<Option<Self>> {
        match patterns {
            [one] => Self::new(Some(one)).map(Some),
            _ => Ok(
                Known::find(&patterns.join(&CHAIN_SEPARATOR.to_string())[..])
                    .map(Pretokenizer::Scan),
            ),
        }
    }

    /// A chain of `Split` stages (`Isolated`, not inverted) and `Digits`
    /// stages as one pre-tokenizer, when every stage has a shape that
    /// [`SplitChain`] runs; `None` otherwise (run the stages one by one).
    pub fn from_chain(stages: &[ChainStage]) -> Option<Self> {
        SplitChain::new(stages).map(|c| Pretokenizer::Chain(Arc::new(c)))
    }

    /// The `fancy-regex` form of the pattern (for the scanned patterns too:
    /// tests and benchmarks compare the scanners against it); `None` for `Whole`
    /// and for a chain of `Split` stages, which no one regex expresses.
    pub fn regex(&self) -> Option<&fancy_regex::Regex> {
        static SCANNED: [OnceLock<fancy_regex::Regex>; SPELLINGS.len()] =
            [const { OnceLock::new() }; SPELLINGS.len()];
        match self {
            Pretokenizer::Scan(k) if k.named().is_chain() => None,
            Pretokenizer::Scan(k) => SCANNED
                .get(k.index())
                .map(|slot| compiled(slot, k.pattern())),
            Pretokenizer::Custom(_, re) => Some(re),
            Pretokenizer::Whole | Pretokenizer::Chain(_) => None,
        }
    }

    /// Calls `f(start, end)` with the byte offsets of every piece of `text`, left
    /// to right. The pieces are non-empty, contiguous and cover `text` exactly:
    /// where a custom pattern does not match, the unmatched span is a piece of
    /// its own (tiktoken would drop it; bytepair never loses text).
    ///
    /// Errors: [`Error::RegexRuntime`] when a custom regex exceeds its
    /// backtracking limit (never for the scanned patterns or `Whole`).
    ///
    /// Complexity: linear in `text` for the scanned patterns; for custom patterns,
    /// whatever `fancy-regex` needs (bounded by its backtracking limit).
    pub fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) -> Result<()> {
        match self {
            Pretokenizer::Scan(k) => {
                Scanner::new(k.named()).for_each_span(text, f);
                Ok(())
            }
            Pretokenizer::Chain(c) => {
                c.for_each_span(text, f);
                Ok(())
            }
            Pretokenizer::Whole => {
                if !text.is_empty() {
                    f.span(0, text.len());
                }
                Ok(())
            }
            Pretokenizer::Custom(pattern, re) => {
                // Text the pattern does not match is never dropped: each unmatched
                // span between two matches (or at either end) is a piece of its own.
                let mut at = 0;
                for m in re.find_iter(text) {
                    if f.stop() {
                        return Ok(());
                    }
                    let m = m.map_err(|e| Error::RegexRuntime {
                        pattern: pattern.clone(),
                        reason: e.to_string(),
                    })?;
                    if m.start() > at {
                        f.span(at, m.start());
                    }
                    if m.end() > m.start() {
                        f.span(m.start(), m.end());
                    }
                    at = at.max(m.end());
                }
                if at < text.len() {
                    f.span(at, text.len());
                }
                Ok(())
            }
        }
    }

    /// Calls `f` on every piece of `text`, left to right (see
    /// [`Self::for_each_span`] for the guarantees, errors and complexity).
    pub fn for_each_piece<'a, F: FnMut(&'a str)>(&self, text: &'a str, mut f: F) -> Result<()> {
        self.for_each_span(text, |s, e| {
            if let Some(p) = text.get(s..e) {
                f(p)
            }
        })
    }

    /// The pieces of `text` as a vector (convenience over [`Self::for_each_piece`]).
    pub fn split<'a>(&self, text: &'a str) -> Result<Vec<&'a str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |p| out.push(p))?;
        Ok(out)
    }

    /// Whether byte `p` of `text` is a safe cut: `0 < p < text.len()` and
    /// pre-tokenizing `text[..p]` and `text[p..]` separately gives exactly the
    /// pieces of `text`, *whatever text follows* (so a streaming reader can cut
    /// there before it has seen the rest).
    ///
    /// For the scanned patterns the cut is safe when the character before `p` is a
    /// letter or number and `text[p]` is a space or `\n`: every alternative that
    /// contains a letter or number stops there and reads nothing further but
    /// class tests that a space, a newline and the end of text all fail, and no
    /// pattern looks behind. Custom patterns and `Whole` have no safe cuts.
    ///
    /// The superword spans ([`SUPERWORD_PATTERN`]) cross spaces; their safe cuts
    /// are between a `\r` or `\n` and a byte that is neither: every alternative
    /// that reads a newline ends with a greedy newline run and reads nothing
    /// after it, and the numbers alternative reads no newline.
    pub fn is_safe_cut(&self, text: &str, p: usize) -> bool {
        let Some(named) = self.named() else {
            return false;
        };
        if p == 0 || p >= text.len() {
            return false;
        }
        let b = text.as_bytes();
        if named.spans_lines() {
            return newline(b[p - 1]) && !newline(b[p]);
        }
        if !matches!(b.get(p), Some(b' ') | Some(b'\n')) {
            return false;
        }
        let t = unicode::tables();
        let Some(prev) = text.get(..p).and_then(|s| s.chars().next_back()) else {
            return false;
        };
        t.of(prev as u32) & (unicode::L | unicode::N) != 0
    }

    /// The first safe cut (see [`Self::is_safe_cut`]) at or after byte `from`, if any.
    ///
    /// Complexity: linear in the bytes examined.
    pub fn next_safe_cut(&self, text: &str, from: usize) -> Option<usize> {
        let b = text.as_bytes();
        if self.named()?.spans_lines() {
            let at = from.max(1) - 1;
            let mut c = at + memchr::memchr2(b'\r', b'\n', b.get(at..)?)? + 1;
            while c < b.len() && newline(b[c]) {
                c += 1;
            }
            return (c < b.len()).then_some(c);
        }
        let mut p = from.max(1);
        while p < b.len() {
            let q = p + memchr::memchr2(b' ', b'\n', b.get(p..)?)?;
            if self.is_safe_cut(text, q) {
                return Some(q);
            }
            p = q + 1;
        }
        None
    }

    /// The last safe cut at or before byte `before` (clamped to the text), if
    /// any: where a streaming reader should end the block it pre-tokenizes now,
    /// carrying `text[cut..]` over to the next block.
    ///
    /// Complexity: linear in the bytes examined.
    pub fn safe_cut_before(&self, text: &str, before: usize) -> Option<usize> {
        let b = text.as_bytes();
        if self.named()?.spans_lines() {
            let mut end = before.min(b.len().saturating_sub(1));
            loop {
                let q = memchr::memrchr2(b'\r', b'\n', b.get(..end)?)?;
                if !newline(b[q + 1]) {
                    return Some(q + 1);
                }
                end = q;
            }
        }
        let mut end = before.min(b.len().saturating_sub(1)) + 1;
        while end > 1 {
            let q = memchr::memrchr2(b' ', b'\n', b.get(..end)?)?;
            if self.is_safe_cut(text, q) {
                return Some(q);
            }
            end = q;
        }
        None
    }
}

fn newline(c: u8) -> bool {
    c == b'\r' || c == b'\n'
}

#[cfg(test)]
mod tests;
