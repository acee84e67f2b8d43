//! The [`ChunkTable`]: distinct pre-token chunks with their counts, in
//! **first-seen order** (the tie-break rule of the merge loop reads chunks in
//! that order).

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    start: u64,
    len: u32,
    pub(super) count: u64,
    pub(super) hash: u64,
}

/// Distinct byte chunks with their counts, in first-seen order.
///
/// The chunk bytes live back to back in one arena (`bytes`), so the whole table
/// costs about 32 bytes per distinct chunk plus the chunk bytes plus an index of
/// one `u32` per slot, and the arena is exactly the concatenation of the chunks
/// in first-seen order (the trainer works on it directly).
#[derive(Debug, Default, Clone)]
pub struct ChunkTable {
    pub(super) bytes: Vec<u8>,
    pub(super) entries: Vec<Entry>,
    index: HashTable<Slot>,
}

/// An index slot: the entry number plus the chunk length and 32 hash bits, so
/// most non-matching candidates are rejected without touching the entry or
/// the arena.
#[derive(Debug, Clone, Copy)]
struct Slot {
    idx: u32,
    len: u32,
    tag: u32,
}

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    FxBuildHasher.hash_one(b)
}

/// Byte equality with the short cases (most chunks are a few bytes) done in
/// registers instead of a `memcmp` call. Precondition: `a.len() == b.len()`.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if (8..=16).contains(&n) {
        let w = |s: &[u8], i: usize| -> u64 {
            let mut x = [0u8; 8];
            x.copy_from_slice(&s[i..i + 8]);
            u64::from_le_bytes(x)
        };
        w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8)
    } else if n < 8 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

impl ChunkTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct chunks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no chunk was counted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Total number of chunk occurrences (sum of counts), saturating.
    pub fn total(&self) -> u64 {
        self.entries
            .iter()
            .fold(0u64, |a, e| a.saturating_add(e.count))
    }

    /// Total bytes of the distinct chunks (the arena size).
    pub fn arena_len(&self) -> usize {
        self.bytes.len()
    }

    /// About what a table of `chunks` distinct chunks holding `bytes` bytes
    /// takes: its arena and about 48 bytes per chunk (entry, index). The
    /// Python side's `bytepair.memory._table_bytes` is the same formula.
    pub fn priced_bytes(chunks: usize, bytes: usize) -> u64 {
        (bytes as u64).saturating_add(48 * chunks as u64)
    }

    /// [`Self::priced_bytes`] of this table.
    pub fn priced(&self) -> u64 {
        Self::priced_bytes(self.len(), self.arena_len())
    }

    /// The concatenation of all distinct chunks in first-seen order.
    pub fn arena(&self) -> &[u8] {
        &self.bytes
    }

    /// The chunk and count at index `i` (first-seen order), or `None` past the end.
    pub fn get(&self, i: usize) -> Option<(&[u8], u64)> {
        let e = self.entries.get(i)?;
        Some((self.slice(e), e.count))
    }

    /// An empty table with room for `entries` chunks of `bytes` bytes in total.
    pub fn with_capacity(entries: usize, bytes: usize) -> Self {
        ChunkTable {
            bytes: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(entries),
            index: HashTable::with_capacity(entries),
        }
    }

    #[inline]
    fn find(&self, chunk: &[u8], h: u64) -> Option<u32> {
        let (len, tag) = (chunk.len() as u32, (h >> 32) as u32);
        self.index
            .find(h, |s| {
                s.len == len && s.tag == tag && {
                    let e = &self.entries[s.idx as usize];
                    same_bytes(
                        &self.bytes[e.start as usize..e.start as usize + e.len as usize],
                        chunk,
                    )
                }
            })
            .map(|s| s.idx)
    }

    /// The count of `chunk`, 0 when absent. O(len(chunk)).
    pub fn count_of(&self, chunk: &[u8]) -> u64 {
        self.find(chunk, hash_bytes(chunk))
            .map_or(0, |i| self.entries[i as usize].count)
    }

    /// Iterates `(chunk, count)` in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.entries.iter().map(move |e| (self.slice(e), e.count))
    }

    #[inline]
    pub(super) fn slice(&self, e: &Entry) -> &[u8] {
        // Entries are only created by `insert_new`, which appends the bytes first.
        &self.bytes[e.start as usize..e.start as usize + e.len as usize]
    }

    /// Adds `n` to the count of `chunk` (inserting it at the end when new).
    /// Amortised O(len(chunk)). Counts saturate at `u64::MAX`.
    ///
    /// Returns an error when one chunk is 4 GiB or longer.
    pub fn add(&mut self, chunk: &[u8], n: u64) -> Result<()> {
        self.add_hashed(chunk, hash_bytes(chunk), n)
    }

    #[inline]
    pub(super) fn add_hashed(&mut self, chunk: &[u8], h: u64, n: u64) -> Result<()> {
        if let Some(i) = self.find(chunk, h) {
            let e = &mut self.entries[i as usize];
            e.count = e.count.saturating_add(n);
            return Ok(());
        }
        self.insert_new(chunk, h, n)
    }

    /// Appends `chunk`, which the caller knows is not in the table yet.
    pub(super) fn push_new(&mut self, chunk: &[u8], n: u64) -> Result<()> {
        self.insert_new(chunk, hash_bytes(chunk), n)
    }

    #[cold]
    fn insert_new(&mut self, chunk: &[u8], h: u64, n: u64) -> Result<()> {
        let len = u32::try_from(chunk.len()).map_err(|_| {
            Error::training(format!(
                "a single chunk of {} bytes is too long (the limit is 4 GiB); use a pre-tokenization pattern or split the documents",
                chunk.len()
            ))
        })?;
        let idx = u32::try_from(self.entries.len())
            .map_err(|_| Error::training("more than 4 billion distinct chunks"))?;
        let start = self.bytes.len() as u64;
        self.bytes.extend_from_slice(chunk);
        self.entries.push(Entry {
            start,
            len,
            count: n,
            hash: h,
        });
        let entries = &self.entries;
        let slot = Slot {
            idx,
            len,
            tag: (h >> 32) as u32,
        };
        self.index
            .insert_unique(h, slot, |s| entries[s.idx as usize].hash);
        Ok(())
    }

    /// Adds every count of `other` (in `other`'s order, so new chunks go after
    /// the existing ones in the order `other` first saw them).
    /// O(size of `other`).
    pub fn merge_from(&mut self, other: &ChunkTable) -> Result<()> {
        self.bytes.reserve(other.bytes.len() / 4);
        for e in &other.entries {
            self.add_hashed(other.slice(e), e.hash, e.count)?;
        }
        Ok(())
    }

    /// Takes `other` whole when `self` is empty (no copy), else merges it.
    pub fn absorb(&mut self, other: ChunkTable) -> Result<()> {
        if self.entries.is_empty() {
            *self = other;
            Ok(())
        } else {
            self.merge_from(&other)
        }
    }
}

impl PartialEq for ChunkTable {
    /// Same chunks, same counts, same order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
