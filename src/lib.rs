//! bytepair core: the hot loops of byte-pair encoding (pre-tokenization, merging,
//! training, batch work). Pure Rust; the PyO3 bindings live in `py` behind the
//! `python` feature so `cargo test` links without libpython.

pub mod core_bpe;
pub mod dataset;
pub mod encode;
pub mod error;
pub mod hint;
pub mod parallel;
pub mod pipeline;
pub mod pretok;
pub mod train;
pub mod utf8;
pub mod vocab;
pub mod walk;

#[cfg(feature = "python")]
mod py;

/// A folder for one unit test's files under the temporary directory, removed
/// with its contents when dropped, also when the test fails.
#[cfg(test)]
pub(crate) struct TestDir(std::path::PathBuf);

#[cfg(test)]
impl TestDir {
    pub(crate) fn new(name: &str) -> TestDir {
        let d = std::env::temp_dir().join(format!("bytepair-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TestDir(d)
    }
}

#[cfg(test)]
impl std::ops::Deref for TestDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

#[cfg(test)]
impl AsRef<std::path::Path> for TestDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The unit tests' pseudo-random numbers (xorshift64): the same sequence on
/// every run for a seed.
#[cfg(test)]
pub(crate) struct TestRng(pub(crate) u64);

#[cfg(test)]
impl TestRng {
    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

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

    /// Consecutive pieces: the first starts at `start`, and one ends at
    /// `base + k` for each set bit `k` of `ends` (ascending), each starting
    /// where the one before ended. Returns the last end (`start` when `ends`
    /// is 0). The block scanner hands a block's plain piece ends here in one
    /// call, so a sink can keep its state in registers across them.
    #[inline(always)]
    fn run(&mut self, mut start: usize, base: usize, mut ends: u64) -> usize {
        while ends != 0 {
            let end = base + ends.trailing_zeros() as usize;
            self.span(start, end);
            start = end;
            ends &= ends - 1;
        }
        start
    }

    /// An added token found by the pre-tokenizer itself (GPT-NeoX's runs of
    /// spaces, module `pretok::block::cut`): `text[start..end]` is that token,
    /// `id`. A sink of piece boundaries takes it as one piece (the default);
    /// the encoder's sink emits `id`.
    #[inline(always)]
    fn fixed(&mut self, start: usize, end: usize, id: Rank) {
        let _ = id;
        self.span(start, end);
    }

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
