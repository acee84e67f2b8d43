//! Training: count pre-token chunks, then merge the most frequent pair
//! repeatedly (ties: the pair met first, chunks in first-seen order, pairs left
//! to right inside a chunk; see SEEDS-SPEC "The tie-break rule").
//!
//! * [`count`]: the first-seen-ordered [`ChunkTable`] and the parallel [`Counter`].
//! * [`heap`]: the incremental merge loop [`learn_merges`].
//!
//! Performance notes (48 MiB mixed corpus, cl100k pattern, 2 cores; see
//! benches/RESULTS.md for the full figures):
//! * Counting dominates; it is split into ~1 MiB tasks counted into private
//!   tables and merged in task order (first-seen order needs that order; a
//!   shared concurrent map would lose it).
//! * The chunk table is an arena plus a `hashbrown::HashTable<u32>` of indices
//!   (about 32 bytes per distinct chunk) instead of a map of owned `Vec<u8>`
//!   keys (about 80 bytes and one allocation per chunk).
//! * The merge loop works on byte positions of the arena rather than on whole
//!   chunks, so one very long chunk (pattern `None`) costs the same per merge
//!   as many short ones.

pub mod count;
pub mod heap;

pub use count::{count_documents, thread_pool, ChunkTable, Control, Counter, DEFAULT_BLOCK};
pub use heap::{learn_merges, MergeOptions};
