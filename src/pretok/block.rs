//! Block pre-tokenizer for the scanner families: piece starts of ASCII text decided
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
//! The open models' families share these rules in ASCII text: Llama 3 and
//! Qwen2/Qwen3.5 are cl100k's (their whitespace differs only at the end of the
//! text, which blocks never reach; Qwen3.5's marks are never ASCII), tekken is
//! o200k's (its missing contractions only make the hard apostrophes
//! unnecessary). Qwen2, Qwen3.5 and tekken take numbers one at a time: every
//! digit starts a piece, and no digit is hard.
//!
//! DeepSeek's chain (module `deepseek`) gives cl100k's pieces in ASCII text,
//! with three differences. Its numbers are regions of their own, cut before the
//! main pattern runs, so a whitespace run before a digit ends the text that
//! pattern sees: `\s+(?!\S)` takes the run after its last line break whole,
//! with no start at `j-1`. It has no contractions (`'s` is punctuation and
//! letters, as `.com` is), so no apostrophe is hard. ASCII controls are
//! neither `\p{P}` nor `\p{S}` there but a letter prefix and text no
//! alternative matches: they count as bytes >= 0x80 (their blocks go to the
//! scalar scanner). Its first alternative, `[ASCII punctuation][A-Za-z]+`,
//! stops at a non-ASCII letter, which is hard anyway.
//!
//! gpt2 is simpler ([`derive_gpt2`]): runs of letters, digits and punctuation,
//! each joined by a space just before it, and whitespace runs cut before their
//! last character; a letter after an apostrophe is hard (contractions).
//!
//! Blocks with bytes >= 0x80 ("wide" blocks, in every family) class
//! characters of several bytes too ([`super::wide`]): a letter's bytes all
//! join `l`, another character outside `\s` and `\p{N}` joins `p`, and only
//! numbers, whitespace (and the marks of Qwen3.5 and the o200k family) of
//! several bytes stay in `na`. The rules above then hold with
//! "position" read as "character", for three reasons. A continuation byte
//! is never a start: the byte before it has its class, and every start
//! needs a change of class. The class of the character before a position is
//! that of the byte before it. And the one rule that looks two characters back
//! (a letter after one punctuation character, which joins the letter unless
//! punctuation or a space comes before it) reads two bytes back, so a letter
//! right after punctuation of several bytes is hard. A character left in
//! `na` makes the next position hard, and the scalar scanner's piece through it
//! settles the one after.
//!
//! o200k's family adds one rule for wide blocks. Outside ASCII its classes
//! overlap: `\p{Lo}` and `\p{Lm}` (Hangul, CJK, kana) are in both the
//! upper- and the lower-case class. Within a run of letters a word then ends
//! only before an upper-case-only letter (`\p{Lu}`, `\p{Lt}`, which join
//! `up`): always after a lower-case-only one (`[UP]*` cannot take it, so the
//! word is in its `[LO]+`), and after a letter of both classes only
//! sometimes: `한AB` then a space is `한` and `AB` (the first alternative
//! backtracks to its last letter of both classes), `한Ab` one word. So a
//! capital after a letter of both classes (`both`) is hard.
//!
//! DeepSeek's chain on wide blocks has its own classes: letters and marks
//! join `l`, and `[\p{P}\p{S}]` joins `p`, except in its CJK region: the
//! region's letters join `both` as well, its punctuation stays in `na`.
//! Three rules differ from cl100k's. No punctuation prefixes a letter but
//! through `[ASCII punctuation][A-Za-z]+`, so a letter is a start after
//! punctuation whenever one of the two is wide. That alternative stops at a
//! wide letter, which therefore is hard right after an ASCII letter (`.a한` is
//! `.a` and `한`, ` a한` one piece). And the CJK region is cut out before the
//! main pattern runs, as the numbers are: every edge of `both` is a start,
//! and a whitespace run before the region is one piece.
//!
//! `tests` check all of this against the scalar scanner (and `tests/pretokenize`
//! against the regex), on the real corpora, random text over an alphabet of the
//! edge cases, and the hostile inputs.
//!
//! The classifier (the masks of one block) is [`super::classes`].

use super::classes::{block_at, Classes, Classifier};
use super::patterns::{next_char_boundary, Named};
use super::scan::Scan;
use super::wide::classify_beyond_ascii;
use crate::SpanSink;

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
pub(super) fn fill(m: u64, seeds: u64) -> u64 {
    (m.wrapping_add(seeds) ^ m) & m
}

/// Positions in `runs` with a bit of `marks` (a subset of `runs`) at or after
/// them in the same run.
#[inline(always)]
pub(super) fn mark_follows(runs: u64, marks: u64) -> u64 {
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
    let Carry {
        eaten,
        eaten_x,
        wq,
        al,
        hz,
        ..
    } = carry_of(named, prev, x);
    // The character before the previous one is punctuation or a space, when
    // the previous one is a byte long (a letter after punctuation of several
    // bytes is hard, below). Where it is in `na`, the previous one is hard,
    // and the scalar scanner's piece through it settles this position.
    let bps = later(x.p | x.sp, pc.p | pc.sp, 2);
    let pwq = p1(wq, prev.wq);
    let next_w = (next.sp | next.t | next.c | next.na) & 1;
    let nw = (w | x.na) >> 1 | next_w << 63;
    let nna = x.na >> 1 | (next.na & 1) << 63;

    let mut starts = x.l & (pd | pcr | pp & bps);
    if named.cased_words() {
        // o200k's words are `[A-Z]*[a-z]*` in ASCII: a new one at a capital after
        // a small letter
        starts |= x.up & p1(x.l & !x.up, pc.l & !pc.up);
    }
    let groups = named.groups_digits();
    starts |= if groups { x.d & !pd } else { x.d };
    starts |= x.p & (pl | pd | pt | pcr);
    starts |= wq & !pwq;
    // The last space of a run before non-space, unless a number follows where
    // numbers are split first: the run ends the text the main pattern sees,
    // and `\s+(?!\S)` takes it whole.
    let mut end_ws = q & pwq & !pcr & !nw;
    if named.numbers_split_first() {
        // (and likewise before a letter of DeepSeek's CJK region, in `both`)
        let region = x.d | x.both;
        end_ws &= !(region >> 1 | (next.d | next.both) << 63);
    }
    starts |= end_ws;

    let mut hard = x.na | pna | nna;
    if named.is_chain() {
        // DeepSeek: no punctuation prefixes a letter outside ASCII's
        // `[punct][A-Za-z]+`, and that alternative stops at a wide letter,
        // which an ASCII letter before it leaves hard; a piece never crosses
        // the edge of the CJK region (`both`)
        let wp = p1(x.p & x.wide, pc.p & pc.wide);
        starts |= x.l & (x.wide & pp | wp);
        starts |= x.both ^ p1(x.both, pc.both);
        hard |= x.l & x.wide & !x.both & pl & !p1(x.wide, pc.wide);
    } else {
        hard |= x.l & p1(x.p & x.wide, pc.p & pc.wide);
        if named.cased_words() {
            // a capital after a letter in both case classes (`\p{Lo}`,
            // `\p{Lm}`): it depends on the word so far (after `\p{Ll}` it is
            // a start, above)
            hard |= x.up & p1(x.both, pc.both);
        }
    }
    let dx = x.d | x.na;
    if groups {
        hard |= x.d & pd & later(dx, pc.d | pc.na, 2) & later(dx, pc.d | pc.na, 3);
    }
    let unsure = eaten ^ eaten_x;
    hard |= unsure | p1(unsure, prev.eaten ^ prev.eaten_x);
    // After `'` and a letter: the piece at the apostrophe may be a contraction
    // ending here (`'s`) or one further (`'ll`), which the hard position, being
    // inside or at the end of that piece, hands to the scalar scanner.
    if named.cased_words() {
        // A contraction after a letter (`don't`) belongs to the word: the
        // apostrophe is hard, the scalar scanner settles the word's end (also
        // for tekken, which has no contractions: a hard position is only ever
        // handed to the scalar scanner).
        hard |= x.ap & pl;
        hard |= hz | later(hz, prev.hz, 1) | later(hz, prev.hz, 2);
    } else if !named.numbers_split_first() {
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
    let hz = if named.cased_words() {
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

/// The classes of the block at `at` for the walk of [`spans`], as `named`
/// sees them: the characters of several bytes classed too, each of its
/// bytes in its character's class. For DeepSeek's chain the
/// ASCII controls (outside `[\p{P}\p{S}]`, a letter prefix there) are left
/// hard, with the bytes the classes do not decide.
#[inline(always)]
fn classify_chars(named: Named, s: &Scan, at: usize, how: Classifier) -> Classes {
    let mut x = how.classify(&block_at(s.b, at));
    if x.na != 0 {
        classify_beyond_ascii(&mut x, how, s.b, at, s.t, named);
    }
    if named.numbers_split_first() {
        x.na |= x.ctl;
        x.p &= !x.ctl;
    }
    x
}

/// Above this many bytes left in `na`, a block goes to the scalar scanner
/// (each hard position costs a scalar piece and more).
const MAX_UNCLASSED: u32 = 12;

/// The carry of the 64 bytes before `at` (`at >= 64`) when the blocks before
/// them were not classified: exact, except that line breaks filling the whole
/// block may be eaten by punctuation before it, which is marked unsure (hard
/// positions follow).
#[inline(always)]
fn resume_carry(named: Named, s: &Scan, at: usize, how: Classifier) -> Carry {
    let x = classify_chars(named, s, at - 64, how);
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
/// Blocks follow each other at 0, 64, 128, ...; characters of several bytes
/// are classed too ([`classify_beyond_ascii`]), and only a block with many
/// bytes left unclassed ([`MAX_UNCLASSED`]) goes to the scalar scanner, for
/// at least 64 bytes, after which blocks resume at the next piece start.
/// Leaving every block with a byte >= 0x80 to the scalar scanner would run
/// European text, with an accented letter in most blocks, at a third of
/// English's speed.
///
/// The walk is compiled once per classifier inside a function with that
/// instruction set enabled ([`spans_avx2`], [`spans_avx512`]), so the
/// classification, the bit algebra (BMI1/BMI2: `tzcnt`, `blsr`) and the
/// sink's steps are inlined into one loop instead of a call per block.
#[inline(always)]
#[allow(unsafe_code)] // the calls into the feature-enabled walks, see the SAFETY comments
pub(crate) fn spans<F: SpanSink>(named: Named, s: &Scan, text: &str, how: Classifier, f: &mut F) {
    debug_assert!(named.has_block_path());
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
    // while the blocks stay unclassed (each switch costs a call and a
    // mispredicted branch or two), back to one block after a classed block.
    const MAX_WINDOW: usize = 2048;
    let mut window = 64usize;
    loop {
        // Blocks, while the block at `base` is whole, ASCII, and a byte follows it.
        while base + 64 < n {
            let (prev, x) = match state {
                Some(v) => v,
                None if base == 0 => (Carry::default(), classify_chars(named, s, 0, how)),
                None if base >= 64 => (
                    resume_carry(named, s, base, how),
                    classify_chars(named, s, base, how),
                ),
                None => break,
            };
            if x.na.count_ones() > MAX_UNCLASSED {
                break;
            }
            let next = classify_chars(named, s, base + 64, how);
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
        // The scalar scanner: blocks it must take, or the end.
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
            next_char_boundary(text, cur)
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
    s.end(named, i)
}

/// The scalar scanner's piece end at `cur`, out of line: the block loop stays small.
#[inline(never)]
fn hard_piece(named: Named, s: &Scan, text: &str, cur: usize) -> usize {
    let e = scalar_end(named, s, cur);
    if e > cur {
        e.min(s.b.len())
    } else {
        next_char_boundary(text, cur)
    }
}

pub(crate) mod cut;
#[cfg(test)]
mod tests;
