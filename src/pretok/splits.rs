//! A chain of `Split` stages (each with the `Isolated` behaviour) and
//! `Digits`, as DeepSeek LLM and DeepSeek Coder write their pre-tokenizers,
//! run by one scanner: [`SplitChain`].
//!
//! Each stage re-splits every piece of the stage before, the piece being its
//! own text (no match crosses its edges, `$` is its end), and keeps every match
//! and every gap. A chain takes this path when every stage is one of these
//! shapes, recognised from the pattern's syntax tree (`regex-syntax`, the
//! parser behind `fancy-regex`), whatever the classes:
//!
//! * `[S]`: every character of the class `S` alone (`[\r\n]`);
//! * `P?S+` and `S+`: a run of `S`, with one optional character of `P` before
//!   it (`\s?\p{L}+`, `[一-龥ࠀ-一가-퟿]+`);
//! * `W+$`, with or without `(?m)`: the whitespace run that ends the piece
//!   (with `(?m)`, also one that ends before a `\n`);
//! * `Digits`: numeric characters (`char::is_numeric`, as `tokenizers`) one
//!   by one (`[S]`), or as runs (`S+`).
//!
//! The classes of a chain (at most eight) share one table of flags
//! ([`Tables`], two levels, built from the classes' ranges when the chain
//! is built).
//!
//! How it runs: the stages nest. A stage splits a piece into sub-pieces and
//! hands each to the next stage; the last hands them to the sink. A piece
//! carries a summary of its characters' flags ([`Sum`]: the first, the last,
//! the union, and the intersection of all but the first), from which a stage
//! often sees that it leaves the piece whole (a word has no `[\r\n]`, no
//! digit, no trailing whitespace): then the piece goes on without being read.
//!
//! A chain whose stages, restricted to ASCII, are DeepSeek's (`[\r\n]`, two
//! runs with a whitespace prefix, maybe trailing whitespace, digits one by
//! one) splits each stretch of all-ASCII lines in one flat pass instead,
//! 64 bytes at a time ([`ascii`]); each stretch of lines with a byte >= 0x80
//! is classed into masks of the chain's classes over its bytes, 64 at a
//! time, and each stage adds its piece starts to a mask by bit algebra
//! ([`fused`]: the stages' semantics one by one, whatever the classes). Such chains must
//! begin with exactly `[\r\n]`; the others run the nested stages.
//!
//! Complexity: a stage reads each character of a piece it splits at most
//! three times (its own scan with one character of look-ahead, then the
//! summaries of the sub-pieces); the number of stages is fixed by the file.
//! So the chain is linear in the text, hostile or not.

use super::classes::Classifier;
use super::unicode::Tables;
use crate::SpanSink;
use ascii::Flat;
use masks::Way;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use std::sync::OnceLock;

/// One stage of a chain, as the pipeline hands it over.
#[derive(Debug, Clone, Copy)]
pub enum ChainStage<'a> {
    /// A `Split` regex (behaviour `Isolated`, not inverted).
    Split(&'a str),
    /// `Digits`: one by one (`individual_digits`) or in runs.
    Digits { individual: bool },
}

/// The longest piece whose summary is read before the next stage.
const SUMMARY_MAX: usize = 48;

/// A stage as the scanner runs it; the `u8`s are flags of the chain's table.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// `[S]`: each character of `S` is a piece; `bytes`: the ASCII bytes of
    /// `S` when it has one to three, all ASCII (found with `memchr`).
    One {
        set: u8,
        bytes: Option<[u8; 3]>,
        n: u8,
    },
    /// `P?S+` (`prefix` 0: `S+`).
    Run { prefix: u8, set: u8 },
    /// `W+$`; `multiline`: `$` also before a `\n`.
    Trailing { set: u8, multiline: bool },
}

/// A stage's shape, with its classes as code-point ranges.
enum Shape {
    One(Ranges),
    Run(Option<Ranges>, Ranges),
    Trailing(Ranges, bool),
}

type Ranges = Vec<(u32, u32)>;

/// The flags of a piece's characters.
#[derive(Debug, Clone, Copy)]
struct Sum {
    first: u8,
    last: u8,
    /// The union over every character.
    any: u8,
    /// The intersection over every character but the first (all ones for a
    /// piece of one character).
    rest: u8,
    single: bool,
}

/// A recognised chain (see the module documentation).
#[derive(Debug)]
pub struct SplitChain {
    steps: Vec<Step>,
    tables: Tables,
    label: String,
    /// The flat pass for all-ASCII lines, when the chain has one, with
    /// what the pass over the other lines knows of the classes ([`fused`]).
    flat: Option<(Flat, fused::Classes)>,
}

fn class_of(h: &Hir) -> Option<Ranges> {
    match h.kind() {
        HirKind::Class(Class::Unicode(c)) => Some(
            c.ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        ),
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            chars.next().is_none().then(|| vec![(c as u32, c as u32)])
        }
        HirKind::Capture(c) => class_of(&c.sub),
        _ => None,
    }
}

/// The class of `h` when it is `C{min,max}` with a class `C`, greedy.
fn repeated(h: &Hir, min: u32, max: Option<u32>) -> Option<Ranges> {
    match h.kind() {
        HirKind::Repetition(r) if r.greedy && r.min == min && r.max == max => class_of(&r.sub),
        HirKind::Capture(c) => repeated(&c.sub, min, max),
        _ => None,
    }
}

fn shape(h: &Hir) -> Option<Shape> {
    if let Some(c) = class_of(h) {
        return Some(Shape::One(c));
    }
    if let Some(c) = repeated(h, 1, None) {
        return Some(Shape::Run(None, c));
    }
    match h.kind() {
        HirKind::Capture(c) => shape(&c.sub),
        HirKind::Concat(parts) => match parts.as_slice() {
            [a, b] => {
                if let (Some(p), Some(s)) = (repeated(a, 0, Some(1)), repeated(b, 1, None)) {
                    return Some(Shape::Run(Some(p), s));
                }
                let w = repeated(a, 1, None)?;
                match b.kind() {
                    HirKind::Look(Look::End) => Some(Shape::Trailing(w, false)),
                    HirKind::Look(Look::EndLF) => Some(Shape::Trailing(w, true)),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// The numeric characters, as `tokenizers`' `Digits` reads them
/// (`char::is_numeric`), computed once per process.
fn numeric_ranges() -> Ranges {
    static NUMERIC: OnceLock<Ranges> = OnceLock::new();
    NUMERIC
        .get_or_init(|| {
            let mut out: Ranges = Vec::new();
            for ch in (0..0x110000u32).filter_map(char::from_u32) {
                if !ch.is_numeric() {
                    continue;
                }
                let cp = ch as u32;
                match out.last_mut() {
                    Some(last) if last.1 + 1 == cp => last.1 = cp,
                    _ => out.push((cp, cp)),
                }
            }
            out
        })
        .clone()
}

/// Flags for the distinct classes of a chain, at most eight.
#[derive(Default)]
struct Classes(Vec<Ranges>);

impl Classes {
    fn flag(&mut self, r: Ranges) -> Option<u8> {
        let k = match self.0.iter().position(|x| *x == r) {
            Some(k) => k,
            None => {
                self.0.push(r);
                self.0.len() - 1
            }
        };
        (k < 8).then(|| 1u8 << k)
    }
}

fn ascii_bytes(r: &Ranges) -> Option<([u8; 3], u8)> {
    let mut out = [0u8; 3];
    let mut n = 0usize;
    for &(lo, hi) in r {
        for cp in lo..=hi {
            if cp >= 0x80 || n == 3 {
                return None;
            }
            out[n] = cp as u8;
            n += 1;
        }
    }
    Some((out, n as u8))
}

impl SplitChain {
    /// The chain's scanner, or `None` when a stage has another shape, a
    /// pattern does not parse, the chain has fewer than two stages or more than
    /// eight distinct classes.
    pub fn new(stages: &[ChainStage]) -> Option<SplitChain> {
        if stages.len() < 2 {
            return None;
        }
        let mut classes = Classes::default();
        let mut steps = Vec::with_capacity(stages.len());
        let (mut splits, mut digits) = (0, 0);
        // whether the first stage is exactly `[\r\n]`: the flat pass and
        // the fused one split the text into lines first
        let mut by_lines = false;
        for st in stages {
            let sh = match *st {
                ChainStage::Split(p) => {
                    splits += 1;
                    shape(&regex_syntax::Parser::new().parse(p).ok()?)?
                }
                ChainStage::Digits { individual } => {
                    digits += 1;
                    let n = numeric_ranges();
                    if individual {
                        Shape::One(n)
                    } else {
                        Shape::Run(None, n)
                    }
                }
            };
            if steps.is_empty() {
                by_lines = matches!(&sh, Shape::One(r) if *r == [(10, 10), (13, 13)]);
            }
            steps.push(match sh {
                Shape::One(r) => {
                    let bytes = ascii_bytes(&r);
                    Step::One {
                        set: classes.flag(r)?,
                        bytes: bytes.map(|b| b.0),
                        n: bytes.map_or(0, |b| b.1),
                    }
                }
                Shape::Run(p, s) => Step::Run {
                    prefix: match p {
                        Some(p) => classes.flag(p)?,
                        None => 0,
                    },
                    set: classes.flag(s)?,
                },
                Shape::Trailing(w, multiline) => Step::Trailing {
                    set: classes.flag(w)?,
                    multiline,
                },
            });
        }
        let table: Vec<(Ranges, u8)> = classes
            .0
            .into_iter()
            .enumerate()
            .map(|(k, r)| (r, 1u8 << k))
            .collect();
        let mut label = format!("Split x{splits}");
        if digits > 0 {
            label.push_str(&format!(" + Digits x{digits}"));
        }
        let tables = Tables::from_ranges(&table);
        let flat = by_lines.then(|| Flat::new(&steps, &tables)).flatten();
        let flat = flat.map(|flat| (flat, fused::Classes::new(&tables)));
        Some(SplitChain {
            flat,
            steps,
            tables,
            label,
        })
    }

    /// The stages the chain runs, e.g. `Split x5 + Digits x1`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Calls `f(start, end)` for every piece of `text`, left to right: the
    /// pieces of the stages run one after another.
    pub fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) {
        match &self.flat {
            Some((flat, fused)) => self.lines((flat, fused), text.as_bytes(), &mut f),
            None if !text.is_empty() => self.walk(0, text.as_bytes(), 0, text.len(), None, &mut f),
            None => {}
        }
    }

    /// The chain with a flat pass: each stretch of all-ASCII lines goes to
    /// [`Flat::region`], each stretch of lines with a byte >= 0x80 to
    /// [`fused::line`] (the first stage's pieces are the lines and the line
    /// breaks).
    fn lines<F: SpanSink>(&self, (flat, classes): (&Flat, &fused::Classes), b: &[u8], f: &mut F) {
        let way = Way::detect();
        let mut scratch = fused::Scratch::new(way, Classifier::detect());
        let mut p = 0;
        while p < b.len() {
            let Some(q) = first_high(b, p) else {
                return flat.region(b, p, b.len(), way, f);
            };
            let ls = memchr::memrchr2(b'\r', b'\n', &b[p..q]).map_or(p, |i| p + i + 1);
            if b[p..ls].iter().all(|&c| c == b'\r' || c == b'\n') {
                // line breaks alone between lines outside ASCII: a piece each
                (p..ls).for_each(|i| f.span(i, i + 1));
            } else {
                flat.region(b, p, ls, way, f);
            }
            let le = non_ascii_lines(b, ls, q);
            fused::line(
                &self.steps,
                (&self.tables, classes),
                b,
                (ls, le),
                &mut scratch,
                f,
            );
            p = le;
        }
    }

    fn walk<F: SpanSink>(
        &self,
        k: usize,
        b: &[u8],
        s: usize,
        e: usize,
        sum: Option<Sum>,
        f: &mut F,
    ) {
        let Some(step) = self.steps.get(k) else {
            f.span(s, e);
            return;
        };
        let piece = &b[s..e];
        if sum.is_some_and(|m| keeps_whole(step, m, piece)) {
            return self.walk(k + 1, b, s, e, sum, f);
        }
        let last = k + 1 == self.steps.len();
        let t = &self.tables;
        let mut sub = |a: usize, z: usize, read: Option<Sum>| {
            // a long piece (a line) is seldom left whole by the next stage:
            // it is split without the extra read of a summary
            let m = match read {
                _ if last => None,
                Some(m) => Some(m),
                None => (z - a <= SUMMARY_MAX).then(|| summary(t, &piece[a..z])),
            };
            self.walk(k + 1, b, s + a, s + z, m, f);
        };
        match *step {
            Step::One { set, bytes, n } => one(t, piece, set, bytes.filter(|_| n > 0), n, &mut sub),
            Step::Run { prefix, set } => run(t, piece, prefix, set, &mut sub),
            Step::Trailing { set, multiline } => trailing(t, piece, set, multiline, &mut sub),
        }
    }
}

/// Lines together in one fused pass, when each holds a byte >= 0x80 (a
/// pass per line costs a few buffer resets, which short lines feel), up to
/// about this many bytes.
const FUSED_LINES: usize = 16 << 10;

/// The end of the stretch of lines from `ls` that [`fused::line`] takes in
/// one pass: the line of `q` (a byte >= 0x80 in it), and the lines after it,
/// with the line breaks between, while each holds a byte >= 0x80 and the
/// stretch stays under [`FUSED_LINES`] bytes (a longer line ends it).
fn non_ascii_lines(b: &[u8], ls: usize, q: usize) -> usize {
    let line_end = |a: usize| memchr::memchr2(b'\r', b'\n', &b[a..]).map_or(b.len(), |i| a + i);
    let mut le = line_end(q);
    while le - ls < FUSED_LINES {
        let breaks = b[le..].iter().take_while(|&&c| c == b'\r' || c == b'\n');
        let a = le + breaks.count();
        if a == b.len() {
            break;
        }
        let e = line_end(a);
        if b[a..e].is_ascii() || e - ls > FUSED_LINES {
            break;
        }
        le = e;
    }
    le
}

/// The first byte >= 0x80 at or after `p`.
fn first_high(b: &[u8], p: usize) -> Option<usize> {
    let rest = &b[p..];
    let ascii = rest.chunks_exact(32).take_while(|c| c.is_ascii()).count() * 32;
    rest[ascii..]
        .iter()
        .position(|&c| c >= 0x80)
        .map(|k| p + ascii + k)
}

/// Whether `step` gives `piece` back whole, read from its summary alone.
fn keeps_whole(step: &Step, m: Sum, piece: &[u8]) -> bool {
    if m.single {
        return true; // one character is one match or one gap
    }
    match *step {
        Step::One { set, .. } => m.any & set == 0,
        Step::Run { prefix, set } => {
            m.any & set == 0 || (m.first & (prefix | set) != 0 && m.rest & set != 0)
        }
        Step::Trailing { set, multiline } => {
            let all = m.first & m.rest & set != 0;
            let none = m.last & set == 0 && !(multiline && memchr::memchr(b'\n', piece).is_some());
            all || none
        }
    }
}

/// Flags and byte length of the character at `i`; `(0, 0)` at the end.
#[inline(always)]
fn at(t: &Tables, b: &[u8], i: usize) -> (u8, usize) {
    match b.get(i) {
        None => (0, 0),
        Some(&c) if c < 0x80 => (t.ascii[c as usize], 1),
        Some(_) => t.decode_at(b, i),
    }
}

fn summary(t: &Tables, b: &[u8]) -> Sum {
    let (first, l0) = at(t, b, 0);
    let (mut any, mut rest, mut last) = (first, 0xFF, first);
    let mut i = l0;
    while i < b.len() {
        let (fl, len) = at(t, b, i);
        any |= fl;
        rest &= fl;
        last = fl;
        i += len;
    }
    Sum {
        first,
        last,
        any,
        rest,
        single: l0 >= b.len(),
    }
}

/// End of the run of characters with a flag of `set` from `i`, with the
/// intersection, the union and the last of the run's flags (all ones, 0, 0
/// for an empty run): the summary of a match, read as it is scanned.
#[inline(always)]
fn run_end(t: &Tables, b: &[u8], mut i: usize, set: u8) -> (usize, u8, u8, u8) {
    let (mut all, mut any, mut last) = (0xFF, 0, 0);
    loop {
        while let Some(&c) = b.get(i) {
            let fl = if c < 0x80 { t.ascii[c as usize] } else { 0 };
            if fl & set == 0 {
                break;
            }
            (all, any, last) = (all & fl, any | fl, fl);
            i += 1;
        }
        if b.get(i).is_none_or(|&c| c < 0x80) {
            return (i, all, any, last);
        }
        let (fl, len) = t.decode_at(b, i);
        if fl & set == 0 {
            return (i, all, any, last);
        }
        (all, any, last) = (all & fl, any | fl, fl);
        i += len;
    }
}

/// Emits the gap before a match, then the match; returns the match's end.
#[inline(always)]
fn matched(
    gap: usize,
    s: usize,
    e: usize,
    sum: Option<Sum>,
    sub: &mut impl FnMut(usize, usize, Option<Sum>),
) -> usize {
    if gap < s {
        sub(gap, s, None);
    }
    sub(s, e, sum);
    e
}

/// `[S]`: every character of `S` alone, the text between as gaps.
fn one(
    t: &Tables,
    b: &[u8],
    set: u8,
    bytes: Option<[u8; 3]>,
    n: u8,
    sub: &mut impl FnMut(usize, usize, Option<Sum>),
) {
    let mut gap = 0;
    if let Some(x) = bytes {
        // an ASCII byte of valid UTF-8 is always a whole character
        let mut hit = |i: usize| gap = matched(gap, i, i + 1, None, sub);
        match n {
            1 => memchr::memchr_iter(x[0], b).for_each(&mut hit),
            2 => memchr::memchr2_iter(x[0], x[1], b).for_each(&mut hit),
            _ => memchr::memchr3_iter(x[0], x[1], x[2], b).for_each(&mut hit),
        }
    } else {
        let mut i = 0;
        while i < b.len() {
            let (fl, len) = at(t, b, i);
            if fl & set != 0 {
                gap = matched(gap, i, i + len, None, sub);
            }
            i += len;
        }
    }
    if gap < b.len() {
        sub(gap, b.len(), None);
    }
}

/// `P?S+` (`prefix` 0: `S+`), leftmost-first: a match starts at the first
/// character of `S`, or of `P` followed by one of `S`; it ends where the run
/// of `S` does (with `P` and `S` overlapping, both readings end there).
/// The gap's summary is read as it is scanned too.
fn run(t: &Tables, b: &[u8], prefix: u8, set: u8, sub: &mut impl FnMut(usize, usize, Option<Sum>)) {
    let (mut i, mut gap) = (0, 0);
    // the summary of b[gap..i] (when not empty)
    let mut g = Sum {
        first: 0,
        last: 0,
        any: 0,
        rest: 0xFF,
        single: true,
    };
    while i < b.len() {
        let (f0, l0) = at(t, b, i);
        if f0 & set != 0 || (f0 & prefix != 0 && at(t, b, i + l0).0 & set != 0) {
            let (e, rest, any, last) = run_end(t, b, i + l0, set);
            let sum = Sum {
                first: f0,
                last: if e == i + l0 { f0 } else { last },
                any: f0 | any,
                rest,
                single: e == i + l0,
            };
            if gap < i {
                sub(gap, i, Some(g));
            }
            sub(i, e, Some(sum));
            (gap, i) = (e, e);
        } else {
            if i == gap {
                (g.first, g.any, g.rest, g.single) = (f0, f0, 0xFF, true);
            } else {
                (g.any, g.rest, g.single) = (g.any | f0, g.rest & f0, false);
            }
            g.last = f0;
            i += l0;
        }
    }
    if gap < b.len() {
        sub(gap, b.len(), Some(g));
    }
}

/// `W+$`: a run of `W` matches, from its start, when it reaches the end of
/// the piece; with `multiline`, also up to the last `\n` after its start
/// inside it, or up to a `\n` right after it (`$` before a line feed).
fn trailing(
    t: &Tables,
    b: &[u8],
    set: u8,
    multiline: bool,
    sub: &mut impl FnMut(usize, usize, Option<Sum>),
) {
    let (mut i, mut gap) = (0, 0);
    while i < b.len() {
        let (fl, len) = at(t, b, i);
        if fl & set == 0 {
            i += len;
            continue;
        }
        let s = i;
        let mut lf = None;
        while i < b.len() {
            let (fl, len) = at(t, b, i);
            if fl & set == 0 {
                break;
            }
            if b[i] == b'\n' && i > s {
                lf = Some(i);
            }
            i += len;
        }
        let end = if i == b.len() || (multiline && b[i] == b'\n') {
            Some(i)
        } else if multiline {
            lf
        } else {
            None
        };
        if let Some(p) = end {
            gap = matched(gap, s, p, None, sub);
        }
    }
    if gap < b.len() {
        sub(gap, b.len(), None);
    }
}

mod ascii;
mod fused;
mod masks;
#[cfg(test)]
mod tests;
