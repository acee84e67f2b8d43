//! DeepSeek V3 / V4's pre-tokenizer in one pass: three `Split` stages
//! (`patterns::DEEPSEEK_V3_SPLITS`), each re-splitting the pieces of the one
//! before and keeping every match and every gap.
//!
//! 1. `\p{N}{1,3}`: every run of numbers is cut into threes from its start;
//!    nothing later splits those pieces (no later alternative matches a number).
//! 2. `[一-龥぀-ゟ゠-ヿ]+`: runs of the CJK ranges (which hold no number).
//! 3. The main pattern, on each remaining piece as its own text:
//!    ``[ASCII punctuation][A-Za-z]+ | [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ |
//!    ` ?[\p{P}\p{S}]+[\r\n]*` | \s*[\r\n]+ | \s+(?!\S) | \s+``; text no
//!    alternative matches (controls, format characters, ...) stays a piece.
//!
//! So a piece lies inside one *region*: a number group, a run of CJK-range
//! characters, or a run of the other characters. The main pattern runs with
//! the region's edges as the ends of the text: no alternative crosses one, and
//! `(?!\S)` succeeds there. Whether a character belongs to the current region
//! is read off its own class (`DS_N`, `DS_CJK`), so no region end is searched
//! for and the scan stays linear.
//!
//! Complexity: each character is read a bounded number of times (a whitespace
//! run at most twice, a gap once per character for its one-character
//! look-ahead).

use super::unicode::{Tables, DS_CJK, DS_L, DS_M, DS_N, DS_PREFIX, DS_PS, DS_WS};

/// A view of the text with DeepSeek's class tables (`unicode::deepseek_tables`).
pub(super) struct DeepSeek<'a> {
    pub b: &'a [u8],
    pub t: &'static Tables,
}

/// `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]`: every ASCII punctuation and symbol.
#[inline(always)]
fn ascii_punct(c: u8) -> bool {
    c.is_ascii_punctuation()
}

impl DeepSeek<'_> {
    /// Flags and byte length of the character at `i`; `(0, 0)` at the end.
    #[inline(always)]
    fn at(&self, i: usize) -> (u8, usize) {
        match self.b.get(i) {
            None => (0, 0),
            Some(&c) if c < 0x80 => (self.t.ascii[c as usize], 1),
            Some(_) => self.t.decode_at(self.b, i),
        }
    }

    /// The flags of the character at `i` if it is in the region (`cjk`: the CJK
    /// ranges, else the other characters but numbers); 0 otherwise and at the end.
    #[inline(always)]
    fn in_region(&self, i: usize, cjk: bool) -> (u8, usize) {
        let (f, len) = self.at(i);
        let want = if cjk { DS_CJK } else { 0 };
        if len == 0 || f & (DS_N | DS_CJK) != want {
            (0, 0)
        } else {
            (f, len)
        }
    }

    /// End of the run from `i` of region characters having a flag of `mask`.
    #[inline(always)]
    fn run(&self, mut i: usize, cjk: bool, mask: u8) -> usize {
        let ascii_letters = !cjk && mask & DS_L != 0;
        loop {
            if ascii_letters {
                while self.b.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
                    i += 1;
                }
                // an ASCII byte after the letters ends a word run
                if self.b.get(i).is_none_or(|&c| c < 0x80) {
                    return i;
                }
            }
            let (f, len) = self.in_region(i, cjk);
            if f & mask == 0 {
                return i;
            }
            i += len;
        }
    }

    /// End of the piece starting at `i` (`i < len`).
    #[inline(always)]
    pub fn end(&self, i: usize) -> usize {
        // Fast path: an ASCII letter, or a space and one: the word alternative
        // (a space is a prefix; no earlier alternative starts with either).
        let c0 = self.b.get(i).copied().unwrap_or(0);
        if c0.is_ascii_alphabetic() {
            return self.run(i + 1, false, DS_L | DS_M);
        }
        if c0 == b' ' && self.b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) {
            return self.run(i + 2, false, DS_L | DS_M);
        }
        self.general(i)
    }

    fn general(&self, i: usize) -> usize {
        let (f0, l0) = self.at(i);
        if f0 & DS_N != 0 {
            // `\p{N}{1,3}`
            let mut j = i + l0;
            for _ in 0..2 {
                let (f, len) = self.at(j);
                if f & DS_N == 0 {
                    break;
                }
                j += len;
            }
            return j;
        }
        let cjk = f0 & DS_CJK != 0;
        let c0 = self.b.get(i).copied().unwrap_or(0);
        debug_assert!(!c0.is_ascii_alphabetic());
        // `[ASCII punctuation][A-Za-z]+`
        if ascii_punct(c0) && self.b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) {
            let mut j = i + 2;
            while self.b.get(j).is_some_and(|c| c.is_ascii_alphabetic()) {
                j += 1;
            }
            return j;
        }
        let (f1, _) = self.in_region(i + l0, cjk);
        // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`: a mark can be the prefix, but
        // then the run from it ends where the run after it does
        if f0 & (DS_L | DS_M) != 0 {
            return self.run(i, cjk, DS_L | DS_M);
        }
        if f0 & DS_PREFIX != 0 && f1 & (DS_L | DS_M) != 0 {
            return self.run(i + l0, cjk, DS_L | DS_M);
        }
        // ` ?[\p{P}\p{S}]+[\r\n]*`
        let punct = |s: usize| {
            let mut e = self.run(s, cjk, DS_PS);
            if !cjk {
                while matches!(self.b.get(e), Some(b'\r' | b'\n')) {
                    e += 1;
                }
            }
            e
        };
        if f0 & DS_PS != 0 {
            return punct(i);
        }
        if c0 == b' ' && f1 & DS_PS != 0 {
            return punct(i + 1);
        }
        if f0 & DS_WS != 0 {
            return self.whitespace(i, cjk);
        }
        self.gap(i, cjk)
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at the whitespace at `i`.
    fn whitespace(&self, i: usize, cjk: bool) -> usize {
        let (mut j, mut last, mut crlf_end) = (i, i, 0);
        loop {
            let (f, len) = self.in_region(j, cjk);
            if f & DS_WS == 0 {
                break;
            }
            if matches!(self.b.get(j), Some(b'\r' | b'\n')) {
                crlf_end = j + 1;
            }
            last = j;
            j += len;
        }
        let region_ends = self.in_region(j, cjk).1 == 0;
        if crlf_end > i {
            crlf_end
        } else if region_ends {
            j
        } else if last > i {
            last
        } else {
            j
        }
    }

    /// Text no alternative matches at `i`: the piece runs to the next position
    /// where one does (or to the region's end).
    fn gap(&self, i: usize, cjk: bool) -> usize {
        let (_, l0) = self.at(i);
        let mut j = i + l0.max(1);
        loop {
            let (f, len) = self.in_region(j, cjk);
            if len == 0 || f & (DS_L | DS_M | DS_PS | DS_WS) != 0 {
                return j;
            }
            if self.b.get(j).copied().is_some_and(ascii_punct) {
                return j;
            }
            if f & DS_PREFIX != 0 && self.in_region(j + len, cjk).0 & (DS_L | DS_M) != 0 {
                return j;
            }
            j += len;
        }
    }
}
