//! One piece -> ids: byte-pair merging of a single pre-tokenized piece.
//!
//! [`merge`] holds the merge paths (scan, heap, queue, split) and the dispatch
//! between them by length and shape; [`cache`] is the per-thread memo of
//! pieces that are not single tokens. Whole texts (pre-tokenization, special
//! tokens, batches) are [`crate::core_bpe`].

pub mod cache;
pub mod merge;

use crate::vocab::Vocab;
use crate::Rank;

pub use merge::{
    encode_piece, encode_piece_heap, encode_piece_queue, encode_piece_scan, encode_piece_split,
};

/// Encodes one piece by merge rank (see [`merge`]) and appends the ranks to
/// `out`. Kept under this name for callers of the first version of the core.
///
/// Complexity: O(n log n) in the piece length.
#[inline]
pub fn byte_pair_encode(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    encode_piece(piece, vocab, out)
}
