//! bytepair core: the hot loops of byte-pair encoding (pre-tokenization, merging,
//! training, batch work). Pure Rust; the PyO3 bindings live in `py` behind the
//! `python` feature so `cargo test` links without libpython.

pub mod core_bpe;
pub mod dataset;
pub mod encode;
pub mod error;
pub mod parallel;
pub mod pretok;
pub mod train;
pub mod vocab;

#[cfg(feature = "python")]
mod py;

/// A token id. In a byte-level BPE vocabulary the id is also the merge rank.
pub type Rank = u32;
