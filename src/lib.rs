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

/// Receives a pre-tokenizer's pieces as `(start, end)` byte offsets, left to
/// right. Any `FnMut(usize, usize)` closure is one; the encoder's piece
/// cache implements it on a struct of its own so that its per-piece step is
/// inlined (`#[inline(always)]`) into every call site of the scanners, which
/// a closure with that many call sites is not.
pub trait SpanSink {
    /// One piece: `text[start..end]`.
    fn span(&mut self, start: usize, end: usize);

    /// Asked before each piece by the loops slow enough to need it (custom
    /// patterns' regex): true ends the walk there. Never, by default.
    #[inline(always)]
    fn stop(&mut self) -> bool {
        false
    }
}

impl<F: FnMut(usize, usize)> SpanSink for F {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        self(start, end)
    }
}
