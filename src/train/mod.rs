//! Training: count pre-token chunks, then merge the most frequent pair
//! repeatedly (ties: the pair met first, chunks in first-seen order, pairs left
//! to right inside a chunk; see docs/worked-examples.md, "The tie-break rule").
//!
//! Counting fills a [`ChunkTable`] ([`ChunkCounter`]); [`learn_merges`] runs the
//! merge loop over it; [`Control`] is the cancel flag and the progress counters
//! both share. What each file holds: docs/rust-layout.md, "File map".
//!
//! Performance notes (the figures: benches/results/train-scale.md):
//! * Counting dominates; it is split into tasks (1 MiB of documents, 8 MiB
//!   ranges of a file) counted into one [`tally::Tally`] per thread, whose
//!   slots hold chunks of up to 15 bytes inline and the first position of
//!   every chunk: merging the threads' tallies and sorting by first position
//!   gives the first-seen order exactly (a shared concurrent map would lose
//!   it; per-task tables merged in task order cost a merge per task).
//! * The resulting chunk table is an arena plus a `hashbrown::HashTable<u32>`
//!   of indices (about 32 bytes per distinct chunk) instead of a map of owned
//!   `Vec<u8>` keys (about 80 bytes and one allocation per chunk).
//! * The merge loop works on byte positions of the arena rather than on whole
//!   chunks, so one very long chunk (pattern `None`) costs the same per merge
//!   as many short ones.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Error, Result};

pub mod bpc;
pub mod chunks;
pub mod compact;
pub mod count;
mod encoded;
pub mod files;
pub mod from_tokens;
mod lean;
#[cfg(test)]
mod lean_tests;
pub mod merge_loop;
mod merge_par;
mod occ;
pub mod options;
mod pair_build;
mod pairs;
pub mod positions;
pub mod ranges;
mod seqs;
pub mod shards;
pub mod spill;
pub mod stream;
mod sym;
pub mod tally;
mod tokens;

pub use chunks::ChunkTable;
pub use count::{count_documents, ChunkCounter, Counted, DEFAULT_BLOCK, RANGE, STREAM_BLOCK};
pub use merge_loop::{
    learn_merges, learn_merges_owned, learn_merges_owned_with, learn_merges_with, MergeLoop,
};
pub use options::{ExtendBounds, MergeOptions};

/// Hands the allocator's free memory back to the system. Counting frees its
/// per-thread tallies in the threads that filled them, and glibc keeps such
/// memory in per-thread arenas: without this, tens of MB stay resident through
/// the merge loop. No-op on other platforms.
pub(crate) fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)] // a libc call, see the SAFETY comment
    // SAFETY: malloc_trim only returns free pages to the system; it takes no
    // pointer and leaves every live allocation untouched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Shared flags between a long-running job and its caller: a cancel flag
/// checked in the loops, and progress counters.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop the job; it then returns [`Error::Interrupted`] soon.
    pub cancel: AtomicBool,
    /// Input bytes counted so far.
    pub bytes_done: AtomicU64,
    /// Merges learned so far.
    pub merges_done: AtomicU64,
}

impl Control {
    /// Errors with [`Error::Interrupted`] when cancelled.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }
}
