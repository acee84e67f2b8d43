//! The heap path: a long piece with no cut point (see [`super::split`]) and
//! no repetitive shape, merged by [`super::linked`]'s loop with a binary
//! min-heap of all candidate pairs.
//!
//! Complexity: O(n log n) time; memory 16 bytes per input byte plus 8 per
//! heap entry.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::linked::{initial_pairs, merge_linked, merge_tokens_linked, PairQueue};
use super::pair_key::{key, unkey};
use crate::vocab::Vocab;
use crate::Rank;

/// The long-piece path: parts form a doubly linked list indexed by their first
/// byte (`merge_linked`); a min-heap holds `(pair rank, left part)`
/// candidates, and an entry is live only while the pair rank stored at `left`
/// still equals its rank (token bytes are unique, so a stale entry can never
/// look live: any change at `left` changes the pair's bytes and therefore its
/// rank).
///
/// Complexity: O(n log n) time; memory 16 bytes per input byte plus 8 per heap
/// entry (at most n initial + 2 per merge).
pub fn encode_piece_heap(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_linked(piece, vocab, out, |parts, _| {
        BinaryHeap::from_iter(initial_pairs(parts).map(|(r, l)| Reverse(key(r, l))))
    });
}

/// The heap path from a sequence of tokens: the merges that follow `tokens`
/// (see [`merge_tokens_linked`]), O(m log m) for m tokens.
pub fn merge_tokens_heap(tokens: &[Rank], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_tokens_linked(tokens, vocab, out, |parts, _| {
        BinaryHeap::from_iter(initial_pairs(parts).map(|(r, l)| Reverse(key(r, l))))
    });
}

impl PairQueue for BinaryHeap<Reverse<u64>> {
    #[inline]
    fn push(&mut self, r: Rank, left: u32) {
        BinaryHeap::push(self, Reverse(key(r, left)));
    }
    #[inline]
    fn pop(&mut self) -> Option<(Rank, u32)> {
        BinaryHeap::pop(self).map(|Reverse(k)| unkey(k))
    }
}
