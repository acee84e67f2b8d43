//! Block pre-tokenizer for the named patterns: piece starts of ASCII text decided
//! 64 bytes at a time from bit masks, with the scalar scanner (`scan.rs`) for
//! the rest.
//!
//! Each 64-byte block is classified into one bit mask per character class
//! (bit `k` is byte `base + k`): letters `A-Za-z`, digits, other ASCII
//! ("punctuation": `[^\s\p{L}\p{N}]` restricted to ASCII), the space, the
//! horizontal whitespace `\t \v \f`, the line breaks `\r \n`, the apostrophe,
//! capitals, the slash, and bytes >= 0x80. From the masks of the block, of the block before (for the
//! characters just before the block) and the first byte after it, two masks
//! follow by bit algebra:
//!
//! * `starts`: where a piece starts, for every position not in `hard`;
//! * `hard`: positions whose status the algebra does not decide (near a
//!   non-ASCII byte, after an apostrophe and a letter, the fourth digit of a
//!   run, a whitespace run whose last line break may lie past the block, ...).
//!
//! The driver walks the set bits of `starts | hard` from the current piece
//! start `cur` (always a true piece start). At a bit of `starts` the piece
//! `cur..p` is complete: no position strictly between is a start (each is
//! outside `hard` and outside `starts`). At a bit of `hard`, the scalar scanner
//! computes the piece from `cur` (a piece depends only on the text from its
//! start on, so the scanner can resume at any piece start), and the walk goes on
//! after its end. Text shorter than two blocks, and the bytes after the last
//! block, go to the scalar scanner.
//!
//! Why the algebra is exact. Write `x` for the class of byte `p` and `p(x)`,
//! `pp(x)`, `n(x)` for the classes of bytes `p-1`, `p-2`, `p+1` (ASCII only:
//! every position within reach of a byte >= 0x80 is hard). With `W` the
//! whitespace and `Q = W - {\r, \n}`:
//!
//! * A letter starts a piece after a digit or line break (neither is a
//!   prefix), or after punctuation that itself does not start the piece: a
//!   punctuation run of two or more (`[^\s\p{L}\p{N}]++` takes it whole) or one
//!   punctuation character after a space (the space always starts a piece: it is
//!   the last character of its whitespace run and followed by non-space, so
//!   ` ?[^\s\p{L}\p{N}]++` takes both). After a letter it does not start one
//!   (`\p{L}++`) unless a contraction just ended: the position two after an
//!   apostrophe followed by a letter is hard (`'s` ends there, `'ll` contains
//!   it; either way the scalar scanner settles the contraction's end).
//! * A digit starts a piece after a non-digit, and within a run at every third
//!   digit; the fourth digit on is hard.
//! * Punctuation starts a piece after a letter, digit, `\t \v \f` (which is a
//!   piece alone before punctuation) or line break; never after punctuation or
//!   a space.
//! * Line breaks right after punctuation, and the line breaks following them,
//!   belong to its piece (`[\r\n]*+`): they are "eaten". The other whitespace
//!   forms runs; a run `s..j` followed by non-space has its piece starts at `s`,
//!   after its last line break, and at `j-1` unless that is a line break (the
//!   alternatives `\s*[\r\n]` and `\s+(?!\S)` in turn). `\s++$` cannot apply:
//!   blocks end before the last byte. A line break is never a start inside a
//!   run; a `Q` after a `Q` is a start exactly at `j-1`; a `Q` after a line
//!   break is a start exactly when no line break follows in its run, which a
//!   reversed fill decides inside the block (hard when the run goes on past the
//!   block or into a byte >= 0x80).
//!
//! o200k differs in ASCII text in three places. Its words are `[A-Z]*[a-z]*`
//! (`\p{Lu}` and `\p{Ll}` do not overlap in ASCII), so a capital after a small
//! letter also starts a piece. A contraction after a letter belongs to the word
//! (`don't`): such apostrophes are hard. `[\r\n/]*` after punctuation also takes
//! slashes: the line breaks and slashes from a slash right after a line break on,
//! and the two positions after them, are hard. The whitespace alternatives give
//! the same pieces as cl100k's away from the end of the text.
//!
//! gpt2 is simpler ([`derive_gpt2`]): runs of letters, digits and punctuation,
//! each joined by a space just before it, and whitespace runs cut before their
//! last character; a letter after an apostrophe is hard (contractions).
//!
//! `tests` check all of this against the scalar scanner (and `tests/pretokenize`
//! against the regex), on the real corpora, random text over an alphabet of the
//! edge cases, and the hostile inputs.

use super::scan::Scan;
use super::Named;
use crate::SpanSink;

/// Class masks of one 64-byte block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    /// `A-Z a-z`.
    l: u64,
    /// `0-9`.
    d: u64,
    /// Other ASCII (punctuation, symbols, controls), apostrophe included.
    p: u64,
    /// `' '`.
    sp: u64,
    /// `\t`, `\v`, `\f`.
    t: u64,
    /// `\r`, `\n`.
    c: u64,
    /// Bytes >= 0x80.
    na: u64,
    /// `'`.
    ap: u64,
    /// `A-Z` (o200k's upper-case class, among the ASCII letters).
    up: u64,
    /// `/` (in o200k's `[\r\n/]*`).
    sl: u64,
}

#[cfg(test)]
const CL_L: u8 = 1;
#[cfg(test)]
const CL_D: u8 = 2;
#[cfg(test)]
const CL_P: u8 = 4;
#[cfg(test)]
const CL_SP: u8 = 8;
#[cfg(test)]
const CL_T: u8 = 16;
#[cfg(test)]
const CL_C: u8 = 32;
#[cfg(test)]
const CL_NA: u8 = 64;
#[cfg(test)]
const CL_AP: u8 = 128;

#[cfg(test)]
/// The class bits of every byte (the portable classifier and the tests).
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if c >= 0x80 {
            CL_NA
        } else if c.is_ascii_alphabetic() {
            CL_L
        } else if c.is_ascii_digit() {
            CL_D
        } else if c == b' ' {
            CL_SP
        } else if c == b'\t' || c == 0x0B || c == 0x0C {
            CL_T
        } else if c == b'\r' || c == b'\n' {
            CL_C
        } else if c == b'\'' {
            CL_P | CL_AP
        } else {
            CL_P
        };
        i += 1;
    }
    t
};

/// Byte-by-byte classifier: the oracle of the vector one, and the block path
/// on any platform in tests.
#[cfg(test)]
pub(crate) fn classify_portable(b: &[u8; 64]) -> Classes {
    let mut m = [0u64; 10];
    for (k, &c) in b.iter().enumerate() {
        let f = CLASS[c as usize] as u16
            | (c.is_ascii_uppercase() as u16) << 8
            | ((c == b'/') as u16) << 9;
        for (j, slot) in m.iter_mut().enumerate() {
            *slot |= (((f >> j) & 1) as u64) << k;
        }
    }
    Classes {
        l: m[0],
        d: m[1],
        p: m[2],
        sp: m[3],
        t: m[4],
        c: m[5],
        na: m[6],
        ap: m[7],
        up: m[8],
        sl: m[9],
    }
}

/// AVX2 classifier (two 32-byte halves, one compare and movemask per class).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify_avx2(b: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so both unaligned 32-byte loads are in
    // bounds; `loadu` has no alignment requirement.
    let halves = unsafe {
        [
            _mm256_loadu_si256(b.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(b.as_ptr().add(32).cast::<__m256i>()),
        ]
    };
    // `x + (0x80 - lo)` is below `-128 + len` (signed) exactly when `x - lo`
    // is below `len` (unsigned), for every byte value.
    macro_rules! range {
        ($x:expr, $lo:expr, $len:expr) => {
            _mm256_movemask_epi8(_mm256_cmpgt_epi8(
                _mm256_set1_epi8((-128i16 + $len) as i8),
                _mm256_add_epi8($x, _mm256_set1_epi8((0x80u8).wrapping_sub($lo) as i8)),
            )) as u32 as u64
        };
    }
    macro_rules! eq {
        ($x:expr, $c:expr) => {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8($x, _mm256_set1_epi8($c as i8))) as u32 as u64
        };
    }
    let mut m = Classes::default();
    let mut ws = 0u64;
    for (h, &v) in halves.iter().enumerate() {
        let at = 32 * h as u32;
        let na = (_mm256_movemask_epi8(v) as u32 as u64) << at;
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        m.l |= (range!(folded, b'a', 26) << at) & !na;
        m.d |= range!(v, b'0', 10) << at;
        m.sp |= eq!(v, b' ') << at;
        m.c |= (eq!(v, b'\n') | eq!(v, b'\r')) << at;
        ws |= range!(v, 9u8, 5) << at;
        m.ap |= eq!(v, b'\'') << at;
        m.up |= range!(v, b'A', 26) << at;
        m.sl |= eq!(v, b'/') << at;
        m.na |= na;
    }
    m.t = ws & !m.c;
    m.p = !(m.l | m.d | m.sp | ws | m.na);
    m
}

/// AVX-512BW classifier: the whole block in one register, each class one
/// compare straight into a 64-bit mask (no movemask, no halves to join).
///
/// # Safety
/// The CPU must support AVX-512BW (and so AVX-512F).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn classify_avx512(b: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so the unaligned 64-byte load is in
    // bounds; `loadu` has no alignment requirement.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast::<__m512i>()) };
    // bytes `x` with `x - lo < len` (unsigned, wrapping)
    macro_rules! range {
        ($x:expr, $lo:expr, $len:expr) => {
            _mm512_cmplt_epu8_mask(
                _mm512_sub_epi8($x, _mm512_set1_epi8($lo as i8)),
                _mm512_set1_epi8($len as i8),
            )
        };
    }
    macro_rules! eq {
        ($c:expr) => {
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8($c as i8))
        };
    }
    let na = _mm512_movepi8_mask(v);
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    let l = range!(folded, b'a', 26) & !na;
    let d = range!(v, b'0', 10);
    let sp = eq!(b' ');
    let c = eq!(b'\n') | eq!(b'\r');
    let ws = range!(v, 9u8, 5);
    Classes {
        l,
        d,
        p: !(l | d | sp | ws | na),
        sp,
        t: ws & !c,
        c,
        na,
        ap: eq!(b'\''),
        up: range!(v, b'A', 26),
        sl: eq!(b'/'),
    }
}

/// What the next block needs from this one (masks as of this block).
#[derive(Debug, Clone, Copy, Default)]
struct Carry {
    cls: Classes,
    /// Non-eaten whitespace.
    wq: u64,
    /// Line breaks eaten by punctuation (ASCII punctuation only).
    eaten: u64,
    /// The same with bytes >= 0x80 counted as punctuation.
    eaten_x: u64,
    /// Letters right after an apostrophe.
    al: u64,
    /// o200k: line breaks and slashes from a slash right after a line break on
    /// (`[\r\n/]*` may join them to a punctuation piece).
    hz: u64,
}

/// `x` moved `k` bytes later (bit `i` is byte `i - k`), the first `k` bits from
/// the block before.
#[inline(always)]
fn later(x: u64, before: u64, k: u32) -> u64 {
    (x << k) | (before >> (64 - k))
}

/// Runs of `seeds`' bits through the runs of `m` they start (`seeds` are run
/// starts of `m`): the whole runs.
#[inline(always)]
fn fill(m: u64, seeds: u64) -> u64 {
    (m.wrapping_add(seeds) ^ m) & m
}

/// Positions in `runs` with a bit of `marks` (a subset of `runs`) at or after
/// them in the same run.
#[inline(always)]
fn mark_follows(runs: u64, marks: u64) -> u64 {
    // Reversed, "at or after" becomes "at or before": clear each run's
    // unmarked beginning.
    let r = runs.reverse_bits();
    let unmarked = r & !marks.reverse_bits();
    let heads = r & !(r << 1) & unmarked;
    let beginning = (unmarked.wrapping_add(heads) ^ unmarked) & unmarked;
    (r & !beginning).reverse_bits()
}

/// Positions in `runs` with a bit of `marks` (a subset of `runs`) at or
/// before them in the same run.
#[inline(always)]
fn mark_precedes(runs: u64, marks: u64) -> u64 {
    let unmarked = runs & !marks;
    let heads = runs & !(runs << 1) & unmarked;
    let beginning = (unmarked.wrapping_add(heads) ^ unmarked) & unmarked;
    runs & !beginning
}

/// The piece starts and hard positions of the block `x`, given the block
/// before (`prev`) and the classes of the block after (`next`, bit 0 only).
#[inline(always)]
fn derive(named: Named, prev: &Carry, x: &Classes, next: &Classes) -> (u64, u64) {
    if named == Named::Gpt2 {
        return derive_gpt2(prev, x, next);
    }
    let pc = &prev.cls;
    let w = x.sp | x.t | x.c;
    let q = x.sp | x.t;
    let p1 = |m: u64, b: u64| later(m, b, 1);

    let pl = p1(x.l, pc.l);
    let pd = p1(x.d, pc.d);
    let pp = p1(x.p, pc.p);
    let pt = p1(x.t, pc.t);
    let pcr = p1(x.c, pc.c);
    let pna = p1(x.na, pc.na);
    let ppp = later(x.p, pc.p, 2);
    let ppsp = later(x.sp, pc.sp, 2);
    let ppna = later(x.na, pc.na, 2);

    let Carry {
        eaten,
        eaten_x,
        wq,
        al,
        hz,
        ..
    } = carry_of(named, prev, x);
    let pwq = p1(wq, prev.wq);
    let next_w = (next.sp | next.t | next.c | next.na) & 1;
    let nw = (w | x.na) >> 1 | next_w << 63;
    let nna = x.na >> 1 | (next.na & 1) << 63;

    let mut starts = x.l & (pd | pcr | pp & (ppp | ppsp));
    if named == Named::O200k {
        // o200k's words are `[A-Z]*[a-z]*` in ASCII: a new one at a capital after
        // a small letter
        starts |= x.up & p1(x.l & !x.up, pc.l & !pc.up);
    }
    starts |= x.d & !pd;
    starts |= x.p & (pl | pd | pt | pcr);
    starts |= wq & !pwq;
    starts |= q & pwq & !pcr & !nw;

    let mut hard = x.na | pna | ppna | nna;
    let dx = x.d | x.na;
    hard |= x.d & pd & later(dx, pc.d | pc.na, 2) & later(dx, pc.d | pc.na, 3);
    let unsure = eaten ^ eaten_x;
    hard |= unsure | p1(unsure, prev.eaten ^ prev.eaten_x);
    // After `'` and a letter: the piece at the apostrophe may be a contraction
    // ending here (`'s`) or one further (`'ll`), which the hard position, being
    // inside or at the end of that piece, hands to the scalar scanner.
    if named == Named::O200k {
        // A contraction after a letter (`don't`) belongs to the word: the
        // apostrophe is hard, the scalar scanner settles the word's end.
        hard |= x.ap & pl;
        hard |= hz | later(hz, prev.hz, 1) | later(hz, prev.hz, 2);
    } else {
        hard |= p1(al, prev.al);
    }

    // A `Q` after a non-eaten line break: a start unless a line break follows
    // in its run.
    let cand = q & pwq & pcr;
    if cand != 0 {
        let breaks_follow = mark_follows(wq, x.c & wq);
        let edge = (wq >> 63) & next_w;
        let open = mark_follows(wq | x.na, (x.c & wq) | x.na | edge << 63);
        starts |= cand & !open;
        hard |= cand & open & !breaks_follow;
    }
    (starts, hard)
}

/// [`derive`] for gpt2 (`' ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++` after the
/// contractions, then `\s++$|\s+(?!\S)|\s`): a letter, digit or punctuation
/// run starts a piece unless a space is just before it (which joins it); a
/// whitespace run starts one at its beginning and at its last character.
/// After an apostrophe and a letter the letter is hard (a contraction may
/// start at the apostrophe; the scalar scanner settles it).
#[inline(always)]
fn derive_gpt2(prev: &Carry, x: &Classes, next: &Classes) -> (u64, u64) {
    let pc = &prev.cls;
    let p1 = |m: u64, b: u64| later(m, b, 1);
    let w = x.sp | x.t | x.c;
    let pw = p1(w, pc.sp | pc.t | pc.c);
    let psp = p1(x.sp, pc.sp);
    let next_w = (next.sp | next.t | next.c | next.na) & 1;
    let nw = (w | x.na) >> 1 | next_w << 63;
    let mut starts = x.l & !p1(x.l, pc.l);
    starts |= x.d & !p1(x.d, pc.d);
    starts |= x.p & !p1(x.p, pc.p);
    starts &= !psp;
    starts |= w & !pw;
    starts |= w & pw & !nw;
    let nna = x.na >> 1 | (next.na & 1) << 63;
    let mut hard = x.na | p1(x.na, pc.na) | later(x.na, pc.na, 2) | nna;
    hard |= x.l & p1(x.ap, pc.ap);
    (starts, hard)
}

/// The masks of block `x` that the block after it needs.
#[inline(always)]
fn carry_of(named: Named, prev: &Carry, x: &Classes) -> Carry {
    let pc = &prev.cls;
    let pp = later(x.p, pc.p, 1);
    let pna = later(x.na, pc.na, 1);
    // Line breaks eaten by a punctuation piece's `[\r\n]*+`.
    let eaten = fill(x.c, x.c & (pp | prev.eaten >> 63));
    let eaten_x = fill(x.c, x.c & (pp | pna | prev.eaten_x >> 63));
    let hz = if named == Named::O200k {
        let m = x.c | x.sl;
        let marks = x.sl & later(x.c, pc.c, 1) | m & (prev.hz >> 63);
        mark_precedes(m, marks)
    } else {
        0
    };
    Carry {
        cls: *x,
        wq: (x.sp | x.t | x.c) & !eaten,
        eaten,
        eaten_x,
        al: x.l & later(x.ap, pc.ap, 1),
        hz,
    }
}

/// One block's classes by the best classifier the CPU has.
#[derive(Clone, Copy)]
pub(crate) enum Classifier {
    #[cfg(test)]
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Classifier {
    /// The vector classifier when the CPU has one, else `None` (the scalar
    /// scanner is then faster than the portable classifier).
    pub(crate) fn detect() -> Option<Classifier> {
        Classifier::available().last()
    }

    /// Every vector classifier the CPU has, slowest first (the tests run
    /// each against the portable one). Each also needs BMI1, BMI2, LZCNT and
    /// POPCNT, which its walk is compiled with ([`spans`]). No allocation:
    /// [`Self::detect`] runs once per text, and so once per document of a
    /// batch.
    pub(crate) fn available() -> impl Iterator<Item = Classifier> {
        #[cfg(target_arch = "x86_64")]
        let base = is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2")
            && is_x86_feature_detected!("lzcnt")
            && is_x86_feature_detected!("popcnt");
        #[cfg(target_arch = "x86_64")]
        let ways = [
            base.then_some(Classifier::Avx2),
            (base && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"))
                .then_some(Classifier::Avx512),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        let ways: [Option<Classifier>; 0] = [];
        ways.into_iter().flatten()
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn classify(self, b: &[u8; 64]) -> Classes {
        match self {
            #[cfg(test)]
            Classifier::Portable => classify_portable(b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only built by `available` after the CPU reported AVX2.
            Classifier::Avx2 => unsafe { classify_avx2(b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only built by `available` after the CPU
            // reported AVX-512F and AVX-512BW.
            Classifier::Avx512 => unsafe { classify_avx512(b) },
        }
    }
}

/// The block at `at` (64 bytes, zero-padded past the end of `b`).
#[inline(always)]
fn block_at(b: &[u8], at: usize) -> [u8; 64] {
    let mut out = [0u8; 64];
    match b.get(at..at + 64) {
        Some(s) => out.copy_from_slice(s),
        None => {
            let rest = b.get(at..).unwrap_or(&[]);
            out[..rest.len()].copy_from_slice(rest);
        }
    }
    out
}

/// Whether a text looks ASCII enough for the block path: at most one byte in
/// 16 of its first KB is >= 0x80, and it is longer than a block. Mostly
/// non-ASCII text (Korean, Japanese, ...) runs the plain scalar loop, which the
/// block path would only hand every piece back to (a speed choice: both paths
/// give the same pieces).
#[inline]
pub(crate) fn worth_blocks(b: &[u8]) -> bool {
    let head = &b[..b.len().min(1024)];
    b.len() > 64 && high_bytes(head) * 16 <= head.len()
}

/// The number of bytes >= 0x80 in `b` (at most 2,040 bytes long), eight at a
/// time: each byte's top bit added into its own 8-bit lane of one word. Once
/// per encode call, so per document in a batch: the byte-by-byte count it
/// replaces (widened to 64 bits per byte by the compiler) took 11 % of a batch
/// of 1-10 KB documents.
#[inline]
fn high_bytes(b: &[u8]) -> usize {
    debug_assert!(b.len() <= 255 * 8);
    let words = b.chunks_exact(8);
    let rest = words.remainder();
    let mut lanes = 0u64;
    for w in words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        lanes += (u64::from_le_bytes(x) >> 7) & 0x0101_0101_0101_0101;
    }
    let in_words: usize = lanes.to_le_bytes().iter().map(|&n| usize::from(n)).sum();
    in_words + rest.iter().filter(|&&c| c >= 0x80).count()
}

/// Whether any of the 64 bytes at `at` is >= 0x80 (`b[at..at + 64]` exists).
#[inline(always)]
fn has_high(b: &[u8], at: usize) -> bool {
    let mut acc = 0u64;
    for chunk in b.get(at..at + 64).unwrap_or(&[]).chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        acc |= u64::from_le_bytes(w);
    }
    acc & 0x8080_8080_8080_8080 != 0
}

/// The carry of the 64 bytes before `at` (`at >= 64`) when the blocks before
/// them were not classified: exact, except that line breaks filling the whole
/// block may be eaten by punctuation before it, which is marked unsure (hard
/// positions follow).
#[inline(always)]
fn resume_carry(named: Named, b: &[u8], at: usize, how: Classifier) -> Carry {
    let x = how.classify(&block_at(b, at - 64));
    let mut carry = carry_of(named, &Carry::default(), &x);
    if x.c == !0 {
        carry.eaten &= !(1 << 63);
        carry.eaten_x |= 1 << 63;
    }
    if (x.c | x.sl) == !0 {
        carry.hz |= 1 << 63;
    }
    carry
}

/// Calls `f(start, end)` for every cl100k piece of `s.b`, left to right: the
/// same spans as the scalar loop.
///
/// Blocks start wherever the walk needs them: at 0, 64, 128, ... while the text
/// is ASCII; after a block with a byte >= 0x80 the scalar scanner goes on for at
/// least 64 bytes, and block processing resumes at the next piece start whose
/// 64 bytes are ASCII.
///
/// The walk is compiled once per classifier inside a function with that
/// instruction set enabled ([`spans_avx2`], [`spans_avx512`]), so the
/// classification, the bit algebra (BMI1/BMI2: `tzcnt`, `blsr`) and the
/// sink's steps are inlined into one loop instead of a call per block.
#[inline(always)]
#[allow(unsafe_code)] // the calls into the feature-enabled walks, see the SAFETY comments
pub(crate) fn spans<F: SpanSink>(named: Named, s: &Scan, text: &str, how: Classifier, f: &mut F) {
    match how {
        #[cfg(test)]
        Classifier::Portable => spans_with(named, s, text, how, f),
        // SAFETY: `Avx2` is only built by `available` after the CPU reported
        // AVX2, BMI1, BMI2, LZCNT and POPCNT, the features `spans_avx2` enables.
        #[cfg(target_arch = "x86_64")]
        Classifier::Avx2 => unsafe { spans_avx2(named, s, text, f) },
        // SAFETY: `Avx512` is only built by `available` after the CPU reported
        // AVX-512F, AVX-512BW and the features of `Avx2`, which
        // `spans_avx512` enables.
        #[cfg(target_arch = "x86_64")]
        Classifier::Avx512 => unsafe { spans_avx512(named, s, text, f) },
    }
}

/// [`spans_with`] for CPUs with AVX2 (see [`spans`]).
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn spans_avx2<F: SpanSink>(named: Named, s: &Scan, text: &str, f: &mut F) {
    spans_with(named, s, text, Classifier::Avx2, f);
}

/// [`spans_with`] for CPUs with AVX-512 (see [`spans`]).
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW and the features of [`spans_avx2`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn spans_avx512<F: SpanSink>(named: Named, s: &Scan, text: &str, f: &mut F) {
    spans_with(named, s, text, Classifier::Avx512, f);
}

/// The walk of [`spans`], for one classifier.
#[inline(always)]
fn spans_with<F: SpanSink>(named: Named, s: &Scan, text: &str, how: Classifier, f: &mut F) {
    let b = s.b;
    let n = b.len();
    let mut cur = 0usize;
    let mut base = 0usize;
    // The carry of the block before `base` and the classes of the block at
    // `base`, while blocks are being processed.
    let mut state: Option<(Carry, Classes)> = None;
    // How far the scalar scanner goes before blocks are tried again: doubling
    // while the text stays non-ASCII (each switch costs a call and a
    // mispredicted branch or two), back to one block after an ASCII block.
    const MAX_WINDOW: usize = 2048;
    let mut window = 64usize;
    loop {
        // Blocks, while the block at `base` is whole, ASCII, and a byte follows it.
        while base + 64 < n {
            let (prev, x) = match state {
                Some(v) => v,
                None if has_high(b, base) => break,
                None if base == 0 => (Carry::default(), how.classify(&block_at(b, 0))),
                None if base >= 64 => (
                    resume_carry(named, b, base, how),
                    how.classify(&block_at(b, base)),
                ),
                None => break,
            };
            if x.na != 0 {
                break;
            }
            let next = how.classify(&block_at(b, base + 64));
            let (starts, hard) = derive(named, &prev, &x, &next);
            let mut ev = starts | hard;
            if cur >= base {
                ev &= above(cur - base);
            }
            while ev != 0 {
                // the plain ends below the first hard position, in one run
                let h = ev & hard;
                let plain = ev & (h & h.wrapping_neg()).wrapping_sub(1);
                if plain != 0 {
                    cur = f.run(cur, base, plain);
                    ev &= !plain;
                }
                if ev != 0 {
                    let e = hard_piece(named, s, text, cur);
                    f.span(cur, e);
                    cur = e;
                    if cur >= base + 64 {
                        break;
                    }
                    ev &= above(cur - base);
                }
            }
            state = Some((carry_of(named, &prev, &x), next));
            window = 64;
            base += 64;
        }
        // The scalar scanner: non-ASCII text, or the end.
        let until = if base + 64 < n { base + window } else { n };
        cur = scalar_until(named, s, text, cur, until, f);
        if cur >= n {
            return;
        }
        window = (2 * window).min(MAX_WINDOW);
        base = cur;
        state = None;
    }
}

/// The scalar scanner's pieces from `cur` (a piece start) until one ends at or
/// after `until` (or the text ends); returns that end.
#[inline(always)]
fn scalar_until<F: SpanSink>(
    named: Named,
    s: &Scan,
    text: &str,
    mut cur: usize,
    until: usize,
    f: &mut F,
) -> usize {
    let n = text.len();
    let until = until.min(n);
    while cur < until {
        let e = scalar_end(named, s, cur);
        let e = if e > cur {
            e.min(n)
        } else {
            super::next_char_boundary(text, cur)
        };
        f.span(cur, e);
        cur = e;
    }
    cur
}

/// Bits strictly above bit `k` (none when `k >= 63`).
#[inline(always)]
fn above(k: usize) -> u64 {
    (!0u64).checked_shl(k as u32 + 1).unwrap_or(0)
}

/// The scalar scanner's end of the piece at `i` (a pattern with a block path).
#[inline(always)]
fn scalar_end(named: Named, s: &Scan, i: usize) -> usize {
    match named {
        Named::Gpt2 => s.gpt2(i),
        Named::Cl100k => s.cl100k(i),
        Named::O200k => s.o200k(i),
    }
}

/// The scalar scanner's piece end at `cur`, out of line: the block loop stays small.
#[inline(never)]
fn hard_piece(named: Named, s: &Scan, text: &str, cur: usize) -> usize {
    let e = scalar_end(named, s, cur);
    if e > cur {
        e.min(s.b.len())
    } else {
        super::next_char_boundary(text, cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_bytes_counts_every_byte_from_0x80() {
        let mut x = 1u64;
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000, 1024, 2040] {
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let want = b.iter().filter(|&&c| c >= 0x80).count();
            assert_eq!(high_bytes(&b), want, "{len} bytes");
        }
        assert_eq!(high_bytes(&[0xFF; 2040]), 2040);
        assert_eq!(high_bytes(&[0x7F; 2040]), 0);
    }

    #[test]
    fn classes_agree_with_the_scanner_tables() {
        use super::super::unicode::{tables, L, N, OTHER, WS};
        let t = tables();
        for c in 0u8..0x80 {
            let f = t.ascii[c as usize];
            let k = CLASS[c as usize];
            assert_eq!(k & CL_L != 0, f & L != 0, "{c:#x}");
            assert_eq!(k & CL_D != 0, f & N != 0, "{c:#x}");
            assert_eq!(k & (CL_SP | CL_T | CL_C) != 0, f & WS != 0, "{c:#x}");
            assert_eq!(k & CL_P != 0, f & OTHER != 0, "{c:#x}");
            assert_eq!(k.count_ones(), if c == b'\'' { 2 } else { 1 }, "{c:#x}");
        }
    }

    #[test]
    fn vector_classifier_matches_portable() {
        for how in Classifier::available() {
            vector_matches_portable(how);
        }
    }

    fn vector_matches_portable(how: Classifier) {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut block = [0u8; 64];
        for round in 0..2000 {
            for (k, slot) in block.iter_mut().enumerate() {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                *slot = if round < 4 {
                    (round * 64 + k) as u8
                } else {
                    rng as u8
                };
            }
            assert_eq!(how.classify(&block), classify_portable(&block), "{block:?}");
        }
    }

    fn spans(named: Named, text: &str, how: Option<Classifier>) -> Vec<(usize, usize)> {
        let sc = super::super::Scanner::new(named);
        let mut out = Vec::new();
        match how {
            None => sc.for_each_span_scalar(text, |a, b| out.push((a, b))),
            Some(how) => {
                let s = Scan {
                    b: text.as_bytes(),
                    t: super::super::unicode::tables(),
                };
                super::spans(named, &s, text, how, &mut |a, b| out.push((a, b)));
            }
        }
        out
    }

    /// The block path with every classifier available equals the scalar scanner.
    /// The patterns with a block path.
    const BLOCKED: [Named; 3] = [Named::Gpt2, Named::Cl100k, Named::O200k];

    fn check(text: &str) {
        for named in BLOCKED {
            check_one(named, text);
        }
    }

    fn check_one(named: Named, text: &str) {
        let want = spans(named, text, None);
        let mut ways = vec![Classifier::Portable];
        ways.extend(Classifier::available());
        for how in ways {
            let got = spans(named, text, Some(how));
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                let lo = want.get(at.saturating_sub(3)).map_or(0, |s| s.0);
                let hi = want.get(at + 3).map_or(text.len(), |s| s.1);
                panic!(
                    "{named:?} block path differs at piece {at}: got {:?}, want {:?}, near {:?} (byte {lo}, text of {} bytes)",
                    got.get(at),
                    want.get(at),
                    &text.as_bytes()[lo..hi],
                    text.len()
                );
            }
        }
    }

    fn data_files() -> Vec<std::path::PathBuf> {
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")];
        let root = std::env::var_os("BYTEPAIR_DATA")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|h| std::path::PathBuf::from(h).join(".cache/bytepair-data"))
            });
        if let Some(r) = root {
            dirs.push(r.join("corpora"));
        }
        let mut files = Vec::new();
        for d in dirs {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let path = e.path();
                if path.extension().is_some_and(|x| x == "txt") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    #[test]
    fn real_text_equals_scalar() {
        let files = data_files();
        assert!(files.len() >= 6, "tests/data has six fixtures: {files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            // every shift of the block grid over the start of the text
            for skip in [0usize, 1, 2, 3, 31, 63] {
                let mut from = skip.min(text.len());
                while !text.is_char_boundary(from) {
                    from += 1;
                }
                check(&text[from..]);
            }
        }
    }

    /// Characters the patterns treat differently, weighted towards ASCII edge cases.
    const EDGE: &[&str] = &[
        " ", " ", " ", "\n", "\n", "\r", "\t", "\u{b}", "\u{c}", "'", "'", "s", "S", "t", "l", "L",
        "v", "e", "r", "R", "d", "m", "a", "Z", "0", "1", "9", ".", ",", "!", "(", "-", "/", "\n/",
        ".\n/", "aB", "Ab", "I'M", "\u{0}", "\u{7f}", "é", "한", "\u{a0}", "\u{3000}", "\u{2028}",
        "\u{85}", "\u{17f}", "\u{212a}", "\u{301}", "\u{663}", "—", "😀", "’", "\r\n", "  ",
        "\n\n", "'s", "'LL", "ab", "123",
    ];

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    #[test]
    fn random_edge_text_equals_scalar() {
        let mut rng = Rng(0x5eed_b10c);
        for round in 0..6000 {
            // a pool of a few pieces (runs and repeats), sometimes padded with
            // letters so the hard zones land on every block offset
            let k = 1 + rng.below(8);
            let pool: Vec<&str> = (0..k).map(|_| EDGE[rng.below(EDGE.len())]).collect();
            let mut text = String::new();
            if round % 3 == 0 {
                text.push_str(&"word ".repeat(rng.below(30)));
                text.push_str(&"x".repeat(rng.below(64)));
            }
            let len = [63, 64, 65, 127, 128, 129, 200, 400][rng.below(8)];
            while text.len() < len {
                text.push_str(pool[rng.below(pool.len())]);
            }
            check(&text);
            // exact lengths around block multiples
            let mut cut = len.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            check(&text[..cut]);
        }
    }

    #[test]
    fn ascii_runs_at_every_block_offset() {
        for unit in [
            " ", "\n", "\r\n", " \n", "\n ", "\t", "7", "'s", ".", ".\n", "a'", ".\n/", "\n/a",
            "/\n", "aB", "é", "\u{a0}",
        ] {
            for before in 0..70 {
                for reps in [1, 2, 3, 4, 5, 70] {
                    let text = format!(
                        "{}{}x1 {}!\n",
                        "a".repeat(before),
                        unit.repeat(reps),
                        unit.repeat(reps)
                    );
                    check(&text);
                }
            }
        }
    }

    #[test]
    fn hostile_inputs_equal_scalar() {
        const BIG: usize = 200_000;
        let inputs = [
            "x".repeat(BIG),
            " ".repeat(BIG),
            format!("{}x", " ".repeat(BIG)),
            "\n".repeat(BIG),
            "7".repeat(BIG),
            "\u{301}".repeat(BIG / 2),
            "한".repeat(BIG / 3),
            format!("\u{2b0}{}", "A".repeat(BIG)),
            " \n".repeat(BIG / 2) + "x",
            "\n ".repeat(BIG / 2) + "x",
            ".\n".repeat(BIG / 2),
            "'s".repeat(BIG / 2),
            "a'".repeat(BIG / 2),
            format!("{}\n{}", " ".repeat(BIG), " ".repeat(BIG)),
        ];
        for text in &inputs {
            check(text);
        }
    }

    #[test]
    fn mark_follows_small_cases() {
        // runs 0..4 and 6..8; marks at 2 and 7
        let runs = 0b1100_1111;
        let marks = 0b1000_0100;
        assert_eq!(mark_follows(runs, marks), 0b1100_0111);
        assert_eq!(mark_follows(!0, 1 << 63), !0);
        assert_eq!(mark_follows(!0, 1), 1);
        assert_eq!(fill(0b0111_0110, 0b0001_0000), 0b0111_0000);
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    /// Block path against the scalar loop on the real corpora (best of 7, wall clock):
    /// `cargo test --profile devfast --lib block_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn block_speed() {
        let dir = std::env::var("HOME").unwrap_or_default() + "/.cache/bytepair-data/corpora/";
        let how = Classifier::detect();
        let named = match std::env::var("BP_PATTERN").as_deref() {
            Ok("o200k") => Named::O200k,
            Ok("gpt2") => Named::Gpt2,
            _ => Named::Cl100k,
        };
        let names = std::env::var("BP_CORPORA")
            .unwrap_or("en_kjv en_austen code_python ko_prose multi_unicode".into());
        for name in names.split_whitespace() {
            let Ok(text) = std::fs::read_to_string(format!("{dir}{name}.txt")) else {
                continue;
            };
            let mut text_end = text.len().min(4_000_000);
            while !text.is_char_boundary(text_end) {
                text_end -= 1;
            }
            let text = &text[..text_end];
            let s = Scan {
                b: text.as_bytes(),
                t: super::super::unicode::tables(),
            };
            let mut best = [f64::MAX; 2];
            let mut ratios = Vec::new();
            let reps = std::env::var("BP_REPS")
                .ok()
                .and_then(|r| r.parse().ok())
                .unwrap_or(7);
            for rep in 0..reps {
                let mut took = [0f64; 2];
                for j in 0..2 {
                    // alternate which runs first
                    let k = j ^ (rep & 1);
                    let t0 = std::time::Instant::now();
                    let mut count = 0usize;
                    match (k, how) {
                        (1, Some(how)) => {
                            super::spans(named, &s, text, how, &mut |_, _| count += 1)
                        }
                        _ => {
                            let n = text.len();
                            let mut i = 0;
                            while i < n {
                                let e = s.cl100k(i);
                                let e = if e > i {
                                    e.min(n)
                                } else {
                                    super::super::next_char_boundary(text, i)
                                };
                                count += 1;
                                i = e;
                            }
                        }
                    }
                    std::hint::black_box(count);
                    took[k] = t0.elapsed().as_secs_f64();
                    best[k] = best[k].min(took[k]);
                }
                ratios.push(took[0] / took[1]);
            }
            ratios.sort_by(f64::total_cmp);
            let mb = text.len() as f64 / 1e6;
            println!(
                "{name:14} scalar {:6.0} MB/s  block {:6.0} MB/s  paired speed-up median {:.2} [{:.2}-{:.2}]",
                mb / best[0],
                mb / best[1],
                ratios[ratios.len() / 2],
                ratios[0],
                ratios[ratios.len() - 1]
            );
        }
    }
}
