//! The sort key of a candidate pair in the long-piece merge loops and the
//! short scan: rank in the high half, left position in the low half, so the
//! lowest key is the lowest rank, leftmost on ties (the merge order of
//! `bytepair.reference.encode_piece`).

use crate::Rank;

/// A candidate pair's sort key: rank, then left position (the lowest key is
/// the lowest rank, leftmost).
#[inline]
pub(super) fn key(rank: Rank, left: u32) -> u64 {
    ((rank as u64) << 32) | left as u64
}

/// [`key`]'s rank and position.
#[inline]
pub(super) fn unkey(k: u64) -> (Rank, u32) {
    ((k >> 32) as Rank, k as u32)
}
