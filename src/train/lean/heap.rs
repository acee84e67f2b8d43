//! The lean loop's lazy heap of pairs by count.
//!
//! An entry `(count, pair)` is current when the pair's count still is
//! `count`; a stale one is dropped when popped (and pushed again at the
//! current count when that is lower: a count that rises is pushed by the
//! caller). To stay small the heap holds only the pairs of at least a
//! *floor* count: at first the floor is the count of about the
//! [`HELD`]-th most frequent pair; when the heap's best entry falls below
//! it, the floor drops the same way among the pairs under it and those
//! pairs are pushed. Every pair at or above the floor has an entry at or
//! above its count, so the best entry is the best pair.

use std::collections::BinaryHeap;

use rustc_hash::FxHashSet;

use super::counts::PairCounts;

/// About this many pairs enter the heap at each floor.
const HELD: usize = 1 << 18;

/// Past this many entries the stale ones are dropped.
const STALE_MAX: usize = 8 * HELD;

pub(super) struct PairHeap {
    heap: BinaryHeap<(i64, u64)>,
    floor: i64,
    banned: FxHashSet<u64>,
}

impl PairHeap {
    /// The pairs of `counts` at or above the first floor.
    pub fn new(counts: &PairCounts) -> Self {
        let mut h = PairHeap {
            heap: BinaryHeap::new(),
            floor: i64::MAX,
            banned: FxHashSet::default(),
        };
        h.lower_floor(counts);
        h
    }

    /// Lowers the floor to the count of about the [`HELD`]-th most frequent
    /// pair under it (at least 1) and pushes the pairs from there up to the
    /// old floor.
    fn lower_floor(&mut self, counts: &PairCounts) {
        let old = self.floor;
        let banned = &self.banned;
        let under = || {
            counts
                .iter()
                .filter(move |(k, c)| *c < old && !banned.contains(k))
        };
        let mut below: Vec<i64> = under().map(|(_, c)| c).collect();
        let floor = if below.len() > HELD {
            let at = below.len() - HELD;
            *below.select_nth_unstable(at).1
        } else {
            1
        };
        drop(below);
        self.floor = floor.max(1);
        let floor = self.floor;
        self.heap
            .extend(under().filter(|(_, c)| *c >= floor).map(|(k, c)| (c, k)));
    }

    /// Records that pair `k` now occurs `count` times (pairs under the
    /// floor wait outside).
    pub fn push(&mut self, count: i64, k: u64) {
        if count >= self.floor && !self.banned.contains(&k) {
            self.heap.push((count, k));
        }
    }

    /// Pops the next current, eligible entry: `(pair, count)`. A pair that
    /// `eligible` refuses is never offered again.
    fn pop_current(
        &mut self,
        counts: &PairCounts,
        eligible: &mut impl FnMut(u64) -> bool,
    ) -> Option<(u64, i64)> {
        loop {
            if self.heap.peek().is_none_or(|&(c, _)| c < self.floor) && self.floor > 1 {
                // the pairs under the floor may now hold the best one
                self.lower_floor(counts);
                continue;
            }
            let (c, k) = self.heap.pop()?;
            if self.banned.contains(&k) {
                continue;
            }
            let cur = counts.get(k);
            if cur != c {
                if cur > 0 && cur < c {
                    self.push(cur, k);
                }
                continue;
            }
            if !eligible(k) {
                self.banned.insert(k);
                continue;
            }
            return Some((k, c));
        }
    }

    /// The pairs of the highest count (each once) and that count, or None
    /// when no eligible pair is left. The caller picks one and hands the
    /// others back with [`Self::put_back`].
    pub fn best(
        &mut self,
        counts: &PairCounts,
        eligible: &mut impl FnMut(u64) -> bool,
    ) -> Option<(Vec<u64>, i64)> {
        if self.heap.len() > STALE_MAX {
            // most entries are stale by now: keep the current ones
            self.heap.retain(|&(c, k)| counts.get(k) == c);
        }
        let (k, c) = self.pop_current(counts, eligible)?;
        let mut tied = vec![k];
        while self.heap.peek().is_some_and(|&(c2, _)| c2 == c) {
            let Some((k2, c2)) = self.pop_current(counts, eligible) else {
                break;
            };
            if c2 != c {
                self.heap.push((c2, k2));
                break;
            }
            if !tied.contains(&k2) {
                tied.push(k2);
            }
        }
        Some((tied, c))
    }

    /// Puts back the tied pairs not chosen.
    pub fn put_back(&mut self, tied: &[u64], chosen: u64, count: i64) {
        for &k in tied {
            if k != chosen {
                self.heap.push((count, k));
            }
        }
    }
}
