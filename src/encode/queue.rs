//! The queue path: a long repetitive piece (at most 256 distinct byte pairs:
//! a repeated syllable, `'ab' * N`) that the runs and flat paths decline,
//! merged by [`super::linked`]'s loop with a FIFO of positions per rank and a
//! small min-heap of the ranks in play.
//!
//! Complexity: O(n log d) for d distinct ranks pending (a few hundred on
//! hostile text), O(n log n) at worst; memory 16 bytes per input byte plus 4
//! per candidate pair.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::linked::{initial_pairs, merge_linked, PairQueue};
use crate::vocab::Vocab;
use crate::Rank;

/// Pending pairs: per rank a FIFO of left positions (a linked list through one
/// shared arena, so no allocation per rank), and a min-heap of the ranks whose
/// FIFO may be non-empty. Pairs of one rank usually arrive in increasing
/// position order, so the FIFO gives the leftmost first; if one ever arrives
/// out of order, that rank switches to a min-heap of positions for good (exact
/// in every case, linear in the common one).
pub(super) struct RankQueue {
    /// Per rank: `(first entry + 1) | (last entry + 1) << 32`, 0 = empty;
    /// `last` is `u32::MAX` once the rank uses a heap (see `heaps`). Plain
    /// `u64`s so the allocation is a zeroed one (`calloc`), not a fill.
    lists: Vec<u64>,
    /// `(position, next entry + 1)`, 0 = end of list.
    entries: Vec<(u32, u32)>,
    /// First entry (+ 1) of the free list through `entries`' `next` fields, 0
    /// = none: entries are recycled once popped, so the arena stays at the
    /// number of pairs pending at once instead of growing by every pair ever
    /// pushed (about three per byte on 10 MB of spaces, 240 MB).
    free: u32,
    /// Per rank: whether it is in `ranks`.
    queued: Vec<bool>,
    ranks: BinaryHeap<Reverse<Rank>>,
    heaps: FxHashMap<Rank, BinaryHeap<Reverse<u32>>>,
}

pub(super) const HEAP_MODE: u32 = u32::MAX;

impl PairQueue for RankQueue {
    #[inline]
    fn push(&mut self, r: Rank, left: u32) {
        RankQueue::push(self, r, left);
    }
    #[inline]
    fn pop(&mut self) -> Option<(Rank, u32)> {
        RankQueue::pop(self)
    }
}

impl RankQueue {
    /// A queue for ranks below `vocab_len`. The per-rank arrays are zeroed
    /// allocations: the OS supplies zero pages, so only the ranks touched cost.
    pub(super) fn new(vocab_len: usize, pairs: usize) -> Self {
        RankQueue {
            lists: vec![0u64; vocab_len],
            entries: Vec::with_capacity(pairs),
            free: 0,
            queued: vec![false; vocab_len],
            ranks: BinaryHeap::new(),
            heaps: FxHashMap::default(),
        }
    }

    #[inline(always)]
    pub(super) fn list(&self, ri: usize) -> (u32, u32) {
        let v = self.lists[ri];
        (v as u32, (v >> 32) as u32)
    }

    #[inline(always)]
    fn set_list(&mut self, ri: usize, head: u32, tail: u32) {
        self.lists[ri] = head as u64 | (tail as u64) << 32;
    }

    #[inline]
    pub(super) fn push(&mut self, r: Rank, pos: u32) {
        let ri = r as usize;
        let (head, tail) = self.list(ri);
        if tail == HEAP_MODE {
            if let Some(h) = self.heaps.get_mut(&r) {
                h.push(Reverse(pos));
            }
        } else if head != 0 && pos < self.entries[tail as usize - 1].0 {
            // out of order: move this rank's pending positions to a heap
            let mut h = BinaryHeap::new();
            let mut at = head;
            while at != 0 {
                let (p, next) = self.entries[at as usize - 1];
                h.push(Reverse(p));
                at = next;
            }
            h.push(Reverse(pos));
            self.heaps.insert(r, h);
            self.set_list(ri, 0, HEAP_MODE);
        } else {
            let e = if self.free != 0 {
                let e = self.free;
                self.free = self.entries[e as usize - 1].1;
                self.entries[e as usize - 1] = (pos, 0);
                e
            } else {
                self.entries.push((pos, 0));
                self.entries.len() as u32
            };
            if head == 0 {
                self.set_list(ri, e, e);
            } else {
                self.entries[tail as usize - 1].1 = e;
                self.set_list(ri, head, e);
            }
        }
        if !self.queued[ri] {
            self.queued[ri] = true;
            self.ranks.push(Reverse(r));
        }
    }

    /// The lowest rank with a pending pair and that pair's leftmost position
    /// (possibly stale: the caller checks).
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(Rank, u32)> {
        while let Some(&Reverse(r)) = self.ranks.peek() {
            let ri = r as usize;
            let (head, tail) = self.list(ri);
            let got = if tail == HEAP_MODE {
                self.heaps
                    .get_mut(&r)
                    .and_then(|h| h.pop())
                    .map(|Reverse(p)| p)
            } else if head != 0 {
                let (p, next) = self.entries[head as usize - 1];
                if next == 0 {
                    self.set_list(ri, 0, 0);
                } else {
                    self.set_list(ri, next, tail);
                }
                self.entries[head as usize - 1].1 = self.free;
                self.free = head;
                Some(p)
            } else {
                None
            };
            match got {
                Some(pos) => return Some((r, pos)),
                None => {
                    self.queued[ri] = false;
                    self.ranks.pop();
                }
            }
        }
        None
    }
}

/// The long-piece path: the same merges as [`encode_piece_heap`](super::heap::encode_piece_heap), with the
/// candidate pairs kept in one bucket per rank (a FIFO of positions) and a
/// small min-heap over the distinct ranks that have pending pairs.
///
/// Why: a binary heap over all pairs of a 10 MB piece is ~100 MB, and each pop
/// walks ~23 levels of it with cache misses at the bottom, so time per byte
/// grows 3-5x from 10 KB to 10 MB. Here most operations are appends and reads at
/// the front of a bucket (sequential memory); the rank heap holds only the
/// distinct ranks in play (a few hundred for hostile text). Exactness: the
/// minimum rank comes from the rank heap, the leftmost pair of that rank from
/// its bucket, and stale entries are skipped as in the heap path.
///
/// Complexity: O(n log d) for d distinct ranks pending, O(n log n) at worst
/// (a bucket that turned into a heap); memory 16 bytes per input byte plus 4
/// per candidate pair.
pub fn encode_piece_queue(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_linked(piece, vocab, out, |parts, pairs| {
        let mut queue = RankQueue::new(vocab.len(), pairs);
        for (r, l) in initial_pairs(parts) {
            queue.push(r, l);
        }
        queue
    });
}
