//! One piece -> ids: byte-pair merging of a single pre-tokenized piece.
//!
//! [`merge`] holds the merge paths (scan, runs, flat, heap, queue, split) and the dispatch
//! between them by length and shape; [`cache`] is the per-thread memo of
//! pieces that are not single tokens. Whole texts (pre-tokenization, special
//! tokens, batches) are [`crate::core_bpe`].

pub mod cache;
pub mod merge;

pub use merge::{
    encode_piece, encode_piece_flat_runs, encode_piece_heap, encode_piece_queue, encode_piece_runs,
    encode_piece_scan, encode_piece_split,
};
