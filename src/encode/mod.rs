//! One piece -> ids: byte-pair merging of a single pre-tokenized piece.
//!
//! [`encode_piece`] is the entry point; [`merge`] holds the dispatch that picks
//! a merge path by the piece's length and shape, with the table of the paths.
//! [`cache`] is the piece cache in front of them all. Whole texts
//! (pre-tokenization, special tokens, batches) are [`crate::core_bpe`]. What
//! each file holds: docs/rust-layout.md, "File map".

pub mod cache;
pub mod merge;

mod flat_runs;
mod heap;
mod linked;
mod pair_key;
mod queue;
mod runs;
mod scan;
mod shape;
mod split;
mod staged;

#[cfg(test)]
mod tests;

pub use flat_runs::{encode_piece_flat_runs, FLAT_MIN};
pub use heap::encode_piece_heap;
pub use merge::{encode_piece, encode_piece_parts};
pub use queue::encode_piece_queue;
pub use runs::encode_piece_runs;
pub use scan::{encode_piece_scan, encode_short_by_bytes, SHORT_PIECE_MAX};
pub use split::encode_piece_split;
pub use staged::encode_piece_staged;
