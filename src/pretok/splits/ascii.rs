//! The chain on its all-ASCII lines, in one flat pass: [`Flat`].
//!
//! Restricted to ASCII, the DeepSeek chains are `[\r\n]`, then `W?A+`, then
//! `W?B+`, maybe `W+$`, then digits one by one, with every other stage's
//! classes outside ASCII (they leave an ASCII piece whole). Inside a line (a
//! gap of the first stage, so no `\r` or `\n`), when `W`, `A`, `B` and the
//! digits `D` meet only as `B` holding all of `A` or none of it, the pieces
//! are these, left to right: at a character of `A`, or of `W` before one of
//! `A`, a run of `A` (the later stages leave it whole: no `W` at its end, no
//! digit, all or none of it in `B`); else at a character of `B \ A`, or of
//! `W` before one, a run of `B \ A` (it stays in the gap of the `A` stage: a
//! run there starts at the first character of `A` or at a `W` before one);
//! every other stretch is a gap of both, which the trailing stage cuts before
//! its final run of `W` and the digit stage around each digit.
//!
//! So every piece start is decided by the byte's class and its neighbours'
//! ([`Flat::starts`], bit algebra on the masks of a 64-byte block, module
//! `masks`): a run's first byte (or the `W` just before it), the byte after a
//! run, each line break and the byte after it, each digit and the byte after
//! it, and the first byte of a gap's whitespace run that reaches a non-gap
//! byte (the end of its piece, for the trailing stage). That last reach may
//! cross the block's end: the run is then followed byte by byte to its end
//! ([`Flat::trails`]), once per run (the answer holds for the blocks the run
//! covers).
//!
//! [`Flat::new`] checks those conditions on the chain's steps, per ASCII
//! byte; the nested stages run every line with a byte >= 0x80. Complexity:
//! each block is classified once and its masks combined a fixed number of
//! times; a whitespace run crossing a block is read once more.

use super::super::block::mark_follows;
use super::masks::{Masks, Nibbles, Way};
use super::{Step, Tables};
use crate::SpanSink;

const A: u8 = 1;
const B: u8 = 2;
const W: u8 = 4;
const D: u8 = 8;

/// The chain's ASCII classes, when its stages reduce to the shapes above.
#[derive(Debug)]
pub(super) struct Flat {
    /// Per ASCII byte: `A`, `B` (for `B \ A`), `W` or `D` (or 0).
    class: [u8; 128],
    /// The same classes (and the line breaks) as nibble tables.
    nibbles: Nibbles,
    trailing: bool,
    digits: bool,
}

/// The ASCII bytes with a flag of `set`, as bits of a `u128`.
fn members(t: &Tables, set: u8) -> u128 {
    (0..128u8)
        .filter(|&c| t.ascii[c as usize] & set != 0)
        .fold(0, |m, c| m | 1u128 << c)
}

impl Flat {
    /// The flat scanner of `steps` (see the module documentation), or `None`.
    pub(super) fn new(steps: &[Step], t: &Tables) -> Option<Flat> {
        const LINE: u128 = 1 << b'\r' | 1 << b'\n';
        let (first, rest) = steps.split_first()?;
        match *first {
            Step::One { set, .. } if members(t, set) == LINE => {}
            _ => return None,
        }
        // the remaining stages with ASCII members, classes without \r\n
        let mut runs: Vec<(u128, u128)> = Vec::new();
        let (mut trailing, mut digits) = (None, None);
        for st in rest {
            let (p, s) = match *st {
                Step::One { set, .. } => (0, members(t, set)),
                Step::Run { prefix, set } => (members(t, prefix), members(t, set)),
                Step::Trailing { set, .. } => (0, members(t, set)),
            };
            let (p, s) = (p & !LINE, s & !LINE);
            if s == 0 {
                continue; // no match in an ASCII line
            }
            match (*st, runs.len(), trailing, digits) {
                (Step::Run { .. }, 0 | 1, None, None) if p != 0 => runs.push((p, s)),
                (Step::Trailing { .. }, 2, None, None) => trailing = Some(s),
                (Step::One { .. }, 2, _, None) => digits = Some(s),
                _ => return None,
            }
        }
        let [(wa, a), (wb, b)] = runs.as_slice() else {
            return None;
        };
        let w = *wa;
        let d = digits.unwrap_or(0);
        let nested = b & a == 0 || b & a == *a;
        let disjoint = w & (a | b | d) == 0 && d & (a | b) == 0;
        if *wb != w || trailing.is_some_and(|x| x != w) || !nested || !disjoint {
            return None;
        }
        let mut class = [0u8; 128];
        let mut sets = [0u128; 5];
        for (c, slot) in class.iter_mut().enumerate() {
            let bit = |m: u128| m >> c & 1 == 1;
            *slot = if bit(*a) {
                A
            } else if bit(*b) {
                B
            } else if bit(w) {
                W
            } else if bit(d) {
                D
            } else {
                0
            };
            for (k, set) in [A, B, W, D].into_iter().enumerate() {
                sets[k] |= u128::from(*slot == set) << c;
            }
        }
        sets[4] = LINE;
        Some(Flat {
            class,
            nibbles: Nibbles::new(sets),
            trailing: trailing.is_some(),
            digits: d != 0,
        })
    }

    /// The pieces of `b[p..q]`, all ASCII, where `q` is the end of `b` or
    /// follows a line break: its line breaks one by one and its lines' pieces,
    /// 64 bytes at a time (module `masks`), bytes past `q` read as line breaks.
    pub(super) fn region<F: SpanSink>(&self, b: &[u8], p: usize, q: usize, way: Way, f: &mut F) {
        let whole = |at: usize| b.get(at..at + 64).filter(|_| at + 64 <= q);
        let block = |at: usize| match whole(at).and_then(|s| <&[u8; 64]>::try_from(s).ok()) {
            Some(s) => way.classify(&self.nibbles, s),
            None => {
                let mut x = [b'\n'; 64];
                let rest = b.get(at..q).unwrap_or(&[]);
                x[..rest.len()].copy_from_slice(rest);
                way.classify(&self.nibbles, &x)
            }
        };
        // before the region: the text's start or a line break
        let mut prev = Masks {
            lf: 1 << 63,
            ..Masks::default()
        };
        let (mut prev_gw, mut cur, mut start, mut base) = (0, block(p), p, p);
        // the end of the last whitespace run followed to its end, and whether
        // its gap part trails: each byte of a long run is followed once
        let mut memo = (0, false);
        while base < q {
            let next = block(base + 64);
            let (mut ends, gw) = self.starts(&prev, prev_gw, &cur, &next, b, (base, q), &mut memo);
            if base == p {
                ends &= !1;
            }
            if q - base < 64 {
                ends &= (1 << (q - base)) - 1;
            }
            start = f.run(start, base, ends);
            (prev, prev_gw, cur, base) = (cur, gw, next, base + 64);
        }
        if start < q {
            f.span(start, q);
        }
    }

    /// The piece starts in the block `m` at `base` (every bit a start, the
    /// block's first bit included), from its masks, the block before's
    /// (`pm`, and `pm_gw` its gap whitespace) and the next block's; with the
    /// block's gap whitespace. `memo`: the whitespace run of [`Self::trails`]
    /// already followed (its end, its answer). The rules of the module documentation, per
    /// bit: a run of `A` starts at its first character, or at the `W` before
    /// it; it ends where the run does; the same for `B`; the gap characters
    /// are the rest but the line breaks; a gap whitespace run that reaches a
    /// non-gap character (the run's end) starts a piece (the trailing stage),
    /// each digit is a piece.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn starts(
        &self,
        pm: &Masks,
        pm_gw: u64,
        m: &Masks,
        nm: &Masks,
        b: &[u8],
        (base, q): (usize, usize),
        memo: &mut (usize, bool),
    ) -> (u64, u64) {
        let later = |x: u64, before: u64| x << 1 | before >> 63;
        let earlier = |x: u64, after: u64| x >> 1 | after << 63;
        let (la, lb, lw) = (later(m.a, pm.a), later(m.b, pm.b), later(m.w, pm.w));
        let pre_a = m.w & earlier(m.a, nm.a);
        let pre_b = m.w & earlier(m.b, nm.b);
        let mut s = (m.a & !la & !lw) | pre_a | (!m.a & la);
        s |= (m.b & !lb & !lw) | pre_b | (!m.b & lb);
        s |= m.lf | later(m.lf, pm.lf);
        if self.digits {
            s |= m.d | later(m.d, pm.d);
        }
        let gap = !(m.a | m.b | m.lf | pre_a | pre_b);
        let gw = m.w & gap;
        if self.trailing {
            // whether the next block's first character is in a gap
            let ab = nm.a | nm.b;
            let next_gap = (ab | nm.lf | (nm.w & ab >> 1)) & 1 == 0;
            let mut ends = gw & !earlier(gap, u64::from(next_gap));
            if gw >> 63 == 1 && next_gap && nm.w & 1 == 1 {
                let i = base + 64;
                if memo.0 <= i {
                    *memo = self.trails(b, i, q);
                }
                if memo.1 {
                    ends |= 1 << 63;
                }
            }
            s |= mark_follows(gw, ends) & !later(gw, pm_gw);
        }
        (s, gw)
    }

    /// Where the whitespace from `i` ends in `b[..q]`, and whether the gap
    /// whitespace from `i` reaches a non-gap character there: the end, a line
    /// break, or the prefix of a run (the last `W` before a run's first
    /// character).
    fn trails(&self, b: &[u8], mut i: usize, q: usize) -> (usize, bool) {
        let cls = |i: usize| self.class[(b[i] & 0x7F) as usize];
        while i < q && cls(i) == W {
            i += 1;
        }
        (
            i,
            i >= q || cls(i) & (A | B) != 0 || matches!(b[i], b'\r' | b'\n'),
        )
    }

    /// The pieces of the all-ASCII line `b` (no `\r`, no `\n`), which starts
    /// at `base` in the text, byte by byte: the tests' oracle of
    /// [`Self::region`].
    #[cfg(test)]
    pub(super) fn line<F: SpanSink>(&self, b: &[u8], base: usize, f: &mut F) {
        let cls = |i: usize| b.get(i).map_or(0, |&c| self.class[(c & 0x7F) as usize]);
        let (mut i, mut gap) = (0, 0);
        while i < b.len() {
            let (c, next) = (cls(i), cls(i + 1));
            let set = if c & A != 0 || (c & W != 0 && next & A != 0) {
                A
            } else if c & B != 0 || (c & W != 0 && next & B != 0) {
                B
            } else {
                i += 1;
                continue;
            };
            if gap < i {
                self.gap(b, gap, i, base, f);
            }
            let mut e = i + 1;
            while cls(e) & set != 0 {
                e += 1;
            }
            f.span(base + i, base + e);
            (i, gap) = (e, e);
        }
        if gap < b.len() {
            self.gap(b, gap, b.len(), base, f);
        }
    }

    /// A gap of both runs, `b[g..h]`: cut before its final run of `W` (with
    /// a trailing stage) and around each digit.
    #[cfg(test)]
    fn gap<F: SpanSink>(&self, b: &[u8], g: usize, h: usize, base: usize, f: &mut F) {
        let cls = |i: usize| self.class[(b[i] & 0x7F) as usize];
        let mut t = h;
        if self.trailing {
            while t > g && cls(t - 1) == W {
                t -= 1;
            }
        }
        let mut s = g;
        if self.digits {
            for j in g..t {
                if cls(j) == D {
                    if s < j {
                        f.span(base + s, base + j);
                    }
                    f.span(base + j, base + j + 1);
                    s = j + 1;
                }
            }
        }
        if s < t {
            f.span(base + s, base + t);
        }
        if t < h {
            f.span(base + t, base + h);
        }
    }
}
