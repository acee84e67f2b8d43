//! The chain on lines with characters outside ASCII, in one decoding pass
//! and a few passes over bit masks: [`line`].
//!
//! Each character of the lines is decoded once, its flags (the chain's
//! classes, from the chain's [`Tables`]) written to a byte per character;
//! the bytes are turned into one bit mask per class over the characters, 64
//! characters a word. The pieces are then a mask too, `st`: bit `i` set when
//! a piece starts at character `i` (bit 0, and bit `n` for the end).
//! Each stage, from the first (`[\r\n]`: the lines and each line break),
//! adds the starts it makes inside the pieces it is given, read from the
//! masks of its classes and `st` alone, with `same(i)` (no piece starts at
//! `i`):
//!
//! * `[S]`: each character of `S` and the character after it;
//! * `P?S+`: a run of `S` starts at `i` when `S(i)` and not (`S(i-1)` and
//!   `same(i)`); its match starts one character earlier, at `i-1`, when
//!   `P(i-1)` and `same(i)` (leftmost-first: the scan reaches `i-1` in a gap,
//!   since `i-1` is not in `S`, and matches there); the character after the
//!   run starts a piece;
//! * `W+$`: after the first stage, `$` is the end of the piece (no `\n` is
//!   left in one), so a run of `W` from its first character matches when it
//!   reaches a piece start (or the end) before any character outside `W`.
//!
//! These are the stages' own semantics, stage by stage, whatever the classes
//! and however they overlap; only their scan is replaced. Complexity: one
//! decoding pass, a fixed number of word operations per 64 characters and
//! stage, and for `W+$` a search from each run start to the run's end (runs
//! are disjoint: linear in all).

use super::{Step, Tables};
use crate::pretok::classes::Classifier;
use crate::SpanSink;

/// Buffers reused across the lines of one text.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Flags per character, padded with zeros to whole words (slots past
    /// that hold a longer line's).
    flags: Vec<u8>,
    /// Byte offset of each character in the line, then the line's length
    /// (slots past that hold a longer line's).
    offs: Vec<u32>,
    /// Eight masks per word (one per flag bit): `masks[w * 8 + k]`.
    masks: Vec<u64>,
    /// Piece starts, and the next stage's.
    st: Vec<u64>,
    next: Vec<u64>,
}

/// The longest line the pass takes (offsets are `u32`).
pub(super) const LINE_MAX: usize = u32::MAX as usize;

/// The code point bits of a lead byte, by the character's length.
const LEAD_MASK: [u8; 5] = [0, 0x7F, 0x1F, 0x0F, 0x07];

const LSB: u64 = 0x0101_0101_0101_0101;
/// Gathers the low bit of each byte into the top byte (byte `j` to bit `j`).
const GATHER: u64 = 0x0102_0408_1020_4080;

/// The Hangul syllables' fast lane of a chain whose flags are the same for
/// every syllable U+AC00-U+D77F: their first bytes are found by a vector
/// classifier, 64 bytes at a time, and given those flags without decoding.
#[derive(Debug, Clone, Copy)]
pub(super) struct HangulLane {
    pub(super) how: Classifier,
    pub(super) flags: u8,
}

/// The flags and byte length of the character whose first four bytes (or
/// fewer, then padded with anything) are `w`: its length from the lead byte
/// by comparisons, its code point by shifts.
#[inline(always)]
fn flags_at(t: &Tables, bmp: &[u8], w: [u8; 4]) -> (u8, usize) {
    let [b0, b1, b2, b3] = w;
    let len = 1 + usize::from(b0 >= 0xC0) + usize::from(b0 >= 0xE0) + usize::from(b0 >= 0xF0);
    let lead = u32::from(b0 & LEAD_MASK[len]);
    let x =
        lead << 18 | u32::from(b1 & 0x3F) << 12 | u32::from(b2 & 0x3F) << 6 | u32::from(b3 & 0x3F);
    let cp = x >> (6 * (4 - len));
    let fl = match bmp.get(cp as usize) {
        Some(&fl) => fl,
        None => t.of(cp),
    };
    (fl, len)
}

/// The pieces of the lines `b[s..e]` (whole lines and the line breaks
/// between them, at most [`LINE_MAX`] bytes, not empty) under `steps`, the
/// chain's stages (the first `[\r\n]`); `t`: the chain's tables, and its
/// flags of the code points below U+10000; `lane`: the Hangul syllables'
/// fast lane, where the chain has one.
pub(super) fn line<F: SpanSink>(
    steps: &[Step],
    t: (&Tables, &[u8]),
    lane: Option<HangulLane>,
    b: &[u8],
    (s, e): (usize, usize),
    x: &mut Scratch,
    f: &mut F,
) {
    let n = x.decode(t, &b[s..e], lane);
    let words = n / 64 + 1;
    x.transpose(words);
    x.st.clear();
    x.st.resize(words, 0);
    x.st[0] |= 1;
    x.st[n / 64] |= 1 << (n % 64);
    for step in steps {
        match *step {
            Step::One { set, .. } => x.one(set),
            Step::Run { prefix, set } => x.run(prefix, set),
            Step::Trailing { set, .. } => x.trailing(set),
        }
    }
    x.emit(s, n, f);
}

impl Scratch {
    /// Decodes `b` into flags and offsets; returns the number of characters.
    /// With a Hangul lane, whole 64-byte blocks first ([`Self::hangul_blocks`]).
    /// Then four bytes are read at each character (the tail byte by byte): its
    /// length from the lead byte by comparisons, its code point by shifts, so
    /// a line mixing spaces and syllables costs no branch per character, and
    /// the next character's position waits on one load and a few additions.
    /// The buffers only grow (no clearing per line): each slot up to the
    /// line's end is written before it is read.
    fn decode(&mut self, (t, bmp): (&Tables, &[u8]), b: &[u8], lane: Option<HangulLane>) -> usize {
        let words = b.len() / 64 + 1;
        if self.flags.len() < words * 64 {
            self.flags.resize(words * 64, 0);
        }
        if self.offs.len() <= b.len() {
            self.offs.resize(b.len() + 1, 0);
        }
        let (mut i, mut n) = match lane {
            Some(lane) => self.hangul_blocks(lane, (t, bmp), b),
            None => (0, 0),
        };
        let (flags, offs) = (&mut self.flags[..], &mut self.offs[..]);
        while let Some(&[b0, b1, b2, b3]) = b.get(i..i + 4) {
            let (fl, len) = flags_at(t, bmp, [b0, b1, b2, b3]);
            flags[n] = fl;
            offs[n] = i as u32;
            (i, n) = (i + len, n + 1);
        }
        while let Some(&c) = b.get(i) {
            let (fl, len) = if c < 0x80 {
                (t.ascii[c as usize], 1)
            } else {
                t.decode_at(b, i)
            };
            flags[n] = fl;
            offs[n] = i as u32;
            (i, n) = (i + len, n + 1);
        }
        offs[n] = b.len() as u32;
        flags[n..(n / 64 + 1) * 64].fill(0);
        n
    }

    /// The characters of `b`'s whole 64-byte blocks that have three bytes
    /// after them: every character takes the syllables' flags and its
    /// offset, in one loop over the block's first bytes; then the characters
    /// outside the lane's syllables are decoded and their flags put right.
    /// Returns the first character at or after the last block's end, and
    /// the number of characters decoded.
    fn hangul_blocks(
        &mut self,
        lane: HangulLane,
        (t, bmp): (&Tables, &[u8]),
        b: &[u8],
    ) -> (usize, usize) {
        let (flags, offs) = (&mut self.flags[..], &mut self.offs[..]);
        let (mut base, mut n) = (0, 0);
        while let Some(chunk) = b.get(base..base + 67) {
            let mut block = [0u8; 64];
            block.copy_from_slice(&chunk[..64]);
            let lanes = lane.how.lanes(&block);
            let (cont, hangul) = (lanes.cont, lanes.hangul);
            let firsts = !cont;
            let mut rest = firsts & !hangul;
            if rest.count_ones() > (firsts & hangul).count_ones() {
                // mostly other characters: every one decoded, in one loop
                let mut all = firsts;
                while all != 0 {
                    let k = all.trailing_zeros() as usize;
                    all &= all - 1;
                    let w = [chunk[k], chunk[k + 1], chunk[k + 2], chunk[k + 3]];
                    offs[n] = (base + k) as u32;
                    flags[n] = flags_at(t, bmp, w).0;
                    n += 1;
                }
                base += 64;
                continue;
            }
            let n0 = n;
            let mut all = firsts;
            while all != 0 {
                offs[n] = (base + all.trailing_zeros() as usize) as u32;
                flags[n] = lane.flags;
                n += 1;
                all &= all - 1;
            }
            while rest != 0 {
                let k = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let at = n0 + (firsts & ((1u64 << k) - 1)).count_ones() as usize;
                let w = [chunk[k], chunk[k + 1], chunk[k + 2], chunk[k + 3]];
                flags[at] = flags_at(t, bmp, w).0;
            }
            base += 64;
        }
        // a character begun in the last block was decoded there
        while b.get(base).is_some_and(|&c| c & 0xC0 == 0x80) {
            base += 1;
        }
        (base, n)
    }

    /// One mask per flag bit over `words` words of characters.
    fn transpose(&mut self, words: usize) {
        self.flags.resize(words * 64, 0);
        self.masks.clear();
        self.masks.resize(words * 8, 0);
        for (chunk, m) in self
            .flags
            .chunks_exact(64)
            .zip(self.masks.chunks_exact_mut(8))
        {
            for (j, g) in chunk.chunks_exact(8).enumerate() {
                let mut a = [0u8; 8];
                a.copy_from_slice(g);
                let v = u64::from_le_bytes(a);
                if v == 0 {
                    continue;
                }
                for (k, slot) in m.iter_mut().enumerate() {
                    *slot |= (((v >> k) & LSB).wrapping_mul(GATHER) >> 56) << (8 * j);
                }
            }
        }
    }

    /// Word `w` of the mask of `set` (a single flag bit, or 0 for none).
    #[inline(always)]
    fn mask(&self, set: u8, w: usize) -> u64 {
        if set == 0 {
            return 0;
        }
        self.masks
            .get(w * 8 + set.trailing_zeros() as usize)
            .copied()
            .unwrap_or(0)
    }

    /// `[S]`: each character of `S` alone.
    fn one(&mut self, set: u8) {
        let mut carry = 0;
        for w in 0..self.st.len() {
            let m = self.mask(set, w);
            self.st[w] |= m | m << 1 | carry;
            carry = m >> 63;
        }
    }

    /// `P?S+` (`prefix` 0: `S+`), leftmost-first, in each piece.
    fn run(&mut self, prefix: u8, set: u8) {
        let words = self.st.len();
        self.next.clear();
        self.next.resize(words, 0);
        let mut pre_carry = 0;
        for w in 0..words {
            let s = self.mask(set, w);
            let sp = if w > 0 { self.mask(set, w - 1) } else { 0 };
            let sn = self.mask(set, w + 1);
            let st = self.st[w];
            let st_n = self.st.get(w + 1).copied().unwrap_or(!0);
            let same = !st;
            let after_s = s << 1 | sp >> 63;
            // run starts; a run cut by a piece start needs no start of its
            // own there (every use below is masked by `same`, or is a start)
            let sr = s & !after_s;
            let srn = sn & !(sn << 1 | s >> 63) & !st_n;
            let pre = self.mask(prefix, w) & (((sr & same) >> 1) | srn << 63);
            let after_pre = pre << 1 | pre_carry;
            pre_carry = pre >> 63;
            let end = !s & after_s & same;
            self.next[w] = st | pre | (sr & !after_pre) | end;
        }
        std::mem::swap(&mut self.st, &mut self.next);
    }

    /// `W+$` in each piece: the run of `W` that reaches the piece's end.
    fn trailing(&mut self, set: u8) {
        let mut carry = 0;
        for w in 0..self.st.len() {
            let m = self.mask(set, w);
            let mut starts = m & !((m << 1 | carry) & !self.st[w]);
            carry = m >> 63;
            while starts != 0 {
                let i = w * 64 + starts.trailing_zeros() as usize;
                starts &= starts - 1;
                if let Some(j) = self.stop_after(set, i) {
                    if self.st[j / 64] >> (j % 64) & 1 == 1 {
                        self.st[w] |= 1 << (i % 64);
                    }
                }
            }
        }
    }

    /// The first character after `i` outside `set` or starting a piece.
    fn stop_after(&self, set: u8, i: usize) -> Option<usize> {
        let mut j = i + 1;
        while let Some(&st) = self.st.get(j / 64) {
            let w = j / 64;
            let stop = (!self.mask(set, w) | st) & (!0u64 << (j % 64));
            if stop != 0 {
                return Some(w * 64 + stop.trailing_zeros() as usize);
            }
            j = (w + 1) * 64;
        }
        None
    }

    /// Hands the pieces to `f`, at byte offsets from `s`.
    fn emit<F: SpanSink>(&self, s: usize, n: usize, f: &mut F) {
        let mut prev = 0;
        for (w, &word) in self.st.iter().enumerate() {
            let mut bits = if w == 0 { word & !1 } else { word };
            while bits != 0 {
                let p = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if p > n {
                    return;
                }
                let (a, z) = (self.offs[prev] as usize, self.offs[p] as usize);
                f.span(s + a, s + z);
                prev = p;
            }
        }
    }
}
