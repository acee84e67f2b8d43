//! The chain on lines with characters outside ASCII, on bit masks over
//! their bytes: [`line`].
//!
//! Each 64-byte block of the lines is classed at once: the ASCII bytes by a
//! table of their flags, turned into a mask per flag by vector instructions
//! ([`Way::planes`]), the characters of a vector lane (Hangul, CJK, kana,
//! two-byte letters, Latin-1 punctuation) by that lane where the chain gives
//! all of its code points the same flags, and only the other characters
//! outside ASCII are decoded. A class's mask has every byte of each of its
//! characters set, so a run of a class is a run of bits, and the byte before
//! a character is the last byte of the character before it. The pieces are
//! a mask too, `st`: bit `i` set when a piece starts at byte `i` (bit 0, and
//! bit `n` for the end); pieces start only at a character's first byte (the
//! `lead` mask).
//! Each stage, from the first (`[\r\n]`: the lines and each line break),
//! adds the starts it makes inside the pieces it is given, read from the
//! masks of its classes and `st` alone, with `same(i)` (no piece starts at
//! `i`):
//!
//! * `[S]`: each character of `S` and the character after it;
//! * `P?S+`: a run of `S` starts at `i` when `S(i)` and not (`S(i-1)` and
//!   `same(i)`); its match starts one character earlier, at the first byte of
//!   the character ending at `i-1`, when `P(i-1)` and `same(i)`
//!   (leftmost-first: the scan reaches that character in a gap, since it is
//!   not in `S`, and matches there); the character after the run starts a
//!   piece;
//! * `W+$`: after the first stage, `$` is the end of the piece (no `\n` is
//!   left in one), so a run of `W` from its first character matches when it
//!   reaches a piece start (or the end) before any character outside `W`.
//!
//! These are the stages' own semantics, stage by stage, whatever the classes
//! and however they overlap; only their scan is replaced. Complexity: a fixed
//! number of vector and word operations per 64 bytes, one decoding per
//! character outside ASCII and the lane, a fixed number of word operations
//! per 64 bytes and stage, and for `W+$` a search from each run start to the
//! run's end (runs are disjoint: linear in all).

use super::masks::Way;
use super::{Step, Tables};
use crate::pretok::classes::{block_at, Classifier};
use crate::pretok::lanes::{self, Lanes};
use crate::SpanSink;

/// What the pass knows of a chain's classes, built with the chain.
#[derive(Debug)]
pub(super) struct Classes {
    /// The flags of every code point below U+10000: one load per character
    /// decoded.
    bmp: Vec<u8>,
    /// Per lane of [`picks`], the flags of all of its code points when they
    /// have the same: then its characters are classed by the lane, undecoded.
    uniform: [Option<u8>; LANE_COUNT],
}

/// The lanes the pass can take ([`picks`]).
const LANE_COUNT: usize = 9;

/// One lane in a block: the first bytes of its characters, the factor that
/// spreads them over the characters' bytes, and its code points.
type Pick = (u64, u128, &'static [(u32, u32)]);

/// The first lane of [`picks`] that needs [`Classifier::more_lanes`].
const MORE: usize = 3;

/// The lanes the pass can take, in one list: for each, its first bytes in a
/// block (from the block's lanes `l`), the factor that spreads a first byte
/// over its character's bytes (first bytes of one lane are as far apart as
/// its characters are long), and its code points. The three-byte lanes of
/// [`Classifier::lanes`] come first, then the kana and the two-byte ones of
/// [`Classifier::more_lanes`] (from [`MORE`] on). The CJK ideographs come
/// whole and below U+9000 (DeepSeek's CJK ranges end at U+9FA5); `TWO_BYTE`
/// whole and in its parts.
#[inline(always)]
fn picks(l: &Lanes) -> [Pick; LANE_COUNT] {
    let (three, two) = (0b111, 0b11);
    [
        (l.hangul, three, lanes::HANGUL),
        (l.cjk, three, lanes::CJK),
        (l.cjk & !l.e9, three, &[(0x4E00, 0x8FFF)]),
        (l.kana, three, lanes::KANA),
        (l.two, two, lanes::TWO_BYTE),
        (l.upper_two, two, lanes::UPPER_TWO_BYTE),
        (l.lower_two, two, lanes::LOWER_TWO_BYTE),
        (l.caseless_two, two, lanes::CASELESS_TWO_BYTE),
        (l.punct_two, two, lanes::PUNCT_TWO_BYTE),
    ]
}

impl Classes {
    pub(super) fn new(t: &Tables) -> Classes {
        let bmp: Vec<u8> = (0..0x10000).map(|cp| t.of(cp)).collect();
        let uniform = picks(&Lanes::default()).map(|(_, _, ranges)| {
            let mut flags = ranges.iter().flat_map(|&(a, z)| a..=z).map(|cp| t.of(cp));
            let first = flags.next()?;
            flags.all(|f| f == first).then_some(first)
        });
        Classes { bmp, uniform }
    }
}

/// Buffers reused across the lines of one text, and what the CPU has to
/// class a block.
#[derive(Debug)]
pub(super) struct Scratch {
    way: Way,
    /// The Hangul lane's classifier, when the CPU has one.
    how: Option<Classifier>,
    /// Eight masks per word of bytes (one per flag bit): `masks[w * 8 + k]`.
    masks: Vec<u64>,
    /// The first byte of each character, per word.
    lead: Vec<u64>,
    /// Piece starts, and the next stage's.
    st: Vec<u64>,
    next: Vec<u64>,
}

/// The code point bits of a lead byte, by the character's length.
const LEAD_MASK: [u8; 5] = [0, 0x7F, 0x1F, 0x0F, 0x07];

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
/// between them, not empty) under `steps`, the chain's stages (the first
/// `[\r\n]`); `t`: the chain's tables and what the pass knows of them.
pub(super) fn line<F: SpanSink>(
    steps: &[Step],
    t: (&Tables, &Classes),
    b: &[u8],
    (s, e): (usize, usize),
    x: &mut Scratch,
    f: &mut F,
) {
    let n = e - s;
    let words = n / 64 + 1;
    x.classify(t, &b[s..e]);
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
    pub(super) fn new(way: Way, how: Option<Classifier>) -> Scratch {
        Scratch {
            way,
            how,
            masks: Vec::new(),
            lead: Vec::new(),
            st: Vec::new(),
            next: Vec::new(),
        }
    }

    /// The masks and first bytes of `b`, block by block (the last padded;
    /// no bit set past `b`'s end). A character that crosses into the next
    /// block leaves its bits there in `spill`.
    fn classify(&mut self, (t, c): (&Tables, &Classes), b: &[u8]) {
        let words = b.len() / 64 + 1;
        self.masks.clear();
        self.masks.resize(words * 8, 0);
        self.lead.clear();
        self.lead.resize(words, 0);
        let how = self.how.filter(|_| c.uniform.iter().any(Option::is_some));
        let more = c.uniform[MORE..].iter().any(Option::is_some);
        let mut spill = [0u64; 8];
        for (w, m) in self.masks.chunks_exact_mut(8).enumerate() {
            let base = w * 64;
            let (blk, have) = (block_at(b, base), b.len().saturating_sub(base).min(64));
            let valid = if have == 64 { !0 } else { (1u64 << have) - 1 };
            let raw = self.way.planes(&blk);
            let (high, cont) = (raw[7], raw[7] & !raw[6]);
            self.lead[w] = !cont & valid;
            let mut ascii = [0u8; 64];
            for (fl, &byte) in ascii.iter_mut().zip(&blk) {
                *fl = t.ascii[byte as usize];
            }
            let mut bits = self.way.planes(&ascii);
            for (k, slot) in bits.iter_mut().enumerate() {
                *slot |= std::mem::take(&mut spill[k]);
            }
            let mut others = high & !cont;
            // the lanes cost more than decoding a character or two
            if let (Some(how), true) = (how, several(others)) {
                let (u, l) = (&c.uniform, how.lanes(&blk));
                let to = (&mut bits, &mut spill);
                take_lanes(&u[..MORE], &picks(&l)[..MORE], &mut others, to);
                if more && several(others) {
                    let l = how.more_lanes(&blk, l);
                    let to = (&mut bits, &mut spill);
                    take_lanes(&u[MORE..], &picks(&l)[MORE..], &mut others, to);
                }
            }
            while others != 0 {
                let k = others.trailing_zeros() as usize;
                others &= others - 1;
                let at = |j: usize| b.get(base + k + j).copied().unwrap_or(0);
                let (fl, len) = flags_at(t, &c.bmp, [at(0), at(1), at(2), at(3)]);
                add_bytes(&mut bits, &mut spill, fl, ((1u128 << len) - 1) << k);
            }
            for (slot, v) in m.iter_mut().zip(bits) {
                *slot = v & valid;
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
            self.st[w] |= (m | m << 1 | carry) & self.lead[w];
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
            // the last byte of each prefix character, then its first
            let pre_last = self.mask(prefix, w) & (((sr & same) >> 1) | srn << 63);
            let after_pre = pre_last << 1 | pre_carry;
            pre_carry = pre_last >> 63;
            let mut pre = pre_last & self.lead[w];
            let mut wide = pre_last & !self.lead[w];
            while wide != 0 {
                let j = self.lead_at_or_before(w * 64 + wide.trailing_zeros() as usize);
                wide &= wide - 1;
                match j / 64 == w {
                    true => pre |= 1 << (j % 64),
                    false => self.next[j / 64] |= 1 << (j % 64),
                }
            }
            let end = !s & after_s & same;
            self.next[w] = st | pre | (sr & !after_pre) | end;
        }
        std::mem::swap(&mut self.st, &mut self.next);
    }

    /// The first byte of the character holding byte `k`: at most three
    /// bytes back (byte 0 is always a first byte).
    fn lead_at_or_before(&self, mut k: usize) -> usize {
        let is_lead = |i: usize| {
            self.lead
                .get(i / 64)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        };
        while k > 0 && !is_lead(k) {
            k -= 1;
        }
        k
    }

    /// `W+$` in each piece: the run of `W` that reaches the piece's end.
    fn trailing(&mut self, set: u8) {
        let mut carry = 0;
        for w in 0..self.st.len() {
            let m = self.mask(set, w);
            let mut starts = m & !((m << 1 | carry) & !self.st[w]);
            carry = m >> 63;
            // (a character's later bytes follow a byte of the class: no start)
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

    /// The first byte after `i` outside `set` or starting a piece.
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
                f.span(s + prev, s + p);
                prev = p;
            }
        }
    }
}

/// Whether `x` has three bits or more.
#[inline(always)]
fn several(x: u64) -> bool {
    let y = x & x.wrapping_sub(1);
    y & y.wrapping_sub(1) != 0
}

/// The characters of `others` (first bytes) in a lane whose code points
/// all have the same flags: given those flags on every byte, and taken out
/// of `others`.
#[inline(always)]
fn take_lanes(
    uniform: &[Option<u8>],
    picks: &[Pick],
    others: &mut u64,
    (bits, spill): (&mut [u64; 8], &mut [u64; 8]),
) {
    for (flags, &(firsts, spread, _)) in uniform.iter().zip(picks) {
        if let Some(fl) = *flags {
            let h = firsts & *others;
            add_bytes(bits, spill, fl, u128::from(h) * spread);
            *others &= !h;
        }
    }
}

/// Adds the flags `fl` to the bytes `bytes` (bit `i` for byte `i` of the
/// block; bits 64 on spill into the next block).
#[inline(always)]
fn add_bytes(bits: &mut [u64; 8], spill: &mut [u64; 8], fl: u8, bytes: u128) {
    let mut f = fl;
    while f != 0 {
        let k = f.trailing_zeros() as usize;
        f &= f - 1;
        bits[k] |= bytes as u64;
        spill[k] |= (bytes >> 64) as u64;
    }
}
