//! The chain on an all-ASCII line, in one flat pass: [`Flat`].
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
//! [`Flat::new`] checks those conditions on the chain's steps, per ASCII
//! byte; the nested stages run every other line. Complexity: each byte is
//! read at most three times (its class, the following byte's, the gap's two
//! passes).

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
        }
        Some(Flat {
            class,
            trailing: trailing.is_some(),
            digits: d != 0,
        })
    }

    /// The pieces of the all-ASCII line `b` (no `\r`, no `\n`), which starts
    /// at `base` in the text.
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
