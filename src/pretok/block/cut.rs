//! GPT-2's pieces of a text that added tokens made of spaces cut first:
//! GPT-NeoX-20B and OLMo 1 add every run of 2 to 24 spaces as a token.
//!
//! `tokenizers` finds the added tokens before it pre-tokenizes. A run of
//! `k >= 2` spaces is cut leftmost-longest: tokens of `max` spaces while more
//! than `max` are left, then one of the rest (a single space left over stays
//! text). Each stretch of text between the tokens is pre-tokenized alone, as
//! a whole text would be. [`spans`] gives the same pieces and tokens from one
//! walk over the text: the block walk of [`super`] with three changes to
//! GPT-2's bit algebra ([`derive_gpt2`]), for blocks whose runs of spaces
//! are at most `max` long (a run that is one token):
//!
//! * a byte of a run of two or more spaces (a "cut" byte) has no class, so the
//!   stretch after a run starts as a text starts (a letter after a run is not
//!   joined to a space before it, whitespace after it is not joined to it);
//! * whitespace right before a run ends its stretch, where `\s+(?!\S)` takes a
//!   whitespace run whole (end of text is not `\S`): its last byte is not a
//!   piece start, as it is before a non-space;
//! * a run is one token: it starts at the run's first byte and ends at the
//!   byte after the run ([`Masks::ends`]), where the stretch after it starts.
//!
//! GPT-2's pieces depend on no byte before their start, so nothing else
//! changes: every other start is decided by the bytes of its own stretch. A
//! hard position, a block holding a run longer than `max` (cut into several
//! tokens), and the text outside blocks take the scalar step ([`step`]): a
//! run's next token, or the scalar scanner's piece on the stretch alone (the
//! text up to the next pair of spaces).
//!
//! `tests` check the walk against the definition (cut first, then each
//! stretch alone through the scalar scanner) on the corpora and on random
//! text dense in spaces; the Python tests check the ids against `tokenizers`.

use memchr::memmem::Finder;

use super::super::classes::{worth_blocks, Classes, Classifier};
use super::super::patterns::{next_char_boundary, Named};
use super::super::scan::Scan;
use super::{above, carry_of, classify_chars, derive_gpt2, later, Carry, MAX_UNCLASSED};
use crate::{Rank, SpanSink};

/// The longest run of spaces one token may be here (the walk looks back one
/// block for a longer run).
pub const MAX_RUN: usize = 63;

/// Calls `f` for every piece of `text` under GPT-2's pattern, and `f.fixed`
/// for every token of spaces: `ids[k - 2]` is the id of `k` spaces, for `k`
/// in `2..=ids.len() + 1` (every length, at most [`MAX_RUN`]).
pub(crate) fn spans<F: SpanSink>(s: &Scan, text: &str, ids: &[Rank], f: &mut F) {
    debug_assert!(!ids.is_empty() && ids.len() < MAX_RUN);
    let mut runs = Runs::new(s.b, ids);
    match Classifier::detect() {
        Some(how) if worth_blocks(s.b) => walk_on(s, text, &mut runs, how, f),
        _ => {
            steps(s, text, &mut runs, 0, s.b.len(), f);
        }
    }
}

/// The walk for one classifier, compiled with its instruction set.
#[inline(always)]
#[allow(unsafe_code)] // the calls into the feature-enabled walks, see the SAFETY comments
fn walk_on<F: SpanSink>(s: &Scan, text: &str, runs: &mut Runs, how: Classifier, f: &mut F) {
    match how {
        #[cfg(test)]
        Classifier::Portable => walk(s, text, runs, how, f),
        // SAFETY: `Avx2` is only built by `available` after the CPU reported
        // AVX2, BMI1, BMI2, LZCNT and POPCNT, the features `walk_avx2` enables.
        #[cfg(target_arch = "x86_64")]
        Classifier::Avx2 => unsafe { walk_avx2(s, text, runs, f) },
        // SAFETY: `Avx512` is only built by `available` after the CPU reported
        // AVX-512F, AVX-512BW and the features of `Avx2`, which `walk_avx512`
        // enables.
        #[cfg(target_arch = "x86_64")]
        Classifier::Avx512 => unsafe { walk_avx512(s, text, runs, f) },
    }
}

/// [`walk`] for CPUs with AVX2.
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn walk_avx2<F: SpanSink>(s: &Scan, text: &str, runs: &mut Runs, f: &mut F) {
    walk(s, text, runs, Classifier::Avx2, f);
}

/// [`walk`] for CPUs with AVX-512.
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW and the features of [`walk_avx2`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn walk_avx512<F: SpanSink>(s: &Scan, text: &str, runs: &mut Runs, f: &mut F) {
    walk(s, text, runs, Classifier::Avx512, f);
}

/// The runs of spaces: their tokens' ids and where the next pair of spaces is.
struct Runs<'a> {
    b: &'a [u8],
    ids: &'a [Rank],
    pairs: Finder<'static>,
    /// The first pair of spaces at or after the last search's start (the
    /// text's length when there is none): the answer for every piece start
    /// up to it, as no pair lies between.
    next_pair: usize,
}

impl<'a> Runs<'a> {
    fn new(b: &'a [u8], ids: &'a [Rank]) -> Self {
        let pairs = Finder::new(b"  ").into_owned();
        let next_pair = pairs.find(b).unwrap_or(b.len());
        Runs {
            b,
            ids,
            pairs,
            next_pair,
        }
    }

    /// The longest token of spaces.
    fn max(&self) -> usize {
        self.ids.len() + 1
    }

    /// Where the stretch holding the piece start `cur` ends: the next pair of
    /// spaces at or after `cur` (a run's first byte), or the text's end.
    #[inline]
    fn stretch_end(&mut self, cur: usize) -> usize {
        if cur > self.next_pair {
            let rest = self.b.get(cur..).unwrap_or(&[]);
            self.next_pair = self.pairs.find(rest).map_or(self.b.len(), |i| cur + i);
        }
        self.next_pair
    }

    /// The id of a token of `k` spaces, if one is that long.
    #[inline]
    fn id(&self, k: usize) -> Option<Rank> {
        self.ids.get(k.wrapping_sub(2)).copied()
    }
}

/// The scalar step at the piece start `cur`: a run's next token (a pair of
/// spaces at a piece start is a token's first byte: inside a run, pieces
/// start only where its tokens do), or the scalar scanner's piece on the
/// stretch alone. Returns its end.
#[inline(never)]
fn step<F: SpanSink>(s: &Scan, text: &str, runs: &mut Runs, cur: usize, f: &mut F) -> usize {
    let q = runs.stretch_end(cur);
    if q == cur {
        let b = runs.b.get(cur..).unwrap_or(&[]);
        let k = b
            .iter()
            .take(runs.max())
            .take_while(|&&c| c == b' ')
            .count();
        if let Some(id) = runs.id(k) {
            f.fixed(cur, cur + k, id);
            return cur + k;
        }
    }
    stretch_pieces(s, text, q, cur, cur + 1, f)
}

/// The pieces of the stretch that ends at `q`, scanned alone, from the piece
/// start `cur` until one ends at or after `stop` (`cur < stop <= q`);
/// returns that end.
#[inline(always)]
fn stretch_pieces<F: SpanSink>(
    s: &Scan,
    text: &str,
    q: usize,
    mut cur: usize,
    stop: usize,
    f: &mut F,
) -> usize {
    let stretch = Scan {
        b: s.b.get(..q).unwrap_or(s.b),
        t: s.t,
    };
    while cur < stop {
        let e = stretch.end(Named::Gpt2, cur);
        let e = if e > cur {
            e.min(q)
        } else {
            next_char_boundary(text, cur)
        };
        f.span(cur, e);
        cur = e;
    }
    cur
}

/// The scalar steps from the piece start `cur` until a piece or token ends
/// at or after `until` (at most the text's length); returns that end. The
/// pieces of one stretch come from one loop, as [`super::scalar_until`]'s.
#[inline(never)]
fn steps<F: SpanSink>(
    s: &Scan,
    text: &str,
    runs: &mut Runs,
    mut cur: usize,
    until: usize,
    f: &mut F,
) -> usize {
    while cur < until {
        let q = runs.stretch_end(cur);
        if q == cur {
            cur = step(s, text, runs, cur, f);
            continue;
        }
        cur = stretch_pieces(s, text, q, cur, until.min(q), f);
    }
    cur
}

/// What the next block needs from this one.
#[derive(Debug, Clone, Copy, Default)]
struct Edge {
    /// The carry of the block's classes, cut bytes taken out of the spaces.
    carry: Carry,
    /// The block's spaces, cut bytes included.
    sp: u64,
    /// Its cut bytes.
    cut: u64,
}

impl Edge {
    /// The edge of the 64 bytes before `at` (`64 <= at < b.len()`) when they
    /// were not walked as a block.
    fn resume(s: &Scan, at: usize, how: Classifier) -> Edge {
        let b = s.b;
        let x = classify_chars(Named::Gpt2, s, at - 64, how);
        let before = u64::from(at > 64 && b.get(at - 65) == Some(&b' '));
        let after = u64::from(b.get(at) == Some(&b' '));
        let sp = x.sp;
        let cut = sp & (sp << 1 | before | sp >> 1 | after << 63);
        let mut cls = x;
        cls.sp &= !cut;
        Edge {
            carry: carry_of(Named::Gpt2, &Carry::default(), &cls),
            sp,
            cut,
        }
    }
}

/// A block's events.
struct Masks {
    /// Piece starts (the starts of runs and the bytes after them included).
    starts: u64,
    /// Positions the scalar step decides.
    hard: u64,
    /// The bytes right after a run: its token ends there.
    ends: u64,
    edge: Edge,
}

/// Whether a byte of the block ends a run of more than `max` spaces
/// (`max < 64`): bits `j - max ..= j` of the two blocks all spaces.
#[inline(always)]
fn too_long(sp: u64, prev_sp: u64, max: usize) -> bool {
    let need = max + 1;
    let mut r = u128::from(sp) << 64 | u128::from(prev_sp);
    // `r` bit j: the `have` bits ending at j are all spaces
    let mut have = 1;
    while 2 * have <= need {
        r &= r << have;
        have *= 2;
    }
    if have < need {
        r &= r << (need - have);
    }
    r >> 64 != 0
}

/// The events of block `x` (raw classes) after `prev`, `next` the raw classes
/// of the block after it; `None` when a run in it is longer than `max`.
#[inline(always)]
fn masks(prev: &Edge, x: &Classes, next: &Classes, max: usize) -> Option<Masks> {
    let sp = x.sp;
    if too_long(sp, prev.sp, max) {
        return None;
    }
    let cut = sp & (later(sp, prev.sp, 1) | sp >> 1 | (next.sp & 1) << 63);
    let next_cut = next.sp & 1 & (sp >> 63 | next.sp >> 1);
    let (mut xc, mut nc) = (*x, *next);
    xc.sp &= !cut;
    nc.sp &= !next_cut;
    let (mut starts, hard) = derive_gpt2(&prev.carry, &xc, &nc);
    let pc = &prev.carry.cls;
    let w = xc.sp | xc.t | xc.c;
    let pw = later(w, pc.sp | pc.t | pc.c, 1);
    starts &= !(w & pw & (cut >> 1 | next_cut << 63));
    let pcut = later(cut, prev.cut, 1);
    starts |= cut & !pcut;
    Some(Masks {
        starts,
        hard,
        ends: pcut & !cut,
        edge: Edge {
            carry: carry_of(Named::Gpt2, &prev.carry, &xc),
            sp,
            cut,
        },
    })
}

/// The walk of [`spans`]: blocks while their characters are classed and
/// their runs are short, the scalar step elsewhere (as [`super::spans`]
/// walks).
#[inline(always)]
fn walk<F: SpanSink>(s: &Scan, text: &str, runs: &mut Runs, how: Classifier, f: &mut F) {
    let b = s.b;
    let n = b.len();
    let (mut cur, mut base) = (0usize, 0usize);
    let mut state: Option<(Edge, Classes)> = None;
    let classify = |at: usize| classify_chars(Named::Gpt2, s, at, how);
    const MAX_WINDOW: usize = 2048;
    let mut window = 64usize;
    loop {
        while base + 64 < n {
            let (prev, x) = match state {
                Some(v) => v,
                None if base == 0 => (Edge::default(), classify(0)),
                None if base >= 64 => (Edge::resume(s, base, how), classify(base)),
                None => break,
            };
            if x.na.count_ones() > MAX_UNCLASSED {
                break;
            }
            let next = classify(base + 64);
            let Some(m) = masks(&prev, &x, &next, runs.max()) else {
                break;
            };
            cur = block(s, text, runs, &m, cur, base, f);
            state = Some((m.edge, next));
            window = 64;
            base += 64;
        }
        let until = if base + 64 < n {
            (base + window).min(n)
        } else {
            n
        };
        cur = steps(s, text, runs, cur, until, f);
        if cur >= n {
            return;
        }
        window = (2 * window).min(MAX_WINDOW);
        base = cur;
        state = None;
    }
}

/// The pieces and tokens of one block from `cur` (a piece start); returns the
/// piece start it reaches.
#[inline(always)]
fn block<F: SpanSink>(
    s: &Scan,
    text: &str,
    runs: &mut Runs,
    m: &Masks,
    mut cur: usize,
    base: usize,
    f: &mut F,
) -> usize {
    let special = m.hard | m.ends;
    let mut ev = m.starts | m.hard;
    if cur >= base {
        ev &= above(cur - base);
    }
    while ev != 0 {
        // the plain ends below the first special position, in one run
        let h = ev & special;
        let plain = ev & (h & h.wrapping_neg()).wrapping_sub(1);
        if plain != 0 {
            cur = f.run(cur, base, plain);
            ev &= !plain;
        }
        if ev == 0 {
            break;
        }
        let at = base + ev.trailing_zeros() as usize;
        cur = match runs.id(at - cur) {
            // a run's end: its token starts at `cur`, its first byte
            Some(id) if m.hard & (1 << (at - base)) == 0 => {
                f.fixed(cur, at, id);
                at
            }
            _ => step(s, text, runs, cur, f),
        };
        if cur >= base + 64 {
            break;
        }
        ev &= above(cur - base);
    }
    cur
}

#[cfg(test)]
mod tests;
