//! Pre-tokenization: splitting text into the pieces ("chunks") inside which BPE
//! merges happen. Merges never cross a piece boundary.
//!
//! The three named patterns are the exact regular expressions of tiktoken's
//! `gpt2`/`r50k_base`, `cl100k_base` and `o200k_base` encodings. They run on
//! hand-written scanners (module `scan`) that are proven equal to the regexes by
//! differential tests (here against `fancy-regex`, the engine tiktoken uses, and
//! in `tests/pretokenize/` against tiktoken itself), with character classes read
//! from `regex-syntax` ([`unicode`]). Any other pattern goes through `fancy-regex`
//! (it needs look-ahead and possessive quantifiers). [`Pretokenizer::Whole`] does
//! no splitting at all.
//!
//! Three ways to consume pieces, fastest first:
//! * [`Scanner`] (from [`Pretokenizer::scanner`], named patterns only): a `Copy`
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
//!   (module `block`) for all three patterns: ASCII text 64 bytes at a time,
//!   piece starts from class bit masks, the scalar scanner for non-ASCII text
//!   and the rare uncertain positions. `Scanner::pieces` / [`Scanner::piece_end`] stay scalar;
//!   [`Scanner::for_each_span_scalar`] is the reference it is tested against.

mod block;
mod scan;
pub mod unicode;

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::SpanSink;
use scan::Scan;
use unicode::Tables;

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

/// How text is cut into pieces before merging.
#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// tiktoken's gpt2 / r50k_base pattern.
    Gpt2,
    /// tiktoken's cl100k_base pattern.
    Cl100k,
    /// tiktoken's o200k_base pattern.
    O200k,
    /// Any other regular expression (the source string and the compiled form).
    Custom(String, Box<fancy_regex::Regex>),
    /// No pre-tokenization: the whole text is one piece.
    Whole,
}

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
            Named::Gpt2 => match block::Classifier::detect() {
                Some(how) if block::worth_blocks(s.b) => {
                    block::spans(Named::Gpt2, &s, text, how, &mut f)
                }
                _ => drive!(gpt2),
            },
            Named::Cl100k => match block::Classifier::detect() {
                Some(how) if block::worth_blocks(s.b) => {
                    block::spans(Named::Cl100k, &s, text, how, &mut f)
                }
                _ => drive!(cl100k),
            },
            Named::O200k => match block::Classifier::detect() {
                Some(how) if block::worth_blocks(s.b) => {
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

fn next_char_boundary(text: &str, i: usize) -> usize {
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

fn compiled(slot: &'static OnceLock<fancy_regex::Regex>, pat: &str) -> &'static fancy_regex::Regex {
    // The named patterns are constants known to compile (checked by a unit test).
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
    /// `o200k`/`o200k_base` or the exact regex strings of those encodings select
    /// the built-in scanners; anything else is compiled as a regular expression
    /// (an error names the pattern and the parser's complaint).
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        Ok(match pattern {
            None => Pretokenizer::Whole,
            Some("gpt2") | Some("r50k_base") | Some("p50k_base") | Some(GPT2_PATTERN) => {
                Pretokenizer::Gpt2
            }
            Some("cl100k") | Some("cl100k_base") | Some(CL100K_PATTERN) => Pretokenizer::Cl100k,
            Some("o200k") | Some("o200k_base") | Some(O200K_PATTERN) => Pretokenizer::O200k,
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
            Pretokenizer::Gpt2 => Some(GPT2_PATTERN),
            Pretokenizer::Cl100k => Some(CL100K_PATTERN),
            Pretokenizer::O200k => Some(O200K_PATTERN),
            Pretokenizer::Custom(p, _) => Some(p),
            Pretokenizer::Whole => None,
        }
    }

    /// The hand-written scanner of a named pattern; `None` for custom regexes
    /// and for [`Pretokenizer::Whole`].
    pub fn scanner(&self) -> Option<Scanner> {
        match self {
            Pretokenizer::Gpt2 => Some(Scanner::new(Named::Gpt2)),
            Pretokenizer::Cl100k => Some(Scanner::new(Named::Cl100k)),
            Pretokenizer::O200k => Some(Scanner::new(Named::O200k)),
            Pretokenizer::Custom(..) | Pretokenizer::Whole => None,
        }
    }

    /// The `fancy-regex` form of the pattern (for the named patterns too: tests
    /// and benchmarks compare the scanners against it); `None` for `Whole`.
    pub fn regex(&self) -> Option<&fancy_regex::Regex> {
        static GPT2: OnceLock<fancy_regex::Regex> = OnceLock::new();
        static CL100K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        static O200K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        match self {
            Pretokenizer::Gpt2 => Some(compiled(&GPT2, GPT2_PATTERN)),
            Pretokenizer::Cl100k => Some(compiled(&CL100K, CL100K_PATTERN)),
            Pretokenizer::O200k => Some(compiled(&O200K, O200K_PATTERN)),
            Pretokenizer::Custom(_, re) => Some(re),
            Pretokenizer::Whole => None,
        }
    }

    /// Calls `f(start, end)` with the byte offsets of every piece of `text`, left
    /// to right. The pieces are non-empty, contiguous and cover `text` exactly:
    /// where a custom pattern does not match, the unmatched span is a piece of
    /// its own (tiktoken would drop it; bytepair never loses text).
    ///
    /// Errors: [`Error::RegexRuntime`] when a custom regex exceeds its
    /// backtracking limit (never for the named patterns or `Whole`).
    ///
    /// Complexity: linear in `text` for the named patterns; for custom patterns,
    /// whatever `fancy-regex` needs (bounded by its backtracking limit).
    pub fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) -> Result<()> {
        match self {
            Pretokenizer::Gpt2 | Pretokenizer::Cl100k | Pretokenizer::O200k => {
                if let Some(s) = self.scanner() {
                    s.for_each_span(text, f);
                }
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
    /// For the named patterns the cut is safe when the character before `p` is a
    /// letter or number and `text[p]` is a space or `\n`: every alternative that
    /// contains a letter or number stops there and reads nothing further but
    /// class tests that a space, a newline and the end of text all fail, and no
    /// pattern looks behind. Custom patterns and `Whole` have no safe cuts.
    pub fn is_safe_cut(&self, text: &str, p: usize) -> bool {
        if self.scanner().is_none() || p == 0 || p >= text.len() {
            return false;
        }
        let b = text.as_bytes();
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
        self.scanner()?;
        let b = text.as_bytes();
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
        self.scanner()?;
        let b = text.as_bytes();
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

#[cfg(test)]
mod tests {
    use super::*;

    const NAMED: [(&str, Named); 3] = [
        ("gpt2", Named::Gpt2),
        ("cl100k", Named::Cl100k),
        ("o200k", Named::O200k),
    ];

    /// One or more characters of every class combination the scanners tell
    /// apart, plus every character a pattern names literally.
    const ALPHABET: &[char] = &[
        'a',
        'Z',
        's',
        'S',
        't',
        'T',
        'l',
        'L',
        'v',
        'V',
        'e',
        'E',
        'r',
        'R',
        'd',
        'D',
        'm',
        'M',
        'k',
        '0',
        '9',
        ' ',
        '\t',
        '\n',
        '\r',
        '\u{b}',
        '\u{c}',
        '\'',
        '/',
        '.',
        '!',
        '\u{0}',
        '\u{17f}',
        '\u{212a}',
        'é',
        'É',
        '\u{1c5}',
        '\u{2b0}',
        '한',
        '中',
        '\u{301}',
        '\u{903}',
        '\u{20dd}',
        '\u{663}',
        '\u{216b}',
        '\u{bd}',
        '\u{a0}',
        '\u{3000}',
        '\u{2028}',
        '\u{85}',
        '\u{200b}',
        '€',
        '😀',
        '\u{e000}',
        '\u{378}',
        '\u{1d400}',
        '\u{1d7ce}',
        '\u{10428}',
        '\u{1f1e6}',
        '\u{2019}',
    ];

    /// A small alphabet for exhaustive enumeration: one per behaviour class.
    const SMALL: &[char] = &[
        'a', 'Z', 's', 'l', 'e', 'v', '\u{17f}', '0', ' ', '\n', '\r', '\t', '\'', '/', '.',
        '\u{301}', '\u{2b0}', '한', '\u{1c5}', '\u{a0}',
    ];

    fn regex_pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
        let re = p.regex().expect("named pattern");
        re.find_iter(text)
            .map(|m| {
                m.expect("no backtracking blowup on short input")
                    .as_str()
                    .to_owned()
            })
            .collect()
    }

    fn check(text: &str) {
        for (name, _) in NAMED {
            let p = Pretokenizer::new(Some(name)).expect("named");
            let ours: Vec<String> = p
                .split(text)
                .expect("infallible")
                .into_iter()
                .map(str::to_owned)
                .collect();
            let theirs = regex_pieces(&p, text);
            assert_eq!(ours, theirs, "{name} on {text:?}");
            let iter: Vec<&str> = p.scanner().expect("named").pieces(text).collect();
            assert_eq!(iter, ours, "{name} iterator on {text:?}");
        }
    }

    /// xorshift64*: a seeded generator, so failures are reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn named_patterns_compile() {
        for p in [GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN] {
            compile(p).expect("compiles");
        }
    }

    #[test]
    fn gpt2_seed_example() {
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        assert_eq!(
            p.split("I'm lowest 토큰").unwrap(),
            vec!["I", "'m", " lowest", " 토큰"]
        );
    }

    #[test]
    fn digits_grouping() {
        let cl = Pretokenizer::new(Some("cl100k")).unwrap();
        assert_eq!(cl.split("12345678").unwrap(), vec!["123", "456", "78"]);
        let g = Pretokenizer::new(Some("gpt2")).unwrap();
        assert_eq!(g.split("12345678").unwrap(), vec!["12345678"]);
    }

    #[test]
    fn invalid_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::new(Some("(")),
            Err(Error::InvalidPattern { .. })
        ));
        assert!(matches!(
            Pretokenizer::new(Some("")),
            Err(Error::InvalidPattern { .. })
        ));
    }

    #[test]
    fn unmatched_text_is_its_own_piece() {
        for (pat, text, want) in [
            (
                "the",
                "the cat sat on the mat",
                vec!["the", " cat sat on ", "the", " mat"],
            ),
            ("[a-z]+", "  ab12cd!", vec!["  ", "ab", "12", "cd", "!"]),
            ("x*", "axxb", vec!["a", "xx", "b"]),
            ("z", "abc", vec!["abc"]),
        ] {
            let p = Pretokenizer::new(Some(pat)).unwrap();
            assert_eq!(p.split(text).unwrap(), want, "{pat:?} on {text:?}");
        }
    }

    #[test]
    fn whole_and_empty() {
        let w = Pretokenizer::new(None).unwrap();
        assert_eq!(w.split("a b").unwrap(), vec!["a b"]);
        assert!(w.split("").unwrap().is_empty());
        for (name, _) in NAMED {
            assert!(Pretokenizer::new(Some(name))
                .unwrap()
                .split("")
                .unwrap()
                .is_empty());
        }
    }

    #[test]
    fn exhaustive_short_strings_match_fancy_regex() {
        let mut buf = String::new();
        for &a in SMALL {
            for &b in SMALL {
                for &c in SMALL {
                    buf.clear();
                    buf.extend([a, b, c]);
                    check(&buf);
                }
            }
        }
        for &a in ALPHABET {
            for &b in ALPHABET {
                buf.clear();
                buf.extend([a, b]);
                check(&buf);
            }
        }
    }

    #[test]
    fn random_strings_match_fancy_regex() {
        let seed = 0x5eed_0001;
        let mut rng = Rng(seed);
        for _ in 0..20_000 {
            let len = rng.below(24);
            // Bias towards few distinct characters, so runs and repeats occur.
            let k = 1 + rng.below(6);
            let pool: Vec<char> = (0..k)
                .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                .collect();
            let text: String = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
            check(&text);
        }
    }

    #[test]
    fn contractions_and_case_folds() {
        for text in [
            "I'm we'll they've you're he'd it's DON'T WE'LL THEY'VE YOU'RE HE'D IT'S",
            "it'ſ we'Ll o'Re x'VE 'S 'ſ 'K 'k '\u{212a}",
            "'s's'll'LL'lL'ſſ '' ''s a'",
            "ǅx'S Dž'd ʰA'm 한'Re é'T \u{301}'ve .'d",
        ] {
            check(text);
        }
    }

    #[test]
    fn whitespace_tails_match_fancy_regex() {
        for text in [
            "a  b",
            "a \n b",
            "a\n\n\nb",
            "a \r\n\r\n b",
            "  ",
            " ",
            "\n",
            "x\n",
            "x \n",
            "x\n ",
            "x  ",
            " \u{a0}x",
            "\u{3000}\u{3000}x",
            "a\t\tb",
            "a \t\n \t b",
            "// a\n/b",
            "!\n/x",
            ".\r\n/ x",
            " !\n",
            "\u{2028}\u{2029}",
        ] {
            check(text);
        }
    }

    /// Megabyte-long hostile inputs split as an obvious oracle says (timed in tests/reliability).
    #[test]
    fn hostile_inputs_split_as_the_oracle_says() {
        const BIG: usize = 1_000_000;
        for (name, named) in NAMED {
            let sc = Scanner::new(named);
            let x = "x".repeat(BIG);
            assert_eq!(
                sc.pieces(&x).collect::<Vec<_>>(),
                vec![x.as_str()],
                "{name}"
            );
            let spaces = " ".repeat(BIG);
            assert_eq!(sc.pieces(&spaces).count(), 1, "{name}");
            let sx = format!("{spaces}x");
            let got: Vec<&str> = sc.pieces(&sx).collect();
            assert_eq!(got, vec![&spaces[1..], " x"], "{name}");
            let nl = "\n".repeat(BIG);
            assert_eq!(sc.pieces(&nl).count(), 1, "{name}");
            let digits = "7".repeat(BIG);
            let want = if named == Named::Gpt2 {
                1
            } else {
                BIG.div_ceil(3)
            };
            assert_eq!(sc.pieces(&digits).count(), want, "{name}");
            let marks = "\u{301}".repeat(BIG / 2);
            assert_eq!(sc.pieces(&marks).count(), 1, "{name}");
            let korean = "한".repeat(BIG / 3);
            assert_eq!(sc.pieces(&korean).count(), 1, "{name}");
            // o200k's backtracking case: a modifier letter, then a long run of capitals.
            let lm_caps = format!("\u{2b0}{}", "A".repeat(BIG));
            let got: Vec<&str> = sc.pieces(&lm_caps).collect();
            let want: Vec<&str> = if named == Named::O200k {
                vec!["\u{2b0}", &lm_caps[2..]]
            } else {
                vec![&lm_caps]
            };
            assert_eq!(got, want, "{name}");
            let mixed_ws = " \n".repeat(BIG / 2) + "x";
            let total: usize = sc.pieces(&mixed_ws).map(str::len).sum();
            assert_eq!(total, mixed_ws.len(), "{name}");
        }
    }

    #[test]
    fn real_text_matches_fancy_regex() {
        let text = "The Project Gutenberg eBook of Pride and Prejudice, by Jane Austen.\n\n\
            \"It is a truth universally acknowledged,\" she said -- isn't it? 12,345.67 $1,000!!\n\
            def f(x):\n    return x**2  # comment\r\n\tif x:\n\t\tpass\n\n\n\
            대한민국 헌법은 1948년에 제정되었다. 日本語のテキスト、中文文本。Привет, мир!\n\
            नमस्ते दुनिया 🎉🎉 café naïve ÉCOLE Ǆemal ʰʰA ﬁne ſtuff\u{a0}\u{a0}end  \n";
        check(text);
        for (name, named) in NAMED {
            let sc = Scanner::new(named);
            let mut spans = Vec::new();
            sc.for_each_span(text, |s, e| spans.push((s, e)));
            let pieces: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
            assert_eq!(pieces, sc.pieces(text).collect::<Vec<_>>(), "{name}");
        }
    }

    #[test]
    fn safe_cuts_do_not_change_pieces() {
        let seed = 0x5eed_0002;
        let mut rng = Rng(seed);
        let mut cuts_seen = 0;
        for _ in 0..3_000 {
            let len = rng.below(40);
            let k = 2 + rng.below(8);
            let pool: Vec<char> = (0..k)
                .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                .collect();
            let text: String = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
            for (name, _) in NAMED {
                let p = Pretokenizer::new(Some(name)).unwrap();
                let whole = p.split(&text).unwrap();
                for q in 0..=text.len() {
                    if !p.is_safe_cut(&text, q) {
                        continue;
                    }
                    cuts_seen += 1;
                    let mut parts = p.split(&text[..q]).unwrap();
                    parts.extend(p.split(&text[q..]).unwrap());
                    assert_eq!(
                        parts, whole,
                        "{name} cut at {q} of {text:?} (seed {seed:#x})"
                    );
                }
            }
        }
        assert!(
            cuts_seen > 100,
            "the generator should produce safe cuts ({cuts_seen})"
        );
        let p = Pretokenizer::new(Some("o200k")).unwrap();
        let text = "ab, cd\nef 12 '";
        assert_eq!(p.next_safe_cut(text, 0), Some(6));
        assert_eq!(p.next_safe_cut(text, 7), Some(9));
        assert_eq!(p.safe_cut_before(text, text.len()), Some(12));
        assert_eq!(p.safe_cut_before(text, 8), Some(6));
        assert_eq!(
            Pretokenizer::new(None).unwrap().next_safe_cut(text, 0),
            None
        );
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    /// Throughput of the scanners on the real corpora (wall clock, best of 5):
    /// `cargo test --profile devfast --lib speed -- --ignored --nocapture`.
    /// `BP_SPEED_FILES` (comma-separated paths) and `BP_SPEED_REPS` override the
    /// defaults, e.g. to count instructions under `valgrind --tool=callgrind`.
    #[test]
    #[ignore]
    fn scanner_speed() {
        let dir = std::env::var("HOME").unwrap_or_default() + "/.cache/bytepair-data/corpora/";
        let files: Vec<String> = match std::env::var("BP_SPEED_FILES") {
            Ok(v) => v.split(',').map(str::to_owned).collect(),
            Err(_) => [
                "en_austen.txt",
                "code_python.txt",
                "ko_prose.txt",
                "multi_unicode.txt",
            ]
            .iter()
            .map(|f| dir.clone() + f)
            .collect(),
        };
        let reps: usize = std::env::var("BP_SPEED_REPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5);
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            let mut line = format!("{:20}", f.rsplit('/').next().unwrap_or(""));
            for (name, named) in [
                ("gpt2", Named::Gpt2),
                ("cl100k", Named::Cl100k),
                ("o200k", Named::O200k),
            ] {
                let sc = Scanner::new(named);
                let mut best = f64::MAX;
                let mut n = 0;
                for _ in 0..reps {
                    let t0 = std::time::Instant::now();
                    n = 0;
                    sc.for_each_span(&text, |_, _| n += 1);
                    best = best.min(t0.elapsed().as_secs_f64());
                }
                line += &format!(" {name} {:5.0} MB/s ({n})", text.len() as f64 / best / 1e6);
            }
            println!("{line}");
        }
    }
}
