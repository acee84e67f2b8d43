//! One piece of a batch between the hot loop's two phases: its span, its
//! packed bytes and its home bucket. Phase one ([`super::probe`]'s `Collect`)
//! fills it, the table ([`super::table`]) probes it.

/// One pending piece of a batch.
#[derive(Clone, Copy, Default)]
pub(super) struct Pending {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The packed bytes ([`key16`](crate::vocab::key16)): one array, so that
    /// the hit loop loads them as one 16-byte vector.
    pub(super) key: [u64; 2],
    /// The byte offset of the piece's home bucket in the table, with the
    /// piece's length (1..=16) in its low bits (below the table's `LINE`); 0
    /// for a piece the table cannot hold (longer than 16 bytes, or empty). Valid
    /// while the table's size is unchanged: `PieceCache::flush` recomputes
    /// it for the rest of the batch when a miss grows or shrinks the table.
    pub(super) at: u64,
}

/// Set in [`Pending::end`] for an entry that is not a piece but an id given
/// by the caller (an added token between two stretches of text): its
/// `start..end` (this bit cleared) is the token's own bytes, so the batch's
/// one-id-per-byte room still holds, and its id is `key[0]`. The length it
/// makes is never 1..=16, so the table never probes it.
pub(super) const FIXED: usize = 1 << (usize::BITS - 1);
