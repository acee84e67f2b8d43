//! Hand-written scanners for the scanner families (module `patterns`): one
//! generic scanner per family shape (gpt2; cl100k, Llama 3, Qwen2, Qwen3.5;
//! o200k, tekken), its variants chosen by const parameters.
//!
//! Each scanner answers one question: given that a piece starts at byte `i`,
//! where does it end? It does so by following the regex's alternatives in order,
//! exactly as a backtracking engine would settle them, but with each decision
//! made by a forward scan instead of by backtracking:
//!
//! * `X++` / `X+` followed by nothing: the maximal run of `X`.
//! * ` ?X++`: the space is taken exactly when the next character is in `X`.
//! * `\s++$`: the whitespace run reaches the end of the text.
//! * `\s*[\r\n]` (cl100k), `\s*[\r\n]+` (o200k): the whitespace run, cut after
//!   its last `\r` or `\n`.
//! * `\s+(?!\S)`: the whitespace run minus its last character (or the whole run
//!   at the end of the text); fails on a one-character run before non-space.
//! * o200k's `P?U*W+C?` (with `U` and `W` overlapping in `Lm`, `Lo`, `M`): take
//!   the maximal `U` run; if the next character is lower-case-only (`Ll`), the
//!   word continues with the maximal `W` run; otherwise it ends after the last
//!   `W` character inside the `U` run (where the backtracking engine would have
//!   stopped giving back characters), and fails if there is none.
//!
//! The open models' spellings drop the possessive quantifiers (`?+`, `++`).
//! Backtracking into those places never yields another match: an optional
//! prefix is never in the class of the run after it, and `[\r\n]*` follows a
//! run that excludes `\r` and `\n`; so the pieces are the possessive forms'.
//!
//! No pattern here has look-behind or anchors other than the end of text, so a
//! piece depends only on the text from its start onwards.
//!
//! Complexity: every scanner reads each character a bounded number of times
//! (a whitespace or `U` run is read at most three times across the pieces it
//! ends up in), so splitting is linear in the text, with no recursion.

use super::deepseek::DeepSeek;
use super::patterns::Named;
use super::unicode::{Tables, L, LO, M, N, OTHER, PREFIX, UP, WS};

/// The ASCII bytes that stop a superword span's main loop: `\r`, `\n`, `:`
/// and the digits.
static SW_STOP: [u8; 128] = {
    let mut t = [0u8; 128];
    t[b'\r' as usize] = 1;
    t[b'\n' as usize] = 1;
    t[b':' as usize] = 1;
    let mut d = b'0';
    while d <= b'9' {
        t[d as usize] = 1;
        d += 1;
    }
    t
};

/// A cursor-less view of the text being scanned.
pub(crate) struct Scan<'a> {
    pub b: &'a [u8],
    pub t: &'static Tables,
}

impl<'a> Scan<'a> {
    /// Flags and byte length of the character at `i`; `(0, 0)` at the end.
    #[inline(always)]
    fn at(&self, i: usize) -> (u8, usize) {
        match self.b.get(i) {
            None => (0, 0),
            Some(&c) if c < 0x80 => (self.t.ascii[c as usize], 1),
            Some(_) => self.t.decode_at(self.b, i),
        }
    }

    #[inline(always)]
    fn byte(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// End of the run of Hangul syllables (U+AC00..=U+D7A3) from `i`: three
    /// bytes each, decoded without the flag tables. Every syllable is `Lo`, so
    /// it is in `L`, `UP` and `LO` (checked by a unit test).
    #[inline(always)]
    fn skip_hangul(&self, mut i: usize) -> usize {
        while let Some(&[b0, b1, b2]) = self.b.get(i..i + 3) {
            if b0 & 0xF0 != 0xE0 {
                break;
            }
            let cp = ((b0 as u32 & 0x0F) << 12) | ((b1 as u32 & 0x3F) << 6) | (b2 as u32 & 0x3F);
            if !(0xAC00..=0xD7A3).contains(&cp) {
                break;
            }
            i += 3;
        }
        i
    }

    /// End of the maximal run of characters having any flag of `mask`, from `i`.
    #[inline(always)]
    fn run(&self, mut i: usize, mask: u8) -> usize {
        while let Some(&c) = self.b.get(i) {
            if c < 0x80 {
                if self.t.ascii[c as usize] & mask == 0 {
                    return i;
                }
                i += 1;
            } else {
                if mask & (L | UP | LO) != 0 && (0xEA..=0xED).contains(&c) {
                    let j = self.skip_hangul(i);
                    if j > i {
                        i = j;
                        continue;
                    }
                }
                let (f, len) = self.t.decode_at(self.b, i);
                if f & mask == 0 {
                    return i;
                }
                i += len;
            }
        }
        i
    }

    /// [`Self::run`] for `mask` = `L` or `L | M` (ASCII members: `A-Z`,
    /// `a-z`) or `LO` (ASCII members: `a-z`), eight bytes at a time while the
    /// text is ASCII.
    #[inline(always)]
    fn run_letters(&self, mut i: usize, mask: u8) -> usize {
        const HI: u64 = 0x8080_8080_8080_8080;
        // Setting bit 5 maps A-Z onto a-z and no other byte into a-z.
        let fold = if mask & L != 0 {
            0x2020_2020_2020_2020u64
        } else {
            0
        };
        while let Some(chunk) = self.b.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let w = u64::from_le_bytes(word);
            let x = w | fold;
            // Per byte (ASCII bytes cannot carry): >= b'a' sets the high bit of
            // x + 0x1F, > b'z' sets it in x + 0x05. A non-ASCII byte is flagged
            // itself, and its carries only reach later bytes.
            let below_a = !x.wrapping_add(0x1F1F_1F1F_1F1F_1F1F) & HI;
            let above_z = x.wrapping_add(0x0505_0505_0505_0505) & HI;
            let stop = below_a | above_z | (w & HI);
            if stop == 0 {
                i += 8;
                continue;
            }
            i += (stop.trailing_zeros() / 8) as usize;
            return if self.b.get(i).is_some_and(|&c| c >= 0x80) {
                self.run(i, mask)
            } else {
                i
            };
        }
        self.run(i, mask)
    }

    /// End of the maximal run of ASCII bytes accepted by `keep`, from `i`.
    #[inline(always)]
    fn run_bytes(&self, mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
        while self.b.get(i).is_some_and(|&c| keep(c)) {
            i += 1;
        }
        i
    }

    /// Qwen3.5's `[^\s\p{L}\p{M}\p{N}]+` from `i`: characters flagged `OTHER`
    /// and not `M`.
    fn run_unmarked_other(&self, mut i: usize) -> usize {
        loop {
            let (f, len) = self.at(i);
            if len == 0 || f & (OTHER | M) != OTHER {
                return i;
            }
            i += len;
        }
    }

    /// `\p{N}{1,3}` at `i` (the character at `i` is a number).
    #[inline(always)]
    fn digits3(&self, mut i: usize) -> usize {
        for _ in 0..3 {
            let (f, len) = self.at(i);
            if f & N == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// The whitespace run from `i`: `(end, start of its last character, end of
    /// its last \r or \n or 0 if none)`.
    #[inline(always)]
    fn ws_run(&self, mut i: usize) -> (usize, usize, usize) {
        let mut last = i;
        let mut crlf_end = 0;
        while let Some(&c) = self.b.get(i) {
            if c < 0x80 {
                if self.t.ascii[c as usize] & WS == 0 {
                    break;
                }
                if c == b'\n' || c == b'\r' {
                    crlf_end = i + 1;
                }
                last = i;
                i += 1;
            } else {
                let (f, len) = self.t.decode_at(self.b, i);
                if f & WS == 0 {
                    break;
                }
                last = i;
                i += len;
            }
        }
        (i, last, crlf_end)
    }

    /// gpt2's `'(?:[sdmt]|ll|ve|re)` after the apostrophe at `i - 1`.
    #[inline]
    fn contraction_exact(&self, i: usize) -> Option<usize> {
        match (self.byte(i), self.byte(i + 1)) {
            (b's' | b'd' | b'm' | b't', _) => Some(i + 1),
            (b'l', b'l') | (b'v', b'e') | (b'r', b'e') => Some(i + 2),
            _ => None,
        }
    }

    /// cl100k's `'(?i:[sdmt]|ll|ve|re)` and o200k's
    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` after the apostrophe at `i - 1`.
    #[inline]
    fn contraction_folded(&self, i: usize) -> Option<usize> {
        let (c1, l1) = self.t.fold_at(self.b, i)?;
        match c1 {
            b's' | b'd' | b'm' | b't' => Some(i + l1),
            b'l' | b'v' | b'r' => {
                let want = if c1 == b'l' { b'l' } else { b'e' };
                match self.t.fold_at(self.b, i + l1) {
                    Some((c2, l2)) if c2 == want => Some(i + l1 + l2),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// o200k's optional trailing contraction at `e`.
    #[inline(always)]
    fn o200k_contraction(&self, e: usize) -> usize {
        if self.byte(e) == b'\'' {
            if let Some(end) = self.contraction_folded(e + 1) {
                return end;
            }
        }
        e
    }

    /// o200k's `[UP]*[LO]+` from `s` (first alternative, without its prefix).
    #[inline(always)]
    fn o200k_upper_lower(&self, s: usize) -> Option<usize> {
        // Hangul syllables are in both classes: skip them in one tight loop
        let mut i = self.skip_hangul(s);
        let mut lo_end = i;
        loop {
            let (f, len) = self.at(i);
            if f & UP == 0 {
                if f & LO != 0 {
                    return Some(self.run_letters(i, LO));
                }
                return (lo_end > s).then_some(lo_end);
            }
            i += len;
            if f & LO != 0 {
                lo_end = i;
            }
        }
    }

    /// Flags and byte lengths of the characters at `i` and after it (zeros past
    /// the end): the fast paths below decide most pieces from these two.
    #[inline(always)]
    fn peek2(&self, i: usize) -> (u8, usize, u8, usize) {
        let (f0, l0) = self.at(i);
        let (f1, l1) = self.at(i + l0);
        (f0, l0, f1, l1)
    }

    /// A letter run (`mask` = `L` or `LO`) from `i`, where the character before
    /// `i` had byte length `prev_len`: ASCII text takes the eight-byte loop.
    #[inline(always)]
    fn letters_after(&self, i: usize, prev_len: usize, mask: u8) -> usize {
        if prev_len == 1 {
            self.run_letters(i, mask)
        } else {
            self.run(i, mask)
        }
    }

    /// End of the gpt2 piece starting at `i` (`i < len`).
    #[inline(always)]
    pub fn gpt2(&self, i: usize) -> usize {
        // Fast path: a letter or number, or a space and one (no contraction can
        // start there, so alternatives 2 and 3 decide).
        let (f0, l0, f1, l1) = self.peek2(i);
        if f0 & L != 0 {
            return self.letters_after(i + l0, l0, L);
        }
        if f0 & N != 0 {
            return self.run(i + l0, N);
        }
        if self.byte(i) == b' ' {
            if f1 & L != 0 {
                return self.letters_after(i + 1 + l1, l1, L);
            }
            if f1 & N != 0 {
                return self.run(i + 1 + l1, N);
            }
        }
        self.gpt2_general(i)
    }

    fn gpt2_general(&self, i: usize) -> usize {
        let c0 = self.byte(i);
        if c0 == b'\'' {
            if let Some(e) = self.contraction_exact(i + 1) {
                return e;
            }
        }
        let (f0, l0) = self.at(i);
        // ` ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++`
        let (s, f) = if c0 == b' ' {
            (i + 1, self.at(i + 1).0)
        } else {
            (i, f0)
        };
        if f & L != 0 {
            return self.run(s, L);
        }
        if f & N != 0 {
            return self.run(s, N);
        }
        if f & OTHER != 0 {
            return self.run(s, OTHER);
        }
        // `\s++$|\s+(?!\S)|\s`
        let (j, last, _) = self.ws_run(i);
        if j == self.b.len() {
            j
        } else if last > i {
            last
        } else {
            i + l0
        }
    }

    /// End of the piece starting at `i` (`i < len`) in family `named`.
    #[inline(always)]
    pub fn end(&self, named: Named, i: usize) -> usize {
        match named {
            Named::Gpt2 => self.gpt2(i),
            Named::Cl100k => self.cl_family::<true, true, false>(i),
            Named::Llama3 => self.cl_family::<false, true, false>(i),
            Named::Qwen2 => self.cl_family::<false, false, false>(i),
            Named::Qwen35 => self.cl_family::<false, false, true>(i),
            Named::O200k => self.o200k_family::<true, true>(i),
            Named::Nemo => self.o200k_family::<false, false>(i),
            Named::Superword => self.superword(i),
            // `t` is the DeepSeek table here (see `Scanner::new`)
            Named::DeepSeekV3 => DeepSeek {
                b: self.b,
                t: self.t,
            }
            .end(i),
        }
    }

    /// End of the superword span starting at `i` (`i < len`):
    /// `\p{N}{1,3}|(?:[^\r\n\p{N}:]|:+[^ \r\n\p{N}:])+:*[\r\n]*|:+[\r\n]*|[\r\n]+`.
    ///
    /// A number starts a group of up to three. Otherwise the span runs over
    /// every character but numbers, `\r`, `\n` and `:`; a run of colons
    /// stays inside when the character after it may follow (`[^ \r\n\p{N}:]`),
    /// else it ends the span, with the newlines after it. The loop's tail
    /// `:*[\r\n]*` always matches, so the greedy loop is the match; where the
    /// loop's first step fails (a colon run before a space, newline, number
    /// or the end), `:+[\r\n]*` gives the same end, and a newline starts
    /// `[\r\n]+`. Each byte is read at most twice (a colon run's next
    /// character is read again when it continues the span).
    pub fn superword(&self, i: usize) -> usize {
        if self.at(i).0 & N != 0 {
            return self.digits3(i);
        }
        let newlines = |j| self.run_bytes(j, |c| c == b'\r' || c == b'\n');
        let mut j = i;
        loop {
            let Some(&c) = self.b.get(j) else {
                return j;
            };
            if c < 0x80 {
                if SW_STOP[c as usize] == 0 {
                    j += 1;
                    continue;
                }
                if c == b':' {
                    let k = self.run_bytes(j, |c| c == b':');
                    let (f, len) = self.at(k);
                    let ends =
                        len == 0 || f & N != 0 || matches!(self.byte(k), b' ' | b'\r' | b'\n');
                    if ends {
                        return newlines(k);
                    }
                    j = k;
                    continue;
                }
                if c == b'\r' || c == b'\n' {
                    return newlines(j);
                }
                return j; // an ASCII digit
            }
            let (f, len) = self.t.decode_at(self.b, j);
            if f & N != 0 {
                return j;
            }
            j += len;
        }
    }

    /// The numbers alternative at the number at `i`: `\p{N}{1,3}` or `\p{N}`.
    #[inline(always)]
    fn numbers<const GROUPS: bool>(&self, i: usize, len: usize) -> usize {
        if GROUPS {
            self.digits3(i)
        } else {
            i + len
        }
    }

    /// End of the piece starting at `i` (`i < len`) in the cl100k family:
    /// cl100k itself (`TIKTOKEN_WS`: `\s++$` before `\s*[\r\n]`), Llama 3
    /// (`\s*[\r\n]+` first), Qwen2 (single numbers, `GROUPS` false) and
    /// Qwen3.5 (`MARKS`: `[\p{L}\p{M}]+` words, marks out of punctuation runs).
    #[inline(always)]
    pub fn cl_family<const TIKTOKEN_WS: bool, const GROUPS: bool, const MARKS: bool>(
        &self,
        i: usize,
    ) -> usize {
        // Fast path: a letter, or a prefix character and a letter
        // (`[^\r\n\p{L}\p{N}]?+\p{L}++`), unless the prefix is an apostrophe,
        // where a contraction comes first.
        let letter = if MARKS { L | M } else { L };
        let (f0, l0, f1, l1) = self.peek2(i);
        if f0 & letter != 0 {
            return self.letters_after(i + l0, l0, letter);
        }
        if f0 & PREFIX != 0 && f1 & letter != 0 && self.byte(i) != b'\'' {
            return self.letters_after(i + l0 + l1, l1, letter);
        }
        self.cl_general::<TIKTOKEN_WS, GROUPS, MARKS>(i)
    }

    fn cl_general<const TIKTOKEN_WS: bool, const GROUPS: bool, const MARKS: bool>(
        &self,
        i: usize,
    ) -> usize {
        let letter = if MARKS { L | M } else { L };
        let other = |f: u8| {
            if MARKS {
                f & (OTHER | M) == OTHER
            } else {
                f & OTHER != 0
            }
        };
        let c0 = self.byte(i);
        if c0 == b'\'' {
            if let Some(e) = self.contraction_folded(i + 1) {
                return e;
            }
        }
        let (f0, l0) = self.at(i);
        // `[^\r\n\p{L}\p{N}]?+\p{L}++` without the prefix (a mark that would
        // be the prefix of Qwen3.5's words is in the run itself)
        if f0 & letter != 0 {
            return self.run(i, letter);
        }
        // `\p{N}{1,3}+` or `\p{N}`
        if f0 & N != 0 {
            return self.numbers::<GROUPS>(i, l0);
        }
        let (f1, _) = self.at(i + l0);
        // ... with the prefix
        if f0 & PREFIX != 0 && f1 & letter != 0 {
            return self.run(i + l0, letter);
        }
        // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
        let crlf = |c: u8| c == b'\r' || c == b'\n';
        let punct_end = |s: usize| {
            let e = if MARKS {
                self.run_unmarked_other(s)
            } else {
                self.run(s, OTHER)
            };
            self.run_bytes(e, crlf)
        };
        if other(f0) {
            return punct_end(i);
        }
        if c0 == b' ' && other(f1) {
            return punct_end(i + 1);
        }
        let (j, last, crlf_end) = self.ws_run(i);
        if TIKTOKEN_WS {
            // `\s++$|\s*[\r\n]|\s+(?!\S)|\s`
            if j == self.b.len() {
                j
            } else if crlf_end > i {
                crlf_end
            } else if last > i {
                last
            } else {
                i + l0
            }
        } else {
            Self::ws_lines_first(i, j, last, crlf_end, self.b.len())
        }
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` on the whitespace run `i..j` (its last
    /// character at `last`, its last line break ending at `crlf_end`).
    #[inline(always)]
    fn ws_lines_first(i: usize, j: usize, last: usize, crlf_end: usize, len: usize) -> usize {
        if crlf_end > i {
            crlf_end
        } else if j == len {
            j
        } else if last > i {
            last
        } else {
            j
        }
    }

    /// The optional trailing contraction at `e` (o200k only).
    #[inline(always)]
    fn contraction_if<const CONTRACTIONS: bool>(&self, e: usize) -> usize {
        if CONTRACTIONS {
            self.o200k_contraction(e)
        } else {
            e
        }
    }

    /// End of the piece starting at `i` (`i < len`) in the o200k family:
    /// o200k itself, and tekken (no contractions, single numbers).
    #[inline(always)]
    pub fn o200k_family<const CONTRACTIONS: bool, const GROUPS: bool>(&self, i: usize) -> usize {
        // Fast path: a lower-case-only letter (`Ll`), or a non-letter prefix
        // character and one: no upper-case run, so the word is the `LO` run and
        // an optional contraction.
        let (f0, l0, f1, l1) = self.peek2(i);
        let lower = |f: u8| f & (UP | LO) == LO;
        if lower(f0) {
            return self.contraction_if::<CONTRACTIONS>(self.letters_after(i + l0, l0, LO));
        }
        if f0 & (PREFIX | UP) == PREFIX && lower(f1) {
            return self.contraction_if::<CONTRACTIONS>(self.letters_after(i + l0 + l1, l1, LO));
        }
        self.o200k_general::<CONTRACTIONS, GROUPS>(i)
    }

    fn o200k_general<const CONTRACTIONS: bool, const GROUPS: bool>(&self, i: usize) -> usize {
        let (f0, l0) = self.at(i);
        if f0 & (UP | LO) != 0 {
            if f0 & PREFIX == 0 {
                // A letter: `[UP]*[LO]+C?`, else `[UP]+[LO]*C?` (the first can only
                // fail when the letter is upper-case, so the second then succeeds).
                let e = match self.o200k_upper_lower(i) {
                    Some(e) => e,
                    None => self.run(self.run(i, UP), LO),
                };
                return self.contraction_if::<CONTRACTIONS>(e);
            }
            // A mark: it can be the prefix of the first alternative; if that fails,
            // the first alternative without prefix matches the mark alone (a mark
            // is in both UP and LO, and nothing after it was in LO).
            let e = self.o200k_upper_lower(i + l0).unwrap_or(i + l0);
            return self.contraction_if::<CONTRACTIONS>(e);
        }
        if f0 & PREFIX != 0 {
            // Punctuation, symbol or horizontal space as the prefix of a word.
            let s = i + l0;
            if let Some(e) = self.o200k_upper_lower(s) {
                return self.contraction_if::<CONTRACTIONS>(e);
            }
            if self.at(s).0 & UP != 0 {
                return self.contraction_if::<CONTRACTIONS>(self.run(self.run(s, UP), LO));
            }
        }
        // `\p{N}{1,3}` or `\p{N}`
        if f0 & N != 0 {
            return self.numbers::<GROUPS>(i, l0);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let crlf_slash = |c: u8| c == b'\r' || c == b'\n' || c == b'/';
        if f0 & OTHER != 0 {
            return self.run_bytes(self.run(i, OTHER), crlf_slash);
        }
        if self.byte(i) == b' ' && self.at(i + 1).0 & OTHER != 0 {
            return self.run_bytes(self.run(i + 1, OTHER), crlf_slash);
        }
        // `\s*[\r\n]+|\s+(?!\S)|\s+`
        let (j, last, crlf_end) = self.ws_run(i);
        Self::ws_lines_first(i, j, last, crlf_end, self.b.len())
    }
}
