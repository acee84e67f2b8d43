//! The lean merge loop of an extension (superword stage 2): the merges of
//! [`super::from_tokens::extend_merges`], exactly, in far less memory, for
//! span tables whose loop state would not fit the caller's memory limit.
//!
//! `extend_merges` keeps a linked node and an occurrence per token (about 32
//! bytes each). This loop keeps each span as its ids back to back (2 bytes
//! an id when every id fits, else 4), the span's place and weight, per token
//! the list of spans it may occur in ([`lists`], about a byte a span), and
//! the count of every pair. A merge of `(a, b)` visits the spans listed for
//! the rarer of `a` and `b`, rewrites those that hold the pair and adds the
//! change of each neighbouring pair to its count (each span weighted by its
//! count), on the caller's threads.
//!
//! The spans are in first-seen order (the table's), so the first occurrence
//! of a pair, which breaks ties between pairs of the same count as the
//! reference does ("met first"), is the first listed span that holds it.
//!
//! The pairs are passed over as `extend_merges` passes them over: joined
//! bytes longer than `max_token_length`, or already a token, or holding more
//! than `max_words` words.

mod build;
mod counts;
mod heap;
mod lists;
#[cfg(test)]
mod tests;

use std::sync::atomic::Ordering;

use rustc_hash::FxHashMap;

use super::options::MergeOptions;
use super::sym::Sym;
use super::tokens::Tokens;
use super::Control;
use crate::error::Result;
use crate::Rank;

#[cfg(test)]
pub(in crate::train) use build::lean_bytes;
pub(in crate::train) use build::{extend_merges_lean, SpanSource};
use counts::PairCounts;
use heap::PairHeap;
use lists::SpanLists;

/// Fewer spans than this to visit are not shared among threads.
pub(in crate::train) const SHARED_SPANS: usize = 4096;

/// The pair `(a, b)` as one key.
#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The pair of a key.
#[inline]
fn unkey(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// The spans, in first-seen order: span `r`'s ids are
/// `ids[start[r]..start[r] + len[r]]` (the slot keeps its first length;
/// merges shorten `len`), and it occurs [`Spans::weight`] times (`weight[r]`,
/// or from `heavy` when that is `u32::MAX`: few spans occur 2^32 times).
pub(super) struct Spans<S> {
    pub ids: Vec<S>,
    pub start: Vec<u32>,
    pub len: Vec<u32>,
    pub weight: Vec<u32>,
    pub heavy: FxHashMap<u32, u64>,
}

impl<S: Sym> Spans<S> {
    /// Span `r`'s count.
    #[inline]
    fn weight(&self, r: usize) -> u64 {
        weight_of(&self.weight, &self.heavy, r)
    }

    /// Appends the next span's count.
    pub fn push_weight(&mut self, count: u64) {
        self.weight.push(0);
        self.set_weight(self.weight.len() - 1, count);
    }

    /// Sets span `r`'s count (`r` below the spans' number).
    pub fn set_weight(&mut self, r: usize, count: u64) {
        match u32::try_from(count) {
            Ok(w) if w < u32::MAX => self.weight[r] = w,
            _ => {
                self.weight[r] = u32::MAX;
                self.heavy.insert(r as u32, count);
            }
        }
    }

    fn span(&self, r: usize) -> &[S] {
        let s = self.start[r] as usize;
        &self.ids[s..s + self.len[r] as usize]
    }

    fn count(&self) -> usize {
        self.start.len()
    }
}

/// Count changes of one merge, by pair.
type Deltas = FxHashMap<u64, i64>;

/// The loop's state (see the module docs).
struct Lean<S> {
    sp: Spans<S>,
    lists: SpanLists,
    counts: PairCounts,
    heap: PairHeap,
    threads: usize,
}

impl<S: Sym> Lean<S> {
    /// The state of `sp` for ids below `ids`: the span lists of every token
    /// and the count of every pair.
    fn new(sp: Spans<S>, ids: usize, threads: usize) -> Self {
        let mut lists = SpanLists::new(ids);
        let pairs: u128 = (0..sp.count())
            .map(|r| u128::from(sp.weight(r)) * u128::from(sp.len[r].saturating_sub(1)))
            .sum();
        let mut counts = PairCounts::new(S::BYTES == 2 && pairs < 1 << 32);
        for r in 0..sp.count() {
            let s = sp.span(r);
            let w = i64::try_from(sp.weight(r)).unwrap_or(i64::MAX);
            for (i, &t) in s.iter().enumerate() {
                lists.push(t.get(), r as u32);
                if let Some(&u) = s.get(i + 1) {
                    counts.add(key(t.get(), u.get()), w);
                }
            }
        }
        // the merges make new pairs as they go (about as many again on English
        // spans, as they empty others): room for them now, not in a regrowth
        counts.reserve(counts.len());
        let heap = PairHeap::new(&counts);
        Lean {
            sp,
            lists,
            counts,
            heap,
            threads,
        }
    }

    /// Of `a` and `b`, the token listed in fewer spans.
    fn rarer(&self, a: u32, b: u32) -> u32 {
        if self.lists.len(a) <= self.lists.len(b) {
            a
        } else {
            b
        }
    }

    /// Of `pairs` (all of the same count), the one met first: the span
    /// first, then the position in it.
    fn first_met(&self, pairs: &[u64]) -> u64 {
        let mut best: Option<(u32, usize, u64)> = None;
        for &k in pairs {
            let (a, b) = unkey(k);
            let (sa, sb) = (S::make(a), S::make(b));
            for r in self.lists.spans(self.rarer(a, b)) {
                if best.is_some_and(|(br, _, _)| r > br) {
                    break;
                }
                let s = self.sp.span(r as usize);
                if let Some(i) = find_pair(s, sa, sb) {
                    if best.is_none_or(|(br, bi, _)| (r, i) < (br, bi)) {
                        best = Some((r, i, k));
                    }
                    break;
                }
            }
        }
        // a tied pair has a positive count, so it occurs
        best.map_or(pairs[0], |(_, _, k)| k)
    }

    /// Merges every occurrence of `(a, b)` into `new`, left to right, in
    /// every span; updates the counts and the list of `new`. The spans to
    /// visit are shared among the threads in runs, each run's spans a slice
    /// of the arena of its own (the arena is in span order).
    fn apply(&mut self, a: u32, b: u32, new: u32) {
        let visit: Vec<u32> = self.lists.spans(self.rarer(a, b)).collect();
        let k = if visit.len() < SHARED_SPANS {
            1
        } else {
            self.threads.max(1)
        };
        let sp = &mut self.sp;
        let (start, weight, heavy) = (&sp.start, &sp.weight, &sp.heavy);
        let (mut ids, mut lens) = (&mut sp.ids[..], &mut sp.len[..]);
        let (mut ids_at, mut span_at) = (0usize, 0usize);
        let mut jobs = Vec::with_capacity(k);
        for part in visit.chunks(visit.len().div_ceil(k).max(1)) {
            let (from, to) = (part[0] as usize, part[part.len() - 1] as usize + 1);
            let a0 = start[from] as usize;
            let a1 = start.get(to).map_or(ids_at + ids.len(), |&s| s as usize);
            let (_, tail) = std::mem::take(&mut ids).split_at_mut(a0 - ids_at);
            let (mine, tail) = tail.split_at_mut(a1 - a0);
            (ids, ids_at) = (tail, a1);
            let (_, tail) = std::mem::take(&mut lens).split_at_mut(from - span_at);
            let (my_lens, tail) = tail.split_at_mut(to - from);
            (lens, span_at) = (tail, to);
            jobs.push(Job {
                spans: part,
                ids: mine,
                ids_at: a0,
                lens: my_lens,
                span_at: from,
            });
        }
        let run = |job: Job<'_, S>| -> (Deltas, Vec<u32>) {
            let mut d = Deltas::default();
            let mut hit = Vec::new();
            for &r in job.spans {
                let r = r as usize;
                let l = &mut job.lens[r - job.span_at];
                let s0 = start[r] as usize - job.ids_at;
                let s = &mut job.ids[s0..s0 + *l as usize];
                let w = i64::try_from(weight_of(weight, heavy, r)).unwrap_or(i64::MAX);
                let k = merge_span(s, a, b, new, w, &mut d);
                if k < s.len() {
                    *l = k as u32;
                    hit.push(r as u32);
                }
            }
            (d, hit)
        };
        let results: Vec<(Deltas, Vec<u32>)> = if jobs.len() > 1 {
            std::thread::scope(|sc| {
                let hs: Vec<_> = jobs.into_iter().map(|j| sc.spawn(|| run(j))).collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        } else {
            jobs.into_iter().map(run).collect()
        };
        for (d, hit) in results {
            for r in hit {
                self.lists.push(new, r);
            }
            for (k, dv) in d {
                apply_delta(&mut self.counts, &mut self.heap, k, dv);
            }
        }
    }
}

/// One thread's share of a merge: its spans, and the slices of the arena
/// and of the span lengths that hold them (starting at arena offset
/// `ids_at` and span `span_at`).
struct Job<'a, S> {
    spans: &'a [u32],
    ids: &'a mut [S],
    ids_at: usize,
    lens: &'a mut [u32],
    span_at: usize,
}

/// Adds `dv` to the count of pair `k`; a pair whose count rises enters the
/// heap again, one whose count reaches 0 is dropped.
fn apply_delta(counts: &mut PairCounts, heap: &mut PairHeap, k: u64, dv: i64) {
    if dv == 0 {
        return;
    }
    let now = counts.add(k, dv);
    if now > 0 && dv > 0 {
        heap.push(now, k);
    }
}

/// Span `r`'s count: `weight[r]`, or from `heavy` when that is `u32::MAX`.
#[inline]
fn weight_of(weight: &[u32], heavy: &FxHashMap<u32, u64>, r: usize) -> u64 {
    match weight[r] {
        u32::MAX => heavy
            .get(&(r as u32))
            .copied()
            .unwrap_or(u64::from(u32::MAX)),
        w => u64::from(w),
    }
}

/// The position of the right id of the first `(a, b)` in `s`.
#[inline]
fn find_pair<S: Sym>(s: &[S], a: S, b: S) -> Option<usize> {
    (1..s.len()).find(|&i| s[i - 1] == a && s[i] == b)
}

/// Merges every `(a, b)` in `s` into `new`, left to right, in place; adds
/// the change of each pair (times `w`) to `d`. Returns the new length.
fn merge_span<S: Sym>(s: &mut [S], a: u32, b: u32, new: u32, w: i64, d: &mut Deltas) -> usize {
    let n = s.len();
    let (sa, sb) = (S::make(a), S::make(b));
    let Some(first) = find_pair(s, sa, sb) else {
        return n;
    };
    let mut add = |x: u32, y: u32, v: i64| {
        let e = d.entry(key(x, y)).or_insert(0);
        *e = e.saturating_add(v);
    };
    let (mut i, mut k) = (first - 1, first - 1);
    while i < n {
        if i + 1 < n && s[i] == sa && s[i + 1] == sb {
            add(a, b, -w);
            if k > 0 {
                let l = s[k - 1].get();
                add(l, a, -w);
                add(l, new, w);
            }
            if let Some(&r) = s.get(i + 2) {
                add(b, r.get(), -w);
                add(new, r.get(), w);
            }
            s[k] = S::make(new);
            i += 2;
        } else {
            s[k] = s[i];
            i += 1;
        }
        k += 1;
    }
    k
}

/// The merge loop over built spans: up to `opts.num_merges` merges, the
/// k-th making id `first_id + k`; `toks` knows every token's bytes.
fn run_loop<S: Sym>(
    sp: Spans<S>,
    toks: &mut Tokens<'_>,
    first_id: Rank,
    opts: &MergeOptions,
    max_words: Option<usize>,
    threads: usize,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let ids = first_id as usize + opts.num_merges;
    let mut st = Lean::new(sp, ids, threads);
    let min_freq = i64::try_from(opts.min_frequency).unwrap_or(i64::MAX);
    let mut merges = Vec::new();
    while merges.len() < opts.num_merges {
        ctl.check()?;
        let mut eligible = |k: u64| {
            let (a, b) = unkey(k);
            !toks.too_many_words(a, b, max_words) && !toks.skip(a, b, opts.max_token_length)
        };
        let Some((tied, count)) = st.heap.best(&st.counts, &mut eligible) else {
            break;
        };
        if count < min_freq {
            break;
        }
        let k = if tied.len() == 1 {
            tied[0]
        } else {
            st.first_met(&tied)
        };
        st.heap.put_back(&tied, k, count);
        let (a, b) = unkey(k);
        let new = first_id + merges.len() as u32;
        toks.push(a, b);
        st.apply(a, b, new);
        merges.push((a, b));
        ctl.merges_done
            .store(merges.len() as u64, Ordering::Relaxed);
    }
    Ok(merges)
}
