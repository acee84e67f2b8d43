//! Token budgets over whole texts: counting with a limit, and the longest
//! prefix or suffix within a budget (the spans of tokens are
//! [`super::offsets`]).
//!
//! # Restart points: why truncation is exact
//!
//! Write `f(k)` for the number of tokens of `text[..k]` (same special-token
//! policy as `encode`). A *restart point* is a char boundary `q` such that for
//! every `k > q`
//!
//! ```text
//! encode(text[..k]) = encode(text[..q]) ++ encode(text[q..k])
//! ```
//!
//! (and, for suffixes, `encode(text[k..]) = encode(text[k..q]) ++
//! encode(text[q..])` for every `k < q`). At restart points `q1 < q2` we get
//! `f(q2) = f(q1) + count(text[q1..q2]) > f(q1)`, and for any `k > q`,
//! `f(k) > f(q)`. So `f` is strictly increasing along restart points, and once
//! `f(q) > max` no prefix longer than `q` can fit: the longest fitting prefix lies in
//! the segment `[q_prev, q)` where `q_prev` is the last restart point that fits.
//! Inside that segment `f` need not be monotone (BPE of a prefix is not a
//! prefix of the BPE: with tokens `bc` and `abc`, `"ab"` is two tokens and
//! `"abc"` one), so the segment is searched exhaustively from its end:
//! `f(k) = f(q_prev) + count(text[q_prev..k])` for each char boundary `k`.
//! "Longest" therefore means the true maximum over all char boundaries, and
//! the tests compare it with an oracle that encodes every prefix.
//!
//! Which positions are restart points (each claim tested in
//! `tests/encode/test_budgets_and_offsets.py` against the definition):
//!
//! * **Word ends** (the three named patterns): the character before `q` is a
//!   letter (`\p{L}`) and the one at `q` is not a letter, a mark, a number or
//!   `'`; or the character before is a number and the one at `q` is not. Every
//!   alternative of the patterns that can match a letter (a number) is a run
//!   of letter-ish (number) characters, optionally preceded by one character
//!   and followed only by a contraction starting with `'`; so the piece holding
//!   `text[q - 1]` ends exactly at `q`, whatever follows `text[q]` and whether
//!   `text[q]` or the end of text comes next. The patterns have no look-behind,
//!   so pieces restart at `q`, and merges never cross a piece boundary.
//! * **Ends of allowed special tokens** (prefixes) and their starts (suffixes),
//!   unless one special token's text contains another's (then the match found
//!   in a cut text can differ, and only word ends are used).
//! * **Inside one long piece**, used to split the final segment further:
//!   with no pre-tokenization (`Whole`), and inside a run of letters for the
//!   gpt2 and cl100k patterns (whose letter pieces are plain `\p{L}` runs), a
//!   position that no vocabulary token straddles in that run
//!   ([`crate::vocab::Cuts`]): every token a merge builds occurs in the text,
//!   so no merge crosses it in any cut of the run either.
//!
//! Cost: counting galloping blocks of growing size between restart points (the
//! part read plus a logarithmic binary search in the last block), then the
//! final segment, searched from its end. Cuts whose *tiling floor* (the fewest
//! tokens able to tile them, [`super::floor`]) is over the budget are skipped,
//! and the floor's table stops where no longer cut can fit, so a run with no
//! restart point costs about the chunk, not the search window. When the
//! segment is one long piece of letters (random letters, a long CJK run), one
//! pass counts every prefix or suffix of it ([`super::prefix_counts`]); any
//! other segment counts each remaining cut, which is quadratic in the segment
//! at worst (and under a custom pattern the whole text is one segment: no
//! restart points are claimed for an arbitrary regex).

use super::{floor, prefix_counts, CoreBpe, SpecialPolicy};
use crate::error::Result;
use crate::pretok::unicode::{self, L, N};
use crate::pretok::{Named, Pretokenizer};

/// A tiling floor: where its table stopped, and the table ([`floor::tiling_floor`]).
type Floor = Option<(usize, Vec<u32>)>;

/// The budget searches' view of the special-token policy.
struct Plan<'a> {
    core: &'a CoreBpe,
    text: &'a str,
    /// The policy without its disallowed set (checked once, up front).
    policy: SpecialPolicy,
    /// Allowed special-token matches `(start, end)`, left to right.
    specials: Vec<(usize, usize)>,
    /// Whether special matches are restart points (see the module notes).
    special_restarts: bool,
}

impl<'a> Plan<'a> {
    fn new(core: &'a CoreBpe, text: &'a str, policy: &SpecialPolicy) -> Result<Self> {
        if policy.any_disallowed {
            core.check_disallowed(text, policy)?;
        }
        let mut policy = policy.clone();
        policy.any_disallowed = false;
        policy.disallowed.iter_mut().for_each(|d| *d = false);
        let specials = core.special_matches(text, &policy);
        let special_restarts = specials.is_empty() || !core.nested_specials();
        Ok(Plan {
            core,
            text,
            policy,
            specials,
            special_restarts,
        })
    }

    /// Tokens of `text[a..b]` under the policy.
    fn count(&self, a: usize, b: usize) -> usize {
        if a >= b {
            return 0;
        }
        // infallible for the named patterns; a custom regex that gives up is
        // counted as if the cut were not there (the caller's final check of
        // the result, an encode, reports the error)
        self.core
            .count(&self.text[a..b], &self.policy)
            .unwrap_or(usize::MAX / 4)
    }

    /// Whether an allowed special match meets the segment `a..b`.
    fn meets_special(&self, a: usize, b: usize) -> bool {
        self.specials.iter().any(|&(s, e)| s < b && e > a)
    }

    /// The counts of every prefix (`prefix`) or suffix of the segment `a..b`
    /// from one pass, when it is one long piece ([`prefix_counts::one_piece`])
    /// that no special match meets.
    fn piece_counts(&self, a: usize, b: usize, prefix: bool) -> Option<Vec<u32>> {
        if self.meets_special(a, b) {
            return None;
        }
        prefix_counts::one_piece(self.core, self.text, (a, b), prefix)
    }

    /// Whether `q` lies strictly inside an allowed special match.
    fn inside_special(&self, q: usize) -> bool {
        let i = self.specials.partition_point(|&(s, _)| s < q);
        i > 0 && self.specials[i - 1].1 > q
    }

    /// Restart points strictly inside `(lo, hi)`, increasing; `prefix` selects
    /// prefix-side (special ends) or suffix-side (special starts) points.
    fn restarts(&self, lo: usize, hi: usize, prefix: bool) -> Vec<usize> {
        let mut out = Vec::new();
        let t = self.text;
        let b = t.as_bytes();
        let hi = hi.min(t.len());
        match self.core.pretok {
            Pretokenizer::Scan(k) if k.named().is_tiktoken() => {
                let tables = unicode::tables();
                let mut prev: Option<u8> = None;
                let start = floor_char(t, lo.min(hi));
                for (i, c) in t[start..ceil_char(t, hi)].char_indices() {
                    if start + i >= hi {
                        break;
                    }
                    let q = start + i;
                    let f = tables.of(c as u32);
                    if q > lo && !self.inside_special(q) {
                        if let Some(p) = prev {
                            if word_end(p, f, c) {
                                out.push(q);
                            }
                        }
                    }
                    prev = Some(f);
                }
            }
            Pretokenizer::Whole if self.specials.is_empty() => {
                let cuts = self.core.vocab.cuts();
                for q in lo + 1..hi {
                    if t.is_char_boundary(q) && cuts.is_boundary(b, q) {
                        out.push(q);
                    }
                }
            }
            _ => {}
        }
        if self.special_restarts {
            for &(s, e) in &self.specials {
                let q = if prefix { e } else { s };
                if q > lo && q < hi {
                    out.push(q);
                }
            }
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// The first restart point `> from`, or the text's length; windows of
    /// growing size keep the scan proportional to the distance.
    fn next_restart(&self, from: usize) -> usize {
        let len = self.text.len();
        let mut w = 4096usize;
        loop {
            let hi = from.saturating_add(w).min(len);
            if let Some(&q) = self.restarts(from, hi, true).first() {
                return q;
            }
            if hi == len {
                return len;
            }
            w = w.saturating_mul(4);
        }
    }

    /// The last (suffix-side) restart point `< before`, or 0.
    fn prev_restart(&self, before: usize) -> usize {
        let mut w = 4096usize;
        loop {
            let lo = before.saturating_sub(w);
            if let Some(&q) = self.restarts(lo, before, false).last() {
                return q;
            }
            if lo == 0 {
                return 0;
            }
            w = w.saturating_mul(4);
        }
    }

    /// The tiling floor of the segment `a..b` ([`floor::tiling_floor`]).
    /// `None` when a special match meets the segment or the segment is short.
    fn tiling_floor(&self, a: usize, b: usize, left: bool, budget: usize) -> Floor {
        if b - a < 64 || self.meets_special(a, b) {
            return None;
        }
        let bytes = self.text.as_bytes();
        Some(floor::tiling_floor(
            &self.core.vocab,
            bytes,
            a,
            b,
            left,
            budget,
        ))
    }

    /// The tiling floor of a far point's segment (one restart point beyond
    /// the block, as in CJK text), taken before that segment is encoded: when
    /// it stops short, the point does not fit, and the search reuses it.
    fn far_floor(
        &self,
        pts: &[usize],
        block: usize,
        a: usize,
        b: usize,
        left: bool,
        budget: usize,
    ) -> Floor {
        if pts.len() == 1 && b - a > block {
            self.tiling_floor(a, b, left, budget)
        } else {
            None
        }
    }

    /// Restart points inside one segment `(lo, hi)` that has none of the
    /// word-end kind: positions no token straddles inside letter runs (gpt2 and
    /// cl100k patterns only, no special match in the segment).
    fn inner_restarts(&self, lo: usize, hi: usize) -> Vec<usize> {
        let mut out = Vec::new();
        if !matches!(
            self.core.pretok.named(),
            Some(Named::Gpt2) | Some(Named::Cl100k)
        ) || self.specials.iter().any(|&(s, e)| s < hi && e > lo)
        {
            return out;
        }
        let t = self.text;
        let b = t.as_bytes();
        let tables = unicode::tables();
        let cuts = self.core.vocab.cuts();
        // maximal letter runs [r0, r1) of the whole text that meet the segment
        let mut i = floor_char(t, lo);
        while i < hi {
            let c = t[i..].chars().next().unwrap_or('\0');
            if tables.of(c as u32) & L == 0 {
                i += c.len_utf8();
                continue;
            }
            let mut r0 = i;
            while let Some(p) = t[..r0].chars().next_back() {
                if tables.of(p as u32) & L == 0 {
                    break;
                }
                r0 -= p.len_utf8();
            }
            let mut r1 = i;
            while let Some(n) = t[r1..].chars().next() {
                if tables.of(n as u32) & L == 0 {
                    break;
                }
                r1 += n.len_utf8();
            }
            // one character before the run may open its piece
            let region0 = t[..r0]
                .chars()
                .next_back()
                .map_or(r0, |p| r0 - p.len_utf8());
            let region = &b[region0..r1];
            for q in (r0 + 1).max(lo + 1)..r1.min(hi) {
                if t.is_char_boundary(q) && cuts.is_boundary(region, q - region0) {
                    out.push(q);
                }
            }
            i = r1.max(i + 1);
        }
        out
    }
}

/// Among increasing restart points `pts` after `a` (with `f(a) = fa` fitting),
/// the index of the first that does not fit (`pts.len()` if all fit), and the
/// last fitting point with its count. Each probe counts from the last fitting
/// point found so far, so the probes' spans halve: O(span) in all.
fn bisect_prefix(
    plan: &Plan<'_>,
    a: usize,
    fa: usize,
    pts: &[usize],
    max: usize,
) -> (usize, usize, usize) {
    let (mut base, mut fbase) = (a, fa);
    let (mut lo, mut hi) = (0usize, pts.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let c = plan.count(base, pts[mid]);
        if fbase + c <= max {
            base = pts[mid];
            fbase += c;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo, base, fbase)
}

/// The mirror of [`bisect_prefix`] for suffixes ending at `b` (`h(b) = hb`
/// fits): among increasing points `pts` before `b`, the index of the first
/// whose suffix fits (`pts.len()` if none), and that point (else `b`) with its
/// count.
fn bisect_suffix(
    plan: &Plan<'_>,
    b: usize,
    hb: usize,
    pts: &[usize],
    max: usize,
) -> (usize, usize, usize) {
    let (mut base, mut hbase) = (b, hb);
    let (mut lo, mut hi) = (0usize, pts.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let c = plan.count(pts[mid], base);
        if hbase + c <= max {
            base = pts[mid];
            hbase += c;
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    (lo, base, hbase)
}

/// Word-end restart test for the named patterns (see the module notes).
#[inline]
fn word_end(prev: u8, here: u8, c: char) -> bool {
    // marks are "letters" for o200k; treat them as letters everywhere
    let mark = here & (unicode::UP | unicode::LO) != 0 && here & L == 0;
    if prev & L != 0 {
        here & (L | N) == 0 && !mark && c != '\''
    } else if prev & N != 0 {
        here & N == 0
    } else {
        false
    }
}

fn ceil_char(t: &str, mut i: usize) -> usize {
    while i < t.len() && !t.is_char_boundary(i) {
        i += 1;
    }
    i.min(t.len())
}

fn floor_char(t: &str, mut i: usize) -> usize {
    while i > 0 && !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl CoreBpe {
    /// Allowed special-token matches of `text` as `encode` finds them.
    fn special_matches(&self, text: &str, policy: &SpecialPolicy) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let ac = match &self.special_ac {
            Some(ac) if policy.any_allowed => ac,
            _ => return out,
        };
        let mut search = 0;
        while search <= text.len() {
            let Some(m) = ac.find(&text[search..]) else {
                break;
            };
            let (s, e, p) = (m.start() + search, m.end() + search, m.pattern().as_usize());
            if policy.allowed.get(p).copied().unwrap_or(false) {
                out.push((s, e));
                search = e;
            } else {
                search = s + text[s..].chars().next().map_or(1, char::len_utf8);
            }
        }
        out
    }

    /// Whether some special token's text occurs inside another's.
    fn nested_specials(&self) -> bool {
        let Some(ac) = &self.special_overlap else {
            return false;
        };
        self.special_names.iter().enumerate().any(|(i, name)| {
            ac.find_overlapping_iter(name.as_str())
                .any(|m| m.pattern().as_usize() != i)
        })
    }

    /// The number of tokens of `text`, but at most `limit + 1`: stops as soon
    /// as the count exceeds `limit`. Blocks of growing size are cut at the
    /// pre-tokenizer's safe cuts, so the work is proportional to the part of
    /// the text read (plus one pass of the special-token search when special
    /// tokens are disallowed, as `encode` checks the whole text).
    pub fn count_until(&self, text: &str, policy: &SpecialPolicy, limit: usize) -> Result<usize> {
        let plan = Plan::new(self, text, policy)?;
        let mut n = 0usize;
        let mut pos = 0usize;
        let mut block = 256usize;
        let mut sp = plan.specials.iter().peekable();
        while pos < text.len() {
            // the next block: up to a safe cut, never across a special match
            let mut end = match self.pretok.next_safe_cut(text, pos + block) {
                Some(c) => c,
                None => text.len(),
            };
            while let Some(&&(s, e)) = sp.peek() {
                if e <= pos {
                    sp.next();
                    continue;
                }
                if s < end {
                    end = end.max(e);
                }
                break;
            }
            n += self.count(&text[pos..end], &plan.policy)?;
            if n > limit {
                return Ok(limit + 1);
            }
            pos = end;
            block = (block * 2).min(1 << 16);
        }
        Ok(n)
    }

    /// The end (byte offset, a char boundary) of the longest prefix of `text`
    /// whose encoding has at most `max_tokens` tokens (see the module notes).
    pub fn truncate_prefix(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        max_tokens: usize,
    ) -> Result<usize> {
        let plan = Plan::new(self, text, policy)?;
        let len = text.len();
        let (mut a, mut fa) = (0usize, 0usize);
        let mut block = 512usize;
        // gallop over restart points
        let (b, floor) = loop {
            let hi = ceil_char(text, (a + block).min(len));
            let mut pts = plan.restarts(a, hi, true);
            if hi == len {
                pts.push(len);
            } else if pts.is_empty() {
                // no restart point in this block: take the next one after it
                pts.push(plan.next_restart(hi - 1));
            }
            let last = *pts.last().unwrap_or(&len);
            let floor = plan.far_floor(&pts, block, a, last, true, max_tokens - fa);
            let out = floor.as_ref().is_some_and(|f| f.0 < last);
            let c = if out { usize::MAX } else { plan.count(a, last) };
            if fa.saturating_add(c) <= max_tokens {
                if last == len {
                    return Ok(len);
                }
                a = last;
                fa += c;
                block = (block * 2).min(1 << 20);
                continue;
            }
            // the first restart point that does not fit, by bisection
            // (f is increasing along restart points)
            let last = pts.len() - 1; // pts[last] does not fit
            let (i, q, fq) = bisect_prefix(&plan, a, fa, &pts[..last], max_tokens);
            a = q;
            fa = fq;
            // a far floor is of this very segment (one point: i = 0, q = a)
            break (pts[i], floor);
        };
        Ok(self.search_prefix(&plan, a, b, fa, max_tokens, true, floor))
    }

    /// The longest prefix end in `[a, b)` given `f(a) = fa <= max` and
    /// `f(b) > max`, with no word-end restart point inside.
    /// `floor`: the segment's tiling floor when the caller has it.
    #[allow(clippy::too_many_arguments)]
    fn search_prefix(
        &self,
        plan: &Plan<'_>,
        mut a: usize,
        b: usize,
        mut fa: usize,
        max: usize,
        split: bool,
        floor: Floor,
    ) -> usize {
        let text = plan.text;
        let floor = floor.or_else(|| plan.tiling_floor(a, b, true, max.saturating_sub(fa)));
        // no prefix ending at or after the floor's stop fits: the search
        // (inner points included) ends there, near the answer
        let b = floor.as_ref().map_or(b, |f| f.0);
        if split {
            let inner = plan.inner_restarts(a, b);
            if !inner.is_empty() {
                // f(a) + count(a..q) increases along the inner points too
                let (i, q, fq) = bisect_prefix(plan, a, fa, &inner, max);
                let b2 = inner.get(i).copied().unwrap_or(b);
                a = q;
                fa = fq;
                return self.search_prefix(plan, a, b2, fa, max, false, None);
            }
        }
        // one long piece: every prefix's count from one pass
        let counts = plan.piece_counts(a, b, true);
        let mut k = b;
        while k > a {
            k -= 1;
            while k > a && !text.is_char_boundary(k) {
                k -= 1;
            }
            if k == a {
                break;
            }
            if floor
                .as_ref()
                .is_some_and(|(_, m)| fa.saturating_add(m[k - a] as usize) > max)
            {
                continue;
            }
            if fa
                + counts
                    .as_ref()
                    .map_or_else(|| plan.count(a, k), |c| c[k - a] as usize)
                <= max
            {
                return k;
            }
        }
        a
    }

    /// The start (byte offset, a char boundary) of the longest suffix of
    /// `text` whose encoding has at most `max_tokens` tokens.
    pub fn truncate_suffix(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        max_tokens: usize,
    ) -> Result<usize> {
        let plan = Plan::new(self, text, policy)?;
        let (mut b, mut hb) = (text.len(), 0usize);
        let mut block = 512usize;
        let (a, floor) = loop {
            let lo = floor_char(text, b.saturating_sub(block));
            let mut pts = plan.restarts(lo, b, false); // increasing
            if lo == 0 {
                pts.insert(0, 0);
            } else if pts.is_empty() {
                pts.push(plan.prev_restart(lo + 1));
            }
            let first = pts[0];
            let floor = plan.far_floor(&pts, block, first, b, false, max_tokens - hb);
            let out = floor.as_ref().is_some_and(|f| f.0 > first);
            let c = if out {
                usize::MAX
            } else {
                plan.count(first, b)
            };
            if hb.saturating_add(c) <= max_tokens {
                if first == 0 {
                    return Ok(0);
                }
                b = first;
                hb += c;
                block = (block * 2).min(1 << 20);
                continue;
            }
            // the last point (largest start) that does not fit; pts[0] does not
            let (i, q, hq) = bisect_suffix(&plan, b, hb, &pts[1..], max_tokens);
            b = q;
            hb = hq;
            // a far floor is of this very segment (one point: i = 0, q = b)
            break (pts[i], floor);
        };
        Ok(self.search_suffix(&plan, a, b, hb, max_tokens, true, floor))
    }

    /// The longest suffix start in `(a, b]` given `h(b) = hb <= max` and
    /// `h(a) > max`.
    #[allow(clippy::too_many_arguments)]
    fn search_suffix(
        &self,
        plan: &Plan<'_>,
        a: usize,
        mut b: usize,
        mut hb: usize,
        max: usize,
        split: bool,
        floor: Floor,
    ) -> usize {
        let text = plan.text;
        let floor = floor.or_else(|| plan.tiling_floor(a, b, false, max.saturating_sub(hb)));
        // no suffix starting at or before the floor's stop fits
        let (base, a) = (a, floor.as_ref().map_or(a, |f| f.0));
        if split {
            let inner = plan.inner_restarts(a, b);
            if !inner.is_empty() {
                // the first inner point (from the left) whose suffix fits
                let (i, q, hq) = bisect_suffix(plan, b, hb, &inner, max);
                let a2 = if i > 0 { inner[i - 1] } else { a };
                b = q;
                hb = hq;
                return self.search_suffix(plan, a2, b, hb, max, false, None);
            }
        }
        let counts = plan.piece_counts(a, b, false);
        let mut k = a;
        while k < b {
            k += 1;
            while k < b && !text.is_char_boundary(k) {
                k += 1;
            }
            if k == b {
                break;
            }
            if floor
                .as_ref()
                .is_some_and(|(_, m)| hb.saturating_add(m[k - base] as usize) > max)
            {
                continue;
            }
            if hb
                + counts
                    .as_ref()
                    .map_or_else(|| plan.count(k, b), |c| c[k - a] as usize)
                <= max
            {
                return k;
            }
        }
        b
    }
}

#[cfg(test)]
mod tests;
